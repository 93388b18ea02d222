/**
 * Learning through HTTP: navigation and lesson content, drip locks with a moved clock,
 * progress (single, batched, PDF, events), interactions and block answers, course completion
 * with its certificate and CRM outbox row exactly once, and certificate verification.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { inflateSync } from 'node:zlib';
import { and, eq } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, createLesson, enroll } from '../helpers/factories.js';
import { runWorkerFor } from '../helpers/jobs.js';
import { expectError, expectOk, failingFields } from '../helpers/expect.js';
import type { Course, Lesson } from '../../src/modules/courses/courses.tables.js';
import { enrollments, learnerEvents, lessonInteractions, lessonProgress } from '../../src/modules/enrollments/enrollments.tables.js';
import { certificates } from '../../src/modules/certificates/certificates.tables.js';
import { crmCompletions } from '../../src/modules/sync/sync.tables.js';
import { jobs } from '../../src/platform/queue/queue.tables.js';
import { notifications } from '../../src/modules/notifications/notifications.tables.js';

const DAY = 86_400_000;
let t: TestApp;
let teacher: string;
let northTeacher: string;
const tokens: Record<string, string> = {};
const stu = (n: number) => `c_demo_stu_${String(n).padStart(2, '0')}`;
const student = (n: number) => tokens[stu(n)];

beforeAll(async () => {
  t = await createTestApp();
  teacher = await t.token({ role: 'TEACHER', id: 'u_demo_teacher', expiresIn: 10 * 365 * 86_400 });
  northTeacher = await t.token({ role: 'TEACHER', id: 'u_northside_teacher', institutionId: 'inst_north', expiresIn: 10 * 365 * 86_400 });
  // Long-lived: a test below moves the clock past a certificate's expiry.
  for (let n = 1; n <= 30; n++) tokens[stu(n)] = await t.token({ role: 'STUDENT', id: stu(n), expiresIn: 10 * 365 * 86_400 });
}, 180_000);
afterAll(() => t?.close());

/** A published course with `n` required TEXT lessons in order. */
async function courseWithLessons(n: number, course: Partial<Course> = {}, lesson: Partial<Lesson> = {}) {
  const c = await createCourse(t, { title: 'Learning course', ...course });
  const ls: Lesson[] = [];
  for (let i = 0; i < n; i++) ls.push(await createLesson(t, { courseId: c.id, title: `Lesson ${i + 1}`, order: i, ...lesson }));
  return { course: c, lessons: ls };
}

const progress = (token: string, lessonId: string, body: Record<string, unknown>) => t.request('POST', `/api/lessons/${lessonId}/progress`, { token, body });

describe('GET /api/learn/:courseId and /api/learn/:courseId/:lessonId', () => {
  it('returns modules and lessons with completion and lock state to an enrolled student', async () => {
    const { course, lessons } = await courseWithLessons(2);
    await enroll(t, { courseId: course.id, studentId: stu(1) });
    expectOk(await progress(student(1), lessons[0].id, { completed: true }));
    const nav = expectOk(await t.request('GET', `/api/learn/${course.id}`, { token: student(1) }));
    expect(nav.course.id).toBe(course.id);
    expect(nav.enrollment).toMatchObject({ studentId: stu(1), status: 'ACTIVE', progress: 50 });
    expect(nav.lessonsWithoutModule.map((l: any) => [l.title, l.completed, l.locked])).toEqual([
      ['Lesson 1', true, false],
      ['Lesson 2', false, false],
    ]);
  });

  it('returns lesson content with progress and neighbours', async () => {
    const { course, lessons } = await courseWithLessons(3);
    await enroll(t, { courseId: course.id, studentId: stu(1) });
    const data = expectOk(await t.request('GET', `/api/learn/${course.id}/${lessons[1].id}`, { token: student(1) }));
    expect(data).toMatchObject({ lesson: { id: lessons[1].id, title: 'Lesson 2' }, progress: null, previousLessonId: lessons[0].id, nextLessonId: lessons[2].id });
    const [row] = await t.db
      .select()
      .from(enrollments)
      .where(and(eq(enrollments.courseId, course.id), eq(enrollments.studentId, stu(1))));
    expect(row.lastAccessedAt?.toISOString()).toBe(t.clock.now().toISOString());
  });

  it('requires an ACTIVE or COMPLETED enrollment (403 ENROLLMENT_REQUIRED)', async () => {
    const { course, lessons } = await courseWithLessons(1);
    await enroll(t, { courseId: course.id, studentId: stu(2), status: 'DROPPED' });
    await enroll(t, { courseId: course.id, studentId: stu(3), status: 'COMPLETED' });
    expectError(await t.request('GET', `/api/learn/${course.id}`, { token: student(1) }), 403, 'ENROLLMENT_REQUIRED');
    expectError(await t.request('GET', `/api/learn/${course.id}/${lessons[0].id}`, { token: student(1) }), 403, 'ENROLLMENT_REQUIRED');
    expectError(await t.request('GET', `/api/lessons/${lessons[0].id}`, { token: student(1) }), 403, 'ENROLLMENT_REQUIRED');
    expectError(await t.request('GET', `/api/learn/${course.id}/${lessons[0].id}`, { token: student(2) }), 403, 'ENROLLMENT_REQUIRED');
    expectOk(await t.request('GET', `/api/learn/${course.id}/${lessons[0].id}`, { token: student(3) }));
    // Course managers may look without an enrollment.
    expect(expectOk(await t.request('GET', `/api/learn/${course.id}/${lessons[0].id}`, { token: teacher })).lesson.id).toBe(lessons[0].id);
  });

  it('answers 404 for another institution and for a lesson of another course', async () => {
    const a = await courseWithLessons(1);
    const b = await courseWithLessons(1);
    await enroll(t, { courseId: a.course.id, studentId: stu(1) });
    expectError(await t.request('GET', `/api/learn/${a.course.id}`, { token: northTeacher }), 404, 'NOT_FOUND');
    expectError(await t.request('GET', `/api/learn/${a.course.id}/${a.lessons[0].id}`, { token: northTeacher }), 404, 'NOT_FOUND');
    expectError(await t.request('GET', `/api/learn/${a.course.id}/${b.lessons[0].id}`, { token: student(1) }), 404, 'NOT_FOUND');
  });
});

