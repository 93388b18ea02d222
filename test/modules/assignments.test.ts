/**
 * Assignments and anonymous peer review (issue 11; spec 2.6, 3.2, 4.4): upsert with rubric,
 * submit (files, lateness, resubmission), grading, reviewer allocation, the reviewer queue and
 * detail (anonymous), drafts, submit, flag, finalisation exactly once, instructor override,
 * the moderation view (bounded queries, one CRM lookup per person).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, createLesson, enroll } from '../helpers/factories.js';
import { expectError, expectOk } from '../helpers/expect.js';
import { notifications } from '../../src/modules/notifications/notifications.tables.js';
import { lessons } from '../../src/modules/courses/courses.tables.js';
import { peerReviews, submissions } from '../../src/modules/assignments/assignments.tables.js';
import { planAllocation } from '../../src/modules/assignments/peer-allocation.js';
import { enrollments, lessonProgress } from '../../src/modules/enrollments/enrollments.tables.js';
import { files } from '../../src/modules/files/files.tables.js';
import { newId } from '../../src/platform/ids.js';
import { rawRows } from '../../src/platform/db/client.js';
import { DEMO_TEACHER2_ID, DEMO_TEACHER_ID } from '../../src/dev/crm-sim/fixtures.js';

const stu = (n: number) => `c_demo_stu_${String(n).padStart(2, '0')}`;
const STUDENTS = [1, 2, 4, 5, 6, 7, 8, 9].map(stu);

let t: TestApp;
let teacher: string;
let teacher2: string;
const tokens = new Map<string, string>();
const tok = (id: string) => tokens.get(id)!;

beforeAll(async () => {
  t = await createTestApp();
  teacher = await t.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
  teacher2 = await t.token({ role: 'TEACHER', id: DEMO_TEACHER2_ID });
  for (const id of STUDENTS) tokens.set(id, await t.token({ role: 'STUDENT', id }));
});
afterAll(async () => t.close());

// Each test starts without earlier tests' reviews, submissions and notifications (the same students take part in several).
beforeEach(async () => {
  await t.db.execute(sql`delete from peer_reviews`);
  await t.db.execute(sql`delete from assignment_submissions`);
  await t.db.delete(notifications);
});

const DUE = '2026-03-10T12:00:00.000Z';
const rubric = {
  title: 'Essay rubric',
  criteria: [
    { title: 'Argument', description: 'Clear thesis', maxPoints: 6, order: 1 },
    { title: 'Style', description: 'Readable', maxPoints: 4, order: 2 },
  ],
};

async function setup(opts: { peer?: number; rubric?: boolean; allowLate?: boolean; passingScore?: number; maxScore?: number; enrolled?: string[] } = {}) {
  const course = await createCourse(t, { title: 'Biology 101', ownerId: DEMO_TEACHER_ID });
  const lesson = await createLesson(t, { courseId: course.id, type: 'ASSIGNMENT', title: 'Essay' });
  for (const id of opts.enrolled ?? STUDENTS) await enroll(t, { courseId: course.id, studentId: id });
  const res = await t.request('PUT', `/api/assignments/${lesson.id}`, {
    token: teacher,
    body: {
      title: 'Cell essay',
      instructions: 'Write 500 words on cells.',
      maxScore: opts.maxScore ?? 10,
      passingScore: opts.passingScore,
      dueDate: DUE,
      allowLate: opts.allowLate ?? false,
      isPeerAssessed: !!opts.peer,
      peerReviewCount: opts.peer ?? 0,
      rubric: opts.rubric ? rubric : undefined,
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { course, lesson, assignment: res.body.data };
}

const submitAs = (id: string, lessonId: string, body: object = { textContent: `Work of ${id}` }) =>
  t.request('POST', `/api/assignments/${lessonId}/submit`, { token: tok(id), body });

const notificationsOf = (recipientId: string, key: string) =>
  t.db
    .select()
    .from(notifications)
    .where(and(eq(notifications.recipientId, recipientId), eq(notifications.key, key), eq(notifications.channel, 'IN_APP')));

const progressOf = async (lessonId: string, studentId: string) =>
  (
    await t.db
      .select()
      .from(lessonProgress)
      .where(and(eq(lessonProgress.lessonId, lessonId), eq(lessonProgress.studentId, studentId)))
  )[0];
const enrollmentOf = async (courseId: string, studentId: string) =>
  (
    await t.db
      .select()
      .from(enrollments)
      .where(and(eq(enrollments.courseId, courseId), eq(enrollments.studentId, studentId)))
  )[0];

describe('assignment upsert and read', () => {
  it('PUT creates and replaces the assignment of an ASSIGNMENT lesson, with rubric criteria ids and totalPoints', async () => {
    const { lesson, assignment, course } = await setup({ rubric: true });
    expect(assignment).toMatchObject({
      id: lesson.id,
      lessonId: lesson.id,
      courseId: course.id,
      courseTitle: 'Biology 101',
      title: 'Cell essay',
      maxScore: 10,
      dueDate: DUE,
      isPeerAssessed: false,
    });
    expect(assignment.rubric).toMatchObject({ title: 'Essay rubric', totalPoints: 10 });
    expect(assignment.rubric.criteria.map((c: any) => [c.title, c.maxPoints, typeof c.id])).toEqual([
      ['Argument', 6, 'string'],
      ['Style', 4, 'string'],
    ]);
    const [argument] = assignment.rubric.criteria;
    const again = await t.request('PUT', `/api/assignments/${lesson.id}`, {
      token: teacher,
      body: {
        title: 'Cell essay v2',
        instructions: 'x',
        maxScore: 20,
        dueDate: DUE,
        rubric: {
          title: 'R2',
          criteria: [
            { ...argument, maxPoints: 12 },
            { title: 'Sources', description: '', maxPoints: 8, order: 3 },
          ],
        },
      },
    });
    expect(again.status).toBe(200);
    expect(again.body.data.rubric.criteria[0]).toMatchObject({ id: argument.id, maxPoints: 12 });
    expect(again.body.data.rubric.criteria.map((c: any) => c.title)).toEqual(['Argument', 'Sources']);
    expect(again.body.data.rubric.totalPoints).toBe(20);
    // rubric absent keeps it, null removes it
    const kept = await t.request('PUT', `/api/assignments/${lesson.id}`, { token: teacher, body: { title: 'v3', instructions: 'x', maxScore: 20, dueDate: DUE } });
    expect(kept.body.data.rubric.title).toBe('R2');
    const removed = await t.request('PUT', `/api/assignments/${lesson.id}`, { token: teacher, body: { title: 'v4', instructions: 'x', maxScore: 20, dueDate: DUE, rubric: null } });
    expect(removed.body.data.rubric).toBeNull();

    const student = await t.request('GET', `/api/assignments/${lesson.id}`, { token: tok(STUDENTS[0]!) });
    expect(student.status).toBe(200);
    expect(student.body.data).toMatchObject({ title: 'v4', mySubmission: null });
  });

  it('goes with its lesson when the course is duplicated: same settings and rubric under new ids, no submissions', async () => {
    const { course, lesson, assignment } = await setup({ peer: 2, rubric: true, passingScore: 6 });
    expect((await submitAs(STUDENTS[0]!, lesson.id)).status).toBe(201);
    const copy = expectOk(await t.request('POST', `/api/courses/${course.id}/duplicate`, { token: teacher }), 201);
    const [copiedLesson] = await t.db.select().from(lessons).where(eq(lessons.courseId, copy.id));
    const copied = expectOk(await t.request('GET', `/api/assignments/${copiedLesson!.id}`, { token: teacher }));
    const settings = (a: any) => [a.title, a.instructions, a.maxScore, a.passingScore, a.dueDate, a.allowLate, a.isPeerAssessed, a.peerReviewCount];
    expect(copied).toMatchObject({ id: copiedLesson!.id, lessonId: copiedLesson!.id, courseId: copy.id, courseTitle: 'Biology 101 (copy)' });
    expect(settings(copied)).toEqual(settings(assignment));
    const [copiedRubric, sourceRubric] = [copied.rubric, assignment.rubric];
    expect(copiedRubric.criteria.map((c: any) => [c.title, c.maxPoints, c.order])).toEqual(sourceRubric.criteria.map((c: any) => [c.title, c.maxPoints, c.order]));
    expect(copiedRubric.id).not.toBe(sourceRubric.id);
    expect(copiedRubric.criteria.map((c: any) => c.id)).not.toContain(sourceRubric.criteria[0].id);
    const subs = await t.request('GET', `/api/assignments/${copiedLesson!.id}/submissions`, { token: teacher });
    expect(subs.body.meta?.total ?? subs.body.data.length).toBe(0);
  });

  it('peer-assessed without peerReviewCount: one reviewer for a new assignment, the current count on a later save', async () => {
    const { lesson } = await setup();
    const body = { title: 'Peer', instructions: 'x', maxScore: 10, dueDate: DUE, isPeerAssessed: true };
    expect(expectOk(await t.request('PUT', `/api/assignments/${lesson.id}`, { token: teacher, body }))).toMatchObject({ isPeerAssessed: true, peerReviewCount: 1 });
    expectOk(await t.request('PUT', `/api/assignments/${lesson.id}`, { token: teacher, body: { ...body, peerReviewCount: 3 } }));
    expect(expectOk(await t.request('PUT', `/api/assignments/${lesson.id}`, { token: teacher, body: { ...body, title: 'Peer v2' } }))).toMatchObject({
      title: 'Peer v2',
      peerReviewCount: 3,
    });
    expect(expectOk(await t.request('PUT', `/api/assignments/${lesson.id}`, { token: teacher, body: { ...body, isPeerAssessed: false } }))).toMatchObject({
      isPeerAssessed: false,
      peerReviewCount: 0,
    });
  });

  it('refuses: a lesson of another type (400), a non-owner teacher (403), a student (403), bad bodies (400), unknown lesson (404)', async () => {
    const { lesson, course } = await setup();
    const text = await createLesson(t, { courseId: course.id, type: 'TEXT' });
    const body = { title: 'A', instructions: 'x', maxScore: 10, dueDate: DUE };
    expectError(await t.request('PUT', `/api/assignments/${text.id}`, { token: teacher, body }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('PUT', `/api/assignments/${lesson.id}`, { token: teacher2, body }), 403, 'FORBIDDEN');
    expectError(await t.request('PUT', `/api/assignments/${lesson.id}`, { token: tok(STUDENTS[0]!), body }), 403, 'FORBIDDEN');
    expectError(await t.request('PUT', `/api/assignments/${lesson.id}`, { token: teacher, body: { ...body, maxScore: 0 } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('PUT', `/api/assignments/${lesson.id}`, { token: teacher, body: { ...body, passingScore: 11 } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('PUT', `/api/assignments/${lesson.id}`, { token: teacher, body: { ...body, isPeerAssessed: true, peerReviewCount: 0 } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('PUT', `/api/assignments/${lesson.id}`, { token: teacher, body: { ...body, dueDate: 'tomorrow' } }), 400, 'VALIDATION_ERROR');
    // A criterion id sent twice is refused before anything is written (it was a 500 from the upsert).
    const withRubric = expectOk(await t.request('PUT', `/api/assignments/${lesson.id}`, { token: teacher, body: { ...body, rubric } }));
    const [first] = withRubric.rubric.criteria;
    const twice = { title: 'R', criteria: [first, { ...first, title: 'Again' }] };
    const dup = await t.request('PUT', `/api/assignments/${lesson.id}`, { token: teacher, body: { ...body, rubric: twice } });
    expectError(dup, 400, 'VALIDATION_ERROR');
    expect(dup.body.error.details.fields).toEqual([{ field: 'body.rubric.criteria', message: 'a criterion id appears twice' }]);
    expect(expectOk(await t.request('GET', `/api/assignments/${lesson.id}`, { token: teacher })).rubric.criteria).toEqual(withRubric.rubric.criteria);
    expectError(await t.request('GET', `/api/assignments/${newId()}`, { token: teacher }), 404, 'NOT_FOUND');
    expectError(await t.request('GET', `/api/assignments/${text.id}`, { token: teacher }), 404, 'NOT_FOUND');
  });
});

describe('submit and grade', () => {
  it('submits text and own files (201), resubmits in place, refuses others’ files, empty bodies and non-enrolled people', async () => {
    const { lesson } = await setup({ enrolled: [STUDENTS[0]!, STUDENTS[1]!] });
    const [a, b] = STUDENTS as [string, string];
    const now = t.clock.now();
    const fileA = {
      id: newId(),
      institutionId: 'inst_demo',
      key: `demo/uploads/${newId()}.pdf`,
      name: 'ava-essay.pdf',
      contentType: 'application/pdf',
      size: 10,
      uploadedBy: a,
      createdAt: now,
    };
    const fileB = { ...fileA, id: newId(), key: `demo/uploads/${newId()}.pdf`, uploadedBy: b };
    await t.db.insert(files).values([fileA, fileB]);

    const first = await submitAs(a, lesson.id, { textContent: 'My essay', files: [{ fileId: fileA.id, name: 'essay.pdf' }] });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body.data).toMatchObject({
      id: expect.any(String),
      studentId: a,
      textContent: 'My essay',
      isLate: false,
      status: 'SUBMITTED',
      score: null,
      instructorScore: null,
    });
    expect(first.body.data.files).toEqual([{ fileId: fileA.id, name: 'essay.pdf', contentType: 'application/pdf', size: 10, url: expect.any(String) }]);
    const second = await submitAs(a, lesson.id, { textContent: 'My essay, better' });
    expect(second.status).toBe(201);
    expect(second.body.data.id).toBe(first.body.data.id);
    expect((await t.db.select().from(submissions).where(eq(submissions.assignmentId, lesson.id))).map((s) => s.textContent)).toEqual(['My essay, better']);
    // The course owner hears of each submission.
    expect((await notificationsOf(DEMO_TEACHER_ID, 'TEACHER_NEW_SUBMISSION')).length).toBeGreaterThanOrEqual(2);

    expectError(await submitAs(a, lesson.id, { textContent: 'x', files: [{ fileId: fileB.id, name: 'theirs.pdf' }] }), 400, 'VALIDATION_ERROR');
    expectError(await submitAs(a, lesson.id, { files: [{ key: fileB.key, name: 'theirs.pdf' }] }), 400, 'VALIDATION_ERROR');
    expectError(await submitAs(a, lesson.id, {}), 400, 'VALIDATION_ERROR');
    expectError(await submitAs(a, lesson.id, { textContent: '   ' }), 400, 'VALIDATION_ERROR');
    expectError(await submitAs(STUDENTS[2]!, lesson.id), 403, 'ENROLLMENT_REQUIRED');
    expectError(await t.request('POST', `/api/assignments/${lesson.id}/submit`, { token: teacher, body: { textContent: 'x' } }), 403, 'ENROLLMENT_REQUIRED');
  });

  it('after the due date: 400 unless late work is allowed, then isLate', async () => {
    const strict = await setup({ enrolled: [STUDENTS[0]!] });
    const lenient = await setup({ enrolled: [STUDENTS[0]!], allowLate: true });
    t.clock.set('2026-03-11T00:00:00.000Z');
    try {
      expectError(await submitAs(STUDENTS[0]!, strict.lesson.id), 400, 'VALIDATION_ERROR');
      const late = await submitAs(STUDENTS[0]!, lenient.lesson.id);
      expect(late.status).toBe(201);
      expect(late.body.data.isLate).toBe(true);
    } finally {
      t.clock.set('2026-03-02T09:00:00.000Z');
    }
  });

  it('grading: staff only, 0..maxScore, GRADED, ASSESS_GRADED {submissionId, score}, completes the lesson when passing, no resubmission after', async () => {
    const { lesson } = await setup({ enrolled: [STUDENTS[0]!, STUDENTS[1]!], passingScore: 6 });
    const [a, b] = STUDENTS as [string, string];
    const subA = (await submitAs(a, lesson.id)).body.data;
    const subB = (await submitAs(b, lesson.id)).body.data;
    expectError(await t.request('POST', `/api/assignments/${lesson.id}/grade`, { token: tok(a), body: { submissionId: subA.id, score: 10 } }), 403, 'FORBIDDEN');
    expectError(await t.request('POST', `/api/assignments/${lesson.id}/grade`, { token: teacher, body: { submissionId: subA.id, score: 11 } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('POST', `/api/assignments/${lesson.id}/grade`, { token: teacher, body: { submissionId: subA.id, score: -1 } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('POST', `/api/assignments/${lesson.id}/grade`, { token: teacher, body: { submissionId: newId(), score: 5 } }), 404, 'NOT_FOUND');

    const graded = await t.request('POST', `/api/assignments/${lesson.id}/grade`, { token: teacher, body: { submissionId: subA.id, score: 8, feedback: 'Good' } });
    expect(graded.status).toBe(200);
    expect(graded.body.data).toMatchObject({ id: subA.id, status: 'GRADED', score: 8, instructorScore: 8, feedback: 'Good', gradedAt: expect.any(String) });
    const [note] = await notificationsOf(a, 'ASSESS_GRADED');
    expect(note!.metadata).toMatchObject({ submissionId: subA.id, score: 8 });
    const [progress] = await t.db
      .select()
      .from(lessonProgress)
      .where(and(eq(lessonProgress.lessonId, lesson.id), eq(lessonProgress.studentId, a)));
    expect(progress).toMatchObject({ completed: true, score: 80 });

    // Below the passing score: graded, not completed.
    await t.request('POST', `/api/assignments/${lesson.id}/grade`, { token: teacher, body: { submissionId: subB.id, score: 3 } });
    const failed = await t.db
      .select()
      .from(lessonProgress)
      .where(and(eq(lessonProgress.lessonId, lesson.id), eq(lessonProgress.studentId, b)));
    expect(failed.filter((p) => p.completed)).toEqual([]);

    expectError(await submitAs(a, lesson.id), 409, 'CONFLICT');

    const list = await t.request('GET', `/api/assignments/${lesson.id}/submissions`, { token: teacher, query: { perPage: 1 } });
    expect(list.status).toBe(200);
    expect(list.body.meta).toEqual({ total: 2, page: 1, perPage: 1, totalPages: 2 });
    expect(list.body.data[0].studentName).toEqual(expect.any(String));
    expect(list.body.data[0].studentName).not.toMatch(/^Student /);
    expectError(await t.request('GET', `/api/assignments/${lesson.id}/submissions`, { token: tok(a) }), 403, 'FORBIDDEN');

    // maxScore cannot go below a grade given (8 would read as 160 % of 5); down to it is fine.
    const settings = { title: 'Cell essay', instructions: 'x', dueDate: DUE };
    const lowered = await t.request('PUT', `/api/assignments/${lesson.id}`, { token: teacher, body: { ...settings, maxScore: 5 } });
    expectError(lowered, 409, 'CONFLICT');
    expect(lowered.body.error.details).toEqual({ highestGrade: 8 });
    expect(expectOk(await t.request('PUT', `/api/assignments/${lesson.id}`, { token: teacher, body: { ...settings, maxScore: 8 } })).maxScore).toBe(8);
  });
});

describe('a grade is the grader’s action, not the learner’s', () => {
  it('grading (passing or not) leaves the enrollment’s lastAccessedAt and the learner’s streak days as they were', async () => {
    const { lesson, course } = await setup({ enrolled: [STUDENTS[0]!, STUDENTS[1]!], passingScore: 6 });
    const [a, b] = STUDENTS as [string, string];
    const subA = (await submitAs(a, lesson.id)).body.data;
    const subB = (await submitAs(b, lesson.id)).body.data;
    const accessed = async () =>
      Object.fromEntries((await t.db.select().from(enrollments).where(eq(enrollments.courseId, course.id))).map((e) => [e.studentId, e.lastAccessedAt?.toISOString() ?? null]));
    const daysOf = async (id: string) =>
      (await rawRows<{ day: string }>(t.db, sql`select day::text from gamification_activity_days where student_id = ${id} order by day`)).map((r) => r.day);
    const before = await accessed();
    const [daysA, daysB] = [await daysOf(a), await daysOf(b)];
    // The teacher grades two days later: one pass (completes the lesson), one fail.
    t.clock.advance(2 * 86_400_000);
    try {
      expectOk(await t.request('POST', `/api/assignments/${lesson.id}/grade`, { token: teacher, body: { submissionId: subA.id, score: 8 } }));
      expectOk(await t.request('POST', `/api/assignments/${lesson.id}/grade`, { token: teacher, body: { submissionId: subB.id, score: 3 } }));
      expect(await accessed()).toEqual(before);
      expect(await daysOf(a)).toEqual(daysA);
      expect(await daysOf(b)).toEqual(daysB);
      // The points of the pass are still the learner's.
      expect(await rawRows(t.db, sql`select kind from gamification_points where student_id = ${a} and kind = 'ASSIGNMENT_PASSED'`)).not.toHaveLength(0);
    } finally {
      t.clock.set('2026-03-02T09:00:00.000Z');
    }
  });
});

describe('grades on the lesson and the enrollment', () => {
  it('a passing grade completes the course with the grade as finalScore; a regrade below the pass mark replaces the lesson score and the finalScore', async () => {
    const a = STUDENTS[0]!;
    const { lesson, course } = await setup({ enrolled: [a], passingScore: 6 });
    const sub = (await submitAs(a, lesson.id)).body.data;
    const grade = (score: number) => t.request('POST', `/api/assignments/${lesson.id}/grade`, { token: teacher, body: { submissionId: sub.id, score } });

    expect((await grade(8)).status).toBe(200);
    expect(await progressOf(lesson.id, a)).toMatchObject({ completed: true, score: 80 });
    expect(await enrollmentOf(course.id, a)).toMatchObject({ status: 'COMPLETED', progress: 100, finalScore: 80 });
    const listed = await t.request('GET', `/api/courses/${course.id}/enrollments`, { token: teacher });
    expect(listed.body.data.find((e: any) => e.studentId === a)).toMatchObject({ status: 'COMPLETED', finalScore: 80 });

    // The regrade below the pass mark: the lesson keeps its completion, its score and the final score follow.
    expect((await grade(3)).status).toBe(200);
    expect(await progressOf(lesson.id, a)).toMatchObject({ completed: true, score: 30 });
    expect(await enrollmentOf(course.id, a)).toMatchObject({ status: 'COMPLETED', finalScore: 30 });

    expect((await grade(9.5)).status).toBe(200);
    expect(await progressOf(lesson.id, a)).toMatchObject({ score: 95 });
    expect(await enrollmentOf(course.id, a)).toMatchObject({ finalScore: 95 });
  });

  it('a first grade below the pass mark records the score without completing the lesson', async () => {
    const a = STUDENTS[1]!;
    const { lesson, course } = await setup({ enrolled: [a], passingScore: 6 });
    const sub = (await submitAs(a, lesson.id)).body.data;
    await t.request('POST', `/api/assignments/${lesson.id}/grade`, { token: teacher, body: { submissionId: sub.id, score: 4 } });
    expect(await progressOf(lesson.id, a)).toMatchObject({ completed: false, score: 40 });
    expect(await enrollmentOf(course.id, a)).toMatchObject({ status: 'ACTIVE', finalScore: null });
  });
});

describe('reviewer allocation', () => {
  it('plans N reviewers per submission once N + 1 have submitted, never the author, balanced within one', () => {
    const subs = (k: number) => Array.from({ length: k }, (_, i) => ({ submissionId: `s${i}`, studentId: `p${i}` }));
    expect(planAllocation(2, subs(2), []).create).toEqual([]);
    let existing: Array<{ id: string | null; submissionId: string; reviewerId: string; movable: boolean }> = [];
    for (let k = 3; k <= 9; k++) {
      const plan = planAllocation(2, subs(k), existing);
      existing = existing.map((r) => ({ ...r, reviewerId: plan.move.find((m) => m.id === r.id)?.to ?? r.reviewerId }));
      existing.push(...plan.create.map((r, i) => ({ ...r, id: `r${k}_${i}` })));
      for (const s of subs(k)) {
        const mine = existing.filter((r) => r.submissionId === s.submissionId);
        expect(mine).toHaveLength(2);
        expect(mine.every((r) => r.reviewerId !== s.studentId)).toBe(true);
        expect(new Set(mine.map((r) => r.reviewerId)).size).toBe(2);
      }
      const loads = subs(k).map((s) => existing.filter((r) => r.reviewerId === s.studentId).length);
      expect(Math.max(...loads) - Math.min(...loads), `k=${k}: ${loads}`).toBeLessThanOrEqual(1);
    }
  });

  it('through the API: reviewers arrive with the (N+1)th submission, late submitters review too, reviewers are told', async () => {
    const { lesson } = await setup({ peer: 2 });
    const who = STUDENTS.slice(0, 6);
    await submitAs(who[0]!, lesson.id);
    await submitAs(who[1]!, lesson.id);
    expect(await t.db.select().from(peerReviews).where(eq(peerReviews.assignmentId, lesson.id))).toEqual([]);
    for (const id of who.slice(2)) expect((await submitAs(id, lesson.id)).status).toBe(201);
    const reviews = await t.db.select().from(peerReviews).where(eq(peerReviews.assignmentId, lesson.id));
    const subs = await t.db.select().from(submissions).where(eq(submissions.assignmentId, lesson.id));
    for (const s of subs) {
      const mine = reviews.filter((r) => r.submissionId === s.id);
      expect(mine).toHaveLength(2);
      expect(mine.some((r) => r.reviewerId === s.studentId)).toBe(false);
    }
    const loads = who.map((id) => reviews.filter((r) => r.reviewerId === id).length);
    expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(1);
    expect(Math.min(...loads)).toBeGreaterThan(0);
    expect((await notificationsOf(who[5]!, 'PEER_REVIEW_ASSIGNED')).length).toBeGreaterThan(0);
  });

  it('switching peer review on, or raising N, after students submitted allocates at once (issue 11: every submission has its N reviewers)', async () => {
    const { lesson } = await setup();
    const who = STUDENTS.slice(0, 4);
    for (const id of who) expect((await submitAs(id, lesson.id)).status).toBe(201);
    const body = { title: 'Cell essay', instructions: 'x', maxScore: 10, dueDate: DUE, isPeerAssessed: true, peerReviewCount: 1 };
    const reviewsPerSubmission = async () => {
      const reviews = await t.db.select().from(peerReviews).where(eq(peerReviews.assignmentId, lesson.id));
      const subs = await t.db.select().from(submissions).where(eq(submissions.assignmentId, lesson.id));
      for (const s of subs) expect(reviews.some((r) => r.submissionId === s.id && r.reviewerId === s.studentId)).toBe(false);
      return subs.map((s) => reviews.filter((r) => r.submissionId === s.id).length);
    };
    expectOk(await t.request('PUT', `/api/assignments/${lesson.id}`, { token: teacher, body }));
    expect(await reviewsPerSubmission()).toEqual([1, 1, 1, 1]);
    expect((await notificationsOf(who[0]!, 'PEER_REVIEW_ASSIGNED')).length).toBeGreaterThan(0);
    expectOk(await t.request('PUT', `/api/assignments/${lesson.id}`, { token: teacher, body: { ...body, peerReviewCount: 2 } }));
    expect(await reviewsPerSubmission()).toEqual([2, 2, 2, 2]);
    // Lowering N keeps the reviews already assigned.
    expectOk(await t.request('PUT', `/api/assignments/${lesson.id}`, { token: teacher, body }));
    expect(await reviewsPerSubmission()).toEqual([2, 2, 2, 2]);
  });
});

describe('reviewer allocation after reviews were started', () => {
  /** Every submission has at least n reviewers, none its author, none twice; loads within one; everyone who submitted reviews. */
  async function expectPinnedRule(lessonId: string, n: number) {
    const reviews = await t.db.select().from(peerReviews).where(eq(peerReviews.assignmentId, lessonId));
    const subs = await t.db.select().from(submissions).where(eq(submissions.assignmentId, lessonId));
    for (const s of subs) {
      const mine = reviews.filter((r) => r.submissionId === s.id);
      expect(mine.length, `reviewers of ${s.studentId}`).toBeGreaterThanOrEqual(n);
      expect(mine.some((r) => r.reviewerId === s.studentId)).toBe(false);
      expect(new Set(mine.map((r) => r.reviewerId)).size).toBe(mine.length);
    }
    const loads = subs.map((s) => reviews.filter((r) => r.reviewerId === s.studentId).length);
    expect(Math.max(...loads) - Math.min(...loads), `loads ${loads}`).toBeLessThanOrEqual(1);
    expect(Math.min(...loads)).toBeGreaterThan(0);
    return { reviews, subs };
  }

  it('N = 1: A and B review each other and submit; C submits late and still gets a reviewer and a review to do', async () => {
    const [a, b, c] = STUDENTS as [string, string, string];
    const { lesson, assignment } = await setup({ peer: 1, rubric: true, enrolled: [a, b, c] });
    await submitAs(a, lesson.id);
    await submitAs(b, lesson.id);
    const first = await t.db.select().from(peerReviews).where(eq(peerReviews.assignmentId, lesson.id));
    expect(first).toHaveLength(2);
    for (const r of first) {
      const res = await t.request('POST', `/api/peer-reviews/${r.id}/submit`, { token: tok(r.reviewerId), body: { rubricScores: fullScores(assignment, 5, 3) } });
      expect(res.status, res.raw).toBe(200);
    }
    expect((await submitAs(c, lesson.id)).status).toBe(201);
    const { reviews, subs } = await expectPinnedRule(lesson.id, 1);
    const subC = subs.find((s) => s.studentId === c)!;
    expect(reviews.filter((r) => r.submissionId === subC.id)).toHaveLength(1);
    // The finished reviews stayed where they were.
    for (const r of first) expect(reviews.find((x) => x.id === r.id)).toMatchObject({ reviewerId: r.reviewerId, status: 'SUBMITTED' });
    // C is told and sees the review in their queue, anonymously.
    expect(await notificationsOf(c, 'PEER_REVIEW_ASSIGNED')).toHaveLength(1);
    const queue = await t.request('GET', '/api/me/peer-reviews', { token: tok(c) });
    expect(queue.body.data.pendingCount).toBe(1);
    const mine = queue.body.data.reviews[0];
    expect(await t.request('POST', `/api/peer-reviews/${mine.id}/submit`, { token: tok(c), body: { rubricScores: fullScores(assignment, 6, 4) } })).toMatchObject({ status: 200 });
  });

  it('N = 2: drafted reviews are never moved; a late submitter gets duties through extra reviews, and finalisation waits for them', async () => {
    const [a, b, c, d] = STUDENTS as [string, string, string, string];
    const { lesson, assignment } = await setup({ peer: 2, rubric: true, enrolled: [a, b, c, d] });
    for (const id of [a, b, c]) await submitAs(id, lesson.id);
    const first = await t.db.select().from(peerReviews).where(eq(peerReviews.assignmentId, lesson.id));
    expect(first).toHaveLength(6);
    for (const r of first) {
      expect((await t.request('PATCH', `/api/peer-reviews/${r.id}`, { token: tok(r.reviewerId), body: { feedback: `draft by ${r.reviewerId}` } })).status).toBe(200);
    }
    expect((await submitAs(d, lesson.id)).status).toBe(201);
    const { reviews, subs } = await expectPinnedRule(lesson.id, 2);
    for (const r of first) expect(reviews.find((x) => x.id === r.id)).toMatchObject({ reviewerId: r.reviewerId, feedback: `draft by ${r.reviewerId}` });
    const byD = reviews.filter((r) => r.reviewerId === d);
    expect(byD.length).toBeGreaterThanOrEqual(1);

    // A submission D reviews as an extra reviewer finalises only once D's review is in too.
    const extra = byD[0]!;
    const target = subs.find((s) => s.id === extra.submissionId)!;
    const others = reviews.filter((r) => r.submissionId === target.id && r.reviewerId !== d);
    for (const r of others) {
      const res = await t.request('POST', `/api/peer-reviews/${r.id}/submit`, { token: tok(r.reviewerId), body: { rubricScores: fullScores(assignment, 6, 4) } });
      expect(res.body.data.aggregate.finalisedNow).toBe(false);
    }
    const last = await t.request('POST', `/api/peer-reviews/${extra.id}/submit`, { token: tok(d), body: { rubricScores: fullScores(assignment, 3, 1) } });
    const total = others.length * 10 + 4;
    expect(last.body.data.aggregate).toMatchObject({
      reviewsAssigned: others.length + 1,
      finalisedNow: true,
      peerScoreAverage: Math.round((total / (others.length + 1)) * 100) / 100,
    });
  });

  it('many late submitters after everything was reviewed keep the rule', async () => {
    const who = STUDENTS.slice(0, 7);
    const { lesson, assignment } = await setup({ peer: 2, rubric: true, enrolled: who });
    for (const id of who.slice(0, 3)) await submitAs(id, lesson.id);
    for (const late of who.slice(3)) {
      // Everything assigned so far is finished before the next one submits.
      const open = await t.db
        .select()
        .from(peerReviews)
        .where(and(eq(peerReviews.assignmentId, lesson.id), eq(peerReviews.status, 'PENDING')));
      for (const r of open) await t.request('POST', `/api/peer-reviews/${r.id}/submit`, { token: tok(r.reviewerId), body: { rubricScores: fullScores(assignment, 4, 2) } });
      expect((await submitAs(late, lesson.id)).status).toBe(201);
      await expectPinnedRule(lesson.id, 2);
    }
  });
});

