/**
 * Concurrent requests that used to lose data or answer 500. CI runs this file on PGlite and on
 * PostgreSQL (where the requests really overlap, each on its own connection); the invariants
 * hold on both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, createLesson, enroll } from '../helpers/factories.js';
import { expectOk } from '../helpers/expect.js';
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