describe('drip content', () => {
  it('locks a lesson for unlockAfterDays after enrollment, then opens it', async () => {
    const { course, lessons } = await courseWithLessons(2);
    await t.request('PATCH', `/api/lessons/${lessons[1].id}`, { token: teacher, body: { unlockAfterDays: 3 } });
    const enrolledAt = t.clock.now();
    await enroll(t, { courseId: course.id, studentId: stu(4) });
    const unlocksAt = new Date(enrolledAt.getTime() + 3 * DAY).toISOString();

    let res = await t.request('GET', `/api/learn/${course.id}/${lessons[1].id}`, { token: student(4) });
    expectError(res, 403, 'LESSON_LOCKED');
    expect(res.body.error.details).toMatchObject({ unlocksAt, reason: 'UNLOCK_AFTER_DAYS' });
    res = await progress(student(4), lessons[1].id, { completed: true });
    expectError(res, 403, 'LESSON_LOCKED');
    expect(res.body.error.details.unlocksAt).toBe(unlocksAt);
    expect(await t.db.select().from(lessonProgress).where(eq(lessonProgress.lessonId, lessons[1].id))).toHaveLength(0);
    const nav = expectOk(await t.request('GET', `/api/learn/${course.id}`, { token: student(4) }));
    expect(nav.lessonsWithoutModule[1]).toMatchObject({ locked: true, unlocksAt, lockReason: 'UNLOCK_AFTER_DAYS' });

    t.clock.advance(3 * DAY - 1000);
    expectError(await t.request('GET', `/api/learn/${course.id}/${lessons[1].id}`, { token: student(4) }), 403, 'LESSON_LOCKED');
    t.clock.advance(1000);
    expectOk(await t.request('GET', `/api/learn/${course.id}/${lessons[1].id}`, { token: student(4) }));
    expectOk(await progress(student(4), lessons[1].id, { completed: true }));
  });

  it('locks a lesson until unlockAt', async () => {
    const { course, lessons } = await courseWithLessons(1);
    const unlockAt = new Date(t.clock.now().getTime() + 2 * DAY).toISOString();
    expectOk(await t.request('PATCH', `/api/lessons/${lessons[0].id}`, { token: teacher, body: { unlockAt } }));
    await enroll(t, { courseId: course.id, studentId: stu(5) });
    const res = await t.request('GET', `/api/lessons/${lessons[0].id}`, { token: student(5) });
    expectError(res, 403, 'LESSON_LOCKED');
    expect(res.body.error.details).toMatchObject({ unlocksAt: unlockAt, reason: 'UNLOCK_AT' });
    // Managers preview locked lessons.
    expectOk(await t.request('GET', `/api/lessons/${lessons[0].id}`, { token: teacher }));
    t.clock.advance(2 * DAY);
    expectOk(await t.request('GET', `/api/lessons/${lessons[0].id}`, { token: student(5) }));
  });

  it('with SEQUENTIAL drip unlocks a lesson when the previous required lesson is completed', async () => {
    const { course, lessons } = await courseWithLessons(3, { dripMode: 'SEQUENTIAL' });
    // An optional lesson between them does not hold the next one back.
    await t.request('PATCH', `/api/lessons/${lessons[1].id}`, { token: teacher, body: { isRequired: false } });
    await enroll(t, { courseId: course.id, studentId: stu(6) });
    let nav = expectOk(await t.request('GET', `/api/learn/${course.id}`, { token: student(6) }));
    expect(nav.lessonsWithoutModule.map((l: any) => [l.locked, l.lockReason])).toEqual([
      [false, null],
      [true, 'SEQUENTIAL'],
      [true, 'SEQUENTIAL'],
    ]);
    const res = await progress(student(6), lessons[2].id, { completed: true });
    expectError(res, 403, 'LESSON_LOCKED');
    expect(res.body.error.details).toMatchObject({ unlocksAt: null, reason: 'SEQUENTIAL' });
    expectOk(await progress(student(6), lessons[0].id, { completed: true }));
    nav = expectOk(await t.request('GET', `/api/learn/${course.id}`, { token: student(6) }));
    expect(nav.lessonsWithoutModule.map((l: any) => l.locked)).toEqual([false, false, false]);
    expectOk(await progress(student(6), lessons[2].id, { completed: true }));
  });
});

describe('POST /api/lessons/:id/progress', () => {
  it('stores lesson progress and returns the enrollment progress and status', async () => {
    const { course, lessons } = await courseWithLessons(4);
    await enroll(t, { courseId: course.id, studentId: stu(7) });
    let data = expectOk(await progress(student(7), lessons[0].id, { progressPercent: 40, positionSeconds: 90 }));
    expect(data).toMatchObject({ lessonId: lessons[0].id, completed: false, progressPercent: 40, positionSeconds: 90, progress: 0, status: 'ACTIVE', completedNow: false });
    // A player's fractional position is kept in whole seconds.
    data = expectOk(await progress(student(7), lessons[0].id, { positionSeconds: 92.7 }));
    expect(data).toMatchObject({ positionSeconds: 92, progressPercent: 40 });
    data = expectOk(await progress(student(7), lessons[0].id, { completed: true }));
    expect(data).toMatchObject({ completed: true, progressPercent: 100, completedAt: t.clock.now().toISOString(), progress: 25 });
    // Completion is sticky: a later lower value does not undo it.
    data = expectOk(await progress(student(7), lessons[0].id, { completed: false, progressPercent: 10 }));
    expect(data).toMatchObject({ completed: true, progressPercent: 100, progress: 25 });
    // Just under 100 is not a completion, and does not read as 100 either.
    data = expectOk(await progress(student(7), lessons[1].id, { progressPercent: 99.6 }));
    expect(data).toMatchObject({ completed: false, progressPercent: 99, progress: 25 });
    data = expectOk(await progress(student(7), lessons[1].id, { progressPercent: 100 }));
    expect(data).toMatchObject({ completed: true, progress: 50 });
    const rows = await t.db
      .select()
      .from(lessonProgress)
      .where(eq(lessonProgress.studentId, stu(7)));
    expect(rows).toHaveLength(2);
  });

  it('counts required lessons only', async () => {
    const { course, lessons } = await courseWithLessons(3);
    await t.request('PATCH', `/api/lessons/${lessons[2].id}`, { token: teacher, body: { isRequired: false } });
    await enroll(t, { courseId: course.id, studentId: stu(8) });
    expect(expectOk(await progress(student(8), lessons[2].id, { completed: true })).progress).toBe(0);
    expect(expectOk(await progress(student(8), lessons[0].id, { completed: true })).progress).toBe(50);
  });

  it('validates the body and needs an enrollment', async () => {
    const { course, lessons } = await courseWithLessons(1);
    await enroll(t, { courseId: course.id, studentId: stu(9) });
    await enroll(t, { courseId: course.id, studentId: stu(10), status: 'DROPPED' });
    const res = await progress(student(9), lessons[0].id, { progressPercent: 101, positionSeconds: -1, completed: 'yes' });
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(failingFields(res).sort()).toEqual(['body.completed', 'body.positionSeconds', 'body.progressPercent']);
    expectError(await progress(student(1), lessons[0].id, { completed: true }), 403, 'ENROLLMENT_REQUIRED');
    expectError(await progress(student(10), lessons[0].id, { completed: true }), 403, 'ENROLLMENT_REQUIRED');
    expectError(await progress(student(9), 'no-such-lesson', { completed: true }), 404, 'NOT_FOUND');
    const north = await t.token({ role: 'STUDENT', id: stu(9), institutionId: 'inst_north' });
    expectError(await progress(north, lessons[0].id, { completed: true }), 404, 'NOT_FOUND');
    expect(await t.db.select().from(lessonProgress).where(eq(lessonProgress.lessonId, lessons[0].id))).toHaveLength(0);
  });
});

