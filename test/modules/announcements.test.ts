/**
 * Announcements (issue 14.1; spec 4.9 `/api/courses/{id}/announcements`): whole-course and CRM
 * class/section targeting through the simulator's roster, intersected with ACTIVE enrollments;
 * COURSE_ANNOUNCEMENT for each student reached; visibility per role; pinned-first pagination;
 * PATCH/DELETE by the author or ADMIN; audit rows; isolation from another institution.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, enroll } from '../helpers/factories.js';
import { expectError, expectOk, failingFields } from '../helpers/expect.js';
import { notifications } from '../../src/modules/notifications/notifications.tables.js';
import { announcementRecipients } from '../../src/modules/announcements/announcements.tables.js';
import { auditLog } from '../../src/modules/audit/audit.tables.js';
import { DEMO_ADMIN_ID, DEMO_PARENT_ID, DEMO_TEACHER2_ID, DEMO_TEACHER_ID, NORTH_ADMIN_ID, NORTH_TEACHER_ID } from '../../src/dev/crm-sim/fixtures.js';

const stu = (n: number) => `c_demo_stu_${String(n).padStart(2, '0')}`;

let t: TestApp;
let teacher: string;
let teacher2: string;
let admin: string;
let parent: string;
let northAdmin: string;
let northTeacher: string;
const tokens = new Map<string, string>();
const tok = async (id: string) => {
  if (!tokens.has(id)) tokens.set(id, await t.token({ role: 'STUDENT', id }));
  return tokens.get(id)!;
};

beforeAll(async () => {
  t = await createTestApp();
  teacher = await t.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
  teacher2 = await t.token({ role: 'TEACHER', id: DEMO_TEACHER2_ID });
  admin = await t.token({ role: 'ADMIN', id: DEMO_ADMIN_ID });
  parent = await t.token({ role: 'PARENT', id: DEMO_PARENT_ID });
  northAdmin = await t.token({ role: 'ADMIN', id: NORTH_ADMIN_ID, institutionId: 'inst_north' });
  northTeacher = await t.token({ role: 'TEACHER', id: NORTH_TEACHER_ID, institutionId: 'inst_north' });
});
afterAll(async () => t.close());

beforeEach(async () => {
  t.crmSim.setFault(null);
  await t.db.delete(notifications);
});

/**
 * A published course with enrollments: ACTIVE 01, 02, 06, 07, 11, 16; DROPPED 03; COMPLETED 04.
 * (Simulator sections: 01–05 Grade 6 A, 06–10 Grade 6 B, 11–15 Grade 7 A, 16–20 Grade 7 B.)
 */
async function setup() {
  const course = await createCourse(t, { title: 'History 7', ownerId: DEMO_TEACHER_ID });
  for (const n of [1, 2, 6, 7, 11, 16]) await enroll(t, { courseId: course.id, studentId: stu(n) });
  await enroll(t, { courseId: course.id, studentId: stu(3), status: 'DROPPED' });
  await enroll(t, { courseId: course.id, studentId: stu(4), status: 'COMPLETED' });
  return course;
}

const post = (courseId: string, body: object, token = teacher) => t.request('POST', `/api/courses/${courseId}/announcements`, { token, body });

async function notified(announcementId: string): Promise<string[]> {
  const rows = await t.db
    .select({ recipientId: notifications.recipientId })
    .from(notifications)
    .where(and(eq(notifications.key, 'COURSE_ANNOUNCEMENT'), eq(notifications.channel, 'IN_APP'), sql`${notifications.metadata}->>'announcementId' = ${announcementId}`));
  return rows.map((r) => r.recipientId).sort();
}

async function visibleTo(courseId: string, token: string): Promise<string[]> {
  const res = await t.request('GET', `/api/courses/${courseId}/announcements`, { token, query: { perPage: 100 } });
  return expectOk(res).map((a: { id: string }) => a.id);
}

