/**
 * Report schedules and alerts (spec 4.9) run by the report-schedules cron (spec 4.8): a due
 * schedule runs once per due time even with two concurrent cron calls, the worker e-mails its
 * export as an attachment over real SMTP, and an alert notifies once per trigger, stays quiet
 * while it holds, clears, and fires again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import { parse } from 'csv-parse/sync';
import { createTestApp, silentLog, type TestApp } from '../helpers/app.js';
import { createCourse, enroll } from '../helpers/factories.js';
import { expectError, expectOk, failingFields } from '../helpers/expect.js';
import { startTestSmtp, type TestSmtp } from '../helpers/smtp.js';
import { createMailer } from '../../src/platform/mail/mailer.js';
import { jobs } from '../../src/platform/queue/queue.tables.js';
import { auditLog } from '../../src/modules/audit/audit.tables.js';
import { enrollments } from '../../src/modules/enrollments/enrollments.tables.js';
import { notifications } from '../../src/modules/notifications/notifications.tables.js';
import { analyticsReportRuns } from '../../src/modules/analytics/analytics.tables.js';
import { DEMO_ADMIN_ID, DEMO_STUDENT_ID, DEMO_TEACHER2_ID, DEMO_TEACHER_ID, demoFixtures } from '../../src/dev/crm-sim/fixtures.js';

const SECRET = 'cron-secret-for-analytics-tests-0123';
const cron = () => t.request('GET', '/api/cron/report-schedules', { headers: { authorization: `Bearer ${SECRET}` } });

let t: TestApp;
let smtp: TestSmtp;
let teacher: string;
let teacher2: string;
let admin: string;
let courseId: string;

beforeAll(async () => {
  smtp = await startTestSmtp();
  const env = { CRON_SECRET: SECRET, MAIL_FROM: 'LMS <lms@demo.example>' };
  t = await createTestApp({ env, mailer: createMailer({ SMTP_URL: smtp.url, MAIL_FROM: env.MAIL_FROM, DATA_DIR: '.data' }, silentLog) });
  teacher = await t.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
  teacher2 = await t.token({ role: 'TEACHER', id: DEMO_TEACHER2_ID });
  admin = await t.token({ role: 'ADMIN', id: DEMO_ADMIN_ID });
  const course = await createCourse(t, { title: '=Algebra' });
  courseId = course.id;
  await enroll(t, { courseId, studentId: DEMO_STUDENT_ID });
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

const saveReport = async (token: string, body: Record<string, unknown>) =>
  expectOk(
    await t.request('POST', '/api/analytics/reports', {
      token,
      body: {
        name: 'Enrollments of algebra',
        definition: { entity: 'enrollments', columns: ['studentId', 'status', 'course.title'], filters: [{ field: 'courseId', op: 'eq', value: courseId }] },
        ...body,
      },
    }),
    201,
  );

const emailOf = (id: string) => demoFixtures.staff.find((s) => s.id === id)!.email!;

describe('schedules', () => {
  it('validates cadence, zone and recipients (staff of the institution, checked with the CRM)', async () => {
    const report = await saveReport(teacher, {});
    const post = (body: Record<string, unknown>) => t.request('POST', `/api/analytics/reports/${report.id}/schedules`, { token: teacher, body });
    const weekly = await post({ cadence: 'WEEKLY', time: '08:00', format: 'CSV' });
    expectError(weekly, 400, 'VALIDATION_ERROR');
    expect(failingFields(weekly)).toEqual(['body.dayOfWeek']);
    expect(failingFields(await post({ cadence: 'DAILY', time: '08:00', format: 'CSV', dayOfMonth: 3, timezone: 'Mars/Olympus' }))).toEqual(['body.timezone', 'body.dayOfMonth']);
    expect(failingFields(await post({ cadence: 'DAILY', time: '8am', format: 'CSV' }))).toEqual(['body.time']);
    const notStaff = await post({ cadence: 'DAILY', time: '08:00', format: 'CSV', recipients: [DEMO_ADMIN_ID, DEMO_STUDENT_ID, 'u_nobody'] });
    expectError(notStaff, 400, 'VALIDATION_ERROR');
    expect(failingFields(notStaff).sort()).toEqual(['body.recipients.1', 'body.recipients.2']);

    const created = expectOk(await post({ cadence: 'WEEKLY', dayOfWeek: 'FRIDAY', time: '17:30', timezone: 'Europe/Berlin', format: 'XLSX' }), 201);
    // Friday 6 March 2026, 17:30 in Berlin (UTC+1).
    expect(created).toMatchObject({ cadence: 'WEEKLY', dayOfWeek: 'FRIDAY', time: '17:30', recipients: [DEMO_TEACHER_ID], nextRunAt: '2026-03-06T16:30:00.000Z', lastRun: null });
    const changed = expectOk(
      await t.request('PATCH', `/api/analytics/reports/schedules/${created.id}`, { token: teacher, body: { cadence: 'MONTHLY', dayOfWeek: null, dayOfMonth: 31 } }),
    );
    expect(changed).toMatchObject({ cadence: 'MONTHLY', dayOfWeek: null, dayOfMonth: 31, nextRunAt: '2026-03-31T15:30:00.000Z' });
    // Cadence, weekday and format are also taken in lower case (issue 16 writes daily/weekly/monthly), and answered upper case.
    const lower = expectOk(
      await t.request('PATCH', `/api/analytics/reports/schedules/${created.id}`, {
        token: teacher,
        body: { cadence: 'weekly', dayOfWeek: 'friday', dayOfMonth: null, format: 'csv', timezone: 'europe/berlin' },
      }),
    );
    // The zone too is kept in its own spelling.
    expect(lower).toMatchObject({ cadence: 'WEEKLY', dayOfWeek: 'FRIDAY', dayOfMonth: null, format: 'CSV', timezone: 'Europe/Berlin', nextRunAt: '2026-03-06T16:30:00.000Z' });
    expect(failingFields(await t.request('PATCH', `/api/analytics/reports/schedules/${created.id}`, { token: teacher, body: { cadence: 'Weekly' } }))).toEqual(['body.cadence']);
    expect(expectOk(await t.request('GET', `/api/analytics/reports/${report.id}/schedules`, { token: teacher })).map((s: { id: string }) => s.id)).toEqual([created.id]);
    expectOk(await t.request('DELETE', `/api/analytics/reports/schedules/${created.id}`, { token: teacher }));
    expect(expectOk(await t.request('GET', `/api/analytics/reports/${report.id}/schedules`, { token: teacher }))).toEqual([]);

    const audited = await t.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.targetId, created.id))
      .orderBy(sql`${auditLog.id}`);
    expect(audited.map((r) => r.action)).toEqual(['report_schedule.create', 'report_schedule.update', 'report_schedule.update', 'report_schedule.delete']);
  });

  it('only the report owner or ADMIN manage schedules; others who cannot see the report get 404', async () => {
    const privateReport = await saveReport(teacher, {});
    const shared = await saveReport(teacher, { visibility: 'SHARED' });
    const body = { cadence: 'DAILY', time: '08:00', format: 'CSV' };
    expectError(await t.request('POST', `/api/analytics/reports/${privateReport.id}/schedules`, { token: teacher2, body }), 404, 'NOT_FOUND');
    expectError(await t.request('POST', `/api/analytics/reports/${shared.id}/schedules`, { token: teacher2, body }), 403, 'FORBIDDEN');
    const schedule = expectOk(await t.request('POST', `/api/analytics/reports/${shared.id}/schedules`, { token: admin, body }), 201);
    expect(schedule.recipients).toEqual([DEMO_ADMIN_ID]);
    expectError(await t.request('PATCH', `/api/analytics/reports/schedules/${schedule.id}`, { token: teacher2, body: { format: 'PDF' } }), 403, 'FORBIDDEN');
    expectOk(await t.request('PATCH', `/api/analytics/reports/schedules/${schedule.id}`, { token: teacher, body: { format: 'PDF', isActive: false } }));
    const student = await t.token({ role: 'STUDENT', id: DEMO_STUDENT_ID });
    expectError(await t.request('DELETE', `/api/analytics/reports/schedules/${schedule.id}`, { token: student }), 403, 'FORBIDDEN');
  });

  it('runs a due schedule once across two concurrent cron calls and e-mails the export as an attachment', async () => {
    const report = await saveReport(teacher, { name: 'Daily algebra' });
    const schedule = expectOk(
      await t.request('POST', `/api/analytics/reports/${report.id}/schedules`, {
        token: teacher,
        body: { cadence: 'DAILY', time: '10:00', format: 'CSV', recipients: [DEMO_TEACHER_ID, DEMO_ADMIN_ID] },
      }),
      201,
    );
    expect(schedule.nextRunAt).toBe('2026-03-02T10:00:00.000Z');
    expect(expectOk(await cron()).schedulesRun).toBe(0); // 09:00: not due

    t.clock.set(new Date('2026-03-02T10:00:30Z'));
    const [one, two] = await Promise.all([cron(), cron()]);
    expect(expectOk(one).schedulesRun + expectOk(two).schedulesRun).toBe(1);
    expect(expectOk(await cron()).schedulesRun).toBe(0);
    const runs = await t.db.select().from(analyticsReportRuns).where(eq(analyticsReportRuns.scheduleId, schedule.id));
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'QUEUED', dueAt: new Date('2026-03-02T10:00:00Z') });
    const queued = await t.db
      .select()
      .from(jobs)
      .where(and(eq(jobs.name, 'analytics.sendScheduledReport'), sql`${jobs.payload}->>'runId' = ${runs[0]!.id}`));
    expect(queued).toHaveLength(1);

    await t.worker.drain();
    const [run] = await t.db.select().from(analyticsReportRuns).where(eq(analyticsReportRuns.id, runs[0]!.id));
    expect(run).toMatchObject({ status: 'SENT', rowCount: 1, fileName: 'Daily-algebra-2026-03-02.csv' });
    const mails = await smtp.waitFor(2);
    const to = mails.map((m) => (Array.isArray(m.to) ? m.to[0] : m.to)!.value[0]!.address).sort();
    expect(to).toEqual([emailOf(DEMO_ADMIN_ID), emailOf(DEMO_TEACHER_ID)].sort());
    for (const mail of mails) {
      expect(mail.subject).toBe('Report: Daily algebra');
      expect(mail.attachments).toHaveLength(1);
      const file = mail.attachments[0]!;
      expect(file.filename).toBe('Daily-algebra-2026-03-02.csv');
      expect(file.contentType).toBe('text/csv');
      expect(parse(file.content, { columns: true })).toEqual([{ 'Student id': DEMO_STUDENT_ID, Status: 'ACTIVE', 'Course title': "'=Algebra" }]);
    }
    // The file stays in storage for the link's lifetime, then a job removes it.
    expect(await t.deps.storage.exists(run!.fileKey!)).toBe(true);
    const cleanup = await t.db.select().from(jobs).where(eq(jobs.name, 'storage.deleteObjects'));
    expect(cleanup.some((j) => (j.payload as { keys: string[] }).keys.includes(run!.fileKey!))).toBe(true);

    // The next due time is tomorrow's; the schedule shows its last run.
    const [listed] = expectOk(await t.request('GET', `/api/analytics/reports/${report.id}/schedules`, { token: teacher }));
    expect(listed).toMatchObject({ nextRunAt: '2026-03-03T10:00:00.000Z', lastRun: { status: 'SENT', rowCount: 1, dueAt: '2026-03-02T10:00:00.000Z' } });
    // A retried job sends nothing twice.
    await t.worker.drain();
    expect(smtp.messages).toHaveLength(2);

    // Missed due times (the cron was down for three days) run once, not as a backlog.
    t.clock.set(new Date('2026-03-06T11:00:00Z'));
    expect(expectOk(await cron()).schedulesRun).toBe(1);
    const [after] = expectOk(await t.request('GET', `/api/analytics/reports/${report.id}/schedules`, { token: teacher }));
    expect(after.nextRunAt).toBe('2026-03-07T10:00:00.000Z');
    await t.db.delete(jobs).where(eq(jobs.name, 'analytics.sendScheduledReport'));
    t.clock.set(new Date('2026-03-02T09:00:00Z'));
  });
});

describe('alerts', () => {
  let reportId: string;
  const alertNotifications = async (alertId: string) =>
    t.db
      .select()
      .from(notifications)
      .where(and(eq(notifications.key, 'REPORT_ALERT'), sql`${notifications.metadata}->>'alertId' = ${alertId}`));

  beforeAll(async () => {
    const report = await saveReport(teacher, {
      name: 'Algebra headcount',
      definition: {
        entity: 'enrollments',
        groupBy: ['status'],
        aggregates: [{ fn: 'count', as: 'students' }],
        filters: [
          { field: 'courseId', op: 'eq', value: courseId },
          { field: 'status', op: 'eq', value: 'ACTIVE' },
        ],
      },
    });
    reportId = report.id;
  });

  it('takes rowCount or one of the report’s aggregates as its metric', async () => {
    const bad = await t.request('POST', `/api/analytics/reports/${reportId}/alerts`, { token: teacher, body: { name: 'x', metric: 'revenue', comparison: 'gt', threshold: 1 } });
    expectError(bad, 400, 'VALIDATION_ERROR');
    expect(failingFields(bad)).toEqual(['body.metric']);
    expect(bad.body.error.details.fields[0].message).toContain('metrics: rowCount, students');
    const student = await t.token({ role: 'STUDENT', id: DEMO_STUDENT_ID });
    expect(
      failingFields(
        await t.request('POST', `/api/analytics/reports/${reportId}/alerts`, {
          token: teacher,
          body: { name: 'x', metric: 'students', comparison: 'gt', threshold: 1, recipients: [DEMO_STUDENT_ID] },
        }),
      ),
    ).toEqual(['body.recipients.0']);
    expectError(
      await t.request('POST', `/api/analytics/reports/${reportId}/alerts`, { token: student, body: { name: 'x', metric: 'students', comparison: 'gt', threshold: 1 } }),
      403,
      'FORBIDDEN',
    );
  });

  it('needs only a metric, a comparison and a threshold (issue 16): the name defaults, the comparison may be a symbol or upper case', async () => {
    const bare = expectOk(
      await t.request('POST', `/api/analytics/reports/${reportId}/alerts`, { token: teacher, body: { metric: 'rowCount', comparison: '>=', threshold: 5 } }),
      201,
    );
    expect(bare).toMatchObject({ name: 'rowCount gte 5', metric: 'rowCount', comparison: 'gte', threshold: 5, state: 'OK' });
    const patched = expectOk(await t.request('PATCH', `/api/analytics/reports/alerts/${bare.id}`, { token: teacher, body: { comparison: 'LT' } }));
    // A defaulted name follows the condition; a chosen one stays.
    expect(patched).toMatchObject({ comparison: 'lt', name: 'rowCount lt 5' });
    expectOk(await t.request('PATCH', `/api/analytics/reports/alerts/${bare.id}`, { token: teacher, body: { name: 'Few rows' } }));
    expect(expectOk(await t.request('PATCH', `/api/analytics/reports/alerts/${bare.id}`, { token: teacher, body: { threshold: 3 } }))).toMatchObject({
      name: 'Few rows',
      threshold: 3,
    });
    expectError(
      await t.request('POST', `/api/analytics/reports/${reportId}/alerts`, { token: teacher, body: { metric: 'rowCount', comparison: '=>', threshold: 5 } }),
      400,
      'VALIDATION_ERROR',
    );
    expectOk(await t.request('DELETE', `/api/analytics/reports/alerts/${bare.id}`, { token: teacher }));
  });

  it('stores any finite threshold exactly: a huge one is no 500 and a precise one is not rounded', async () => {
    const listed = async (id: string) =>
      (expectOk(await t.request('GET', `/api/analytics/reports/${reportId}/alerts`, { token: teacher })) as { id: string; threshold: number }[]).find((x) => x.id === id)!;
    const huge = expectOk(
      await t.request('POST', `/api/analytics/reports/${reportId}/alerts`, { token: teacher, body: { metric: 'rowCount', comparison: 'gt', threshold: 1e308 } }),
      201,
    );
    expect(huge).toMatchObject({ threshold: 1e308, name: 'rowCount gt 1e+308' });
    expect((await listed(huge.id)).threshold).toBe(1e308);
    const precise = expectOk(
      await t.request('POST', `/api/analytics/reports/${reportId}/alerts`, { token: teacher, body: { metric: 'students', comparison: 'eq', threshold: 16777217 } }),
      201,
    );
    expect(precise.threshold).toBe(16777217);
    expect((await listed(precise.id)).threshold).toBe(16777217);
    for (const threshold of [0.1, -Number.MAX_VALUE, 5e-324]) {
      expect(expectOk(await t.request('PATCH', `/api/analytics/reports/alerts/${precise.id}`, { token: teacher, body: { threshold } })).threshold).toBe(threshold);
      expect((await listed(precise.id)).threshold).toBe(threshold);
    }
    // The cron compares the metric with it and records the value.
    expectOk(await cron());
    expect(await listed(huge.id)).toMatchObject({ state: 'OK', lastValue: expect.any(Number) });
    for (const id of [huge.id, precise.id]) expectOk(await t.request('DELETE', `/api/analytics/reports/alerts/${id}`, { token: teacher }));
  });

  it('fires once when the metric crosses the threshold, not again until it has cleared, then fires again', async () => {
    const alert = expectOk(
      await t.request('POST', `/api/analytics/reports/${reportId}/alerts`, {
        token: teacher,
        body: { name: 'Algebra is busy', metric: 'students', comparison: 'gte', threshold: 2, recipients: [DEMO_TEACHER_ID, DEMO_ADMIN_ID] },
      }),
      201,
    );
    expect(alert).toMatchObject({ state: 'OK', triggerCount: 0, lastValue: null });
    const state = async () =>
      (expectOk(await t.request('GET', `/api/analytics/reports/${reportId}/alerts`, { token: teacher })) as { id: string }[]).find((x) => x.id === alert.id) as any;

    // One active student: below the threshold.
    let summary = expectOk(await cron());
    expect(summary.alertsFired).toBe(0);
    expect(await state()).toMatchObject({ state: 'OK', lastValue: 1 });

    // A second one: it fires, once, to each recipient (in-app and e-mail), even with two crons at once.
    const second = await enroll(t, { courseId, studentId: 'c_demo_stu_05' });
    const [x, y] = await Promise.all([cron(), cron()]);
    expect(expectOk(x).alertsFired + expectOk(y).alertsFired).toBe(1);
    expect(await state()).toMatchObject({ state: 'TRIGGERED', lastValue: 2, triggerCount: 1 });
    let sent = await alertNotifications(alert.id);
    expect(
      sent
        .filter((n) => n.channel === 'IN_APP')
        .map((n) => n.recipientId)
        .sort(),
    ).toEqual([DEMO_ADMIN_ID, DEMO_TEACHER_ID]);
    expect(sent.find((n) => n.channel === 'IN_APP')!.message).toBe('Your alert "Algebra is busy" fired: students is 2 (≥ 2).');
    const firstCount = sent.length;

    // Still above: no repeat.
    await enroll(t, { courseId, studentId: 'c_demo_stu_06' });
    summary = expectOk(await cron());
    expect(summary.alertsFired).toBe(0);
    expect(await alertNotifications(alert.id)).toHaveLength(firstCount);
    expect(await state()).toMatchObject({ state: 'TRIGGERED', lastValue: 3 });

    // Back under: cleared, still nothing sent.
    await t.db.update(enrollments).set({ status: 'DROPPED' }).where(eq(enrollments.courseId, courseId));
    summary = expectOk(await cron());
    expect(summary.alertsCleared).toBe(1);
    expect(await state()).toMatchObject({ state: 'OK', lastValue: 0 });
    expect(await alertNotifications(alert.id)).toHaveLength(firstCount);

    // Over again: a new trigger, a new notification.
    await t.db.update(enrollments).set({ status: 'ACTIVE' }).where(eq(enrollments.id, second.id));
    await enroll(t, { courseId, studentId: 'c_demo_stu_07' });
    summary = expectOk(await cron());
    expect(summary.alertsFired).toBe(1);
    expect(await state()).toMatchObject({ state: 'TRIGGERED', triggerCount: 2, lastValue: 2 });
    sent = await alertNotifications(alert.id);
    expect(sent).toHaveLength(firstCount * 2);

    // The worker delivers the e-mails through the mail transport.
    const before = smtp.messages.length;
    await t.worker.drain();
    const mails = await smtp.waitFor(before + 4);
    expect(mails.slice(before).every((m) => m.subject === 'Alert: Algebra is busy')).toBe(true);
  });

  it('changing the condition starts again from OK; alert changes are audited', async () => {
    const alert = expectOk(
      await t.request('POST', `/api/analytics/reports/${reportId}/alerts`, { token: teacher, body: { name: 'Any rows', metric: 'rowCount', comparison: 'gte', threshold: 1 } }),
      201,
    );
    expectOk(await cron());
    const changed = expectOk(await t.request('PATCH', `/api/analytics/reports/alerts/${alert.id}`, { token: teacher, body: { threshold: 100 } }));
    expect(changed).toMatchObject({ threshold: 100, state: 'OK' });
    expectError(await t.request('PATCH', `/api/analytics/reports/alerts/${alert.id}`, { token: teacher2, body: { threshold: 1 } }), 404, 'NOT_FOUND');
    expectOk(await t.request('DELETE', `/api/analytics/reports/alerts/${alert.id}`, { token: admin }));
    const audited = await t.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.targetId, alert.id))
      .orderBy(sql`${auditLog.id}`);
    expect(audited.map((r) => [r.action, r.actorId])).toEqual([
      ['report_alert.create', DEMO_TEACHER_ID],
      ['report_alert.update', DEMO_TEACHER_ID],
      ['report_alert.delete', DEMO_ADMIN_ID],
    ]);
  });
});