describe('course completion', () => {
  it('completes the enrollment once, issues one certificate and records one CRM push', async () => {
    const { course, lessons } = await courseWithLessons(2, { certificateEnabled: true, title: 'Completion course' });
    const e = await enroll(t, { courseId: course.id, studentId: stu(11) });
    expectOk(await progress(student(11), lessons[0].id, { completed: true }));
    t.clock.advance(60_000);
    const data = expectOk(await progress(student(11), lessons[1].id, { completed: true }));
    const completedAt = t.clock.now().toISOString();
    expect(data).toMatchObject({ progress: 100, status: 'COMPLETED', courseCompleted: true, completedNow: true, certificateId: expect.any(String) });

    const [row] = await t.db.select().from(enrollments).where(eq(enrollments.id, e.id));
    // Nothing in the course was scored, so there is no final score (not a made-up 100).
    expect(row).toMatchObject({ status: 'COMPLETED', progress: 100, finalScore: null });
    expect(row.completedAt?.toISOString()).toBe(completedAt);

    // Completing again (and concurrently) changes nothing.
    const again = await Promise.all([1, 2, 3].map(() => progress(student(11), lessons[1].id, { completed: true })));
    for (const r of again) expect(expectOk(r)).toMatchObject({ status: 'COMPLETED', completedNow: false, certificateId: null });
    const certs = await t.db.select().from(certificates).where(eq(certificates.enrollmentId, e.id));
    expect(certs).toHaveLength(1);
    expect(certs[0]).toMatchObject({ id: data.certificateId, courseTitle: 'Completion course', studentId: stu(11), pdfKey: null });
    expect(certs[0].certificateNumber).toMatch(/^CERT-2026-/);
    expect(certs[0].verificationCode).toMatch(/^[A-HJ-NP-Z2-9]{12}$/);
    const outbox = await t.db.select().from(crmCompletions).where(eq(crmCompletions.enrollmentId, e.id));
    expect(outbox).toHaveLength(1);
    expect(outbox[0]).toMatchObject({ status: 'PENDING' });
    expect(outbox[0].payload).toEqual({
      studentContactId: stu(11),
      courseId: course.id,
      courseTitle: 'Completion course',
      completedAt,
      // Nothing was scored: null, not a made-up 100 (issue 19).
      finalScore: null,
      certificateNumber: certs[0].certificateNumber,
    });
    const queued = await t.db.select().from(jobs).where(eq(jobs.status, 'queued'));
    expect(queued.filter((j) => j.payload.certificateId === certs[0].id).map((j) => j.name)).toEqual(['certificates.renderPdf']);
    expect(queued.filter((j) => j.payload.completionId === outbox[0].id).map((j) => j.name)).toEqual(['crm.pushCompletion']);

    // The worker renders the PDF and pushes the completion to the CRM, once.
    await t.worker.drain();
    const pushesOfCourse = () => t.crmSim.completions.filter((c) => c.body.courseId === course.id);
    const [rendered] = await t.db.select().from(certificates).where(eq(certificates.id, certs[0].id));
    expect(rendered.pdfKey).toMatch(/^inst_demo\/certificates\/.+\.pdf$/);
    const pdf = await t.deps.storage.get(rendered.pdfKey!);
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    expect(pushesOfCourse()).toEqual([{ slug: 'demo', body: outbox[0].payload, receivedAt: expect.any(String) }]);
    const [sent] = await t.db.select().from(crmCompletions).where(eq(crmCompletions.id, outbox[0].id));
    expect(sent.status).toBe('SENT');
    await t.worker.drain();
    expect(pushesOfCourse()).toHaveLength(1);

    // The student sees the certificate with a download URL; nobody else does.
    const mine = await t.request('GET', '/api/certificates', { token: student(11) });
    expect(expectOk(mine)).toEqual([
      expect.objectContaining({
        id: certs[0].id,
        courseId: course.id,
        certificateNumber: certs[0].certificateNumber,
        verificationCode: certs[0].verificationCode,
        pdfUrl: expect.any(String),
      }),
    ]);
    expect(mine.body.meta).toEqual({ total: 1, page: 1, perPage: 20, totalPages: 1 });
    expect(expectOk(await t.request('GET', '/api/certificates', { token: student(12) }))).toEqual([]);
    const elsewhere = await t.token({ role: 'STUDENT', id: stu(11), institutionId: 'inst_north' });
    expect(expectOk(await t.request('GET', '/api/certificates', { token: elsewhere }))).toEqual([]);
  });

  it('renders the certificate PDF once storage is back, after an outage of hours', async () => {
    const { course, lessons } = await courseWithLessons(1, { certificateEnabled: true });
    await enroll(t, { courseId: course.id, studentId: stu(13) });
    expectOk(await t.request('POST', `/api/lessons/${lessons[0]!.id}/progress`, { token: student(13), body: { completed: true } }));
    const [cert] = await t.db
      .select()
      .from(certificates)
      .where(and(eq(certificates.courseId, course.id), eq(certificates.studentId, stu(13))));
    const put = vi.spyOn(t.deps.storage, 'put').mockRejectedValue(Object.assign(new Error('storage down'), { code: 'ECONNREFUSED' }));
    try {
      await runWorkerFor(t, 3 * 3_600_000);
      expect(put.mock.calls.length).toBeGreaterThan(5);
      expect((await t.db.select().from(certificates).where(eq(certificates.id, cert!.id)))[0]!.pdfKey).toBeNull();
    } finally {
      put.mockRestore();
    }
    await runWorkerFor(t, 10 * 60_000);
    const [rendered] = await t.db.select().from(certificates).where(eq(certificates.id, cert!.id));
    expect(rendered!.pdfKey).toMatch(/\.pdf$/);
  });

  it('completes without a certificate when the course has none, still pushing to the CRM', async () => {
    const { course, lessons } = await courseWithLessons(1, { certificateEnabled: false });
    const e = await enroll(t, { courseId: course.id, studentId: stu(12) });
    const data = expectOk(await progress(student(12), lessons[0].id, { completed: true }));
    expect(data).toMatchObject({ status: 'COMPLETED', certificateId: null, completedNow: true });
    expect(await t.db.select().from(certificates).where(eq(certificates.enrollmentId, e.id))).toHaveLength(0);
    const [outbox] = await t.db.select().from(crmCompletions).where(eq(crmCompletions.enrollmentId, e.id));
    expect(outbox.payload.certificateNumber).toBe('');
  });

  it('keeps a COMPLETED student able to open lessons and record progress without a second completion', async () => {
    const { course, lessons } = await courseWithLessons(1, { certificateEnabled: true });
    const e = await enroll(t, { courseId: course.id, studentId: stu(13) });
    expectOk(await progress(student(13), lessons[0].id, { completed: true }));
    await createLesson(t, { courseId: course.id, title: 'Added later', order: 5 });
    expectOk(await t.request('GET', `/api/learn/${course.id}/${lessons[0].id}`, { token: student(13) }));
    expect(expectOk(await progress(student(13), lessons[0].id, { positionSeconds: 5 }))).toMatchObject({ status: 'COMPLETED', completedNow: false });
    expect(await t.db.select().from(certificates).where(eq(certificates.enrollmentId, e.id))).toHaveLength(1);
    expect(await t.db.select().from(crmCompletions).where(eq(crmCompletions.enrollmentId, e.id))).toHaveLength(1);
  });

  it("a certificate's expiry is whole calendar months later, clamped to the month's end (31 January + 1 month is 28 February)", async () => {
    const before = t.clock.now();
    t.clock.set('2027-01-31T10:00:00.000Z');
    try {
      const { course, lessons } = await courseWithLessons(1, { certificateEnabled: true, certificateValidityMonths: 1, title: 'One month' });
      await enroll(t, { courseId: course.id, studentId: stu(25) });
      const data = expectOk(await progress(student(25), lessons[0].id, { completed: true }));
      expect(data).toMatchObject({ status: 'COMPLETED', completedNow: true, certificateId: expect.any(String) });
      const mine = expectOk(await t.request('GET', '/api/certificates', { token: student(25) }));
      expect(mine).toEqual([expect.objectContaining({ id: data.certificateId, issuedAt: '2027-01-31T10:00:00.000Z', expiresAt: '2027-02-28T10:00:00.000Z' })]);
      const [row] = await t.db.select().from(certificates).where(eq(certificates.id, data.certificateId));
      expect(row.expiresAt?.toISOString()).toBe('2027-02-28T10:00:00.000Z');
      // Still valid on its last day; not the day after (not carried over into March).
      t.clock.set('2027-02-28T09:00:00.000Z');
      expect(expectOk(await t.request('GET', '/api/certificates/verify', { query: { code: row.verificationCode } })).valid).toBe(true);
      t.clock.set('2027-03-01T09:00:00.000Z');
      expect(expectOk(await t.request('GET', '/api/certificates/verify', { query: { code: row.verificationCode } })).valid).toBe(false);
    } finally {
      t.clock.set(before.toISOString());
    }
  });
});