describe('targeting', () => {
  it('a whole-course announcement reaches every ACTIVE enrollment (not DROPPED, not COMPLETED) and every enrolled student can read it', async () => {
    const course = await setup();
    const res = await post(course.id, { title: 'Welcome', body: 'Read chapter 1.' });
    const a = expectOk(res, 201);
    expect(a).toMatchObject({
      courseId: course.id,
      authorId: DEMO_TEACHER_ID,
      authorName: 'Taylor Brooks',
      title: 'Welcome',
      body: 'Read chapter 1.',
      isPinned: false,
      target: { type: 'COURSE', classIds: [], sectionIds: [] },
      recipientCount: 6,
      editedAt: null,
    });
    expect(await notified(a.id)).toEqual([1, 2, 6, 7, 11, 16].map(stu).sort());
    const [n] = await t.db
      .select()
      .from(notifications)
      .where(and(eq(notifications.recipientId, stu(1)), eq(notifications.key, 'COURSE_ANNOUNCEMENT'), eq(notifications.channel, 'IN_APP')));
    expect(n).toMatchObject({ title: 'History 7: Welcome', message: 'Read chapter 1.' });
    // COMPLETED students read it (they were not notified); DROPPED and never-enrolled ones may not.
    expect(await visibleTo(course.id, await tok(stu(4)))).toEqual([a.id]);
    expectError(await t.request('GET', `/api/courses/${course.id}/announcements`, { token: await tok(stu(3)) }), 403, 'ENROLLMENT_REQUIRED');
    expectError(await t.request('GET', `/api/courses/${course.id}/announcements`, { token: await tok(stu(5)) }), 403, 'ENROLLMENT_REQUIRED');
  });

  it('the notice carries the first 500 characters of a long body, cut between whole characters', async () => {
    const course = await setup();
    const a = expectOk(await post(course.id, { title: 'Long', body: '🎉'.repeat(501) }), 201);
    const [n] = await t.db
      .select()
      .from(notifications)
      .where(
        and(
          eq(notifications.recipientId, stu(1)),
          eq(notifications.key, 'COURSE_ANNOUNCEMENT'),
          eq(notifications.channel, 'IN_APP'),
          sql`${notifications.metadata}->>'announcementId' = ${a.id}`,
        ),
      );
    expect(n!.message).toBe(`${'🎉'.repeat(500)}…`);
    expect((n!.metadata as { message: string }).message).toBe(`${'🎉'.repeat(500)}…`);
  });

  it('a section target reaches the section’s roster in the CRM, intersected with ACTIVE enrollments; only they (and staff) see it', async () => {
    const course = await setup();
    const a = expectOk(await post(course.id, { title: 'Grade 6 A trip', body: 'Bring a coat.', sectionIds: ['sec_demo_g6_a'] }), 201);
    expect(a.target).toEqual({ type: 'CLASS_SECTION', classIds: [], sectionIds: ['sec_demo_g6_a'] });
    // Roster 01–05: 01 and 02 are ACTIVE; 03 DROPPED, 04 COMPLETED, 05 not enrolled.
    expect(a.recipientCount).toBe(2);
    expect(await notified(a.id)).toEqual([stu(1), stu(2)]);
    const recipients = await t.db.select().from(announcementRecipients).where(eq(announcementRecipients.announcementId, a.id));
    expect(recipients.map((r) => r.studentId).sort()).toEqual([stu(1), stu(2)]);
    expect(t.crmSim.requests.some((r) => r.path === '/api/lms/sections/sec_demo_g6_a/students')).toBe(true);

    expect(await visibleTo(course.id, await tok(stu(1)))).toEqual([a.id]);
    expect(await visibleTo(course.id, await tok(stu(6)))).toEqual([]);
    expect(await visibleTo(course.id, await tok(stu(4)))).toEqual([]);
    expect(await visibleTo(course.id, teacher)).toEqual([a.id]);
    expect(await visibleTo(course.id, teacher2)).toEqual([a.id]);
  });

  it('a class target takes every section of the class; classes and sections combine without duplicates', async () => {
    const course = await setup();
    const a = expectOk(await post(course.id, { title: 'Grade 6 and 7 A', body: 'x', classIds: ['cls_demo_g6'], sectionIds: ['sec_demo_g7_a', 'sec_demo_g6_b'] }), 201);
    expect(await notified(a.id)).toEqual([1, 2, 6, 7, 11].map(stu).sort());
    expect(a.recipientCount).toBe(5);
    expect(await visibleTo(course.id, await tok(stu(11)))).toEqual([a.id]);
    expect(await visibleTo(course.id, await tok(stu(16)))).toEqual([]);
  });

  it('resolves the roster when posting: a student who changed section since is targeted by the new one', async () => {
    const course = await setup();
    const moved = t.crmSim.data.inst_demo.students.find((s) => s.contact.id === stu(16))!;
    const original = { ...moved.student.currentEnrolment! };
    moved.student.currentEnrolment = { ...original, classId: 'cls_demo_g6', className: 'Grade 6', sectionId: 'sec_demo_g6_a', sectionName: 'A' };
    try {
      const a = expectOk(await post(course.id, { title: 'Moved', body: 'x', sectionIds: ['sec_demo_g6_a'] }), 201);
      expect(await notified(a.id)).toEqual([stu(1), stu(16), stu(2)].sort());
    } finally {
      moved.student.currentEnrolment = original;
    }
  });

  it('a target nobody enrolled is in is stored and reaches nobody', async () => {
    const course = await setup();
    const a = expectOk(await post(course.id, { title: 'Grade 8', body: 'x', classIds: ['cls_demo_g8'] }), 201);
    expect(a.recipientCount).toBe(0);
    expect(await notified(a.id)).toEqual([]);
    expect(await visibleTo(course.id, await tok(stu(1)))).not.toContain(a.id);
  });

  it('an unknown class or section is 400 naming it; a CRM that cannot answer is 502; neither writes anything', async () => {
    const course = await setup();
    const bad = await post(course.id, { title: 'x', body: 'x', classIds: ['cls_nope'], sectionIds: ['sec_demo_g6_a', 'sec_nope'] });
    expectError(bad, 400, 'VALIDATION_ERROR');
    expect(failingFields(bad).sort()).toEqual(['body.classIds.0', 'body.sectionIds.1']);
    // Another institution's section is unknown here.
    expectError(await post(course.id, { title: 'x', body: 'x', sectionIds: ['sec_northside_g6_a'] }), 400, 'VALIDATION_ERROR');

    t.crmSim.setFault('error500', { pathPrefix: '/api/lms/sections' });
    expectError(await post(course.id, { title: 'x', body: 'x', sectionIds: ['sec_demo_g6_a'] }), 502, 'BAD_GATEWAY');
    t.crmSim.setFault('down');
    expectError(await post(course.id, { title: 'x', body: 'x', classIds: ['cls_demo_g6'] }), 502, 'BAD_GATEWAY');
    t.crmSim.setFault(null);
    expect(await visibleTo(course.id, teacher)).toEqual([]);
    expect(await t.db.select().from(notifications)).toEqual([]);
  });
});

