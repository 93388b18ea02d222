/**
 * Compliance training: targets read from the CRM roster, per-person records whose status moves
 * with the clock (ASSIGNED → OVERDUE), completion through the course, waivers, reminders once,
 * and recurrence after a completion.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, createLesson, enroll } from '../helpers/factories.js';
import { expectError, expectOk, failingFields } from '../helpers/expect.js';
import { auditLog } from '../../src/modules/audit/audit.tables.js';
import { enrollments } from '../../src/modules/enrollments/enrollments.tables.js';
import { notifications } from '../../src/modules/notifications/notifications.tables.js';
import { sweepCompliance } from '../../src/modules/compliance/compliance.service.js';
import { complianceRecords, complianceTrainings } from '../../src/modules/compliance/compliance.tables.js';
import { DEMO_ADMIN_ID, DEMO_CLASS_ID, DEMO_SECTION_ID, DEMO_STUDENT_ID, DEMO_TEACHER_ID, NORTH_ADMIN_ID, demoFixtures } from '../../src/dev/crm-sim/fixtures.js';

const DEMO_SECTION_B_ID = 'sec_demo_g6_b';
/** A student of another class (grade 7), moved into the targeted section during a test. */
const NEWCOMER_ID = 'c_demo_stu_11';

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

const myRecords = async (token?: string) =>
  (await t.request('GET', '/api/compliance/records', { token: token ?? (await t.token({ role: 'STUDENT', id: DEMO_STUDENT_ID })), query: { perPage: 100 } })).body.data;

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
    expect(list.body.data.find((x: any) => x.id === tr.id)).toMatchObject({ assignedCount: roster.length });
    expectError(await t.request('GET', '/api/compliance/training', { token: student }), 403, 'FORBIDDEN');
  });

  it('accepts a due date already past: every record it makes is OVERDUE from the start', async () => {
    t.clock.set(START);
    const { training: tr } = await training({ dueDate: '2026-02-01T00:00:00.000Z' });
    expect(tr.assignedCount).toBeGreaterThan(0);
    const records = await t.request('GET', '/api/compliance/records', { token: teacher, query: { trainingId: tr.id, perPage: 100 } });
    expect(records.body.meta.total).toBe(tr.assignedCount);
    expect(new Set(records.body.data.map((r: any) => r.status))).toEqual(new Set(['OVERDUE']));
    expect(records.body.data[0]).toMatchObject({ dueAt: '2026-02-01T00:00:00.000Z', completedAt: null });
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
    // A page past the end is empty and still tells the total.
    const past = await t.request('GET', '/api/compliance/records', { token: teacher, query: { trainingId: tr.id, status: 'OVERDUE', perPage: 1, page: 999 } });
    expect(past.body).toMatchObject({ data: [], meta: { total: staff.body.meta.total, page: 999, perPage: 1, totalPages: staff.body.meta.total } });

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
    // personId and studentId are one field under two names: two different people is a bad request.
    const twoPeople = { trainingId: record.trainingId, studentId: record.personId, personId: `${record.personId}x`, reason: 'Medical exemption' };
    expectError(await t.request('POST', '/api/compliance/waive', { token: admin, body: twoPeople }), 400, 'VALIDATION_ERROR');
    const res = await t.request('POST', '/api/compliance/waive', { token: admin, body: { recordId: record.id, reason: 'Medical exemption' } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: record.id, status: 'WAIVED', waiveReason: 'Medical exemption' });
    const log = await t.request('GET', '/api/audit-log', { token: admin, query: { action: 'compliance.waive' } });
    expect(log.status).toBe(200);
    expect(log.body.data.map((r: any) => r.targetId)).toContain(record.id);
    expectError(await t.request('POST', '/api/compliance/waive', { token: admin, body: { recordId: record.id, reason: 'Again' } }), 409, 'CONFLICT');
    expectError(await t.request('POST', '/api/compliance/waive', { token: admin, body: { recordId: 'nope', reason: 'Missing' } }), 404, 'NOT_FOUND');
  });

  it('waive by training and student (the current cycle of that obligation); records also carry studentId and dueDate', async () => {
    const { training: tr } = await training();
    const record = (await myRecords()).find((r: any) => r.trainingId === tr.id);
    expect(record).toMatchObject({ studentId: DEMO_STUDENT_ID, personId: DEMO_STUDENT_ID, dueDate: DUE, dueAt: DUE });
    const body = { trainingId: tr.id, studentId: DEMO_STUDENT_ID, reason: 'Transferred in' };
    expect(expectOk(await t.request('POST', '/api/compliance/waive', { token: admin, body }))).toMatchObject({ id: record.id, status: 'WAIVED', waiveReason: 'Transferred in' });
    expectError(await t.request('POST', '/api/compliance/waive', { token: admin, body: { ...body, studentId: undefined, personId: DEMO_STUDENT_ID } }), 409, 'CONFLICT');
    expectError(await t.request('POST', '/api/compliance/waive', { token: admin, body: { trainingId: tr.id, studentId: 'c_nobody', reason: 'Missing' } }), 404, 'NOT_FOUND');
    expectError(await t.request('POST', '/api/compliance/waive', { token: admin, body: { trainingId: tr.id, reason: 'Whom?' } }), 400, 'VALIDATION_ERROR');
  });

  it('takes a due date without a time as the end of that day (UTC)', async () => {
    const { training: tr } = await training({ dueDate: '2026-03-20' });
    expect(tr.dueDate).toBe('2026-03-20T23:59:59.999Z');
    expect((await myRecords()).find((r: any) => r.trainingId === tr.id)).toMatchObject({ dueAt: '2026-03-20T23:59:59.999Z' });
  });

  it('a waiver covers one cycle: a recurring obligation comes back recurrenceMonths after the waiver; a one-off stays waived', async () => {
    t.clock.set(START);
    const WINDOW_MS = Date.parse(DUE) - Date.parse(START);
    const { training: recurring } = await training({ recurrenceMonths: 6 });
    const { training: once } = await training();
    const recordOf = async (tr: { id: string }) => (await myRecords()).find((r: any) => r.trainingId === tr.id);
    const waivedAt = '2026-03-10T00:00:00.000Z';
    t.clock.set(waivedAt);
    for (const tr of [recurring, once]) {
      const record = await recordOf(tr);
      expect(expectOk(await t.request('POST', '/api/compliance/waive', { token: admin, body: { recordId: record.id, reason: 'Exempt this year' } }))).toMatchObject({
        status: 'WAIVED',
        cycle: 1,
      });
    }
    // Just before the waiver's six months are up: still waived.
    t.clock.set('2026-09-09T23:00:00.000Z');
    await sweepCompliance(t.deps);
    expect(await recordOf(recurring)).toMatchObject({ cycle: 1, status: 'WAIVED' });
    // Six months after the waiver the next cycle opens, due a full window later; the one-off training stays waived.
    t.clock.set('2026-09-10T00:30:00.000Z');
    await sweepCompliance(t.deps);
    const due2 = new Date(Date.parse('2026-09-10T00:00:00.000Z') + WINDOW_MS).toISOString();
    expect(await recordOf(recurring)).toMatchObject({ cycle: 2, status: 'ASSIGNED', assignedAt: '2026-09-10T00:00:00.000Z', dueAt: due2, waivedAt: null });
    expect(await recordOf(once)).toMatchObject({ cycle: 1, status: 'WAIVED' });
    // The sweep opens it once.
    await sweepCompliance(t.deps);
    const cycles = await t.db
      .select()
      .from(complianceRecords)
      .where(and(eq(complianceRecords.trainingId, recurring.id), eq(complianceRecords.personId, DEMO_STUDENT_ID)));
    expect(cycles.map((c) => c.cycle).sort()).toEqual([1, 2]);
    t.clock.set(START);
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

  it('recurrence: each cycle opens at the expiry with a full window, is reminded before its due date, and can be completed again', async () => {
    t.clock.set(START);
    // Window of the first cycle: START → DUE = 17 days 15 hours; every later cycle gets as long.
    const WINDOW_MS = Date.parse(DUE) - Date.parse(START);
    const { course, lesson, training: tr } = await training({ recurrenceMonths: 12 });
    const mine = async () => (await myRecords(await t.token({ role: 'STUDENT', id: DEMO_STUDENT_ID }))).find((r: any) => r.trainingId === tr.id);
    const complete = async () =>
      expectOk(await t.request('POST', `/api/lessons/${lesson.id}/progress`, { token: await t.token({ role: 'STUDENT', id: DEMO_STUDENT_ID }), body: { completed: true } }));
    const notices = async () =>
      (
        await t.db
          .select()
          .from(notifications)
          .where(and(eq(notifications.recipientId, DEMO_STUDENT_ID), eq(notifications.key, 'COMPLIANCE_DUE'), eq(notifications.channel, 'IN_APP')))
      )
        .filter((n) => n.metadata.trainingId === tr.id)
        .map((n) => `${n.metadata.dueDate}:${n.metadata.overdue}`)
        .sort();

    // Cycle 1: ASSIGNED → reminded within 7 days of the due date → COMPLETED.
    expect(await mine()).toMatchObject({ cycle: 1, status: 'ASSIGNED', dueAt: DUE });
    t.clock.set('2026-03-15T00:00:00.000Z');
    await sweepCompliance(t.deps);
    expect(await notices()).toEqual(['2026-03-20:false']);
    expect((await complete()).courseCompleted).toBe(true);
    await sweepCompliance(t.deps);
    expect(await mine()).toMatchObject({ cycle: 1, status: 'COMPLETED', completedAt: '2026-03-15T00:00:00.000Z' });

    // Not yet expired: nothing opens.
    t.clock.set('2027-03-14T23:00:00.000Z');
    await sweepCompliance(t.deps);
    expect(await mine()).toMatchObject({ cycle: 1, status: 'COMPLETED' });

    // Cycle 2 opens when the completion expires (12 months later), due a full window later: ASSIGNED, not overdue.
    t.clock.set('2027-03-15T00:30:00.000Z');
    expect((await sweepCompliance(t.deps)).reopened).toBeGreaterThanOrEqual(1);
    const due2 = new Date(Date.parse('2027-03-15T00:00:00.000Z') + WINDOW_MS).toISOString();
    expect(await mine()).toMatchObject({ cycle: 2, status: 'ASSIGNED', assignedAt: '2027-03-15T00:00:00.000Z', dueAt: due2, completedAt: null });
    // The course is open again for the new cycle: ACTIVE, its lesson not completed; the earlier certificate-free completion is in the audit log.
    const [e] = await t.db
      .select()
      .from(enrollments)
      .where(and(eq(enrollments.courseId, course.id), eq(enrollments.studentId, DEMO_STUDENT_ID)));
    expect(e).toMatchObject({ status: 'ACTIVE', progress: 0, completedAt: null });
    const reopenRows = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.action, 'enrollment.reopen'), eq(auditLog.targetId, e!.id)));
    expect(reopenRows).toEqual([
      expect.objectContaining({
        actorId: DEMO_ADMIN_ID,
        targetType: 'enrollment',
        before: expect.objectContaining({ status: 'COMPLETED', completedAt: '2026-03-15T00:00:00.000Z' }),
        after: expect.objectContaining({ status: 'ACTIVE', trainingId: tr.id, cycle: 2, source: 'compliance.sweep' }),
        requestId: null,
      }),
    ]);
    // Reminded before its own due date, then completed inside the cycle.
    t.clock.set(new Date(Date.parse(due2) - 3 * 86_400_000).toISOString());
    await sweepCompliance(t.deps);
    expect(await notices()).toEqual(['2026-03-20:false', `${due2.slice(0, 10)}:false`]);
    const done2 = await complete();
    expect(done2.courseCompleted).toBe(true);
    const completed2 = t.clock.now().toISOString();
    expect(await mine()).toMatchObject({ cycle: 2, status: 'COMPLETED', completedAt: completed2 });
    // Each completion is pushed to the CRM (spec 6.1): the first cycle's and this one, the second without a certificate.
    await t.worker.drain();
    const pushes = t.crmSim.completions.filter((c) => c.body.courseId === course.id).map((c) => c.body);
    expect(pushes.map((p) => p.completedAt).sort()).toEqual(['2026-03-15T00:00:00.000Z', completed2]);
    expect(pushes.every((p) => p.studentContactId === DEMO_STUDENT_ID)).toBe(true);

    // Cycle 3: ASSIGNED when it opens, OVERDUE past its due date, with the overdue notification (once).
    const open3 = new Date(Date.parse(completed2));
    open3.setUTCFullYear(open3.getUTCFullYear() + 1);
    t.clock.set(new Date(open3.getTime() + 60_000).toISOString());
    await sweepCompliance(t.deps);
    const due3 = new Date(open3.getTime() + WINDOW_MS).toISOString();
    expect(await mine()).toMatchObject({ cycle: 3, status: 'ASSIGNED', dueAt: due3 });
    t.clock.set(new Date(Date.parse(due3) + 3_600_000).toISOString());
    expect(await mine()).toMatchObject({ cycle: 3, status: 'OVERDUE' });
    await sweepCompliance(t.deps);
    await sweepCompliance(t.deps);
    // Cycle 3 was never in the 7-day window while the sweep ran before it, so only its overdue notice (and the earlier ones).
    expect(await notices()).toEqual(['2026-03-20:false', `${due2.slice(0, 10)}:false`, `${due3.slice(0, 10)}:true`].sort());
    t.clock.set(START);
  });

  it('a new cycle gives the course’s quiz its attempts afresh: maxAttempts counts the cycle’s attempts, numbers go on', async () => {
    t.clock.set(START);
    // A fresh token for each call: the clock moves by years.
    const studentToken = () => t.token({ role: 'STUDENT', id: DEMO_STUDENT_ID });
    const course = await createCourse(t, { title: 'Yearly quiz' });
    const lesson = await createLesson(t, { courseId: course.id, type: 'QUIZ' });
    const quiz = expectOk(
      await t.request('PUT', `/api/quiz/${lesson.id}`, {
        token: teacher,
        body: { title: 'Check', passingScore: 100, maxAttempts: 2, questions: [{ type: 'TRUE_FALSE', prompt: 'Sky is blue.', correctAnswer: true, order: 0 }] },
      }),
      201,
    );
    const questionId = quiz.questions[0].id;
    const tr = expectOk(
      await t.request('POST', '/api/compliance/training', { token: admin, body: { courseId: course.id, sectionIds: [DEMO_SECTION_ID], dueDate: DUE, recurrenceMonths: 12 } }),
      201,
    );
    const attempt = async (value: boolean) => t.request('POST', `/api/quiz/${lesson.id}/attempt`, { token: await studentToken(), body: { answers: [{ questionId, value }] } });
    const record = async () => (await myRecords()).find((r: any) => r.trainingId === tr.id);

    // Cycle 1: both attempts used, the second passes.
    expect(expectOk(await attempt(false))).toMatchObject({ attemptNumber: 1, passed: false });
    t.clock.set('2026-03-15T00:00:00.000Z');
    expect(expectOk(await attempt(true))).toMatchObject({ attemptNumber: 2, passed: true, completion: { courseCompleted: true } });
    expectError(await attempt(true), 409, 'ATTEMPT_LIMIT');
    await sweepCompliance(t.deps);
    expect(await record()).toMatchObject({ cycle: 1, status: 'COMPLETED' });

    // Cycle 2 reopens the course: the quiz has its 2 attempts again, numbered on from 3.
    t.clock.set('2027-03-15T00:30:00.000Z');
    await sweepCompliance(t.deps);
    expect(await record()).toMatchObject({ cycle: 2, status: 'ASSIGNED' });
    expect(expectOk(await t.request('GET', `/api/quiz/${lesson.id}`, { token: await studentToken() })).myAttempts).toMatchObject({ used: 0, remaining: 2, passed: false });
    expect(expectOk(await attempt(false))).toMatchObject({ attemptNumber: 3, passed: false });
    expect(expectOk(await attempt(true))).toMatchObject({ attemptNumber: 4, passed: true, completion: { lessonScore: 100, courseCompleted: true } });
    expectError(await attempt(true), 409, 'ATTEMPT_LIMIT');
    expect(await record()).toMatchObject({ cycle: 2, status: 'COMPLETED' });
    // The history keeps every attempt.
    expect(
      expectOk(await t.request('GET', `/api/quiz/${lesson.id}/attempts`, { token: await studentToken() }))
        .map((a: any) => a.attemptNumber)
        .sort(),
    ).toEqual([1, 2, 3, 4]);
    t.clock.set(START);
  });

  it('a completion from before the training counts while still valid; an expired one reopens the course', async () => {
    t.clock.set('2025-01-10T09:00:00.000Z');
    const course = await createCourse(t, { title: 'Done before' });
    const lesson = await createLesson(t, { courseId: course.id });
    await enroll(t, { courseId: course.id, studentId: DEMO_STUDENT_ID });
    expectOk(await t.request('POST', `/api/lessons/${lesson.id}/progress`, { token: await t.token({ role: 'STUDENT', id: DEMO_STUDENT_ID }), body: { completed: true } }));
    t.clock.set(START);
    const once = await t.request('POST', '/api/compliance/training', { token: admin, body: { courseId: course.id, sectionIds: [DEMO_SECTION_ID], dueDate: DUE } });
    expect(once.status).toBe(201);
    expect((await myRecords()).find((r: any) => r.trainingId === once.body.data.id)).toMatchObject({ status: 'COMPLETED', completedAt: '2025-01-10T09:00:00.000Z' });
    // With a 12-month recurrence the 14-month-old completion has expired: the record is ASSIGNED and the course open again.
    const yearly = await t.request('POST', '/api/compliance/training', {
      token: admin,
      body: { courseId: course.id, sectionIds: [DEMO_SECTION_ID], dueDate: DUE, recurrenceMonths: 12 },
    });
    expect((await myRecords()).find((r: any) => r.trainingId === yearly.body.data.id)).toMatchObject({ status: 'ASSIGNED', completedAt: null });
    const [e] = await t.db
      .select()
      .from(enrollments)
      .where(and(eq(enrollments.courseId, course.id), eq(enrollments.studentId, DEMO_STUDENT_ID)));
    expect(e).toMatchObject({ status: 'ACTIVE', completedAt: null });
    expectOk(await t.request('POST', `/api/lessons/${lesson.id}/progress`, { token: student, body: { completed: true } }));
    expect((await myRecords()).find((r: any) => r.trainingId === yearly.body.data.id)).toMatchObject({ status: 'COMPLETED', completedAt: START });
  });

  it('targets: a section knows its class (?classId= finds it), a class takes both its sections, the STUDENT role every class', async () => {
    const classRoster = [...(await t.deps.crm.getSectionRoster('demo', DEMO_SECTION_ID)), ...(await t.deps.crm.getSectionRoster('demo', DEMO_SECTION_B_ID))].map(
      (r) => r.studentContactId,
    );
    const { training: bySection } = await training();
    const staffRecords = async (query: Record<string, string | number>) =>
      expectOk(await t.request('GET', '/api/compliance/records', { token: teacher, query: { perPage: 100, ...query } })) as any[];
    const sectionRecords = await staffRecords({ trainingId: bySection.id });
    expect(sectionRecords.length).toBeGreaterThan(0);
    expect(sectionRecords.every((r) => r.classId === DEMO_CLASS_ID && r.sectionId === DEMO_SECTION_ID)).toBe(true);
    expect((await staffRecords({ trainingId: bySection.id, classId: DEMO_CLASS_ID })).map((r) => r.id).sort()).toEqual(sectionRecords.map((r) => r.id).sort());
    expect(await staffRecords({ trainingId: bySection.id, classId: 'cls_demo_g7' })).toEqual([]);

    const course = await createCourse(t, { title: 'Class-wide' });
    const byClass = expectOk(await t.request('POST', '/api/compliance/training', { token: admin, body: { courseId: course.id, classIds: [DEMO_CLASS_ID], dueDate: DUE } }), 201);
    expect(byClass.assignedCount).toBe(classRoster.length);
    const classRecords = await staffRecords({ trainingId: byClass.id, classId: DEMO_CLASS_ID });
    expect(classRecords.map((r) => r.personId).sort()).toEqual([...classRoster].sort());
    expect(new Set(classRecords.map((r) => r.sectionId))).toEqual(new Set([DEMO_SECTION_ID, DEMO_SECTION_B_ID]));
    expect((await staffRecords({ trainingId: byClass.id, sectionId: DEMO_SECTION_B_ID })).length).toBe(classRoster.length - sectionRecords.length);

    const everyone = await createCourse(t, { title: 'Everyone' });
    const byRole = expectOk(await t.request('POST', '/api/compliance/training', { token: admin, body: { courseId: everyone.id, roles: ['STUDENT'], dueDate: DUE } }), 201);
    expect(byRole.assignedCount).toBe(demoFixtures.students.length);
    const roleRecords = await staffRecords({ trainingId: byRole.id });
    expect(roleRecords.map((r) => r.personId).sort()).toEqual(demoFixtures.students.map((s) => s.contact.id).sort());
    expect(roleRecords.every((r) => r.classId !== null && r.sectionId !== null)).toBe(true);
    const enrolled = await t.db.select().from(enrollments).where(eq(enrollments.courseId, everyone.id));
    expect(enrolled).toHaveLength(demoFixtures.students.length);
  });

  it('the sweep reads the roster again: a student who joins a targeted section later is assigned and enrolled (audited)', async () => {
    t.clock.set(START);
    const { course, training: tr } = await training();
    const newcomer = t.crmSim.data.inst_demo!.students.find((s) => s.contact.id === NEWCOMER_ID)!;
    const home = newcomer.student.currentEnrolment;
    expect(home?.sectionId).not.toBe(DEMO_SECTION_ID);
    const staffRecords = async () => expectOk(await t.request('GET', '/api/compliance/records', { token: teacher, query: { trainingId: tr.id, perPage: 100 } })) as any[];
    expect((await staffRecords()).map((r) => r.personId)).not.toContain(NEWCOMER_ID);
    newcomer.student.currentEnrolment = { classId: DEMO_CLASS_ID, className: 'Grade 6', sectionId: DEMO_SECTION_ID, sectionName: 'A' };
    try {
      t.crmSim.resetRecords();
      t.clock.set('2026-03-05T09:00:00.000Z');
      const result = await sweepCompliance(t.deps);
      expect(result.assigned).toBeGreaterThanOrEqual(1);
      // The roster was asked for again (no-store), not served from a cache.
      expect(t.crmSim.requests.some((r) => r.path === `/api/lms/sections/${DEMO_SECTION_ID}/students`)).toBe(true);
      const record = (await staffRecords()).find((r) => r.personId === NEWCOMER_ID);
      // Joined before the due date: the training's due date.
      expect(record).toMatchObject({ cycle: 1, status: 'ASSIGNED', classId: DEMO_CLASS_ID, sectionId: DEMO_SECTION_ID, assignedAt: '2026-03-05T09:00:00.000Z', dueAt: DUE });
      const [e] = await t.db
        .select()
        .from(enrollments)
        .where(and(eq(enrollments.courseId, course.id), eq(enrollments.studentId, NEWCOMER_ID)));
      expect(e).toMatchObject({ status: 'ACTIVE', enrolledBy: DEMO_ADMIN_ID });
      const rows = await t.db.select().from(auditLog).where(eq(auditLog.targetId, e!.id));
      expect(rows).toEqual([
        expect.objectContaining({
          action: 'enrollment.create',
          actorId: DEMO_ADMIN_ID,
          after: expect.objectContaining({ courseId: course.id, studentId: NEWCOMER_ID, trainingId: tr.id, source: 'compliance.sweep' }),
        }),
      ]);
      // A second sweep assigns nobody twice.
      await sweepCompliance(t.deps);
      expect((await staffRecords()).filter((r) => r.personId === NEWCOMER_ID)).toHaveLength(1);
      expect(await t.db.select().from(auditLog).where(eq(auditLog.targetId, e!.id))).toHaveLength(1);
    } finally {
      newcomer.student.currentEnrolment = home;
      t.clock.set(START);
    }
  });

  it('a newcomer to a training created past its due date is due when assigned, never before', async () => {
    t.clock.set(START);
    const { training: tr } = await training({ dueDate: '2026-02-01T00:00:00.000Z' });
    const newcomer = t.crmSim.data.inst_demo!.students.find((s) => s.contact.id === NEWCOMER_ID)!;
    const home = newcomer.student.currentEnrolment;
    newcomer.student.currentEnrolment = { classId: DEMO_CLASS_ID, className: 'Grade 6', sectionId: DEMO_SECTION_ID, sectionName: 'A' };
    try {
      t.clock.set('2026-03-05T09:00:00.000Z');
      await sweepCompliance(t.deps);
      const records = expectOk(await t.request('GET', '/api/compliance/records', { token: teacher, query: { trainingId: tr.id, personId: NEWCOMER_ID } })) as any[];
      expect(records).toEqual([expect.objectContaining({ cycle: 1, assignedAt: '2026-03-05T09:00:00.000Z', dueAt: '2026-03-05T09:00:00.000Z' })]);
      const [row] = await t.db
        .select()
        .from(complianceRecords)
        .where(and(eq(complianceRecords.trainingId, tr.id), eq(complianceRecords.personId, NEWCOMER_ID)));
      expect(row!.dueAt.getTime()).toBeGreaterThanOrEqual(row!.assignedAt.getTime());
      t.clock.set('2026-03-05T09:00:01.000Z');
      expect((expectOk(await t.request('GET', '/api/compliance/records', { token: teacher, query: { trainingId: tr.id, personId: NEWCOMER_ID } })) as any[])[0].status).toBe(
        'OVERDUE',
      );
    } finally {
      newcomer.student.currentEnrolment = home;
      t.clock.set(START);
    }
  });

  it('roles: PARENT (who has no records) is 400 and creates nothing; a repeated role counts once', async () => {
    const course = await createCourse(t, { title: 'Roles' });
    const parent = await t.request('POST', '/api/compliance/training', { token: admin, body: { courseId: course.id, roles: ['PARENT'], dueDate: DUE } });
    expectError(parent, 400, 'VALIDATION_ERROR');
    expect(failingFields(parent)).toEqual(['body.roles.0']);
    expectError(
      await t.request('POST', '/api/compliance/training', { token: admin, body: { courseId: course.id, roles: ['STUDENT', 'PARENT'], dueDate: DUE } }),
      400,
      'VALIDATION_ERROR',
    );
    expect(await t.db.select().from(complianceTrainings).where(eq(complianceTrainings.courseId, course.id))).toEqual([]);
    const staff = expectOk(
      await t.request('POST', '/api/compliance/training', { token: admin, body: { courseId: course.id, roles: ['TEACHER', 'ADMIN', 'TEACHER'], dueDate: DUE } }),
      201,
    );
    expect(staff).toMatchObject({ roles: ['TEACHER', 'ADMIN'], assignedCount: 0 });
    const [stored] = await t.db.select().from(complianceTrainings).where(eq(complianceTrainings.id, staff.id));
    expect(stored!.roles).toEqual(['TEACHER', 'ADMIN']);
    const records = expectOk(await t.request('GET', '/api/compliance/records', { token: teacher, query: { trainingId: staff.id } })) as any[];
    expect(records.map((r) => r.personId)).toEqual([DEMO_TEACHER_ID]);
  });

  it('a reminder whose notification fails leaves its mark unset, and the next sweep sends it', async () => {
    t.clock.set(START);
    const { training: tr } = await training();
    const marks = async () =>
      (await t.db.select().from(complianceRecords).where(eq(complianceRecords.trainingId, tr.id))).map((r) => ({ reminded: r.remindedAt, overdue: r.overdueNotifiedAt }));
    await t.db.execute(
      sql.raw(`create function refuse_compliance_notice() returns trigger language plpgsql as $$
      begin if new.metadata->>'trainingId' = '${tr.id}' then raise exception 'notification refused'; end if; return new; end $$`),
    );
    await t.db.execute(sql.raw(`create trigger refuse_compliance_notice before insert on notifications for each row execute function refuse_compliance_notice()`));
    t.clock.set('2026-03-15T00:00:00.000Z');
    try {
      await expect(sweepCompliance(t.deps)).rejects.toThrow(/compliance sweep/);
      expect((await marks()).every((m) => m.reminded === null)).toBe(true);
    } finally {
      await t.db.execute(sql.raw(`drop trigger refuse_compliance_notice on notifications`));
      await t.db.execute(sql.raw(`drop function refuse_compliance_notice()`));
    }
    await sweepCompliance(t.deps);
    expect((await marks()).every((m) => m.reminded?.toISOString() === '2026-03-15T00:00:00.000Z')).toBe(true);
    const sent = await t.db
      .select()
      .from(notifications)
      .where(and(eq(notifications.recipientId, DEMO_STUDENT_ID), eq(notifications.key, 'COMPLIANCE_DUE'), eq(notifications.channel, 'IN_APP')));
    expect(sent.filter((n) => n.metadata.trainingId === tr.id)).toHaveLength(1);
    t.clock.set(START);
  });

  it('creating a training is audited with its enrollments in one transaction; a failed creation leaves no row', async () => {
    const course = await createCourse(t, { title: 'Audited' });
    const res = await t.request('POST', '/api/compliance/training', {
      token: admin,
      body: { courseId: course.id, sectionIds: [DEMO_SECTION_ID], dueDate: DUE },
      headers: { 'x-request-id': 'req-compliance-create' },
    });
    const tr = expectOk(res, 201);
    const rows = await t.db.select().from(auditLog).where(eq(auditLog.requestId, 'req-compliance-create'));
    expect(rows.find((r) => r.action === 'compliance_training.create')).toMatchObject({
      actorId: DEMO_ADMIN_ID,
      actorRole: 'ADMIN',
      targetType: 'compliance_training',
      targetId: tr.id,
      before: null,
      after: expect.objectContaining({ courseId: course.id, sectionIds: [DEMO_SECTION_ID], dueDate: DUE, assignedCount: tr.assignedCount }),
    });
    const enrolledRows = rows.filter((r) => r.action === 'enrollment.create');
    expect(enrolledRows).toHaveLength(tr.assignedCount);
    expect(enrolledRows.every((r) => (r.after as any).trainingId === tr.id && (r.after as any).source === 'compliance.training')).toBe(true);

    // An enrollment refused by the database fails the whole creation: no training, no record, no audit row.
    const other = await createCourse(t, { title: 'Refused' });
    await t.db.execute(
      sql.raw(`create function refuse_enrollment() returns trigger language plpgsql as $$
      begin if new.course_id = '${other.id}' then raise exception 'enrollment refused'; end if; return new; end $$`),
    );
    await t.db.execute(sql.raw(`create trigger refuse_enrollment before insert on enrollments for each row execute function refuse_enrollment()`));
    try {
      expectError(
        await t.request('POST', '/api/compliance/training', {
          token: admin,
          body: { courseId: other.id, sectionIds: [DEMO_SECTION_ID], dueDate: DUE },
          headers: { 'x-request-id': 'req-compliance-refused' },
        }),
        500,
        'INTERNAL_ERROR',
      );
    } finally {
      await t.db.execute(sql.raw(`drop trigger refuse_enrollment on enrollments`));
      await t.db.execute(sql.raw(`drop function refuse_enrollment()`));
    }
    expect(await t.db.select().from(auditLog).where(eq(auditLog.requestId, 'req-compliance-refused'))).toEqual([]);
    expect(await t.db.select().from(complianceTrainings).where(eq(complianceTrainings.courseId, other.id))).toEqual([]);
  });

  it('another institution’s admin cannot waive a record (404) and sees none of them', async () => {
    const { training: tr } = await training();
    const record = (await myRecords()).find((r: any) => r.trainingId === tr.id);
    const northAdmin = await t.token({ role: 'ADMIN', id: NORTH_ADMIN_ID, institutionId: 'inst_north' });
    expectError(await t.request('POST', '/api/compliance/waive', { token: northAdmin, body: { recordId: record.id, reason: 'Not yours' } }), 404, 'NOT_FOUND');
    expect((await myRecords()).find((r: any) => r.id === record.id)).toMatchObject({ status: 'ASSIGNED', waivedAt: null });
    const north = expectOk(await t.request('GET', '/api/compliance/records', { token: northAdmin, query: { trainingId: tr.id } })) as any[];
    expect(north).toEqual([]);
    expect(
      await t.db
        .select()
        .from(auditLog)
        .where(and(eq(auditLog.action, 'compliance.waive'), eq(auditLog.targetId, record.id))),
    ).toEqual([]);
  });

  it('a training for the TEACHER role reaches teachers when they read their records', async () => {
    const course = await createCourse(t, { title: 'Staff safety' });
    const res = await t.request('POST', '/api/compliance/training', { token: admin, body: { courseId: course.id, roles: ['TEACHER'], dueDate: DUE } });
    expect(res.status).toBe(201);
    // The staff view of all records already has the teacher's own (no personId filter needed first).
    const all = await t.request('GET', '/api/compliance/records', { token: teacher, query: { trainingId: res.body.data.id } });
    expect(all.body.data.map((r: any) => r.personId)).toEqual([DEMO_TEACHER_ID]);
    const mine = await t.request('GET', '/api/compliance/records', { token: teacher, query: { personId: DEMO_TEACHER_ID } });
    expect(mine.body.data.map((r: any) => r.trainingId)).toContain(res.body.data.id);
  });
});
