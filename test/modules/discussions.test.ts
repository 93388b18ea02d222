/**
 * Discussions (issue 14.2; spec 4.9 `/api/courses/{id}/discussions`, `/api/lessons/{id}/discussions`):
 * threads and nested replies, author-only edit and soft delete that keeps the thread's shape,
 * moderation (pin, lock, hide) by canManageCourses, enrolled students and staff only, CRM names
 * with the generic label, DISCUSSION_REPLY to the thread's author, isolation from another
 * institution.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, createLesson, enroll } from '../helpers/factories.js';
import { expectError, expectOk } from '../helpers/expect.js';
import { notifications } from '../../src/modules/notifications/notifications.tables.js';
import { auditLog } from '../../src/modules/audit/audit.tables.js';
import { DEMO_PARENT_ID, DEMO_TEACHER2_ID, DEMO_TEACHER_ID, NORTH_ADMIN_ID, NORTH_STUDENT_ID, NORTH_TEACHER_ID } from '../../src/dev/crm-sim/fixtures.js';

const stu = (n: number) => `c_demo_stu_${String(n).padStart(2, '0')}`;
/** A student the CRM does not know: their name falls back to the generic label. */
const UNKNOWN = 'c_demo_stu_99';

let t: TestApp;
let teacher: string;
let teacher2: string;
let parent: string;
const tokens = new Map<string, string>();
const tok = async (id: string) => {
  if (!tokens.has(id)) tokens.set(id, await t.token({ role: 'STUDENT', id }));
  return tokens.get(id)!;
};
const nameOf = (id: string) => {
  const c = t.crmSim.data.inst_demo.students.find((s) => s.contact.id === id)!.contact;
  return `${c.firstName} ${c.lastName}`;
};

beforeAll(async () => {
  t = await createTestApp();
  teacher = await t.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
  teacher2 = await t.token({ role: 'TEACHER', id: DEMO_TEACHER2_ID });
  parent = await t.token({ role: 'PARENT', id: DEMO_PARENT_ID });
});
afterAll(async () => t.close());
beforeEach(async () => {
  await t.db.delete(notifications);
});

/** A published course with a lesson; 01, 02 and UNKNOWN ACTIVE, 03 COMPLETED, 04 DROPPED. */
async function setup() {
  const course = await createCourse(t, { title: 'Chemistry', ownerId: DEMO_TEACHER_ID });
  const lesson = await createLesson(t, { courseId: course.id, title: 'Acids' });
  for (const id of [stu(1), stu(2), UNKNOWN]) await enroll(t, { courseId: course.id, studentId: id });
  await enroll(t, { courseId: course.id, studentId: stu(3), status: 'COMPLETED' });
  await enroll(t, { courseId: course.id, studentId: stu(4), status: 'DROPPED' });
  return { course, lesson };
}

const startThread = async (path: string, token: string, title = 'A question', body = 'What is a pH?') =>
  expectOk(await t.request('POST', `${path}/discussions`, { token, body: { title, body } }), 201);
const reply = (threadId: string, token: string, body: object) => t.request('POST', `/api/discussions/${threadId}/replies`, { token, body });
const listOf = async (path: string, token: string) => expectOk(await t.request('GET', `${path}/discussions`, { token, query: { perPage: 100 } }));
const detail = (threadId: string, token: string) => t.request('GET', `/api/discussions/${threadId}`, { token });

