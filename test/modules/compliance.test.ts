/**
 * Compliance training: targets read from the CRM roster, per-person records whose status moves
 * with the clock (ASSIGNED → OVERDUE), completion through the course, waivers, reminders once,
 * and recurrence after a completion.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, createLesson } from '../helpers/factories.js';
import { expectError } from '../helpers/expect.js';
import { enrollments } from '../../src/modules/enrollments/enrollments.tables.js';
import { notifications } from '../../src/modules/notifications/notifications.tables.js';
import { sweepCompliance } from '../../src/modules/compliance/compliance.service.js';
import { DEMO_ADMIN_ID, DEMO_SECTION_ID, DEMO_STUDENT_ID, DEMO_TEACHER_ID } from '../../src/dev/crm-sim/fixtures.js';

let t: TestApp;
let admin: string;
let teacher: string;
let student: string;
const START = '2026-03-02T09:00:00.000Z';
const DUE = '2026-03-20T00:00:00.000Z';

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.token({ role: 'ADMIN', id: DEMO_ADMIN_ID });
  teacher = await t.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
  student = await t.token({ role: 'STUDENT', id: DEMO_STUDENT_ID });
});
afterAll(async () => t.close());

async function training(body: object = {}) {
  const course = await createCourse(t, { title: 'Safety' });
  const lesson = await createLesson(t, { courseId: course.id });
  const res = await t.request('POST', '/api/compliance/training', { token: admin, body: { courseId: course.id, sectionIds: [DEMO_SECTION_ID], dueDate: DUE, ...body } });
  expect(res.status, res.raw).toBe(201);
  return { course, lesson, training: res.body.data };
}

const myRecords = async (token = student) => (await t.request('GET', '/api/compliance/records', { token, query: { perPage: 100 } })).body.data;

describe('compliance', () => {
  it('assigns the section’s students from the CRM roster, enrolls them, and refuses non-admins and bad bodies', async () => {
    const roster = await t.deps.crm.getSectionRoster('demo', DEMO_SECTION_ID);
    const { course, training: tr } = await training();
    expect(tr).toMatchObject({ courseId: course.id, title: 'Safety', sectionIds: [DEMO_SECTION_ID], dueDate: DUE, recurrenceMonths: null, assignedCount: roster.length });
    expect(roster.map((r) => r.studentContactId)).toContain(DEMO_STUDENT_ID);
    const enrolled = await t.db.select().from(enrollments).where(eq(enrollments.courseId, course.id));
    expect(enrolled.map((e) => e.studentId).sort()).toEqual(roster.map((r) => r.studentContactId).sort());
    expectError(
      await t.request('POST', '/api/compliance/training', { token: teacher, body: { courseId: course.id, sectionIds: [DEMO_SECTION_ID], dueDate: DUE } }),
      403,
      'FORBIDDEN',
    );
    expectError(await t.request('POST', '/api/compliance/training', { token: admin, body: { courseId: course.id, dueDate: DUE } }), 400, 'VALIDATION_ERROR');
    expectError(
      await t.request('POST', '/api/compliance/training', { token: admin, body: { courseId: course.id, sectionIds: [DEMO_SECTION_ID], dueDate: '2020-01-01T00:00:00Z' } }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(await t.request('POST', '/api/compliance/training', { token: admin, body: { courseId: 'nope', sectionIds: [DEMO_SECTION_ID], dueDate: DUE } }), 404, 'NOT_FOUND');
    expectError(
      await t.request('POST', '/api/compliance/training', { token: admin, body: { courseId: course.id, sectionIds: ['sec_nope'], dueDate: DUE } }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await t.request('POST', '/api/compliance/training', { token: admin, body: { courseId: course.id, classIds: ['cls_nope'], dueDate: DUE } }),
      400,
      'VALIDATION_ERROR',
    );
    const list = await t.request('GET', '/api/compliance/training', { token: teacher });
    expect(list.body.data.map((x: any) => x.id)).toContain(tr.id);
    expectError(await t.request('GET', '/api/compliance/training', { token: student }), 403, 'FORBIDDEN');
  });

  it('status moves with the clock and the course: ASSIGNED, OVERDUE, COMPLETED; students see their own, staff filter', async () => {
    t.clock.set(START);
    const { lesson, training: tr } = await training();
    let mine = (await myRecords()).filter((r: any) => r.trainingId === tr.id);
    expect(mine).toEqual([expect.objectContaining({ personId: DEMO_STUDENT_ID, status: 'ASSIGNED', cycle: 1, dueAt: DUE, sectionId: DEMO_SECTION_ID, completedAt: null })]);
    expect((await myRecords()).every((r: any) => r.personId === DEMO_STUDENT_ID)).toBe(true);
    const staff = await t.request('GET', '/api/compliance/records', { token: teacher, query: { trainingId: tr.id, sectionId: DEMO_SECTION_ID, perPage: 100 } });
    expect(staff.body.data.length).toBeGreaterThan(1);

    t.clock.set('2026-03-21T00:00:00.000Z');
    mine = (await myRecords()).filter((r: any) => r.trainingId === tr.id);
    expect(mine[0].status).toBe('OVERDUE');
    const overdue = await t.request('GET', '/api/compliance/records', { token: teacher, query: { trainingId: tr.id, status: 'OVERDUE', perPage: 100 } });
    expect(overdue.body.meta.total).toBe(staff.body.meta.total);

    const done = await t.request('POST', `/api/lessons/${lesson.id}/progress`, { token: await t.token({ role: 'STUDENT', id: DEMO_STUDENT_ID }), body: { completed: true } });
    expect(done.body.data.courseCompleted).toBe(true);
    mine = (await myRecords()).filter((r: any) => r.trainingId === tr.id);
    expect(mine[0]).toMatchObject({ status: 'COMPLETED', completedAt: '2026-03-21T00:00:00.000Z' });
    t.clock.set(START);
  });

  it('waive: ADMIN with a reason; once; WAIVED', async () => {
    const { training: tr } = await training();
    const record = (await myRecords()).find((r: any) => r.trainingId === tr.id);
    expectError(await t.request('POST', '/api/compliance/waive', { token: teacher, body: { recordId: record.id, reason: 'Exempt' } }), 403, 'FORBIDDEN');
    expectError(await t.request('POST', '/api/compliance/waive', { token: admin, body: { recordId: record.id, reason: 'no' } }), 400, 'VALIDATION_ERROR');
    const res = await t.request('POST', '/api/compliance/waive', { token: admin, body: { recordId: record.id, reason: 'Medical exemption' } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: record.id, status: 'WAIVED', waiveReason: 'Medical exemption' });
    const log = await t.request('GET', '/api/audit-log', { token: admin, query: { action: 'compliance.waive' } });
    expect(log.status).toBe(200);
    expect(log.body.data.map((r: any) => r.targetId)).toContain(record.id);
    expectError(await t.request('POST', '/api/compliance/waive', { token: admin, body: { recordId: record.id, reason: 'Again' } }), 409, 'CONFLICT');
    expectError(await t.request('POST', '/api/compliance/waive', { token: admin, body: { recordId: 'nope', reason: 'Missing' } }), 404, 'NOT_FOUND');
  });

  it('reminds once within 7 days of the due date and once when overdue, however often the sweep runs', async () => {
    t.clock.set(START);
    const { training: tr } = await training();
    const reminders = () =>
      t.db
        .select()
        .from(notifications)
        .where(and(eq(notifications.recipientId, DEMO_STUDENT_ID), eq(notifications.key, 'COMPLIANCE_DUE'), eq(notifications.channel, 'IN_APP')));
    const forTraining = async () => (await reminders()).filter((n) => n.metadata.trainingId === tr.id);
    await sweepCompliance(t.deps);
    expect(await forTraining()).toHaveLength(0); // 18 days ahead: too early
    t.clock.set('2026-03-15T00:00:00.000Z');
    await sweepCompliance(t.deps);
    await sweepCompliance(t.deps);
    expect((await forTraining()).map((n) => n.metadata.overdue)).toEqual([false]);
    t.clock.set('2026-03-21T00:00:00.000Z');
    await sweepCompliance(t.deps);
    await sweepCompliance(t.deps);
    expect((await forTraining()).map((n) => n.metadata.overdue).sort()).toEqual([false, true]);
    t.clock.set(START);
  });

  it('a recurring training opens the next cycle recurrenceMonths after a completion', async () => {
    t.clock.set(START);
    const { lesson, training: tr } = await training({ recurrenceMonths: 12 });
    await t.request('POST', `/api/lessons/${lesson.id}/progress`, { token: student, body: { completed: true } });
    await sweepCompliance(t.deps);
    expect((await myRecords()).find((r: any) => r.trainingId === tr.id)).toMatchObject({ status: 'COMPLETED', cycle: 1 });
    t.clock.set('2027-03-03T09:00:00.000Z');
    const result = await sweepCompliance(t.deps);
    expect(result.reopened).toBeGreaterThanOrEqual(1);
    const next = (await myRecords(await t.token({ role: 'STUDENT', id: DEMO_STUDENT_ID }))).find((r: any) => r.trainingId === tr.id);
    expect(next).toMatchObject({ cycle: 2, status: 'OVERDUE', dueAt: '2027-03-02T09:00:00.000Z' });
    t.clock.set(START);
  });

  it('a training for the TEACHER role reaches teachers when they read their records', async () => {
    const course = await createCourse(t, { title: 'Staff safety' });
    const res = await t.request('POST', '/api/compliance/training', { token: admin, body: { courseId: course.id, roles: ['TEACHER'], dueDate: DUE } });
    expect(res.status).toBe(201);
    const mine = await t.request('GET', '/api/compliance/records', { token: teacher, query: { personId: DEMO_TEACHER_ID } });
    expect(mine.body.data.map((r: any) => r.trainingId)).toContain(res.body.data.id);
  });
});