describe("a course's passing score and its certificate", () => {
  const TWO_QUESTIONS = {
    title: 'Check',
    passingScore: 50,
    questions: [
      { type: 'TRUE_FALSE', prompt: 'The Sun is a star.', correctAnswer: true },
      { type: 'TRUE_FALSE', prompt: 'The Moon is a star.', correctAnswer: false },
    ],
  };

  it('a final score below it completes the course and pushes it without a certificate; a retake that lifts the score to it issues the certificate then', async () => {
    const { course, lessons } = await courseWithLessons(1, { certificateEnabled: true, passingScore: 80, title: 'Pass mark course' }, { type: 'QUIZ', title: 'Check' });
    const quiz = expectOk(await t.request('PUT', `/api/quiz/${lessons[0].id}`, { token: teacher, body: TWO_QUESTIONS }), 201);
    const [sun, moon] = quiz.questions.map((q: any) => q.id);
    const e = await enroll(t, { courseId: course.id, studentId: stu(26) });
    const parentOf26 = await t.token({ role: 'PARENT', id: 'c_demo_par_25' });
    const overviewCourse = async () => {
      const d = expectOk(await t.request('GET', `/api/parent/children/${stu(26)}/overview`, { token: parentOf26 }));
      return { course: d.courses.find((c: any) => c.courseId === course.id), certificates: d.certificates.filter((c: any) => c.courseTitle === 'Pass mark course') };
    };
    const courseCompleted = () =>
      t.db
        .select()
        .from(notifications)
        .where(and(eq(notifications.recipientId, stu(26)), eq(notifications.key, 'COURSE_COMPLETED'), eq(notifications.channel, 'IN_APP')));

    // Half right: the quiz (pass mark 50 %) is passed, the lesson scores 50, the course (80) is not.
    const half = expectOk(
      await t.request('POST', `/api/quiz/${lessons[0].id}/attempt`, {
        token: student(26),
        body: {
          answers: [
            { questionId: sun, value: true },
            { questionId: moon, value: true },
          ],
        },
      }),
    );
    expect(half.completion).toMatchObject({ lessonScore: 50, enrollmentStatus: 'COMPLETED', courseCompleted: true, completedNow: true, certificateId: null });
    expect((await t.db.select().from(enrollments).where(eq(enrollments.id, e.id)))[0]).toMatchObject({ status: 'COMPLETED', progress: 100, finalScore: 50 });
    expect(await t.db.select().from(certificates).where(eq(certificates.enrollmentId, e.id))).toEqual([]);
    const outbox = await t.db.select().from(crmCompletions).where(eq(crmCompletions.enrollmentId, e.id));
    expect(outbox.map((o) => o.payload)).toEqual([expect.objectContaining({ courseId: course.id, finalScore: 50, certificateNumber: '' })]);
    const [note] = await courseCompleted();
    expect(note).toMatchObject({ actionUrl: `/learn/${course.id}`, metadata: expect.objectContaining({ certificateNumber: null, finalScore: 50 }) });
    expect(note!.message).not.toContain('certificate');
    // The learner, my-courses and the parent say the same: completed, below the mark, no certificate.
    expect(expectOk(await t.request('GET', '/api/certificates', { token: student(26) }))).toEqual([]);
    expect(expectOk(await t.request('GET', '/api/my-courses', { token: student(26) })).find((r: any) => r.courseId === course.id)).toMatchObject({
      status: 'COMPLETED',
      finalScore: 50,
      course: expect.objectContaining({ passingScore: 80 }),
    });
    expect(await overviewCourse()).toEqual({ course: expect.objectContaining({ status: 'COMPLETED', finalScore: 50, passed: false }), certificates: [] });

    // A retake, all right: the lesson scores 100 and the completed course now passes; the certificate is issued, once.
    const full = expectOk(
      await t.request('POST', `/api/quiz/${lessons[0].id}/attempt`, {
        token: student(26),
        body: {
          answers: [
            { questionId: sun, value: true },
            { questionId: moon, value: false },
          ],
        },
      }),
    );
    expect(full.completion).toMatchObject({ lessonScore: 100, enrollmentStatus: 'COMPLETED', completedNow: false, certificateId: expect.any(String) });
    const certs = await t.db.select().from(certificates).where(eq(certificates.enrollmentId, e.id));
    expect(certs).toEqual([expect.objectContaining({ id: full.completion.certificateId, finalScore: 100, courseTitle: 'Pass mark course' })]);
    expect(expectOk(await t.request('GET', '/api/certificates', { token: student(26) }))).toEqual([expect.objectContaining({ id: certs[0]!.id, finalScore: 100 })]);
    expect(await overviewCourse()).toEqual({
      course: expect.objectContaining({ status: 'COMPLETED', finalScore: 100, passed: true }),
      certificates: [expect.objectContaining({ id: certs[0]!.id, certificateNumber: certs[0]!.certificateNumber })],
    });
    expect(expectOk(await t.request('GET', '/api/certificates/verify', { query: { code: certs[0]!.verificationCode } })).valid).toBe(true);
    // One completion: no second push or notification; a further attempt issues nothing more.
    expect(await t.db.select().from(crmCompletions).where(eq(crmCompletions.enrollmentId, e.id))).toHaveLength(1);
    expect(await courseCompleted()).toHaveLength(1);
    expect(expectOk(await progress(student(26), lessons[0].id, { positionSeconds: 1 }))).toMatchObject({ status: 'COMPLETED', certificateId: null });
    expect(await t.db.select().from(certificates).where(eq(certificates.enrollmentId, e.id))).toHaveLength(1);
  });

  it('a course of unscored lessons has no final score to fall short of: it earns its certificate, and the parent sees it passed', async () => {
    const { course, lessons } = await courseWithLessons(1, { certificateEnabled: true, passingScore: 80, title: 'Unscored with a mark' });
    const e = await enroll(t, { courseId: course.id, studentId: stu(27) });
    const data = expectOk(await progress(student(27), lessons[0].id, { completed: true }));
    expect(data).toMatchObject({ status: 'COMPLETED', completedNow: true, certificateId: expect.any(String) });
    expect((await t.db.select().from(enrollments).where(eq(enrollments.id, e.id)))[0]!.finalScore).toBeNull();
    const [cert] = await t.db.select().from(certificates).where(eq(certificates.enrollmentId, e.id));
    const [outbox] = await t.db.select().from(crmCompletions).where(eq(crmCompletions.enrollmentId, e.id));
    expect(outbox!.payload).toMatchObject({ finalScore: null, certificateNumber: cert!.certificateNumber });
    const d = expectOk(await t.request('GET', `/api/parent/children/${stu(27)}/overview`, { token: await t.token({ role: 'PARENT', id: 'c_demo_par_26' }) }));
    expect(d.courses.find((c: any) => c.courseId === course.id)).toMatchObject({ status: 'COMPLETED', finalScore: null, passed: true });
    expect(d.certificates.map((c: any) => c.id)).toEqual([cert!.id]);
  });
});