describe('threads and replies', () => {
  it('course and lesson threads: the course lists both, the lesson its own; names from the CRM, else the generic label', async () => {
    const { course, lesson } = await setup();
    const courseThread = await startThread(`/api/courses/${course.id}`, await tok(stu(1)));
    t.clock.advance(1000);
    const lessonThread = await startThread(`/api/lessons/${lesson.id}`, await tok(UNKNOWN), 'Lesson question');
    expect(courseThread).toMatchObject({
      courseId: course.id,
      lessonId: null,
      title: 'A question',
      body: 'What is a pH?',
      authorId: stu(1),
      authorName: nameOf(stu(1)),
      authorRole: 'STUDENT',
      isPinned: false,
      isLocked: false,
      isHidden: false,
      isDeleted: false,
      replyCount: 0,
    });
    expect(lessonThread).toMatchObject({ lessonId: lesson.id, authorName: `Student ${UNKNOWN}` });
    const staffThread = await startThread(`/api/courses/${course.id}`, teacher, 'Office hours');
    expect(staffThread).toMatchObject({ authorName: 'Taylor Brooks', authorRole: 'TEACHER' });

    expect((await listOf(`/api/courses/${course.id}`, await tok(stu(2)))).map((x: { id: string }) => x.id)).toEqual([staffThread.id, lessonThread.id, courseThread.id]);
    expect((await listOf(`/api/lessons/${lesson.id}`, await tok(stu(2)))).map((x: { id: string }) => x.id)).toEqual([lessonThread.id]);
  });

  it('replies nest under replies of the same thread; the thread author is notified of others’ replies only', async () => {
    const { course } = await setup();
    const thread = await startThread(`/api/courses/${course.id}`, await tok(stu(1)));
    const other = await startThread(`/api/courses/${course.id}`, await tok(stu(2)));
    const r1 = expectOk(await reply(thread.id, await tok(stu(2)), { body: 'Acidity.' }), 201);
    const r2 = expectOk(await reply(thread.id, teacher, { body: 'Correct.', parentReplyId: r1.id }), 201);
    const r3 = expectOk(await reply(thread.id, await tok(stu(1)), { body: 'Thanks!', parentReplyId: r2.id }), 201);
    expect(r2).toMatchObject({ threadId: thread.id, parentReplyId: r1.id, authorName: 'Taylor Brooks', isDeleted: false });
    expectError(await reply(thread.id, await tok(stu(2)), { body: 'x', parentReplyId: 'nope' }), 400, 'VALIDATION_ERROR');
    const foreign = expectOk(await reply(other.id, await tok(stu(1)), { body: 'elsewhere' }), 201);
    expectError(await reply(thread.id, await tok(stu(2)), { body: 'x', parentReplyId: foreign.id }), 400, 'VALIDATION_ERROR');

    const inApp = await t.db
      .select()
      .from(notifications)
      .where(and(eq(notifications.key, 'DISCUSSION_REPLY'), eq(notifications.channel, 'IN_APP')));
    // Two replies by others to 01's thread (the third is 01's own), one by 01 to 02's thread.
    expect(inApp.map((n) => n.recipientId).sort()).toEqual([stu(1), stu(1), stu(2)]);
    expect(inApp.find((n) => n.recipientId === stu(1))).toMatchObject({ title: 'New reply: A question', message: 'Someone replied to your discussion "A question" in Chemistry.' });

    const d = await detail(thread.id, await tok(stu(3)));
    expect(expectOk(d).thread).toMatchObject({ id: thread.id, replyCount: 3 });
    expect(expectOk(d).replies.map((r: { id: string; parentReplyId: string | null }) => [r.id, r.parentReplyId])).toEqual([
      [r1.id, null],
      [r2.id, r1.id],
      [r3.id, r2.id],
    ]);
    expect(d.body.meta).toEqual({ total: 3, page: 1, perPage: 50, totalPages: 1 });
    const page2 = await t.request('GET', `/api/discussions/${thread.id}`, { token: teacher, query: { perPage: 2, page: 2 } });
    expect(expectOk(page2).replies.map((r: { id: string }) => r.id)).toEqual([r3.id]);
    // Latest activity first: the thread replied to last comes first.
    expect((await listOf(`/api/courses/${course.id}`, teacher)).map((x: { id: string }) => x.id)).toEqual([other.id, thread.id]);
  });

  it('stores text as given and returns it as text', async () => {
    const { course } = await setup();
    const body = '<img src=x onerror=alert(1)>\n  **not markdown either**  ';
    const thread = await startThread(`/api/courses/${course.id}`, await tok(stu(1)), '<h1>Title</h1>', body);
    expect(thread).toMatchObject({ title: '<h1>Title</h1>', body });
    const r = expectOk(await reply(thread.id, await tok(stu(2)), { body: `  ${body}` }), 201);
    expect(expectOk(await detail(thread.id, teacher)).replies[0].body).toBe(`  ${body}`);
    expect(r.body).toBe(`  ${body}`);
    expectError(await reply(thread.id, await tok(stu(2)), { body: ' \n ' }), 400, 'VALIDATION_ERROR');
  });
});

