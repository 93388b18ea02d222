/**
 * Deliveries through a dependency outage of hours (the retry window of `OUTAGE_RETRY`): e-mail
 * held back by a down SMTP server or an unreachable CRM stays PENDING with its reason and goes
 * out once when the dependency is back, with no one stepping in; permanent failures are FAILED
 * at once and never tried again. `runWorkerFor` moves the manual clock from one due job to the
 * next, so hours pass without waiting.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { and, eq, inArray } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse } from '../helpers/factories.js';
import { expectOk } from '../helpers/expect.js';
import { runWorkerFor } from '../helpers/jobs.js';
import { RecordingMailer } from '../helpers/mail.js';
import { MailError } from '../../src/platform/mail/mailer.js';
import { notify } from '../../src/modules/notifications/notify.js';
import { notifications } from '../../src/modules/notifications/notifications.tables.js';
import { jobs } from '../../src/platform/queue/queue.tables.js';
import { OUTAGE_RETRY } from '../../src/platform/queue/jobs.schemas.js';

const HOUR = 3_600_000;
let t: TestApp;
let admin: string;
const mailer = new RecordingMailer();
/** Every address the worker tried to send to, in order, failed or not. */
const tried: string[] = [];
let smtpDown = false;
/** Addresses the server refuses for good (550), or defers for now (4xx). */
const refused = new Set<string>();
const deferred = new Set<string>();

beforeAll(async () => {
  t = await createTestApp({ mailer });
  admin = await t.token({ role: 'ADMIN', id: 'u_demo_admin' });
  mailer.failWith = (msg) => {
    tried.push(msg.to);
    if (smtpDown) return new MailError('connect ECONNREFUSED 127.0.0.1:25', false, 'smtp_unavailable');
    if (refused.has(msg.to)) return new MailError('550 5.1.1 unknown mailbox', true, 'invalid_address');
    if (deferred.has(msg.to)) return new MailError('450 4.2.0 try again later', false, 'smtp_unavailable');
    return undefined;
  };
});
afterAll(() => t?.close());
beforeEach(() => {
  smtpDown = false;
  tried.length = 0;
  t.crmSim.setFault(null);
});

const addressOf = async (id: string) => (await t.deps.crm.getContact('demo', id)).email!;
const emailRows = (recipients: string[]) =>
  t.db
    .select()
    .from(notifications)
    .where(and(eq(notifications.channel, 'email'), inArray(notifications.recipientId, recipients)))
    .orderBy(notifications.recipientId);
/** How many times each row's message went out (by its Message-ID). */
const copiesOf = (rows: Array<{ id: string }>) => rows.map((r) => mailer.sent.filter((m) => m.messageId === `<${r.id}@lms>`).length);
const deliverJobs = () => t.db.select().from(jobs).where(eq(jobs.name, 'notifications.deliver'));

/** Enrolls `students` in a new course in one call (one ENROLL_WELCOME batch). */
async function bulkEnroll(students: string[]) {
  const before = new Set((await deliverJobs()).map((j) => j.id));
  const course = await createCourse(t, { status: 'PUBLISHED' });
  expectOk(await t.request('POST', `/api/courses/${course.id}/enrollments`, { token: admin, body: { studentIds: students } }));
  const created = (await deliverJobs()).filter((j) => !before.has(j.id));
  expect(created).toHaveLength(1);
  return created[0]!;
}