describe('progress when the course changes (issue 4: progress = completed required / required)', () => {
  it('adding, deleting or un-requiring a lesson moves every enrollment now; one that is then complete is completed once by the worker', async () => {
    const { course, lessons } = await courseWithLessons(4, { certificateEnabled: true, ownerId: 'u_demo_teacher', title: 'Changing course' });
    const a = await enroll(t, { courseId: course.id, studentId: stu(21) });
    const b = await enroll(t, { courseId: course.id, studentId: stu(22) });
    for (const l of lessons.slice(0, 2)) expectOk(await progress(student(21), l.id, { completed: true }));
    expectOk(await progress(student(22), lessons[0].id, { completed: true }));
    const progressOf = async () =>
      Object.fromEntries((await t.db.select().from(enrollments).where(eq(enrollments.courseId, course.id))).map((e) => [e.id, [e.progress, e.status]]));
    expect(await progressOf()).toEqual({ [a.id]: [50, 'ACTIVE'], [b.id]: [25, 'ACTIVE'] });
    const lastAccessed = (await t.db.select().from(enrollments).where(eq(enrollments.id, a.id)))[0]!.lastAccessedAt;

    // A fifth required lesson: 2/5 and 1/5.
    const added = expectOk(await t.request('POST', `/api/courses/${course.id}/lessons`, { token: teacher, body: { title: 'Fifth', type: 'TEXT' } }), 201);
    expect(await progressOf()).toEqual({ [a.id]: [40, 'ACTIVE'], [b.id]: [20, 'ACTIVE'] });
    // Deleted: back to 2/4 and 1/4; made optional: 2/3 and 1/3.
    expectOk(await t.request('DELETE', `/api/lessons/${added.id}`, { token: teacher }));
    expect(await progressOf()).toEqual({ [a.id]: [50, 'ACTIVE'], [b.id]: [25, 'ACTIVE'] });
    expectOk(await t.request('PATCH', `/api/lessons/${lessons[2].id}`, { token: teacher, body: { isRequired: false } }));
    expect(await progressOf()).toEqual({ [a.id]: [67, 'ACTIVE'], [b.id]: [33, 'ACTIVE'] });
    expect(expectOk(await t.request('GET', '/api/my-courses', { token: student(21) })).find((r: any) => r.courseId === course.id)).toMatchObject({ progress: 67 });
    // The statement and a learner's own write (recomputeEnrollment) agree on the value.
    expect(expectOk(await progress(student(22), lessons[0].id, { completed: true })).progress).toBe(33);

    // The last lesson a still lacks goes: a has every required lesson, and the worker completes it once.
    expectOk(await t.request('DELETE', `/api/lessons/${lessons[3].id}`, { token: teacher }));
    expect(await progressOf()).toEqual({ [a.id]: [100, 'ACTIVE'], [b.id]: [50, 'ACTIVE'] });
    await t.worker.drain();
    expect(await progressOf()).toEqual({ [a.id]: [100, 'COMPLETED'], [b.id]: [50, 'ACTIVE'] });
    const [done] = await t.db.select().from(enrollments).where(eq(enrollments.id, a.id));
    expect(done.completedAt).not.toBeNull();
    expect(done.lastAccessedAt).toEqual(lastAccessed);
    expect(await t.db.select().from(certificates).where(eq(certificates.enrollmentId, a.id))).toHaveLength(1);
    expect(await t.db.select().from(crmCompletions).where(eq(crmCompletions.enrollmentId, a.id))).toHaveLength(1);

    // A COMPLETED enrollment keeps its 100 when a lesson is added.
    await t.request('POST', `/api/courses/${course.id}/lessons`, { token: teacher, body: { title: 'Sixth', type: 'TEXT' } });
    await t.worker.drain();
    expect(await progressOf()).toEqual({ [a.id]: [100, 'COMPLETED'], [b.id]: [33, 'ACTIVE'] });
    expect(await t.db.select().from(certificates).where(eq(certificates.enrollmentId, a.id))).toHaveLength(1);
  });
  it('a re-enrollment is recomputed: the lessons may have changed while it was DROPPED', async () => {
    const { course, lessons } = await courseWithLessons(3, { certificateEnabled: true, ownerId: 'u_demo_teacher', title: 'Back again' });
    const c = await enroll(t, { courseId: course.id, studentId: stu(23) });
    expectOk(await progress(student(23), lessons[0].id, { completed: true }));
    expectOk(await t.request('DELETE', `/api/courses/${course.id}/enrollments/${stu(23)}`, { token: teacher }));
    expectOk(await t.request('DELETE', `/api/lessons/${lessons[1].id}`, { token: teacher }));
    expect(expectOk(await t.request('POST', `/api/courses/${course.id}/enroll`, { token: student(23) }), 201)).toMatchObject({ status: 'ACTIVE', progress: 50 });
    // Dropped again, the last lesson it lacks goes: back, it has everything and is completed once.
    expectOk(await t.request('DELETE', `/api/courses/${course.id}/enrollments/${stu(23)}`, { token: teacher }));
    expectOk(await t.request('DELETE', `/api/lessons/${lessons[2].id}`, { token: teacher }));
    expect(expectOk(await t.request('POST', `/api/courses/${course.id}/enroll`, { token: student(23) }), 201)).toMatchObject({ status: 'ACTIVE', progress: 100 });
    await t.worker.drain();
    expect((await t.db.select().from(enrollments).where(eq(enrollments.id, c.id)))[0]).toMatchObject({ status: 'COMPLETED', progress: 100 });
    expect(await t.db.select().from(certificates).where(eq(certificates.enrollmentId, c.id))).toHaveLength(1);
  });
});