describe('who may read and post', () => {
  it('enrolled students (ACTIVE or COMPLETED) and staff; not DROPPED or unenrolled students, nor parents; a draft course is 404 to outsiders', async () => {
    const { course, lesson } = await setup();
    const thread = await startThread(`/api/courses/${course.id}`, await tok(stu(1)));
    expect(await listOf(`/api/courses/${course.id}`, await tok(stu(3)))).toHaveLength(1);
    expectOk(await reply(thread.id, await tok(stu(3)), { body: 'Completed, still here' }), 201);
    expect(await listOf(`/api/lessons/${lesson.id}`, teacher2)).toHaveLength(0);

    for (const token of [await tok(stu(4)), await tok(stu(5)), parent]) {
      expectError(await t.request('GET', `/api/courses/${course.id}/discussions`, { token }), 403, 'ENROLLMENT_REQUIRED');
      expectError(await t.request('GET', `/api/lessons/${lesson.id}/discussions`, { token }), 403, 'ENROLLMENT_REQUIRED');
      expectError(await t.request('POST', `/api/courses/${course.id}/discussions`, { token, body: { title: 'x', body: 'x' } }), 403, 'ENROLLMENT_REQUIRED');
      expectError(await t.request('POST', `/api/lessons/${lesson.id}/discussions`, { token, body: { title: 'x', body: 'x' } }), 403, 'ENROLLMENT_REQUIRED');
      expectError(await detail(thread.id, token), 403, 'ENROLLMENT_REQUIRED');
      expectError(await reply(thread.id, token, { body: 'x' }), 403, 'ENROLLMENT_REQUIRED');
    }
    const draft = await createCourse(t, { status: 'DRAFT', publishedAt: null });
    expectError(await t.request('GET', `/api/courses/${draft.id}/discussions`, { token: await tok(stu(1)) }), 404, 'NOT_FOUND');
    expect(await listOf(`/api/courses/${draft.id}`, teacher)).toEqual([]);
  });
});

describe('edit and delete', () => {
  it('only the author edits or deletes; a deleted reply keeps its place (and the replies under it) without text or author', async () => {
    const { course } = await setup();
    const thread = await startThread(`/api/courses/${course.id}`, await tok(stu(1)));
    const r1 = expectOk(await reply(thread.id, await tok(stu(2)), { body: 'First take' }), 201);
    const r2 = expectOk(await reply(thread.id, await tok(stu(1)), { body: 'Answer to it', parentReplyId: r1.id }), 201);

    for (const token of [await tok(stu(1)), teacher]) {
      expectError(await t.request('PATCH', `/api/discussion-replies/${r1.id}`, { token, body: { body: 'not mine' } }), 403, 'FORBIDDEN');
      expectError(await t.request('DELETE', `/api/discussion-replies/${r1.id}`, { token }), 403, 'FORBIDDEN');
    }
    for (const token of [await tok(stu(2)), teacher]) {
      expectError(await t.request('PATCH', `/api/discussions/${thread.id}`, { token, body: { title: 'not mine' } }), 403, 'FORBIDDEN');
      expectError(await t.request('DELETE', `/api/discussions/${thread.id}`, { token }), 403, 'FORBIDDEN');
    }

    t.clock.advance(5000);
    const edited = expectOk(await t.request('PATCH', `/api/discussion-replies/${r1.id}`, { token: await tok(stu(2)), body: { body: 'Second take' } }));
    expect(edited).toMatchObject({ body: 'Second take', editedAt: t.clock.now().toISOString() });
    const retitled = expectOk(await t.request('PATCH', `/api/discussions/${thread.id}`, { token: await tok(stu(1)), body: { title: 'Sharper question' } }));
    expect(retitled).toMatchObject({ title: 'Sharper question', body: 'What is a pH?', editedAt: t.clock.now().toISOString() });

    expect(expectOk(await t.request('DELETE', `/api/discussion-replies/${r1.id}`, { token: await tok(stu(2)) }))).toEqual({ id: r1.id, deleted: true });
    const after = expectOk(await detail(thread.id, await tok(stu(1))));
    expect(after.replies).toHaveLength(2);
    expect(after.replies[0]).toMatchObject({ id: r1.id, isDeleted: true, body: null, authorId: null, authorName: null, authorRole: null });
    expect(after.replies[1]).toMatchObject({ id: r2.id, parentReplyId: r1.id, body: 'Answer to it', isDeleted: false });
    expect(JSON.stringify(expectOk(await detail(thread.id, teacher)))).not.toContain('Second take');
    expect(after.thread.replyCount).toBe(1);
    expectError(await t.request('PATCH', `/api/discussion-replies/${r1.id}`, { token: await tok(stu(2)), body: { body: 'back' } }), 404, 'NOT_FOUND');
    expectError(await reply(thread.id, await tok(stu(2)), { body: 'x', parentReplyId: r1.id }), 400, 'VALIDATION_ERROR');
  });

  it('a deleted thread stays listed without title, body or author while it has replies, and goes when it has none', async () => {
    const { course } = await setup();
    const withReplies = await startThread(`/api/courses/${course.id}`, await tok(stu(1)), 'Kept');
    expectOk(await reply(withReplies.id, await tok(stu(2)), { body: 'A reply' }), 201);
    const alone = await startThread(`/api/courses/${course.id}`, await tok(stu(1)), 'Alone');
    for (const id of [withReplies.id, alone.id]) {
      expect(expectOk(await t.request('DELETE', `/api/discussions/${id}`, { token: await tok(stu(1)) }))).toEqual({ id, deleted: true });
    }
    const list = await listOf(`/api/courses/${course.id}`, await tok(stu(2)));
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ id: withReplies.id, isDeleted: true, title: null, body: null, authorId: null, authorName: null, replyCount: 1 });
    expect(expectOk(await detail(withReplies.id, await tok(stu(2)))).replies[0]).toMatchObject({ body: 'A reply' });
    expectError(await detail(alone.id, await tok(stu(2))), 404, 'NOT_FOUND');
    expectError(await reply(withReplies.id, await tok(stu(2)), { body: 'more' }), 409, 'CONFLICT');
    expectError(await t.request('PATCH', `/api/discussions/${withReplies.id}`, { token: await tok(stu(1)), body: { title: 'Back' } }), 404, 'NOT_FOUND');
  });
});

