/**
 * Concurrent requests that used to lose data or answer 500. CI runs this file on PGlite and on
 * PostgreSQL (where the requests really overlap, each on its own connection); the invariants
 * hold on both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, createLesson, enroll } from '../helpers/factories.js';
import { expectError, expectOk } from '../helpers/expect.js';
import { usingPostgres } from '../helpers/database.js';
import { courses } from '../../src/modules/courses/courses.tables.js';
import { assignments, submissions } from '../../src/modules/assignments/assignments.tables.js';
import { enrollments } from '../../src/modules/enrollments/enrollments.tables.js';
import { certificates } from '../../src/modules/certificates/certificates.tables.js';
import { crmCompletions } from '../../src/modules/sync/sync.tables.js';
import { institutions } from '../../src/modules/institutions/institutions.tables.js';

let t: TestApp;
let teacher: string;
let admin: string;

beforeAll(async () => {
  t = await createTestApp({ env: { DB_POOL_SIZE: '20' } });
  teacher = await t.token({ role: 'TEACHER', id: 'u_demo_teacher' });
  admin = await t.token({ role: 'ADMIN', id: 'u_demo_admin' });
});
afterAll(async () => t.close());

const ROUNDS = 12;

describe('completion racing unenrollment', () => {
  it('never leaves a COMPLETED-with-certificate enrollment DROPPED', async () => {
    const statuses: string[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const studentId = `c_demo_stu_${String((i % 28) + 1).padStart(2, '0')}`;
      const course = await createCourse(t, { certificateEnabled: true });
      const lesson = await createLesson(t, { courseId: course.id });
      const e = await enroll(t, { courseId: course.id, studentId });
      const token = await t.token({ role: 'STUDENT', id: studentId });
      const [done, drop] = await Promise.all([
        t.request('POST', `/api/lessons/${lesson.id}/progress`, { token, body: { completed: true } }),
        t.request('DELETE', `/api/courses/${course.id}/enrollments/${studentId}`, { token }),
      ]);
      // Either order is fine; a 500 or a contradiction is not.
      expect([200, 403], JSON.stringify(done.body)).toContain(done.status);
      expect([200, 409], JSON.stringify(drop.body)).toContain(drop.status);
      const [row] = await t.db.select().from(enrollments).where(eq(enrollments.id, e.id));
      const certs = await t.db.select().from(certificates).where(eq(certificates.enrollmentId, e.id));
      const pushes = await t.db.select().from(crmCompletions).where(eq(crmCompletions.enrollmentId, e.id));
      statuses.push(row.status);
      if (row.status === 'COMPLETED') {
        expect(certs).toHaveLength(1);
        expect(pushes).toHaveLength(1);
        expect(drop.status).toBe(409);
      } else {
        expect(row.status).toBe('DROPPED');
        expect(certs).toHaveLength(0);
        expect(pushes).toHaveLength(0);
        expect(done.status).toBe(403);
      }
    }
    expect(statuses).toHaveLength(ROUNDS);
  });
});

describe('settings changed at the same time', () => {
  it('keeps both changes when two admins change different keys', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const timezone = i % 2 ? 'Europe/Paris' : 'America/New_York';
      const certificateValidityMonths = 10 + i;
      await Promise.all([
        t.request('PATCH', '/api/settings', { token: admin, body: { timezone } }),
        t.request('PATCH', '/api/settings', { token: admin, body: { certificateValidityMonths } }),
        t.request('PATCH', '/api/settings', { token: admin, body: { locale: i % 2 ? 'fr' : 'en-GB' } }),
      ]);
      const [row] = await t.db.select().from(institutions).where(eq(institutions.id, 'inst_demo'));
      expect(row.settings).toMatchObject({ timezone, certificateValidityMonths, locale: i % 2 ? 'fr' : 'en-GB' });
    }
  });
});

describe('writes referring to a row being deleted', () => {
  it('answer 404, never 500: a note on a lesson being deleted', async () => {
    const course = await createCourse(t, { ownerId: 'u_demo_teacher' });
    await enroll(t, { courseId: course.id, studentId: 'c_demo_stu_29' });
    const token = await t.token({ role: 'STUDENT', id: 'c_demo_stu_29' });
    for (let i = 0; i < ROUNDS; i++) {
      const lesson = await createLesson(t, { courseId: course.id, order: i });
      const [note, progress, del] = await Promise.all([
        t.request('POST', `/api/lessons/${lesson.id}/notes`, { token, body: { content: `note ${i}` } }),
        t.request('POST', `/api/lessons/${lesson.id}/progress`, { token, body: { progressPercent: 50 } }),
        t.request('DELETE', `/api/lessons/${lesson.id}`, { token: teacher }),
      ]);
      expect(del.status).toBe(200);
      expect([201, 404], JSON.stringify(note.body)).toContain(note.status);
      expect([200, 404], JSON.stringify(progress.body)).toContain(progress.status);
      if (note.status === 404) expect(note.body.error.code).toBe('NOT_FOUND');
    }
  });

  it('answer 201 or 404, never 500: a lesson added to a module being deleted', async () => {
    const course = await createCourse(t, { ownerId: 'u_demo_teacher' });
    for (let i = 0; i < ROUNDS; i++) {
      const mod = expectOk(await t.request('POST', `/api/courses/${course.id}/modules`, { token: teacher, body: { title: `M${i}` } }), 201);
      const [created, del] = await Promise.all([
        t.request('POST', `/api/courses/${course.id}/lessons`, { token: teacher, body: { title: `L${i}`, type: 'TEXT', moduleId: mod.id } }),
        t.request('DELETE', `/api/modules/${mod.id}`, { token: teacher }),
      ]);
      expect(del.status).toBe(200);
      // 400: the module was already gone when the lesson's module was checked.
      expect([201, 400, 404], JSON.stringify(created.body)).toContain(created.status);
    }
  });
});

/**
 * On PostgreSQL: until another connection waits for a row lock (the request under test has
 * reached the lock the test holds), at most 5 s. On PGlite, whose one connection runs one
 * transaction at a time, the request cannot start before the test's transaction ends.
 */