describe('a certificate PDF rendered while the CRM is down', () => {
  /** The text a PDF draws (pdfkit: Flate-compressed streams, TJ arrays of hex strings). */
  function pdfText(pdf: Buffer): string {
    const raw = pdf.toString('latin1');
    const lines: string[] = [];
    for (const m of raw.matchAll(/stream\r?\n/g)) {
      const start = m.index + m[0].length;
      let content: string;
      try {
        content = inflateSync(pdf.subarray(start, raw.indexOf('endstream', start))).toString('latin1');
      } catch {
        continue; // not a compressed content stream (a font, an image)
      }
      for (const tj of content.matchAll(/\[(.*?)\] TJ/g)) {
        lines.push([...tj[1].matchAll(/<([0-9a-f]*)>/g)].map((h) => Buffer.from(h[1], 'hex').toString('latin1')).join(''));
      }
    }
    return lines.join('\n');
  }
  const certificateOf = async (enrollmentId: string) => (await t.db.select().from(certificates).where(eq(certificates.enrollmentId, enrollmentId)))[0]!;

  it('is provisional, with "Certificate holder", and rendered again with the name on a later request once the CRM answers', async () => {
    const { course, lessons } = await courseWithLessons(1, { certificateEnabled: true, title: 'Rendered in an outage' });
    const e = await enroll(t, { courseId: course.id, studentId: stu(28) });
    const { firstName, lastName } = t.crmSim.data.inst_demo!.students.find((s) => s.contact.id === stu(28))!.contact;
    await t.worker.drain();
    t.crmSim.setFault('down');
    try {
      expectOk(await progress(student(28), lessons[0].id, { completed: true }));
      await t.worker.drain();
      const first = await certificateOf(e.id);
      expect(first).toMatchObject({ pdfKey: expect.any(String), pdfProvisional: true });
      expect(pdfText(await t.deps.storage.get(first.pdfKey!))).toContain('Certificate holder');
      // There is a PDF to download meanwhile; a request while the CRM is still down keeps it.
      const [listed] = expectOk(await t.request('GET', '/api/certificates', { token: student(28) }));
      expect(listed).toMatchObject({ id: first.id, pdfUrl: expect.any(String) });
      await t.worker.drain();
      expect(await certificateOf(e.id)).toEqual(first);
    } finally {
      t.crmSim.setFault(null);
    }

    const first = await certificateOf(e.id);
    expectOk(await t.request('GET', '/api/certificates', { token: student(28) }));
    await t.worker.drain();
    const final = await certificateOf(e.id);
    expect(final).toEqual({ ...first, pdfKey: expect.any(String), pdfProvisional: false });
    expect(final.pdfKey).not.toBe(first.pdfKey);
    const text = pdfText(await t.deps.storage.get(final.pdfKey!));
    expect(text).toContain(`${firstName} ${lastName}`);
    expect(text).not.toContain('Certificate holder');
    expect(text).toContain(first.verificationCode);
    // The provisional PDF is removed; the final one is kept and never rendered again.
    expect(await t.deps.storage.exists(first.pdfKey!)).toBe(false);
    expectOk(await t.request('GET', '/api/certificates', { token: student(28) }));
    expect(await t.worker.drain()).toBe(0);
    expect(await certificateOf(e.id)).toEqual(final);
  });
});