describe('moderation', () => {
  it('canManageCourses pins, locks and hides; students get 403; every change is audited', async () => {
    const { course } = await setup();
    const first = await startThread(`/api/courses/${course.id}`, await tok(stu(1)), 'First');
    t.clock.advance(1000);
    const second = await startThread(`/api/courses/${course.id}`, await tok(stu(2)), 'Second');
    const moderate = (id: string, token: string, body: object) => t.request('POST', `/api/discussions/${id}/moderate`, { token, body });

    expectError(await moderate(first.id, await tok(stu(1)), { isPinned: true }), 403, 'FORBIDDEN');
    expectError(await moderate(first.id, teacher, {}), 400, 'VALIDATION_ERROR');

    // Pin: first goes first.
    expect(expectOk(await moderate(first.id, teacher2, { isPinned: true }))).toMatchObject({ isPinned: true });
    expect((await listOf(`/api/courses/${course.id}`, await tok(stu(3)))).map((x: { id: string }) => x.id)).toEqual([first.id, second.id]);

    // Lock: no new replies from anyone, edits still allowed; unlock opens it again.
    expectOk(await moderate(first.id, teacher, { isLocked: true }));
    expectError(await reply(first.id, await tok(stu(2)), { body: 'late' }), 409, 'CONFLICT');
    expectError(await reply(first.id, teacher, { body: 'late' }), 409, 'CONFLICT');
    expectOk(await t.request('PATCH', `/api/discussions/${first.id}`, { token: await tok(stu(1)), body: { body: 'Clarified' } }));
    expectOk(await moderate(first.id, teacher, { isLocked: false }));
    const r = expectOk(await reply(first.id, await tok(stu(2)), { body: 'now open' }), 201);

    // Hide a reply: students see its place only; staff see it with isHidden.
    const hiddenReply = expectOk(await t.request('POST', `/api/discussion-replies/${r.id}/moderate`, { token: teacher, body: { isHidden: true } }));
    expect(hiddenReply).toMatchObject({ isHidden: true, body: 'now open' });
    expectError(await t.request('POST', `/api/discussion-replies/${r.id}/moderate`, { token: await tok(stu(1)), body: { isHidden: false } }), 403, 'FORBIDDEN');
    expect(expectOk(await detail(first.id, await tok(stu(1)))).replies[0]).toMatchObject({ id: r.id, isHidden: true, body: null, authorId: null });
    expect(expectOk(await detail(first.id, await tok(stu(1)))).thread.replyCount).toBe(0);
    expect(expectOk(await detail(first.id, teacher)).replies[0]).toMatchObject({ isHidden: true, body: 'now open', authorId: stu(2) });
    // Its author can no longer reach it to edit.
    expectError(await t.request('PATCH', `/api/discussion-replies/${r.id}`, { token: await tok(stu(2)), body: { body: 'x' } }), 404, 'NOT_FOUND');

    // Hide a thread: gone for students (list and detail), listed for staff.
    expectOk(await moderate(second.id, teacher, { isHidden: true }));
    expect((await listOf(`/api/courses/${course.id}`, await tok(stu(1)))).map((x: { id: string }) => x.id)).toEqual([first.id]);
    expectError(await detail(second.id, await tok(stu(2))), 404, 'NOT_FOUND');
    expectError(await reply(second.id, await tok(stu(2)), { body: 'x' }), 404, 'NOT_FOUND');
    expect((await listOf(`/api/courses/${course.id}`, teacher)).find((x: { id: string }) => x.id === second.id)).toMatchObject({ isHidden: true, title: 'Second' });

    const audit = await t.db.select().from(auditLog).where(eq(auditLog.targetId, first.id)).orderBy(auditLog.id);
    expect(audit.map((a) => [a.action, a.actorId, a.before, a.after])).toEqual([
      ['discussion.moderate', DEMO_TEACHER2_ID, { isPinned: false }, { isPinned: true }],
      ['discussion.moderate', DEMO_TEACHER_ID, { isLocked: false }, { isLocked: true }],
      ['discussion.moderate', DEMO_TEACHER_ID, { isLocked: true }, { isLocked: false }],
    ]);
    const [replyAudit] = await t.db.select().from(auditLog).where(eq(auditLog.targetId, r.id));
    expect(replyAudit).toMatchObject({ action: 'discussion_reply.moderate', targetType: 'discussion_reply', before: { isHidden: false }, after: { isHidden: true } });
  });
});