describe('e-mail through a dependency outage of hours', () => {
  it('an SMTP outage of three hours delays a batch (PENDING, smtp_unavailable); it goes out once when SMTP is back, in-app at once', async () => {
    const students = ['c_demo_stu_01', 'c_demo_stu_02', 'c_demo_stu_03', 'c_demo_stu_04', 'c_demo_stu_05'];
    smtpDown = true;
    const job = await bulkEnroll(students);
    await runWorkerFor(t, 3 * HOUR);

    let rows = await emailRows(students);
    expect(rows.map((r) => [r.status, r.failureReason])).toEqual(Array(5).fill(['PENDING', 'smtp_unavailable']));
    expect(copiesOf(rows)).toEqual([0, 0, 0, 0, 0]);
    const [waiting] = await t.db.select().from(jobs).where(eq(jobs.id, job.id));
    // Far past the six attempts (about a minute) that used to give up, and still queued.
    expect(waiting).toMatchObject({ status: 'queued', maxAttempts: OUTAGE_RETRY.maxAttempts });
    expect(waiting!.attempts).toBeGreaterThan(20);
    // Each attempt stops after three failures in a row, and takes the least-tried rows first.
    expect(tried.length).toBeLessThanOrEqual(3 * waiting!.attempts);
    expect(rows.every((r) => r.attempts > 0)).toBe(true);
    // In-app rows do not wait for SMTP: sent by the first attempt and listed.
    const student = await t.token({ role: 'STUDENT', id: students[0]! });
    const listed = expectOk(await t.request('GET', '/api/notifications', { token: student }));
    expect(listed.notifications.map((n: { title: string }) => n.title)).toEqual([expect.stringMatching(/^Welcome to /)]);

    smtpDown = false;
    await runWorkerFor(t, 10 * 60_000); // the longest wait between two attempts
    rows = await emailRows(students);
    expect(rows.map((r) => [r.status, r.failureReason])).toEqual(Array(5).fill(['SENT', null]));
    expect(copiesOf(rows)).toEqual([1, 1, 1, 1, 1]);
    expect((await t.db.select().from(jobs).where(eq(jobs.id, job.id)))[0]!.status).toBe('done');

    await runWorkerFor(t, 2 * HOUR);
    expect(copiesOf(await emailRows(students))).toEqual([1, 1, 1, 1, 1]);
  });

  it('a CRM unreachable for two hours (the address lookup) keeps the e-mail PENDING crm_unavailable; it is sent once when the CRM is back', async () => {
    const student = 'c_demo_stu_20';
    const job = await bulkEnroll([student]);
    t.crmSim.setFault('down', { pathPrefix: '/api/lms/' });
    await runWorkerFor(t, 2 * HOUR);
    let [row] = await emailRows([student]);
    expect(row).toMatchObject({ status: 'PENDING', failureReason: 'crm_unavailable' });
    expect(tried).toEqual([]);
    expect((await t.db.select().from(jobs).where(eq(jobs.id, job.id)))[0]!.status).toBe('queued');

    t.crmSim.setFault(null);
    await runWorkerFor(t, 10 * 60_000);
    [row] = await emailRows([student]);
    expect(row).toMatchObject({ status: 'SENT', failureReason: null });
    expect(copiesOf([row!])).toEqual([1]);
    await runWorkerFor(t, HOUR);
    expect(copiesOf([row!])).toEqual([1]);
  });

  it('a digest held back by an SMTP outage goes out once when SMTP is back', async () => {
    const id = 'c_demo_stu_21';
    const token = await t.token({ role: 'STUDENT', id });
    expectOk(await t.request('PATCH', '/api/notifications/preferences', { token, body: { key: 'ASSESS_GRADED', frequency: 'DAILY_DIGEST' } }));
    await notify({ db: t.db, clock: t.clock, config: t.config }, { institutionId: 'inst_demo', key: 'ASSESS_GRADED', recipients: [id], metadata: { title: 'Essay' } });
    const [held] = await emailRows([id]);
    const address = await addressOf(id);
    smtpDown = true;
    t.clock.set(held!.digestDueAt!);
    await runWorkerFor(t, 4 * HOUR);
    expect((await emailRows([id]))[0]).toMatchObject({ status: 'PENDING', failureReason: 'smtp_unavailable' });
    expect(tried.filter((to) => to === address).length).toBeGreaterThan(6);

    smtpDown = false;
    await runWorkerFor(t, 10 * 60_000);
    expect((await emailRows([id]))[0]).toMatchObject({ status: 'SENT' });
    expect(mailer.sent.filter((m) => m.to === address).map((m) => m.subject)).toEqual(['Your daily digest: 1 notification']);
    await runWorkerFor(t, HOUR);
    expect(mailer.sent.filter((m) => m.to === address)).toHaveLength(1);
  });

  it('recipients the server keeps deferring (4xx) do not hold back the rest of their batch', async () => {
    const students = ['c_demo_stu_09', 'c_demo_stu_10', 'c_demo_stu_11', 'c_demo_stu_12', 'c_demo_stu_13', 'c_demo_stu_15'];
    await bulkEnroll(students);
    // The first three rows the worker meets: three failures in a row would stop an attempt's e-mail.
    const first = (await emailRows(students)).sort((a, b) => (a.id < b.id ? -1 : 1)).slice(0, 3);
    for (const r of first) deferred.add(await addressOf(r.recipientId));
    try {
      await runWorkerFor(t, 30 * 60_000);
      const rows = await emailRows(students);
      const stuck = new Set(first.map((r) => r.id));
      expect(rows.filter((r) => !stuck.has(r.id)).map((r) => r.status)).toEqual(['SENT', 'SENT', 'SENT']);
      expect(rows.filter((r) => stuck.has(r.id)).map((r) => [r.status, r.failureReason])).toEqual(Array(3).fill(['PENDING', 'smtp_unavailable']));
    } finally {
      deferred.clear();
    }
  });

  it('permanent failures are FAILED at once and never tried again, while the same batch retries a deferred row', async () => {
    const [bad, later, fine] = ['c_demo_stu_06', 'c_demo_stu_07', 'c_demo_stu_08'];
    const badAddress = await addressOf(bad);
    const laterAddress = await addressOf(later);
    refused.add(badAddress);
    deferred.add(laterAddress);
    try {
      const job = await bulkEnroll([bad, later, fine]);
      // Nobody the CRM knows: no address, in a batch of its own.
      await notify(
        { db: t.db, clock: t.clock, config: t.config },
        { institutionId: 'inst_demo', key: 'ASSESS_GRADED', recipients: ['c_nobody_here'], metadata: { title: 'Quiz' } },
      );
      await runWorkerFor(t, 2 * HOUR);

      const rows = await emailRows([bad, later, fine, 'c_nobody_here']);
      expect(rows.map((r) => [r.recipientId, r.status, r.failureReason])).toEqual([
        ['c_demo_stu_06', 'FAILED', 'invalid_address'],
        ['c_demo_stu_07', 'PENDING', 'smtp_unavailable'],
        ['c_demo_stu_08', 'SENT', null],
        ['c_nobody_here', 'FAILED', 'no_email_address'],
      ]);
      expect(tried.filter((to) => to === badAddress)).toHaveLength(1);
      expect(tried.filter((to) => to === laterAddress).length).toBeGreaterThan(6);
      expect((await t.db.select().from(jobs).where(eq(jobs.id, job.id)))[0]!.status).toBe('queued');
      const nobody = (await deliverJobs()).filter((j) => j.payload.batchId === rows[3]!.batchId);
      expect(nobody.map((j) => [j.status, j.attempts])).toEqual([['done', 1]]);

      deferred.delete(laterAddress);
      await runWorkerFor(t, 10 * 60_000);
      const after = await emailRows([bad, later]);
      expect(after.map((r) => r.status)).toEqual(['FAILED', 'SENT']);
      expect(copiesOf(after)).toEqual([0, 1]);
      expect(tried.filter((to) => to === badAddress)).toHaveLength(1);
    } finally {
      refused.clear();
      deferred.clear();
    }
  });
});