describe('GET /api/certificates/verify', () => {
  let code: string;
  let number: string;

  beforeAll(async () => {
    const { course, lessons } = await courseWithLessons(1, { certificateEnabled: true, certificateValidityMonths: 12, title: 'Verified course' });
    await enroll(t, { courseId: course.id, studentId: stu(14) });
    const { certificateId } = expectOk(await progress(student(14), lessons[0].id, { completed: true }));
    const [c] = await t.db.select().from(certificates).where(eq(certificates.id, certificateId));
    code = c.verificationCode;
    number = c.certificateNumber;
  });

  it('is public and returns validity, course, dates and the holder name only', async () => {
    const res = await t.request('GET', '/api/certificates/verify', { query: { code } });
    const contact = t.crmSim.data.inst_demo.students.find((s) => s.contact.id === stu(14))!.contact;
    const issued = await t.db.select().from(certificates).where(eq(certificates.verificationCode, code));
    expect(expectOk(res)).toEqual({
      valid: true,
      certificateNumber: number,
      courseTitle: 'Verified course',
      issuedAt: issued[0].issuedAt.toISOString(),
      expiresAt: issued[0].expiresAt!.toISOString(),
      holderName: `${contact.firstName} ${contact.lastName}`,
    });
    // Case and surrounding blanks do not matter to people typing a code.
    expectOk(await t.request('GET', '/api/certificates/verify', { query: { code: ` ${code.toLowerCase()} ` } }));
  });

  it('reports an expired certificate as not valid', async () => {
    t.clock.advance(400 * DAY);
    expect(expectOk(await t.request('GET', '/api/certificates/verify', { query: { code } })).valid).toBe(false);
  });

  it('answers 404 for an unknown code and 400 without a code', async () => {
    expectError(await t.request('GET', '/api/certificates/verify', { query: { code: 'ZZZZZZZZZZZZ' } }), 404, 'NOT_FOUND');
    expectError(await t.request('GET', '/api/certificates/verify'), 400, 'VALIDATION_ERROR');
  });
});