describe('reading and writing', () => {
  it('lists pinned first, then newest first, paginated', async () => {
    const course = await setup();
    const ids: string[] = [];
    for (const [i, pinned] of [false, true, false, false].entries()) {
      t.clock.advance(60_000);
      ids.push(expectOk(await post(course.id, { title: `A${i}`, body: 'x', isPinned: pinned }), 201).id);
    }
    const page1 = await t.request('GET', `/api/courses/${course.id}/announcements`, { token: await tok(stu(1)), query: { perPage: 2 } });
    expect(expectOk(page1).map((a: { id: string }) => a.id)).toEqual([ids[1], ids[3]]);
    expect(page1.body.meta).toEqual({ total: 4, page: 1, perPage: 2, totalPages: 2 });
    const page2 = await t.request('GET', `/api/courses/${course.id}/announcements`, { token: await tok(stu(1)), query: { limit: 2, page: 2 } });
    expect(expectOk(page2).map((a: { id: string }) => a.id)).toEqual([ids[2], ids[0]]);
  });

  it('only canManageCourses posts; a draft course is 404 to learners without an enrollment; a parent may not read', async () => {
    const course = await setup();
    expectError(await post(course.id, { title: 'x', body: 'x' }, await tok(stu(1))), 403, 'FORBIDDEN');
    expectError(await post(course.id, { title: 'x', body: 'x' }, parent), 403, 'FORBIDDEN');
    expectError(await t.request('GET', `/api/courses/${course.id}/announcements`, { token: parent }), 403, 'ENROLLMENT_REQUIRED');
    const draft = await createCourse(t, { status: 'DRAFT', publishedAt: null });
    expectError(await t.request('GET', `/api/courses/${draft.id}/announcements`, { token: await tok(stu(1)) }), 404, 'NOT_FOUND');
    expectOk(await post(draft.id, { title: 'Draft news', body: 'x' }, teacher2), 201);
  });

  it('stores the text as given and returns it as text', async () => {
    const course = await setup();
    const body = '  <b>Bold?</b> <script>alert(1)</script>\n\tTabs & "quotes" — ünïcødé  ';
    const a = expectOk(await post(course.id, { title: 'Markup', body }), 201);
    expect(a.body).toBe(body);
    const listed = expectOk(await t.request('GET', `/api/courses/${course.id}/announcements`, { token: await tok(stu(1)) }));
    expect(listed[0].body).toBe(body);
    expectError(await post(course.id, { title: 'x', body: '   ' }), 400, 'VALIDATION_ERROR');
    expectError(await post(course.id, { title: '', body: 'x' }), 400, 'VALIDATION_ERROR');
    expectError(await post(course.id, { title: 'x', body: 'x'.repeat(20_001) }), 400, 'VALIDATION_ERROR');
    expectError(await post(course.id, { title: 'x', body: 'x', sectionIds: 'sec_demo_g6_a' }), 400, 'VALIDATION_ERROR');
  });

  it('PATCH and DELETE: the author or ADMIN; another teacher and students get 403; each write is audited', async () => {
    const course = await setup();
    const a = expectOk(await post(course.id, { title: 'Old', body: 'Old body' }), 201);
    expectError(await t.request('PATCH', `/api/announcements/${a.id}`, { token: teacher2, body: { title: 'Hijack' } }), 403, 'FORBIDDEN');
    expectError(await t.request('PATCH', `/api/announcements/${a.id}`, { token: await tok(stu(1)), body: { title: 'Hijack' } }), 403, 'FORBIDDEN');
    expectError(await t.request('DELETE', `/api/announcements/${a.id}`, { token: teacher2 }), 403, 'FORBIDDEN');
    expectError(await t.request('PATCH', `/api/announcements/${a.id}`, { token: teacher, body: {} }), 400, 'VALIDATION_ERROR');

    t.clock.advance(1000);
    const edited = expectOk(await t.request('PATCH', `/api/announcements/${a.id}`, { token: teacher, body: { title: 'New', isPinned: true } }));
    expect(edited).toMatchObject({ title: 'New', body: 'Old body', isPinned: true, editedAt: t.clock.now().toISOString() });
    const pinnedOnly = expectOk(await t.request('PATCH', `/api/announcements/${a.id}`, { token: admin, body: { isPinned: false } }));
    expect(pinnedOnly.editedAt).toBe(edited.editedAt);
    // An edit notifies nobody again.
    expect(await notified(a.id)).toHaveLength(6);

    expect(expectOk(await t.request('DELETE', `/api/announcements/${a.id}`, { token: admin }))).toEqual({ id: a.id, deleted: true });
    expect(await visibleTo(course.id, teacher)).toEqual([]);
    expectError(await t.request('PATCH', `/api/announcements/${a.id}`, { token: teacher, body: { title: 'x' } }), 404, 'NOT_FOUND');

    const rows = await t.db.select().from(auditLog).where(eq(auditLog.targetId, a.id)).orderBy(auditLog.id);
    expect(rows.map((r) => [r.action, r.actorId])).toEqual([
      ['announcement.create', DEMO_TEACHER_ID],
      ['announcement.update', DEMO_TEACHER_ID],
      ['announcement.update', DEMO_ADMIN_ID],
      ['announcement.delete', DEMO_ADMIN_ID],
    ]);
    expect(rows[1]).toMatchObject({ before: { title: 'Old', isPinned: false }, after: { title: 'New', isPinned: true } });
    expect(rows[3]!.before).toMatchObject({ title: 'New', courseId: course.id, targetType: 'COURSE' });
  });
});

describe('another institution', () => {
  it('sees, posts, changes and deletes nothing of this one (404)', async () => {
    const course = await setup();
    const a = expectOk(await post(course.id, { title: 'Ours', body: 'x' }), 201);
    for (const token of [northAdmin, northTeacher]) {
      expectError(await t.request('GET', `/api/courses/${course.id}/announcements`, { token }), 404, 'NOT_FOUND');
      expectError(await post(course.id, { title: 'Theirs', body: 'x' }, token), 404, 'NOT_FOUND');
      expectError(await t.request('PATCH', `/api/announcements/${a.id}`, { token, body: { title: 'Theirs' } }), 404, 'NOT_FOUND');
      expectError(await t.request('DELETE', `/api/announcements/${a.id}`, { token }), 404, 'NOT_FOUND');
    }
    expect(await visibleTo(course.id, teacher)).toEqual([a.id]);
  });
});
