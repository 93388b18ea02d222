/**
 * The CRM integration through HTTP against the simulator: settings and fee gating (402,
 * degrade open), the institution slug lookup, and the completion push outbox (retry after an
 * outage, one of hours included, delivered exactly once, POST /api/sync/crm counts).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, createLesson, enroll } from '../helpers/factories.js';
import { expectError, expectOk, failingFields } from '../helpers/expect.js';
import { runWorkerFor } from '../helpers/jobs.js';
import { enrollments } from '../../src/modules/enrollments/enrollments.tables.js';
import { institutions } from '../../src/modules/institutions/institutions.tables.js';
import { crmCompletions } from '../../src/modules/sync/sync.tables.js';
import { jobs } from '../../src/platform/queue/queue.tables.js';
import { retryDelayMs } from '../../src/platform/queue/queue.js';
import { OUTAGE_RETRY } from '../../src/platform/queue/jobs.schemas.js';

const PAID = 'c_demo_stu_01';
const PARTIAL = 'c_demo_stu_02';
const OVERDUE = 'c_demo_stu_03';
let t: TestApp;
let admin: string;
let teacher: string;
let northAdmin: string;
const tok: Record<string, string> = {};
/** The app's log lines (warn and above), as parsed JSON. */
const logLines: Array<Record<string, any>> = [];

beforeAll(async () => {
  t = await createTestApp({ logger: { level: 'warn', stream: { write: (l: string) => void logLines.push(JSON.parse(l)) } } });
  admin = await t.token({ role: 'ADMIN', id: 'u_demo_admin' });
  teacher = await t.token({ role: 'TEACHER', id: 'u_demo_teacher' });
  northAdmin = await t.token({ role: 'ADMIN', id: 'u_northside_admin', institutionId: 'inst_north' });
  for (let n = 1; n <= 30; n++) {
    const id = `c_demo_stu_${String(n).padStart(2, '0')}`;
    tok[id] = await t.token({ role: 'STUDENT', id });
  }
}, 180_000);
afterAll(() => t?.close());
beforeEach(() => t.crmSim.setFault(null));

const setGating = async (on: boolean) => expectOk(await t.request('PATCH', '/api/settings', { token: admin, body: { feeGatingEnabled: on } }));