describe('another institution', () => {
  it('reaches no thread, reply or list of this one (404) and changes nothing', async () => {
    const { course, lesson } = await setup();
    const thread = await startThread(`/api/lessons/${lesson.id}`, await tok(stu(1)));
    const r = expectOk(await reply(thread.id, await tok(stu(2)), { body: 'ours' }), 201);
    const north = [
      await t.token({ role: 'STUDENT', id: NORTH_STUDENT_ID, institutionId: 'inst_north' }),
      await t.token({ role: 'TEACHER', id: NORTH_TEACHER_ID, institutionId: 'inst_north' }),
      await t.token({ role: 'ADMIN', id: NORTH_ADMIN_ID, institutionId: 'inst_north' }),
    ];
    for (const token of north) {
      for (const [method, url, body] of [
        ['GET', `/api/courses/${course.id}/discussions`, undefined],
        ['POST', `/api/courses/${course.id}/discussions`, { title: 'x', body: 'x' }],
        ['GET', `/api/lessons/${lesson.id}/discussions`, undefined],
        ['POST', `/api/lessons/${lesson.id}/discussions`, { title: 'x', body: 'x' }],
        ['GET', `/api/discussions/${thread.id}`, undefined],
        ['POST', `/api/discussions/${thread.id}/replies`, { body: 'x' }],
        ['DELETE', `/api/discussion-replies/${r.id}`, undefined],
      ] as const) {
        expectError(await t.request(method, url, { token, body }), 404, 'NOT_FOUND');
      }
    }
    // Moderation and edits: 404 for their staff, 403 for their student whatever the id (role-based).
    for (const token of north.slice(1)) {
      expectError(await t.request('POST', `/api/discussions/${thread.id}/moderate`, { token, body: { isHidden: true } }), 404, 'NOT_FOUND');
      expectError(await t.request('POST', `/api/discussion-replies/${r.id}/moderate`, { token, body: { isHidden: true } }), 404, 'NOT_FOUND');
      expectError(await t.request('PATCH', `/api/discussions/${thread.id}`, { token, body: { title: 'x' } }), 404, 'NOT_FOUND');
    }
    const d = expectOk(await detail(thread.id, teacher));
    expect(d.thread).toMatchObject({ isHidden: false, title: 'A question' });
    expect(d.replies[0]).toMatchObject({ body: 'ours', isDeleted: false });
  });
});