/** A peer-assessed assignment where `authors` submitted and every submission has its N reviewers. */
async function peerSetup(n: number, authors: string[], withRubric = true) {
  const setupResult = await setup({ peer: n, rubric: withRubric, enrolled: authors });
  for (const [i, id] of authors.entries()) expect((await submitAs(id, setupResult.lesson.id, { textContent: `Essay number ${i}: ${'x'.repeat(300)}` })).status).toBe(201);
  const reviews = await t.db.select().from(peerReviews).where(eq(peerReviews.assignmentId, setupResult.lesson.id));
  const subs = await t.db.select().from(submissions).where(eq(submissions.assignmentId, setupResult.lesson.id));
  return { ...setupResult, reviews, subs };
}

const fullScores = (assignment: any, a: number, b: number) => ({ [assignment.rubric.criteria[0].id]: a, [assignment.rubric.criteria[1].id]: b });

describe('peer review: reviewer side', () => {
  it('queue, detail, draft, submit and flag are anonymous: the author’s id, name and file names appear nowhere', async () => {
    const authors = STUDENTS.slice(0, 3);
    const { lesson, assignment, reviews, subs } = await peerSetup(2, authors);
    const review = reviews[0]!;
    const author = subs.find((s) => s.id === review.submissionId)!.studentId;
    const authorName = (await t.deps.crm.displayNameOrNull('demo', author))!;
    expect(authorName).toBeTruthy();
    // The author attaches a file whose name carries their name, also after the last dot: the
    // reviewer's name for it takes its extension from the stored content type.
    const file = {
      id: newId(),
      institutionId: 'inst_demo',
      key: `demo/uploads/${newId()}.pdf`,
      name: 'f.pdf',
      contentType: 'application/pdf',
      size: 10,
      uploadedBy: author,
      createdAt: t.clock.now(),
    };
    await t.db.insert(files).values(file);
    expect(
      (await submitAs(author, lesson.id, { textContent: 'Essay: ' + 'y'.repeat(300), files: [{ fileId: file.id, name: `${authorName} essay.${authorName.split(' ').pop()}` }] }))
        .status,
    ).toBe(201);
    const reviewer = tok(review.reviewerId);
    const bodies: string[] = [];
    const keep = <R extends { raw: string; status: number }>(res: R) => {
      expect(res.status, res.raw).toBeLessThan(300);
      bodies.push(res.raw);
      return res;
    };

    const queue = keep(await t.request('GET', '/api/me/peer-reviews', { token: reviewer }));
    expect(queue.body.data.pendingCount).toBe(2);
    expect(queue.body.data.total).toBe(2);
    const item = queue.body.data.reviews.find((r: any) => r.id === review.id);
    expect(item).toMatchObject({
      status: 'PENDING',
      score: null,
      assignment: { id: lesson.id, title: 'Cell essay', maxScore: 10, dueDate: DUE, courseTitle: 'Biology 101' },
      submission: { fileCount: 1 },
    });
    expect([...item.submission.textContentPreview]).toHaveLength(240);
    keep(await t.request('GET', '/api/v1/me/peer-reviews', { token: reviewer, query: { status: 'PENDING,SUBMITTED,FLAGGED' } }));
    const detail = keep(await t.request('GET', `/api/peer-reviews/${review.id}`, { token: reviewer }));
    expect(detail.body.data.assignment).toMatchObject({ id: lesson.id, instructions: 'Write 500 words on cells.' });
    expect(detail.body.data.rubric.criteria).toHaveLength(2);
    expect(detail.body.data.submission).toEqual({
      id: review.submissionId,
      submittedAt: expect.any(String),
      textContent: expect.any(String),
      files: [{ id: file.id, name: 'Attachment 1.pdf', contentType: 'application/pdf', size: 10, url: expect.any(String) }],
      isLate: false,
    });
    keep(await t.request('GET', `/api/v1/peer-reviews/${review.id}`, { token: reviewer }));
    const draft = keep(
      await t.request('PATCH', `/api/peer-reviews/${review.id}`, {
        token: reviewer,
        body: { feedback: 'Draft', status: 'SUBMITTED', rubricScores: { [assignment.rubric.criteria[0].id]: 5 } },
      }),
    );
    expect(draft.body.data).toMatchObject({ status: 'PENDING', feedback: 'Draft', rubricScores: { [assignment.rubric.criteria[0].id]: 5 } });
    const submitted = keep(
      await t.request('POST', `/api/peer-reviews/${review.id}/submit`, { token: reviewer, body: { rubricScores: fullScores(assignment, 5, 3), feedback: 'Nice' } }),
    );
    expect(submitted.body.data).toEqual({ status: 'SUBMITTED', score: 8, aggregate: { peerScoreAverage: 8, reviewsSubmitted: 1, reviewsAssigned: 2, finalisedNow: false } });
    const other = reviews.find((r) => r.reviewerId === review.reviewerId && r.id !== review.id)!;
    keep(await t.request('PATCH', `/api/v1/peer-reviews/${other.id}`, { token: reviewer, body: { feedback: 'Looks copied' } }));
    const flagged = keep(await t.request('POST', `/api/v1/peer-reviews/${other.id}/flag`, { token: reviewer, body: { reason: 'Copied from the web' } }));
    expect(flagged.body.data).toEqual({ status: 'FLAGGED' });
    // The author's other reviewer works through the /api/v1 forms (bearer) too.
    const second = reviews.find((r) => r.submissionId === review.submissionId && r.reviewerId !== review.reviewerId)!;
    const secondToken = tok(second.reviewerId);
    keep(await t.request('GET', '/api/v1/me/peer-reviews', { token: secondToken }));
    keep(await t.request('GET', `/api/v1/peer-reviews/${second.id}`, { token: secondToken }));
    const v1Draft = keep(await t.request('PATCH', `/api/v1/peer-reviews/${second.id}`, { token: secondToken, body: { feedback: 'v1 draft' } }));
    expect(v1Draft.body.data).toMatchObject({ status: 'PENDING', feedback: 'v1 draft' });
    const v1Submit = keep(await t.request('POST', `/api/v1/peer-reviews/${second.id}/submit`, { token: secondToken, body: { rubricScores: fullScores(assignment, 6, 4) } }));
    expect(v1Submit.body.data).toMatchObject({ status: 'SUBMITTED', score: 10, aggregate: { reviewsSubmitted: 2, reviewsAssigned: 2, finalisedNow: true } });

    for (const raw of bodies) {
      for (const s of subs.filter((x) => x.studentId !== review.reviewerId)) expect(raw).not.toContain(s.studentId);
      expect(raw).not.toContain(authorName);
      expect(raw).not.toContain('essay.pdf');
    }
  });

  it('the queue filters by status: SUBMITTED, FLAGGED, a comma list; pendingCount counts PENDING whatever the filter', async () => {
    const { assignment, reviews } = await peerSetup(2, STUDENTS.slice(0, 3));
    const reviewer = reviews[0]!.reviewerId;
    const [r1, r2] = reviews.filter((r) => r.reviewerId === reviewer) as [any, any];
    const token = tok(reviewer);
    const queue = async (status?: string) => {
      const res = await t.request('GET', '/api/me/peer-reviews', { token, ...(status ? { query: { status } } : {}) });
      expect(res.status, res.raw).toBe(200);
      return { ids: res.body.data.reviews.map((r: any) => `${r.id}:${r.status}`).sort(), total: res.body.data.total, pending: res.body.data.pendingCount };
    };
    expect(await queue()).toEqual({ ids: [`${r1.id}:PENDING`, `${r2.id}:PENDING`].sort(), total: 2, pending: 2 });
    await t.request('POST', `/api/peer-reviews/${r1.id}/submit`, { token, body: { rubricScores: fullScores(assignment, 4, 4) } });
    await t.request('POST', `/api/peer-reviews/${r2.id}/flag`, { token, body: { reason: 'Empty essay' } });
    expect(await queue()).toEqual({ ids: [], total: 0, pending: 0 });
    expect(await queue('SUBMITTED')).toEqual({ ids: [`${r1.id}:SUBMITTED`], total: 1, pending: 0 });
    expect(await queue('FLAGGED')).toEqual({ ids: [`${r2.id}:FLAGGED`], total: 1, pending: 0 });
    expect(await queue('SUBMITTED,FLAGGED')).toEqual({ ids: [`${r1.id}:SUBMITTED`, `${r2.id}:FLAGGED`].sort(), total: 2, pending: 0 });
    expect(await queue('PENDING,FLAGGED')).toEqual({ ids: [`${r2.id}:FLAGGED`], total: 1, pending: 0 });
    // Spec 3.2: submit sets submittedAt, a flag stores its reason and leaves submittedAt unset.
    const both = await t.request('GET', '/api/me/peer-reviews', { token, query: { status: 'SUBMITTED,FLAGGED' } });
    const byId = new Map(both.body.data.reviews.map((r: any) => [r.id, r]));
    expect(byId.get(r1.id)).toMatchObject({ status: 'SUBMITTED', submittedAt: t.clock.now().toISOString() });
    expect(byId.get(r2.id)).toMatchObject({ status: 'FLAGGED', submittedAt: null });
    expectError(await t.request('GET', '/api/me/peer-reviews', { token, query: { status: 'DONE' } }), 400, 'VALIDATION_ERROR');
  });

  it('only the assigned reviewer sees a review: the author, other students and staff get 404', async () => {
    const { reviews, subs } = await peerSetup(1, STUDENTS.slice(0, 2));
    const review = reviews[0]!;
    const author = subs.find((s) => s.id === review.submissionId)!.studentId;
    for (const token of [tok(author), tok(STUDENTS[5]!), teacher]) {
      expectError(await t.request('GET', `/api/peer-reviews/${review.id}`, { token }), 404, 'NOT_FOUND');
      expectError(await t.request('PATCH', `/api/peer-reviews/${review.id}`, { token, body: { feedback: 'x' } }), 404, 'NOT_FOUND');
      expectError(await t.request('POST', `/api/peer-reviews/${review.id}/submit`, { token, body: { rubricScores: {} } }), 404, 'NOT_FOUND');
      expectError(await t.request('POST', `/api/peer-reviews/${review.id}/flag`, { token, body: { reason: 'abc' } }), 404, 'NOT_FOUND');
    }
  });

  it('validates scores and reasons; a finished review refuses drafts and second submits with 409', async () => {
    const { assignment, reviews } = await peerSetup(1, STUDENTS.slice(0, 2));
    const [r1, r2] = reviews as [any, any];
    const as = tok(r1.reviewerId);
    const [c1, c2] = assignment.rubric.criteria;
    expectError(await t.request('POST', `/api/peer-reviews/${r1.id}/submit`, { token: as, body: { rubricScores: { [c1.id]: 5 } } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('POST', `/api/peer-reviews/${r1.id}/submit`, { token: as, body: { rubricScores: { [c1.id]: 7, [c2.id]: 1 } } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('POST', `/api/peer-reviews/${r1.id}/submit`, { token: as, body: { rubricScores: { [c1.id]: 1, [c2.id]: 1, nope: 1 } } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('POST', `/api/peer-reviews/${r1.id}/submit`, { token: as, body: { rubricScores: { [c1.id]: -1, [c2.id]: 1 } } }), 400, 'VALIDATION_ERROR');
    const short = await t.request('POST', `/api/peer-reviews/${r1.id}/flag`, { token: as, body: { reason: 'no' } });
    expectError(short, 400, 'VALIDATION_ERROR');
    // Said once, not by both the length check and the code-point count.
    expect(short.body.error.details.fields).toEqual([{ field: 'body.reason', message: 'must be 3 to 500 characters after trimming' }]);
    expectError(await t.request('POST', `/api/peer-reviews/${r1.id}/flag`, { token: as, body: { reason: 'x'.repeat(501) } }), 400, 'VALIDATION_ERROR');
    // Characters are code points (spec 8): 501 emoji are too many, 500 are not (below).
    expectError(await t.request('POST', `/api/peer-reviews/${r1.id}/flag`, { token: as, body: { reason: '🚩'.repeat(501) } }), 400, 'VALIDATION_ERROR');
    expect((await t.request('POST', `/api/peer-reviews/${r1.id}/submit`, { token: as, body: { rubricScores: { [c1.id]: 6, [c2.id]: 4 } } })).status).toBe(200);
    expectError(await t.request('PATCH', `/api/peer-reviews/${r1.id}`, { token: as, body: { feedback: 'change' } }), 409, 'CONFLICT');
    expectError(await t.request('POST', `/api/peer-reviews/${r1.id}/submit`, { token: as, body: { rubricScores: { [c1.id]: 1, [c2.id]: 1 } } }), 409, 'CONFLICT');
    expectError(await t.request('POST', `/api/peer-reviews/${r1.id}/flag`, { token: as, body: { reason: 'late flag' } }), 409, 'CONFLICT');
    const by2 = tok(r2.reviewerId);
    const flagged = await t.request('POST', `/api/peer-reviews/${r2.id}/flag`, { token: by2, body: { reason: '🚩'.repeat(500) } });
    expect(flagged.status, JSON.stringify(flagged.body)).toBe(200);
    expectError(await t.request('PATCH', `/api/peer-reviews/${r2.id}`, { token: by2, body: { feedback: 'x' } }), 409, 'CONFLICT');
  });

  it('without a rubric the score is 0..maxScore', async () => {
    const { reviews } = await peerSetup(1, STUDENTS.slice(0, 2), false);
    const r = reviews[0]!;
    expectError(await t.request('POST', `/api/peer-reviews/${r.id}/submit`, { token: tok(r.reviewerId), body: { score: 11 } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('POST', `/api/peer-reviews/${r.id}/submit`, { token: tok(r.reviewerId), body: {} }), 400, 'VALIDATION_ERROR');
    const ok = await t.request('POST', `/api/peer-reviews/${r.id}/submit`, { token: tok(r.reviewerId), body: { score: 7.5, feedback: 'ok' } });
    expect(ok.body.data).toMatchObject({ status: 'SUBMITTED', score: 7.5 });
  });
});

describe('peer review: reviewer side, the edges', () => {
  it('a new rubric takes out of pending drafts the scores of criteria it dropped and those above a criterion’s new maxPoints; submitted reviews keep theirs', async () => {
    const { lesson, assignment, reviews } = await peerSetup(1, STUDENTS.slice(0, 2));
    const [r1, r2] = reviews as [any, any];
    const [c1, c2] = assignment.rubric.criteria;
    expect((await t.request('PATCH', `/api/peer-reviews/${r1.id}`, { token: tok(r1.reviewerId), body: { rubricScores: { [c1.id]: 5, [c2.id]: 3 } } })).status).toBe(200);
    expect((await t.request('POST', `/api/peer-reviews/${r2.id}/submit`, { token: tok(r2.reviewerId), body: { rubricScores: fullScores(assignment, 6, 4) } })).status).toBe(200);
    const putRubric = async (value: object | null) => {
      const res = await t.request('PUT', `/api/assignments/${lesson.id}`, {
        token: teacher,
        body: {
          title: 'Cell essay',
          instructions: 'Write 500 words on cells.',
          maxScore: 10,
          dueDate: DUE,
          allowLate: false,
          isPeerAssessed: true,
          peerReviewCount: 1,
          rubric: value,
        },
      });
      expect(res.status, res.raw).toBe(200);
      return res.body.data.rubric;
    };
    const draftScores = async (id: string, reviewer: string) => {
      const res = await t.request('GET', `/api/peer-reviews/${id}`, { token: tok(reviewer) });
      expect(res.status, res.raw).toBe(200);
      return res.body.data.peerReview.rubricScores;
    };
    const criterion = (c: any, maxPoints = c.maxPoints) => ({ id: c.id, title: c.title, description: c.description, maxPoints, order: c.order });

    // Style now gives at most 2: the draft's 3 goes, Argument's 5 stays.
    await putRubric({ title: 'Essay rubric', criteria: [criterion(c1), criterion(c2, 2), { title: 'Sources', description: 'Cited', maxPoints: 2, order: 3 }] });
    expect(await draftScores(r1.id, r1.reviewerId)).toEqual({ [c1.id]: 5 });
    // Argument is dropped: so is its score.
    await putRubric({ title: 'Essay rubric', criteria: [criterion(c2, 2)] });
    expect(await draftScores(r1.id, r1.reviewerId)).toEqual({});
    expect((await t.request('PATCH', `/api/peer-reviews/${r1.id}`, { token: tok(r1.reviewerId), body: { rubricScores: { [c2.id]: 2 } } })).status).toBe(200);
    // No rubric at all: nothing to score.
    await putRubric(null);
    expect(await draftScores(r1.id, r1.reviewerId)).toEqual({});
    // The submitted review is what its reviewer gave.
    expect((await t.db.select().from(peerReviews).where(eq(peerReviews.id, r2.id)))[0]!.rubricScores).toEqual(fullScores(assignment, 6, 4));
  });

  it('the queue takes a repeated status parameter as the union, skips empty items, and reads an empty status as the default PENDING', async () => {
    const { assignment, reviews } = await peerSetup(2, STUDENTS.slice(0, 3));
    const reviewer = reviews[0]!.reviewerId;
    const [r1, r2] = reviews.filter((r) => r.reviewerId === reviewer) as [any, any];
    const token = tok(reviewer);
    expect((await t.request('POST', `/api/peer-reviews/${r1.id}/submit`, { token, body: { rubricScores: fullScores(assignment, 4, 4) } })).status).toBe(200);
    const queue = async (qs: string) => {
      const res = await t.request('GET', `/api/me/peer-reviews?${qs}`, { token });
      expect(res.status, `${qs}: ${res.raw}`).toBe(200);
      expect(res.body.error).toBeNull();
      return { ids: res.body.data.reviews.map((r: any) => `${r.id}:${r.status}`).sort(), total: res.body.data.total, pending: res.body.data.pendingCount };
    };
    const pendingOnly = { ids: [`${r2.id}:PENDING`], total: 1, pending: 1 };
    const both = { ids: [`${r1.id}:SUBMITTED`, `${r2.id}:PENDING`].sort(), total: 2, pending: 1 };
    expect(await queue('status=')).toEqual(pendingOnly);
    expect(await queue('status=%20,%20')).toEqual(pendingOnly);
    expect(await queue('status=PENDING,,SUBMITTED')).toEqual(both);
    expect(await queue('status=PENDING&status=SUBMITTED')).toEqual(both);
    expect(await queue('status=SUBMITTED&status=')).toEqual({ ids: [`${r1.id}:SUBMITTED`], total: 1, pending: 1 });
    expectError(await t.request('GET', '/api/me/peer-reviews?status=PENDING&status=DONE', { token }), 400, 'VALIDATION_ERROR');
  });

  it('PATCH answers the draft with the fields of GET’s peerReview (submittedAt, createdAt) and updatedAt', async () => {
    const { assignment, reviews } = await peerSetup(1, STUDENTS.slice(0, 2));
    const review = reviews[0]!;
    const token = tok(review.reviewerId);
    const [c1] = assignment.rubric.criteria;
    const res = await t.request('PATCH', `/api/peer-reviews/${review.id}`, { token, body: { rubricScores: { [c1.id]: 5 }, feedback: 'Halfway there' } });
    expect(res.status, res.raw).toBe(200);
    expect(res.body.error).toBeNull();
    const detail = expectOk(await t.request('GET', `/api/peer-reviews/${review.id}`, { token }));
    expect(res.body.data).toEqual({ ...detail.peerReview, updatedAt: t.clock.now().toISOString() });
    expect(res.body.data).toMatchObject({
      status: 'PENDING',
      score: null,
      rubricScores: { [c1.id]: 5 },
      feedback: 'Halfway there',
      submittedAt: null,
      createdAt: expect.any(String),
    });
  });

  it('a rubric score is the plain sum of its criteria, without float noise (0.1 + 0.2 is 0.3)', async () => {
    const { assignment, reviews } = await peerSetup(1, STUDENTS.slice(0, 2));
    const review = reviews[0]!;
    const res = await t.request('POST', `/api/peer-reviews/${review.id}/submit`, { token: tok(review.reviewerId), body: { rubricScores: fullScores(assignment, 0.1, 0.2) } });
    expect(res.status, res.raw).toBe(200);
    expect(res.body.data).toEqual({ status: 'SUBMITTED', score: 0.3, aggregate: { peerScoreAverage: 0.3, reviewsSubmitted: 1, reviewsAssigned: 1, finalisedNow: true } });
    const [row] = await t.db.select().from(peerReviews).where(eq(peerReviews.id, review.id));
    expect(row!.score).toBeCloseTo(0.3, 6);
    expect(row!.rubricScores).toEqual(fullScores(assignment, 0.1, 0.2));
  });

  it('rubricScores on an assignment without a rubric: submit answers 400 as a draft does, and stores nothing', async () => {
    const { reviews } = await peerSetup(1, STUDENTS.slice(0, 2), false);
    const review = reviews[0]!;
    const token = tok(review.reviewerId);
    const body = { score: 7, rubricScores: { anything: 3 }, feedback: 'Good' };
    for (const res of [
      await t.request('POST', `/api/peer-reviews/${review.id}/submit`, { token, body }),
      await t.request('PATCH', `/api/peer-reviews/${review.id}`, { token, body: { rubricScores: body.rubricScores } }),
    ]) {
      expectError(res, 400, 'VALIDATION_ERROR');
      expect(res.body.error.message).toBe('This assignment has no rubric');
      expect(res.body.error.details.fields).toEqual([{ field: 'body.rubricScores', message: 'no rubric' }]);
    }
    const [row] = await t.db.select().from(peerReviews).where(eq(peerReviews.id, review.id));
    expect(row).toMatchObject({ status: 'PENDING', score: null, rubricScores: {}, feedback: null, submittedAt: null });
    const [sub] = await t.db.select().from(submissions).where(eq(submissions.id, review.submissionId));
    expect(sub).toMatchObject({ peerReviewsCompleted: 0, score: null });
    // An empty map carries no scores to drop: a draft and the submit both take it.
    expect((await t.request('PATCH', `/api/peer-reviews/${review.id}`, { token, body: { rubricScores: {}, feedback: 'Draft' } })).status).toBe(200);
    const ok = await t.request('POST', `/api/peer-reviews/${review.id}/submit`, { token, body: { ...body, rubricScores: {} } });
    expect(ok.status, ok.raw).toBe(200);
    expect(ok.body.data).toMatchObject({ status: 'SUBMITTED', score: 7 });
  });
});

describe('peer review: a review moved away mid-request', () => {
  /**
   * Runs `move(query)` right after the next query whose SQL matches, on the same connection (in
   * the request's transaction): the review changes hands between the access check and the write,
   * as when another transaction moves it at that moment. Hooks the driver's session class, since
   * a transaction gets a session of its own.
   */
  function afterNextQuery(match: (sqlText: string) => boolean, move: (query: (text: string, params: unknown[]) => Promise<unknown>) => Promise<void>) {
    const proto = Object.getPrototypeOf((t.db as any).session);
    const original = proto.prepareQuery;
    proto.prepareQuery = function (this: any, ...args: any[]) {
      const prepared = original.apply(this, args);
      if (!match(args[0].sql)) return prepared;
      proto.prepareQuery = original;
      const client = this.client;
      const execute = prepared.execute.bind(prepared);
      prepared.execute = async (...a: unknown[]) => {
        const result = await execute(...a);
        await move((text, params) => client.query(text, params));
        return result;
      };
      return prepared;
    };
    return () => {
      proto.prepareQuery = original;
    };
  }
  const accessCheck = (sqlText: string) => /^select/i.test(sqlText) && sqlText.includes('from "peer_reviews"') && sqlText.includes('"reviewer_id" = $');

  it.each(['submit', 'flag', 'draft'] as const)('%s by the former reviewer after the review moved to someone else: 404, and nothing is written', async (action) => {
    const { assignment, reviews } = await peerSetup(1, STUDENTS.slice(0, 2));
    const review = reviews[0]!;
    const newcomer = STUDENTS[5]!;
    const restore = afterNextQuery(accessCheck, async (query) => {
      await query('update peer_reviews set reviewer_id = $1 where id = $2', [newcomer, review.id]);
    });
    try {
      const token = tok(review.reviewerId);
      const res =
        action === 'submit'
          ? await t.request('POST', `/api/peer-reviews/${review.id}/submit`, { token, body: { rubricScores: fullScores(assignment, 6, 4) } })
          : action === 'flag'
            ? await t.request('POST', `/api/peer-reviews/${review.id}/flag`, { token, body: { reason: 'Not my review anymore' } })
            : await t.request('PATCH', `/api/peer-reviews/${review.id}`, { token, body: { feedback: 'late draft' } });
      expectError(res, 404, 'NOT_FOUND');
    } finally {
      restore();
    }
    // Nothing was written for the former reviewer (the request's transaction, with the simulated move in it, rolled back).
    const [row] = await t.db.select().from(peerReviews).where(eq(peerReviews.id, review.id));
    expect(row).toMatchObject({ status: 'PENDING', score: null, feedback: null, flagReason: null, submittedAt: null });
  });
});

describe('peer review: finalisation', () => {
  const peerGraded = (studentId: string) => notificationsOf(studentId, 'ASSESS_PEER_GRADED');

  it('the last review finalises: score = peer average, ASSESS_PEER_GRADED once, forced immediate; flagged reviews count as done, not in the average', async () => {
    const authors = STUDENTS.slice(0, 4);
    const { assignment, reviews, subs } = await peerSetup(3, authors);
    const target = subs[0]!;
    const mine = reviews.filter((r) => r.submissionId === target.id);
    // The author prefers digests: the peer grade still comes at once.
    await t.request('PATCH', '/api/notifications/preferences', { token: tok(target.studentId), body: { key: 'ASSESS_PEER_GRADED', frequency: 'DAILY_DIGEST' } });
    await t.request('POST', `/api/peer-reviews/${mine[0]!.id}/submit`, { token: tok(mine[0]!.reviewerId), body: { rubricScores: fullScores(assignment, 6, 4) } });
    await t.request('POST', `/api/peer-reviews/${mine[1]!.id}/flag`, { token: tok(mine[1]!.reviewerId), body: { reason: 'Plagiarism suspected' } });
    const teacherNote = (await notificationsOf(DEMO_TEACHER_ID, 'TEACHER_NEW_SUBMISSION')).find((n) => n.metadata.flagged === true && n.metadata.submissionId === target.id);
    expect(teacherNote?.metadata).toMatchObject({ flagged: true, reason: 'Plagiarism suspected' });
    const last = await t.request('POST', `/api/peer-reviews/${mine[2]!.id}/submit`, { token: tok(mine[2]!.reviewerId), body: { rubricScores: fullScores(assignment, 3, 1) } });
    expect(last.body.data.aggregate).toEqual({ peerScoreAverage: 7, reviewsSubmitted: 3, reviewsAssigned: 3, finalisedNow: true });
    const [row] = await t.db.select().from(submissions).where(eq(submissions.id, target.id));
    expect(row).toMatchObject({ score: 7, status: 'GRADED', peerScoreAverage: 7, peerReviewsCompleted: 3, instructorScore: null });
    const sent = await t.db
      .select()
      .from(notifications)
      .where(and(eq(notifications.recipientId, target.studentId), eq(notifications.key, 'ASSESS_PEER_GRADED')));
    expect(sent.filter((n) => n.channel === 'IN_APP')).toHaveLength(1);
    expect(sent.find((n) => n.channel === 'email')).toMatchObject({ status: 'PENDING', digestDueAt: null });
    expect((await peerGraded(target.studentId))[0]!.metadata).toMatchObject({ submissionId: target.id, score: 7 });
  });

  it('a rubric whose total differs from maxScore: the peer average is the mean of the rubric sums, not rescaled (spec 4.4 rules 1 and 3)', async () => {
    const [a, b] = STUDENTS as [string, string];
    const { lesson, assignment } = await setup({ peer: 1, rubric: true, maxScore: 20, passingScore: 6, enrolled: [a, b] });
    expect(assignment).toMatchObject({ maxScore: 20, rubric: { totalPoints: 10 } });
    await submitAs(a, lesson.id);
    await submitAs(b, lesson.id);
    const reviews = await t.db.select().from(peerReviews).where(eq(peerReviews.assignmentId, lesson.id));
    const ofB = reviews.find((r) => r.reviewerId === a)!;
    const res = await t.request('POST', `/api/peer-reviews/${ofB.id}/submit`, { token: tok(a), body: { rubricScores: fullScores(assignment, 5, 3) } });
    expect(res.body.data).toEqual({ status: 'SUBMITTED', score: 8, aggregate: { peerScoreAverage: 8, reviewsSubmitted: 1, reviewsAssigned: 1, finalisedNow: true } });
    const [row] = await t.db.select().from(submissions).where(eq(submissions.id, ofB.submissionId));
    expect(row).toMatchObject({ score: 8, peerScoreAverage: 8, status: 'GRADED' });
    // 8 of 20 passes 6 and counts as 40 % on the lesson.
    const [progress] = await t.db
      .select()
      .from(lessonProgress)
      .where(and(eq(lessonProgress.lessonId, lesson.id), eq(lessonProgress.studentId, b)));
    expect(progress).toMatchObject({ completed: true, score: 40 });
    expect((await peerGraded(b))[0]!.metadata).toMatchObject({ score: 8, maxScore: 20 });
  });

  it('the peer average of unequal reviews is their plain mean, to two decimals', async () => {
    const { assignment, reviews, subs } = await peerSetup(3, STUDENTS.slice(0, 4));
    const target = subs[0]!;
    const mine = reviews.filter((r) => r.submissionId === target.id);
    expect(mine).toHaveLength(3);
    const sums: Array<[number, number]> = [
      [4, 3],
      [5, 3],
      [5, 3],
    ]; // 7, 8, 8
    let last: any;
    for (const [i, r] of mine.entries()) {
      last = await t.request('POST', `/api/peer-reviews/${r.id}/submit`, { token: tok(r.reviewerId), body: { rubricScores: fullScores(assignment, sums[i]![0], sums[i]![1]) } });
    }
    expect(last.body.data.aggregate).toMatchObject({ peerScoreAverage: 7.67, reviewsSubmitted: 3, finalisedNow: true });
    const [row] = await t.db.select().from(submissions).where(eq(submissions.id, target.id));
    expect(row).toMatchObject({ score: 7.67, peerScoreAverage: 7.67 });
  });

  it('all reviews flagged: no peer score and no ASSESS_PEER_GRADED; the submission waits for the instructor', async () => {
    const { reviews, subs } = await peerSetup(1, STUDENTS.slice(0, 2));
    const target = subs[0]!;
    const r = reviews.find((x) => x.submissionId === target.id)!;
    await t.request('POST', `/api/peer-reviews/${r.id}/flag`, { token: tok(r.reviewerId), body: { reason: 'Blank page' } });
    const [row] = await t.db.select().from(submissions).where(eq(submissions.id, target.id));
    expect(row).toMatchObject({ score: null, peerScoreAverage: null, peerReviewsCompleted: 1, status: 'SUBMITTED', peerFinalisedAt: null });
    expect(await peerGraded(target.studentId)).toEqual([]);
  });

  it('a flag as the last review finalises with the average of the submitted ones, once', async () => {
    const { assignment, reviews, subs } = await peerSetup(2, STUDENTS.slice(0, 3));
    const target = subs[0]!;
    const [first, last] = reviews.filter((r) => r.submissionId === target.id) as [any, any];
    const one = await t.request('POST', `/api/peer-reviews/${first.id}/submit`, { token: tok(first.reviewerId), body: { rubricScores: fullScores(assignment, 4, 3) } });
    expect(one.body.data.aggregate).toMatchObject({ peerScoreAverage: 7, finalisedNow: false });
    const flag = await t.request('POST', `/api/peer-reviews/${last.id}/flag`, { token: tok(last.reviewerId), body: { reason: 'Parts are copied' } });
    expect(flag.body).toEqual({ data: { status: 'FLAGGED' }, error: null });
    const [row] = await t.db.select().from(submissions).where(eq(submissions.id, target.id));
    expect(row).toMatchObject({ score: 7, status: 'GRADED', peerScoreAverage: 7, peerReviewsCompleted: 2, peerFinalisedAt: expect.any(Date) });
    expect(await peerGraded(target.studentId)).toHaveLength(1);
    expect((await peerGraded(target.studentId))[0]!.metadata).toMatchObject({ submissionId: target.id, score: 7 });
  });

  it('N = 2, every review flagged: no peer score, nothing sent to the author, the owner told of each flag', async () => {
    const { reviews, subs } = await peerSetup(2, STUDENTS.slice(0, 3));
    const target = subs[1]!;
    const mine = reviews.filter((r) => r.submissionId === target.id);
    expect(mine).toHaveLength(2);
    for (const [i, r] of mine.entries()) {
      const res = await t.request('POST', `/api/peer-reviews/${r.id}/flag`, { token: tok(r.reviewerId), body: { reason: `Flag number ${i}` } });
      expect(res.status).toBe(200);
    }
    const [row] = await t.db.select().from(submissions).where(eq(submissions.id, target.id));
    expect(row).toMatchObject({ score: null, peerScoreAverage: null, peerReviewsCompleted: 2, status: 'SUBMITTED', peerFinalisedAt: null });
    expect(await peerGraded(target.studentId)).toEqual([]);
    const flags = (await notificationsOf(DEMO_TEACHER_ID, 'TEACHER_NEW_SUBMISSION')).filter((n) => n.metadata.flagged === true && n.metadata.submissionId === target.id);
    expect(flags.map((n) => n.metadata.reason).sort()).toEqual(['Flag number 0', 'Flag number 1']);
    // The instructor grades it.
    const graded = await t.request('POST', `/api/assignments/${target.assignmentId}/grade`, { token: teacher, body: { submissionId: target.id, score: 5 } });
    expect(graded.body.data).toMatchObject({ status: 'GRADED', score: 5, instructorScore: 5, peerScoreAverage: null });
  });

  it('resubmission is refused (409) once a peer review of it was submitted or flagged; a draft does not stop it', async () => {
    // N = 2, so one completed review does not finalise (a graded submission is refused anyway).
    const { lesson, assignment, reviews, subs } = await peerSetup(2, STUDENTS.slice(0, 3));
    const [s1, s2] = subs as [any, any];
    const ofS1 = reviews.find((r) => r.submissionId === s1.id)!;
    const ofS2 = reviews.find((r) => r.submissionId === s2.id)!;
    await t.request('PATCH', `/api/peer-reviews/${ofS2.id}`, { token: tok(ofS2.reviewerId), body: { feedback: 'halfway' } });
    expect((await submitAs(s2.studentId, lesson.id, { textContent: 'Second version' })).status).toBe(201);

    await t.request('POST', `/api/peer-reviews/${ofS1.id}/submit`, { token: tok(ofS1.reviewerId), body: { rubricScores: fullScores(assignment, 3, 3) } });
    const refused = await submitAs(s1.studentId, lesson.id, { textContent: 'Changed after review' });
    expectError(refused, 409, 'CONFLICT');
    expect(refused.body.error.details).toEqual({ submissionId: s1.id, reviewsCompleted: 1 });
    const [row] = await t.db.select().from(submissions).where(eq(submissions.id, s1.id));
    expect(row!.textContent).toBe(s1.textContent);

    await t.request('POST', `/api/peer-reviews/${ofS2.id}/flag`, { token: tok(ofS2.reviewerId), body: { reason: 'Off topic' } });
    expectError(await submitAs(s2.studentId, lesson.id, { textContent: 'Third version' }), 409, 'CONFLICT');
  });

  it('an instructor grade before the last review stops finalisation; one after overrides the peer average', async () => {
    const { lesson, assignment, reviews, subs } = await peerSetup(1, STUDENTS.slice(0, 2));
    const [s1, s2] = subs as [any, any];
    const r1 = reviews.find((r) => r.submissionId === s1.id)!;
    const r2 = reviews.find((r) => r.submissionId === s2.id)!;
    await t.request('POST', `/api/assignments/${lesson.id}/grade`, { token: teacher, body: { submissionId: s1.id, score: 9 } });
    const res = await t.request('POST', `/api/peer-reviews/${r1.id}/submit`, { token: tok(r1.reviewerId), body: { rubricScores: fullScores(assignment, 2, 2) } });
    expect(res.body.data.aggregate).toMatchObject({ peerScoreAverage: 4, finalisedNow: false });
    expect((await t.db.select().from(submissions).where(eq(submissions.id, s1.id)))[0]).toMatchObject({ score: 9, instructorScore: 9, peerScoreAverage: 4 });
    expect(await peerGraded(s1.studentId)).toEqual([]);

    const r2res = await t.request('POST', `/api/peer-reviews/${r2.id}/submit`, { token: tok(r2.reviewerId), body: { rubricScores: fullScores(assignment, 5, 1) } });
    expect(r2res.status, r2res.raw).toBe(200);
    expect((await t.db.select().from(submissions).where(eq(submissions.id, s2.id)))[0]).toMatchObject({ score: 6, status: 'GRADED' });
    await t.request('POST', `/api/assignments/${lesson.id}/grade`, { token: teacher, body: { submissionId: s2.id, score: 2 } });
    expect((await t.db.select().from(submissions).where(eq(submissions.id, s2.id)))[0]).toMatchObject({ score: 2, instructorScore: 2, peerScoreAverage: 6 });

    const view = await t.request('GET', `/api/assignments/${lesson.id}/peer-reviews`, { token: teacher });
    const group = view.body.data.groups.find((g: any) => g.submissionId === s2.id);
    expect(group).toMatchObject({ instructorScore: 2, peerScoreAverage: 6, instructorOverridden: true, peerReviewCount: 1, peerReviewsCompleted: 1 });
  });

  it('a review added after the peer grade was final (peerReviewCount raised): the score, lesson and enrollment follow the new average; ASSESS_PEER_GRADED stays one', async () => {
    const [a, b, c, d] = STUDENTS as [string, string, string, string];
    const { lesson, course } = await setup({ peer: 1, passingScore: 5, enrolled: [a, b, c, d] });
    for (const id of [a, b, c, d]) expect((await submitAs(id, lesson.id)).status).toBe(201);
    const [subA] = await t.db
      .select()
      .from(submissions)
      .where(and(eq(submissions.assignmentId, lesson.id), eq(submissions.studentId, a)));
    const reviewsOfA = () => t.db.select().from(peerReviews).where(eq(peerReviews.submissionId, subA!.id));
    const [first] = await reviewsOfA();
    const one = await t.request('POST', `/api/peer-reviews/${first!.id}/submit`, { token: tok(first!.reviewerId), body: { score: 8 } });
    expect(one.body.data.aggregate).toEqual({ peerScoreAverage: 8, reviewsSubmitted: 1, reviewsAssigned: 1, finalisedNow: true });
    expect(await progressOf(lesson.id, a)).toMatchObject({ completed: true, score: 80 });
    expect(await enrollmentOf(course.id, a)).toMatchObject({ status: 'COMPLETED', finalScore: 80 });

    const body = { title: 'Cell essay', instructions: 'x', maxScore: 10, passingScore: 5, dueDate: DUE, isPeerAssessed: true, peerReviewCount: 2 };
    expectOk(await t.request('PUT', `/api/assignments/${lesson.id}`, { token: teacher, body }));
    const added = (await reviewsOfA()).filter((r) => r.id !== first!.id);
    expect(added).toHaveLength(1);
    const two = await t.request('POST', `/api/peer-reviews/${added[0]!.id}/submit`, { token: tok(added[0]!.reviewerId), body: { score: 4 } });
    expect(two.status, two.raw).toBe(200);
    expect(two.body).toEqual({
      data: { status: 'SUBMITTED', score: 4, aggregate: { peerScoreAverage: 6, reviewsSubmitted: 2, reviewsAssigned: 2, finalisedNow: false } },
      error: null,
    });
    const [row] = await t.db.select().from(submissions).where(eq(submissions.id, subA!.id));
    expect(row).toMatchObject({ score: 6, peerScoreAverage: 6, peerReviewsCompleted: 2, status: 'GRADED', instructorScore: null });
    const mine = expectOk(await t.request('GET', `/api/assignments/${lesson.id}`, { token: tok(a) }));
    expect(mine.mySubmission).toMatchObject({ score: 6, peerScoreAverage: 6, status: 'GRADED' });
    expect(await progressOf(lesson.id, a)).toMatchObject({ completed: true, score: 60 });
    expect(await enrollmentOf(course.id, a)).toMatchObject({ status: 'COMPLETED', finalScore: 60 });
    expect(await peerGraded(a)).toHaveLength(1);

    // Once the instructor grades, a later review moves the peer average only.
    expectOk(await t.request('POST', `/api/assignments/${lesson.id}/grade`, { token: teacher, body: { submissionId: subA!.id, score: 9 } }));
    expectOk(await t.request('PUT', `/api/assignments/${lesson.id}`, { token: teacher, body: { ...body, peerReviewCount: 3 } }));
    const third = (await reviewsOfA()).filter((r) => r.status === 'PENDING');
    expect(third).toHaveLength(1);
    expect((await t.request('POST', `/api/peer-reviews/${third[0]!.id}/submit`, { token: tok(third[0]!.reviewerId), body: { score: 1 } })).status).toBe(200);
    expect((await t.db.select().from(submissions).where(eq(submissions.id, subA!.id)))[0]).toMatchObject({ score: 9, instructorScore: 9, peerScoreAverage: 4.33 });
    expect(await progressOf(lesson.id, a)).toMatchObject({ score: 90 });
    expect(await peerGraded(a)).toHaveLength(1);
  });

  it('maxScore cannot go below a peer grade either: the final score, or the peer average so far (409, details.highestGrade)', async () => {
    const { lesson, reviews, subs } = await peerSetup(2, STUDENTS.slice(0, 3), false);
    const target = subs[0]!;
    const [r1, r2] = reviews.filter((r) => r.submissionId === target.id) as [any, any];
    const put = (maxScore: number) =>
      t.request('PUT', `/api/assignments/${lesson.id}`, {
        token: teacher,
        body: { title: 'Cell essay', instructions: 'x', maxScore, dueDate: DUE, isPeerAssessed: true, peerReviewCount: 2 },
      });
    await t.request('POST', `/api/peer-reviews/${r1.id}/submit`, { token: tok(r1.reviewerId), body: { score: 9 } });
    const pending = await put(8);
    expectError(pending, 409, 'CONFLICT');
    expect(pending.body.error.details).toEqual({ highestGrade: 9 });

    const last = await t.request('POST', `/api/peer-reviews/${r2.id}/submit`, { token: tok(r2.reviewerId), body: { score: 7 } });
    expect(last.body.data.aggregate).toMatchObject({ peerScoreAverage: 8, finalisedNow: true });
    const final = await put(7.5);
    expectError(final, 409, 'CONFLICT');
    expect(final.body.error.details).toEqual({ highestGrade: 8 });
    expect(expectOk(await t.request('GET', `/api/assignments/${lesson.id}`, { token: teacher })).maxScore).toBe(10);
    // Down to the grade is fine.
    expect(expectOk(await put(8)).maxScore).toBe(8);
  });

  it('concurrent submits of the last two reviews finalise exactly once', async () => {
    const { assignment, reviews, subs } = await peerSetup(2, STUDENTS.slice(0, 3));
    const target = subs[0]!;
    const [a, b] = reviews.filter((r) => r.submissionId === target.id) as [any, any];
    const [ra, rb] = await Promise.all([
      t.request('POST', `/api/peer-reviews/${a.id}/submit`, { token: tok(a.reviewerId), body: { rubricScores: fullScores(assignment, 4, 4) } }),
      t.request('POST', `/api/peer-reviews/${b.id}/submit`, { token: tok(b.reviewerId), body: { rubricScores: fullScores(assignment, 6, 4) } }),
    ]);
    expect([ra.status, rb.status]).toEqual([200, 200]);
    expect([ra.body.data.aggregate.finalisedNow, rb.body.data.aggregate.finalisedNow].filter(Boolean)).toHaveLength(1);
    expect(await peerGraded(target.studentId)).toHaveLength(1);
    expect((await t.db.select().from(submissions).where(eq(submissions.id, target.id)))[0]).toMatchObject({ score: 9, peerReviewsCompleted: 2 });
  });
});

describe('moderation view', () => {
  it('instructorOverridden is true once an instructor grade exists, also before any peer average', async () => {
    const { lesson, subs } = await peerSetup(1, STUDENTS.slice(0, 2));
    const [s1, s2] = subs as [any, any];
    expectOk(await t.request('POST', `/api/assignments/${lesson.id}/grade`, { token: teacher, body: { submissionId: s1.id, score: 7 } }));
    const view = await t.request('GET', `/api/assignments/${lesson.id}/peer-reviews`, { token: teacher });
    expect(view.status, view.raw).toBe(200);
    const group = (id: string) => view.body.data.groups.find((g: any) => g.submissionId === id);
    expect(group(s1.id)).toMatchObject({ instructorScore: 7, peerScoreAverage: null, peerReviewsCompleted: 0, instructorOverridden: true });
    expect(group(s2.id)).toMatchObject({ instructorScore: null, peerScoreAverage: null, instructorOverridden: false });
  });

  it('staff only; groups with student and reviewer names; a bounded number of queries and one CRM lookup per distinct person', async () => {
    const { lesson, course } = await setup({ peer: 3, enrolled: [] });
    expectError(await t.request('GET', `/api/assignments/${lesson.id}/peer-reviews`, { token: tok(STUDENTS[0]!) }), 403, 'FORBIDDEN');

    // 200 submitters with 3 reviews each, written set-based.
    const now = t.clock.now().toISOString();
    await t.db.execute(sql`insert into enrollments (id, institution_id, course_id, student_id, status, enrolled_at, updated_at)
      select 'enr_mod_' || i, 'inst_demo', ${course.id}, 'c_mod_' || i, 'ACTIVE', ${now}::timestamptz, ${now}::timestamptz from generate_series(0, 199) i`);
    await t.db
      .execute(sql`insert into assignment_submissions (id, institution_id, assignment_id, enrollment_id, student_id, text_content, is_late, submitted_at, created_at, updated_at)
      select 'sub_mod_' || i, 'inst_demo', ${lesson.id}, 'enr_mod_' || i, 'c_mod_' || i, 'essay', false, ${now}::timestamptz + (i || ' seconds')::interval, ${now}::timestamptz, ${now}::timestamptz from generate_series(0, 199) i`);
    await t.db.execute(sql`insert into peer_reviews (id, institution_id, assignment_id, submission_id, reviewer_id, assigned_at, created_at, updated_at)
      select 'rev_mod_' || i || '_' || k, 'inst_demo', ${lesson.id}, 'sub_mod_' || i, 'c_mod_' || ((i + k) % 200), ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz
      from generate_series(0, 199) i, generate_series(1, 3) k`);

    const queries = async (perPage: number) => {
      const session = (t.db as any).session;
      const original = session.prepareQuery;
      let n = 0;
      session.prepareQuery = function (...args: unknown[]) {
        n++;
        return original.apply(this, args);
      };
      t.crmSim.resetRecords();
      try {
        const res = await t.request('GET', `/api/assignments/${lesson.id}/peer-reviews`, { token: teacher, query: { perPage } });
        expect(res.status).toBe(200);
        return { n, res, crm: t.crmSim.requests.filter((r) => r.path.startsWith('/api/lms/contact/') || r.path.startsWith('/api/lms/user/')).map((r) => r.path) };
      } finally {
        session.prepareQuery = original;
      }
    };
    const small = await queries(5);
    const big = await queries(100);
    expect(big.n).toBe(small.n);
    expect(big.n).toBeLessThan(15);
    expect(big.res.body.data.total).toBe(200);
    expect(big.res.body.data.groups).toHaveLength(100);
    const g = big.res.body.data.groups[0];
    expect(g).toMatchObject({ submissionId: 'sub_mod_0', student: { id: 'c_mod_0', name: expect.any(String) }, peerReviewCount: 3, instructorOverridden: false });
    expect(g.reviews.map((r: any) => r.reviewer.id).sort()).toEqual(['c_mod_1', 'c_mod_2', 'c_mod_3']);
    // Each distinct person looked up at most once (contact, then staff user for unknown ids).
    const contactPaths = big.crm.filter((p) => p.startsWith('/api/lms/contact/'));
    expect(new Set(contactPaths).size).toBe(contactPaths.length);
    expect(big.res.body.meta).toEqual({ total: 200, page: 1, perPage: 100, totalPages: 2 });
    const [{ n }] = await rawRows<{ n: number }>(t.db, sql`select count(*)::int as n from peer_reviews where assignment_id = ${lesson.id}`);
    expect(n).toBe(600);
  });
});