describe('batched, PDF and event progress', () => {
  it('progress-v2 updates several lessons in one transaction', async () => {
    const { course, lessons } = await courseWithLessons(3);
    await enroll(t, { courseId: course.id, studentId: stu(15) });
    const data = expectOk(
      await t.request('POST', `/api/lessons/${lessons[0].id}/progress-v2`, {
        token: student(15),
        body: { items: [{ completed: true }, { lessonId: lessons[1].id, progressPercent: 30, positionSeconds: 12 }] },
      }),
    );
    expect(data.items.map((i: any) => [i.lessonId, i.completed, i.progressPercent])).toEqual([
      [lessons[0].id, true, 100],
      [lessons[1].id, false, 30],
    ]);
    expect(data).toMatchObject({ progress: 33, status: 'ACTIVE' });
  });

  it('progress-v2 on a SEQUENTIAL course counts items in order: a lesson completed earlier in the batch opens the next; out of order is 403 and writes nothing', async () => {
    const { course, lessons } = await courseWithLessons(3, { dripMode: 'SEQUENTIAL' });
    await enroll(t, { courseId: course.id, studentId: stu(24) });
    const url = `/api/lessons/${lessons[0].id}/progress-v2`;
    const wrongOrder = await t.request('POST', url, { token: student(24), body: { items: [{ lessonId: lessons[1].id, progressPercent: 50 }, { completed: true }] } });
    expectError(wrongOrder, 403, 'LESSON_LOCKED');
    expect(
      await t.db
        .select()
        .from(lessonProgress)
        .where(eq(lessonProgress.studentId, stu(24))),
    ).toHaveLength(0);
    const data = expectOk(await t.request('POST', url, { token: student(24), body: { items: [{ completed: true }, { lessonId: lessons[1].id, progressPercent: 50 }] } }));
    expect(data.items.map((i: any) => [i.lessonId, i.completed, i.progressPercent])).toEqual([
      [lessons[0].id, true, 100],
      [lessons[1].id, false, 50],
    ]);
    // The third waits on the second, which this batch did not complete.
    expectError(await t.request('POST', url, { token: student(24), body: { items: [{ lessonId: lessons[2].id, progressPercent: 10 }] } }), 403, 'LESSON_LOCKED');
  });

  it('progress-v2 writes nothing when one item names a lesson of another course', async () => {
    const { course, lessons } = await courseWithLessons(2);
    const other = await courseWithLessons(1);
    await enroll(t, { courseId: course.id, studentId: stu(16) });
    const res = await t.request('POST', `/api/lessons/${lessons[0].id}/progress-v2`, {
      token: student(16),
      body: { items: [{ completed: true }, { lessonId: other.lessons[0].id, completed: true }] },
    });
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(failingFields(res)).toEqual(['body.items.1.lessonId']);
    expect(
      await t.db
        .select()
        .from(lessonProgress)
        .where(eq(lessonProgress.studentId, stu(16))),
    ).toHaveLength(0);
    expectError(await t.request('POST', `/api/lessons/${lessons[0].id}/progress-v2`, { token: student(16), body: { items: [] } }), 400, 'VALIDATION_ERROR');
  });

  it('pdf-progress records the page reached and completes on the last page', async () => {
    const { course, lessons } = await courseWithLessons(2, {}, { type: 'PDF' });
    await enroll(t, { courseId: course.id, studentId: stu(17) });
    const url = `/api/lessons/${lessons[0].id}/pdf-progress`;
    expect(expectOk(await t.request('POST', url, { token: student(17), body: { page: 5, totalPages: 10 } }))).toMatchObject({
      pdfPage: 5,
      pdfTotalPages: 10,
      progressPercent: 50,
      completed: false,
    });
    expect(expectOk(await t.request('POST', url, { token: student(17), body: { page: 10, totalPages: 10 } }))).toMatchObject({ completed: true, progress: 50 });
    expectError(await t.request('POST', url, { token: student(17), body: { page: 11, totalPages: 10 } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('POST', url, { token: student(17), body: { page: 0, totalPages: 10 } }), 400, 'VALIDATION_ERROR');
    const text = await courseWithLessons(1);
    await enroll(t, { courseId: text.course.id, studentId: stu(17) });
    expectError(await t.request('POST', `/api/lessons/${text.lessons[0].id}/pdf-progress`, { token: student(17), body: { page: 1, totalPages: 2 } }), 400, 'VALIDATION_ERROR');
    // Someone not enrolled is told so, as on the other progress routes, and learns nothing of the lesson's type.
    expectError(await t.request('POST', `/api/lessons/${text.lessons[0].id}/pdf-progress`, { token: student(18), body: { page: 1, totalPages: 2 } }), 403, 'ENROLLMENT_REQUIRED');
  });

  it('stores learner events; a complete event completes the lesson', async () => {
    const { course, lessons } = await courseWithLessons(2, {}, { type: 'VIDEO' });
    await enroll(t, { courseId: course.id, studentId: stu(18) });
    const url = `/api/lessons/${lessons[0].id}/events`;
    let data = expectOk(await t.request('POST', url, { token: student(18), body: { type: 'play', positionSeconds: 0 } }), 201);
    expect(data).toMatchObject({ recorded: 1, progress: { positionSeconds: 0, completed: false } });
    data = expectOk(
      await t.request('POST', url, {
        token: student(18),
        body: { events: [{ type: 'seek', positionSeconds: 120.7, data: { from: 10 } }, { type: 'pause', positionSeconds: 125 }, { type: 'complete' }] },
      }),
      201,
    );
    expect(data).toMatchObject({ recorded: 3, progress: { completed: true, positionSeconds: 125, progress: 50 } });
    const stored = await t.db.select().from(learnerEvents).where(eq(learnerEvents.lessonId, lessons[0].id));
    expect(stored.map((e) => e.type).sort()).toEqual(['complete', 'pause', 'play', 'seek']);
    expect(stored.find((e) => e.type === 'seek')).toMatchObject({ studentId: stu(18), positionSeconds: 120.7, data: { from: 10 } });
    expectError(await t.request('POST', url, { token: student(18), body: { positionSeconds: 3 } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('POST', url, { token: student(19), body: { type: 'play' } }), 403, 'ENROLLMENT_REQUIRED');
  });

  it('stores interactions', async () => {
    const { course, lessons } = await courseWithLessons(1);
    await enroll(t, { courseId: course.id, studentId: stu(19) });
    const data = expectOk(
      await t.request('POST', `/api/lessons/${lessons[0].id}/interactions`, { token: student(19), body: { kind: 'expand', targetId: 'faq-2', data: { open: true } } }),
      201,
    );
    expect(data).toEqual({ id: expect.any(String), lessonId: lessons[0].id, kind: 'expand', targetId: 'faq-2', data: { open: true }, createdAt: t.clock.now().toISOString() });
    const [row] = await t.db.select().from(lessonInteractions).where(eq(lessonInteractions.id, data.id));
    expect(row).toMatchObject({ studentId: stu(19), institutionId: 'inst_demo' });
    expectError(await t.request('POST', `/api/lessons/${lessons[0].id}/interactions`, { token: student(19), body: {} }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('POST', `/api/lessons/${lessons[0].id}/interactions`, { token: student(20), body: { kind: 'x' } }), 403, 'ENROLLMENT_REQUIRED');
  });
});

describe('interactive block answers', () => {
  it("stores the caller's latest answer, marks correctness and shows it to the caller only", async () => {
    const course = await createCourse(t);
    const lesson = await createLesson(t, {
      courseId: course.id,
      type: 'INTERACTIVE',
      blocks: [
        { id: 'q1', type: 'choice', correctAnswer: 'b' },
        { id: 'free', type: 'text' },
      ],
    });
    await enroll(t, { courseId: course.id, studentId: stu(21) });
    await enroll(t, { courseId: course.id, studentId: stu(22) });
    const url = `/api/lessons/${lesson.id}/blocks/q1/answer`;
    expect(expectOk(await t.request('GET', url, { token: student(21) }))).toBeNull();
    expect(expectOk(await t.request('POST', url, { token: student(21), body: { answer: 'a' } }))).toMatchObject({
      lessonId: lesson.id,
      blockId: 'q1',
      answer: 'a',
      isCorrect: false,
    });
    t.clock.advance(1000);
    expect(expectOk(await t.request('POST', url, { token: student(21), body: { answer: 'b' } }))).toMatchObject({ answer: 'b', isCorrect: true });
    expect(expectOk(await t.request('GET', url, { token: student(21) }))).toMatchObject({ answer: 'b', isCorrect: true, updatedAt: t.clock.now().toISOString() });
    expect(expectOk(await t.request('GET', url, { token: student(22) }))).toBeNull();
    expect(expectOk(await t.request('POST', `/api/lessons/${lesson.id}/blocks/free/answer`, { token: student(22), body: { answer: { text: 'hi' } } }))).toMatchObject({
      isCorrect: null,
      answer: { text: 'hi' },
    });
    expectError(await t.request('POST', `/api/lessons/${lesson.id}/blocks/nope/answer`, { token: student(21), body: { answer: 'a' } }), 404, 'NOT_FOUND');
    // An object answer is compared by content, whatever the order of its keys (jsonb keeps its own).
    const matching = await createLesson(t, {
      courseId: course.id,
      type: 'INTERACTIVE',
      blocks: [{ id: 'pairs', type: 'match', correctAnswer: { zebra: 'stripes', ant: 'six legs' } }],
    });
    const pairsUrl = `/api/lessons/${matching.id}/blocks/pairs/answer`;
    for (const answer of [
      { zebra: 'stripes', ant: 'six legs' },
      { ant: 'six legs', zebra: 'stripes' },
    ]) {
      expect(expectOk(await t.request('POST', pairsUrl, { token: student(21), body: { answer } })).isCorrect, JSON.stringify(answer)).toBe(true);
    }
    expect(expectOk(await t.request('POST', pairsUrl, { token: student(21), body: { answer: { ant: 'six legs' } } })).isCorrect).toBe(false);
    expectError(await t.request('POST', url, { token: student(21), body: {} }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('POST', url, { token: student(23), body: { answer: 'b' } }), 403, 'ENROLLMENT_REQUIRED');
    expectError(await t.request('GET', url, { token: northTeacher }), 404, 'NOT_FOUND');

    // A lesson that declares no blocks takes answers to any block id, ungraded.
    const free = await createLesson(t, { courseId: course.id, type: 'INTERACTIVE', content: '<p>Which is right?</p>' });
    const freeUrl = `/api/lessons/${free.id}/blocks/anything-1/answer`;
    expect(expectOk(await t.request('POST', freeUrl, { token: student(21), body: { answer: 2 } }))).toMatchObject({ blockId: 'anything-1', answer: 2, isCorrect: null });
    // An answer comes back as it was sent: a string that reads as JSON stays a string.
    const textUrl = `/api/lessons/${free.id}/blocks/text-1/answer`;
    for (const answer of ['42', 'true', '[1,2]', 'null', '"q"']) {
      expect(expectOk(await t.request('POST', textUrl, { token: student(21), body: { answer } })).answer, answer).toBe(answer);
      expect(expectOk(await t.request('GET', textUrl, { token: student(21) })).answer, answer).toBe(answer);
    }
    expect(expectOk(await t.request('GET', freeUrl, { token: student(21) }))).toMatchObject({ answer: 2 });
    expect(expectOk(await t.request('GET', freeUrl, { token: student(22) }))).toBeNull();
  });
});