async function untilSomeoneWaitsForALock() {
  if (!usingPostgres()) return;
  for (let i = 0; i < 100; i++) {
    const { rows } = (await t.db.execute(sql`select count(*)::int as n from pg_locks where not granted`)) as unknown as { rows: Array<{ n: number }> };
    if (rows[0]!.n > 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('a course archived while a student self-enrolls', () => {
  it('takes no enrollment once the archive commits: the status is read again under the course lock', async () => {
    const course = await createCourse(t);
    const token = await t.token({ role: 'STUDENT', id: 'c_demo_stu_20' });
    let pending!: ReturnType<typeof t.request>;
    await t.db.transaction(async (tx) => {
      await tx.select().from(courses).where(eq(courses.id, course.id)).for('update');
      pending = t.request('POST', `/api/courses/${course.id}/enroll`, { token });
      await untilSomeoneWaitsForALock();
      await tx.update(courses).set({ status: 'ARCHIVED', archivedAt: new Date() }).where(eq(courses.id, course.id));
    });
    expectError(await pending, 404, 'NOT_FOUND');
    expect(await t.db.select().from(enrollments).where(eq(enrollments.courseId, course.id))).toEqual([]);
  });
});

describe('a course archived while the course lock is held', () => {
  it('stamps archivedAt when it gets the lock, not before: never earlier than what committed first', async () => {
    const course = await createCourse(t, { ownerId: 'u_demo_teacher' });
    let pending!: ReturnType<typeof t.request>;
    let released!: Date;
    await t.db.transaction(async (tx) => {
      await tx.select().from(courses).where(eq(courses.id, course.id)).for('update');
      pending = t.request('DELETE', `/api/courses/${course.id}`, { token: teacher });
      await untilSomeoneWaitsForALock();
      t.clock.advance(60_000);
      released = t.clock.now();
    });
    expectOk(await pending);
    const [row] = await t.db.select().from(courses).where(eq(courses.id, course.id));
    expect(row!.archivedAt!.getTime()).toBeGreaterThanOrEqual(released.getTime());
  });
});

describe('maxScore lowered while a submission is graded', () => {
  it('checks the grade against the maxScore under the assignment lock: never a score above the maximum', async () => {
    const course = await createCourse(t, { ownerId: 'u_demo_teacher' });
    const lesson = await createLesson(t, { courseId: course.id, type: 'ASSIGNMENT' });
    await enroll(t, { courseId: course.id, studentId: 'c_demo_stu_21' });
    const body = { title: 'Essay', instructions: 'Write.', maxScore: 10, dueDate: '2099-01-01T00:00:00Z', allowLate: false, isPeerAssessed: false };
    expectOk(await t.request('PUT', `/api/assignments/${lesson.id}`, { token: teacher, body }));
    const student = await t.token({ role: 'STUDENT', id: 'c_demo_stu_21' });
    const submission = expectOk(await t.request('POST', `/api/assignments/${lesson.id}/submit`, { token: student, body: { textContent: 'Cells.' } }), 201);
    let pending!: ReturnType<typeof t.request>;
    await t.db.transaction(async (tx) => {
      await tx.select().from(assignments).where(eq(assignments.id, lesson.id)).for('update');
      pending = t.request('POST', `/api/assignments/${lesson.id}/grade`, { token: teacher, body: { submissionId: submission.id, score: 9 } });
      await untilSomeoneWaitsForALock();
      await tx.update(assignments).set({ maxScore: 5 }).where(eq(assignments.id, lesson.id));
    });
    expectError(await pending, 400, 'VALIDATION_ERROR');
    const [row] = await t.db.select().from(submissions).where(eq(submissions.id, submission.id));
    expect(row.instructorScore).toBeNull();
  });
});

describe('enrollments that lock several courses', () => {
  it('two learning paths with the same courses in opposite order: students enroll on both at once, no deadlock', async () => {
    for (let i = 0; i < 6; i++) {
      const [c1, c2] = [await createCourse(t), await createCourse(t)];
      const pathA = expectOk(await t.request('POST', '/api/learning-paths', { token: admin, body: { title: `A${i}`, courseIds: [c1.id, c2.id] } }), 201);
      const pathB = expectOk(await t.request('POST', '/api/learning-paths', { token: admin, body: { title: `B${i}`, courseIds: [c2.id, c1.id] } }), 201);
      const students = ['c_demo_stu_22', 'c_demo_stu_23', 'c_demo_stu_24', 'c_demo_stu_25'];
      const answers = await Promise.all(
        students.map(async (id, k) => t.request('POST', `/api/learning-paths/${k % 2 ? pathB.id : pathA.id}/enroll`, { token: await t.token({ role: 'STUDENT', id }) })),
      );
      for (const res of answers) expect(res.status, JSON.stringify(res.body)).toBe(200);
      const rows = await t.db
        .select()
        .from(enrollments)
        .where(and(eq(enrollments.status, 'ACTIVE'), sql`${enrollments.courseId} in (${c1.id}, ${c2.id})`));
      expect(rows).toHaveLength(8);
    }
  });

  it('two compliance trainings created at once for one course: both 201, no deadlock', async () => {
    for (let i = 0; i < 6; i++) {
      const course = await createCourse(t);
      const body = { courseId: course.id, dueDate: '2099-01-01T00:00:00Z', roles: ['STUDENT'] };
      const answers = await Promise.all([1, 2].map((n) => t.request('POST', '/api/compliance/training', { token: admin, body: { ...body, title: `T${i}.${n}` } })));
      for (const res of answers) expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
  });
});