describe('GET/PATCH /api/settings', () => {
  it('shows the settings with fee gating off by default', async () => {
    const data = expectOk(await t.request('GET', '/api/settings', { token: tok[PAID] }));
    expect(data).toMatchObject({ institutionId: 'inst_demo', feeGatingEnabled: false, allowSelfEnrollment: true });
  });

  it('lets an ADMIN change settings; only the sent fields change', async () => {
    const data = expectOk(await t.request('PATCH', '/api/settings', { token: admin, body: { feeGatingEnabled: true, certificateValidityMonths: 24 } }));
    expect(data).toMatchObject({ feeGatingEnabled: true, certificateValidityMonths: 24, allowSelfEnrollment: true });
    const [row] = await t.db.select().from(institutions).where(eq(institutions.id, 'inst_demo'));
    expect(row.settings).toMatchObject({ feeGatingEnabled: true, certificateValidityMonths: 24 });
    expect(expectOk(await t.request('PATCH', '/api/settings', { token: admin, body: { certificateValidityMonths: null } }))).toMatchObject({
      feeGatingEnabled: true,
      certificateValidityMonths: null,
    });
    // The other institution is untouched.
    expect(expectOk(await t.request('GET', '/api/settings', { token: northAdmin })).feeGatingEnabled).toBe(false);
    await setGating(false);
    // A time zone is kept in its own spelling, whatever the letter case sent.
    expect(expectOk(await t.request('PATCH', '/api/settings', { token: admin, body: { timezone: 'europe/berlin' } })).timezone).toBe('Europe/Berlin');
    expect((await t.db.select().from(institutions).where(eq(institutions.id, 'inst_demo')))[0]!.settings).toMatchObject({ timezone: 'Europe/Berlin' });
    expectOk(await t.request('PATCH', '/api/settings', { token: admin, body: { timezone: 'UTC' } }));
  });

  it('refuses non-admins (403) and invalid bodies (400) without writing', async () => {
    expectError(await t.request('PATCH', '/api/settings', { token: teacher, body: { feeGatingEnabled: true } }), 403, 'FORBIDDEN');
    expectError(await t.request('PATCH', '/api/settings', { token: tok[PAID], body: { feeGatingEnabled: true } }), 403, 'FORBIDDEN');
    let res = await t.request('PATCH', '/api/settings', { token: admin, body: { feeGatingEnabled: 'yes' } });
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(failingFields(res)).toEqual(['body.feeGatingEnabled']);
    res = await t.request('PATCH', '/api/settings', { token: admin, body: { somethingElse: 1 } });
    expectError(res, 400, 'VALIDATION_ERROR');
    expectError(await t.request('PATCH', '/api/settings', { token: admin, body: {} }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('PATCH', '/api/settings', { token: admin, body: { feeGatingEnabled: true, institutionId: 'inst_north' } }), 403, 'TENANT_MISMATCH');
    expect(expectOk(await t.request('GET', '/api/settings', { token: admin })).feeGatingEnabled).toBe(false);
  });
});

describe('fee gating', () => {
  const enrollIn = async (studentId: string) => {
    const course = await createCourse(t);
    return { course, res: await t.request('POST', `/api/courses/${course.id}/enroll`, { token: tok[studentId] }) };
  };

  it('is off by default: an OVERDUE student enrolls', async () => {
    expectOk((await enrollIn(OVERDUE)).res, 201);
  });

  it('when on, refuses an OVERDUE student with 402 FEE_OVERDUE on self-enroll and writes nothing', async () => {
    await setGating(true);
    try {
      const { course, res } = await enrollIn(OVERDUE);
      expectError(res, 402, 'FEE_OVERDUE');
      expect(res.body.error.details).toMatchObject({ outstanding: 1250, dueDate: '2026-01-15' });
      expect(await t.db.select().from(enrollments).where(eq(enrollments.courseId, course.id))).toHaveLength(0);
      // The simulator saw a fee-status call for that student at the tenant address.
      const call = t.crmSim.requests.find((r) => r.path === `/api/lms/students/${OVERDUE}/fee-status`);
      expect(call?.host).toBe(`demo.${t.crmSim.baseDomain}`);
    } finally {
      await setGating(false);
    }
  });

  it('when on, refuses an OVERDUE student opening lesson content with 402', async () => {
    const course = await createCourse(t);
    const lesson = await createLesson(t, { courseId: course.id });
    await enroll(t, { courseId: course.id, studentId: OVERDUE });
    await setGating(true);
    try {
      expectError(await t.request('GET', `/api/learn/${course.id}/${lesson.id}`, { token: tok[OVERDUE] }), 402, 'FEE_OVERDUE');
      expectError(await t.request('GET', `/api/lessons/${lesson.id}`, { token: tok[OVERDUE] }), 402, 'FEE_OVERDUE');
      // Course managers are not gated.
      expectOk(await t.request('GET', `/api/learn/${course.id}/${lesson.id}`, { token: teacher }));
    } finally {
      await setGating(false);
    }
  });

  it('when on, lets PAID and PARTIAL students through', async () => {
    await setGating(true);
    try {
      expectOk((await enrollIn(PAID)).res, 201);
      expectOk((await enrollIn(PARTIAL)).res, 201);
    } finally {
      await setGating(false);
    }
  });

  it('reads the fee status fresh every time (no-store): paying opens the gate at once', async () => {
    await setGating(true);
    const fixture = t.crmSim.data.inst_demo.students.find((s) => s.contact.id === OVERDUE)!;
    const saved = fixture.feeStatus;
    try {
      expectError((await enrollIn(OVERDUE)).res, 402, 'FEE_OVERDUE');
      fixture.feeStatus = { status: 'PAID', outstanding: 0, dueDate: null } as typeof saved;
      expectOk((await enrollIn(OVERDUE)).res, 201);
    } finally {
      fixture.feeStatus = saved;
      await setGating(false);
    }
  });

  it.each(['down', 'error500', 'malformed'] as const)('degrades open when the CRM is %s', async (fault) => {
    await setGating(true);
    t.crmSim.setFault(fault, { pathPrefix: '/api/lms/' });
    try {
      expectOk((await enrollIn(OVERDUE)).res, 201);
    } finally {
      t.crmSim.setFault(null);
      await setGating(false);
    }
  });

  it('logs the degrade-open warning through the request logger, with the request id', async () => {
    await setGating(true);
    t.crmSim.setFault('down', { pathPrefix: '/api/lms/' });
    try {
      const course = await createCourse(t);
      const res = await t.request('POST', `/api/courses/${course.id}/enroll`, { token: tok[OVERDUE], headers: { 'x-request-id': 'req-fee-gate-1' } });
      expectOk(res, 201);
      expect(res.headers['x-request-id']).toBe('req-fee-gate-1');
      const warning = logLines.find((l) => l.reqId === 'req-fee-gate-1' && /fee gating/.test(l.msg));
      expect(warning, JSON.stringify(logLines.slice(-5))).toMatchObject({ level: 40 });
      expect(warning!.msg).toContain(OVERDUE);
    } finally {
      t.crmSim.setFault(null);
      await setGating(false);
    }
  });
});

describe('institution slug', () => {
  it('is looked up through the CRM institution lookup when the row has none, and stored', async () => {
    // Nothing has needed the second institution's slug yet.
    const northStudent = await t.token({ role: 'STUDENT', id: 'c_northside_stu_03', institutionId: 'inst_north' });
    expectOk(await t.request('PATCH', '/api/settings', { token: northAdmin, body: { feeGatingEnabled: true } }));
    const [before] = await t.db.select().from(institutions).where(eq(institutions.id, 'inst_north'));
    expect(before.slug).toBeNull();
    const course = await createCourse(t, { institutionId: 'inst_north', ownerId: 'u_northside_teacher' });
    t.crmSim.resetRecords();
    expectError(await t.request('POST', `/api/courses/${course.id}/enroll`, { token: northStudent }), 402, 'FEE_OVERDUE');
    const lookups = t.crmSim.requests.filter((r) => r.path.startsWith('/api/portal/'));
    expect(lookups.map((r) => [r.host, r.path])).toEqual([[t.crmSim.baseDomain, '/api/portal/institutions/inst_north']]);
    expect(lookups[0].headers.authorization).toBeUndefined();
    const feeCall = t.crmSim.requests.find((r) => r.path.endsWith('/fee-status'));
    expect(feeCall?.host).toBe(`northside.${t.crmSim.baseDomain}`);
    const [row] = await t.db.select().from(institutions).where(eq(institutions.id, 'inst_north'));
    expect(row.slug).toBe('northside');
    expectOk(await t.request('PATCH', '/api/settings', { token: northAdmin, body: { feeGatingEnabled: false } }));
  });
});

describe('completion push', () => {
  /** Complete a one-lesson course as `studentId`; returns the outbox row. */
  async function completeCourse(studentId: string) {
    const course = await createCourse(t, { title: `Pushed ${studentId}` });
    const lesson = await createLesson(t, { courseId: course.id });
    const e = await enroll(t, { courseId: course.id, studentId });
    expectOk(await t.request('POST', `/api/lessons/${lesson.id}/progress`, { token: tok[studentId], body: { completed: true } }));
    const [row] = await t.db.select().from(crmCompletions).where(eq(crmCompletions.enrollmentId, e.id));
    return { course, row };
  }
  const pushesOf = (courseId: string) => t.crmSim.completions.filter((c) => c.body.courseId === courseId);
  const outboxRow = async (id: string) => (await t.db.select().from(crmCompletions).where(eq(crmCompletions.id, id)))[0];

  it('is retried by the worker after a CRM outage and delivered exactly once', async () => {
    await t.worker.drain(); // anything earlier tests left queued
    const { course, row } = await completeCourse('c_demo_stu_10');
    t.crmSim.setFault('down', { pathPrefix: '/api/lms/completion' });
    await t.worker.drain();
    expect(pushesOf(course.id)).toHaveLength(0);
    const failed = await outboxRow(row.id);
    expect(failed).toMatchObject({ status: 'FAILED', attempts: 1 });
    expect(failed.lastError).toBeTruthy();
    const [job] = await t.db
      .select()
      .from(jobs)
      .where(and(eq(jobs.name, 'crm.pushCompletion'), eq(jobs.status, 'queued')));
    expect(job.payload.completionId).toBe(row.id);
    expect(job.runAt.getTime()).toBe(t.clock.now().getTime() + retryDelayMs(1));

    // Not due yet: nothing runs. Once due, with the CRM back, it is delivered.
    t.crmSim.setFault(null);
    expect(await t.worker.drain()).toBe(0);
    t.clock.advance(retryDelayMs(1));
    await t.worker.drain();
    expect(pushesOf(course.id)).toEqual([{ slug: 'demo', body: row.payload, receivedAt: expect.any(String) }]);
    expect(await outboxRow(row.id)).toMatchObject({ status: 'SENT', lastError: null, attempts: 2 });
    const [done] = await t.db.select().from(jobs).where(eq(jobs.id, job.id));
    expect(done.status).toBe('done');

    // Nothing pushes it again: not the worker, not the sync endpoint.
    t.clock.advance(3_600_000);
    await t.worker.drain();
    expect(expectOk(await t.request('POST', '/api/sync/crm', { token: admin }))).toEqual({ pushed: 0, failed: 0, pending: 0 });
    expect(pushesOf(course.id)).toHaveLength(1);
  });

  it('an outage of hours: the worker keeps retrying past the old 10 attempts and pushes once when the CRM is back, with no manual sync', async () => {
    await t.worker.drain();
    const { course, row } = await completeCourse('c_demo_stu_14');
    t.crmSim.setFault('down', { pathPrefix: '/api/lms/completion' });
    await runWorkerFor(t, 3 * 3_600_000);
    expect(pushesOf(course.id)).toHaveLength(0);
    const failed = await outboxRow(row.id);
    expect(failed.status).toBe('FAILED');
    expect(failed.attempts).toBeGreaterThan(10);
    const [job] = await t.db
      .select()
      .from(jobs)
      .where(and(eq(jobs.name, 'crm.pushCompletion'), sql`${jobs.payload}->>'completionId' = ${row.id}`));
    expect(job).toMatchObject({ status: 'queued', attempts: failed.attempts, maxAttempts: OUTAGE_RETRY.maxAttempts });

    t.crmSim.setFault(null);
    await runWorkerFor(t, 10 * 60_000); // the longest wait between two attempts
    expect(pushesOf(course.id)).toEqual([{ slug: 'demo', body: row.payload, receivedAt: expect.any(String) }]);
    expect(await outboxRow(row.id)).toMatchObject({ status: 'SENT', lastError: null });
    expect((await t.db.select().from(jobs).where(eq(jobs.id, job!.id)))[0]!.status).toBe('done');
    await runWorkerFor(t, 3_600_000);
    expect(pushesOf(course.id)).toHaveLength(1);
  });

  it('a 2xx that is not the envelope (an HTML page) is not a delivery: the row fails and is retried', async () => {
    await t.worker.drain();
    const { course, row } = await completeCourse('c_demo_stu_14');
    t.crmSim.setFault('malformed', { pathPrefix: '/api/lms/completion' });
    await t.worker.drain();
    expect(pushesOf(course.id)).toHaveLength(0);
    const failed = await outboxRow(row.id);
    expect(failed).toMatchObject({ status: 'FAILED', attempts: 1, sentAt: null });
    expect(failed.lastError).toMatch(/answered 200 without a JSON envelope/);
    const [job] = await t.db
      .select()
      .from(jobs)
      .where(and(eq(jobs.name, 'crm.pushCompletion'), eq(jobs.status, 'queued')));
    expect(job.payload.completionId).toBe(row.id);

    t.crmSim.setFault(null);
    t.clock.advance(retryDelayMs(1));
    await t.worker.drain();
    expect(pushesOf(course.id)).toHaveLength(1);
    expect(await outboxRow(row.id)).toMatchObject({ status: 'SENT', lastError: null, attempts: 2 });
  });

  it('POST /api/sync/crm pushes pending and failed completions now and returns counts', async () => {
    await t.worker.drain();
    t.crmSim.setFault('error500', { pathPrefix: '/api/lms/completion' });
    const a = await completeCourse('c_demo_stu_11');
    const b = await completeCourse('c_demo_stu_12');
    // The CRM is failing: both attempts fail and stay pending.
    expect(expectOk(await t.request('POST', '/api/sync/crm', { token: admin }))).toEqual({ pushed: 0, failed: 2, pending: 2 });
    expect((await outboxRow(a.row.id)).status).toBe('FAILED');
    t.crmSim.setFault(null);
    const second = await t.request('POST', '/api/sync/crm', { token: admin, headers: { 'x-request-id': 'sync-req-2' } });
    expect(expectOk(second)).toEqual({ pushed: 2, failed: 0, pending: 0 });
    expect(pushesOf(a.course.id)).toHaveLength(1);
    expect(pushesOf(b.course.id)).toHaveLength(1);
    // Both calls attempted pushes: each left one audit row with its counts, the second with its request id.
    const log = expectOk(await t.request('GET', '/api/audit-log?action=sync.crm', { token: admin })) as Array<Record<string, any>>;
    expect(log.map((r) => [r.targetType, r.targetId, r.actorId, r.after])).toEqual([
      ['institution', 'inst_demo', 'u_demo_admin', { pushed: 2, failed: 0, pending: 0 }],
      ['institution', 'inst_demo', 'u_demo_admin', { pushed: 0, failed: 2, pending: 2 }],
    ]);
    expect(log[0]!.requestId).toBe('sync-req-2');
    // A call with nothing to push records nothing.
    expect(expectOk(await t.request('POST', '/api/sync/crm', { token: admin }))).toEqual({ pushed: 0, failed: 0, pending: 0 });
    expect(expectOk(await t.request('GET', '/api/audit-log?action=sync.crm', { token: admin }))).toHaveLength(2);
    // The queued retries find the rows sent and push nothing.
    t.clock.advance(3_600_000);
    await t.worker.drain();
    expect(pushesOf(a.course.id)).toHaveLength(1);
    expect(pushesOf(b.course.id)).toHaveLength(1);
  });

  it('POST /api/sync/crm is ADMIN-only and scoped to the caller institution', async () => {
    t.crmSim.setFault('down', { pathPrefix: '/api/lms/completion' });
    const { course, row } = await completeCourse('c_demo_stu_13');
    expectError(await t.request('POST', '/api/sync/crm', { token: teacher }), 403, 'FORBIDDEN');
    expectError(await t.request('POST', '/api/sync/crm', { token: tok.c_demo_stu_13 }), 403, 'FORBIDDEN');
    t.crmSim.setFault(null);
    expect(expectOk(await t.request('POST', '/api/sync/crm', { token: northAdmin }))).toEqual({ pushed: 0, failed: 0, pending: 0 });
    expect((await outboxRow(row.id)).status).toBe('PENDING');
    expect(pushesOf(course.id)).toHaveLength(0);
    expect(expectOk(await t.request('POST', '/api/sync/crm', { token: admin }))).toEqual({ pushed: 1, failed: 0, pending: 0 });
    expect(pushesOf(course.id)).toHaveLength(1);
  });
});
