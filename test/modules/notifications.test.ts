/**
 * Notifications (spec 4.7, 2.8–2.10, 6.3): notify() writing delivery rows by preference, the
 * worker delivering them (in-app, e-mail through the mailer, push through the push sender),
 * digests with a moved clock, and every endpoint of 4.7 with its rules and owner isolation.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { rawRows } from '../../src/platform/db/client.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse } from '../helpers/factories.js';
import { expectError } from '../helpers/expect.js';
import { notifications, notificationDevices } from '../../src/modules/notifications/notifications.tables.js';
import { notify, type NotifyInput } from '../../src/modules/notifications/notify.js';
import { CHANNELS, DEFINITIONS } from '../../src/modules/notifications/notifications.definitions.js';
import { DEFAULT_TEMPLATES, emailHtmlOf } from '../../src/modules/notifications/notifications.default-templates.js';
import { jobs } from '../../src/platform/queue/queue.tables.js';
import { MailError } from '../../src/platform/mail/mailer.js';
import { RecordingMailer } from '../helpers/mail.js';
import type { PushDevice, PushPayload, PushResult, PushSender } from '../../src/platform/push/push.js';
import { DEMO_ADMIN_ID, DEMO_PARENT_ID, DEMO_SIBLING_ID, DEMO_STUDENT_ID, DEMO_TEACHER_ID, NORTH_STUDENT_ID } from '../../src/dev/crm-sim/fixtures.js';

const INST = 'inst_demo';

class RecordingPush implements PushSender {
  sent: Array<{ device: PushDevice; payload: PushPayload }> = [];
  answer: PushResult = { ok: true };
  async send(device: PushDevice, payload: PushPayload) {
    this.sent.push({ device, payload });
    return this.answer;
  }
}

let t: TestApp;
let mailer: RecordingMailer;
let push: RecordingPush;
let student: string;
let sibling: string;
let teacher: string;
let admin: string;
let parent: string;
let northStudent: string;

beforeAll(async () => {
  mailer = new RecordingMailer();
  push = new RecordingPush();
  t = await createTestApp({ mailer, push });
  student = await t.token({ role: 'STUDENT', id: DEMO_STUDENT_ID });
  sibling = await t.token({ role: 'STUDENT', id: DEMO_SIBLING_ID });
  teacher = await t.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
  admin = await t.token({ role: 'ADMIN', id: DEMO_ADMIN_ID });
  parent = await t.token({ role: 'PARENT', id: DEMO_PARENT_ID });
  northStudent = await t.token({ role: 'STUDENT', id: NORTH_STUDENT_ID, institutionId: 'inst_north' });
});
afterAll(async () => t.close());

beforeEach(async () => {
  await t.worker.drain();
  await t.db.delete(notifications);
  await t.db.execute(sql`delete from notification_preferences`);
  await t.db.execute(sql`delete from notification_digest_settings`);
  await t.db.delete(notificationDevices);
  await t.db.delete(jobs);
  mailer.sent.length = 0;
  mailer.failWith = undefined;
  push.sent = [];
  push.answer = { ok: true };
});

const send = (input: Omit<NotifyInput, 'institutionId'> & { institutionId?: string }) => notify({ db: t.db, clock: t.clock, config: t.config }, { institutionId: INST, ...input });

const rowsOf = (recipientId: string) => t.db.select().from(notifications).where(eq(notifications.recipientId, recipientId)).orderBy(notifications.channel);

const byChannel = async (recipientId: string) => Object.fromEntries((await rowsOf(recipientId)).map((r) => [r.channel, r]));

describe('notify() and delivery', () => {
  it('enrolling a student writes ENROLL_WELCOME rows per channel; nothing is delivered until the worker runs', async () => {
    const course = await createCourse(t, { status: 'PUBLISHED', title: 'Cells & <Tissues>' });
    const res = await t.request('POST', `/api/courses/${course.id}/enrollments`, { token: teacher, body: { studentIds: [DEMO_STUDENT_ID] } });
    expect(res.status).toBe(200);

    const rows = await byChannel(DEMO_STUDENT_ID);
    expect(rows.IN_APP).toMatchObject({
      key: 'ENROLL_WELCOME',
      category: 'ENROLLMENT',
      status: 'PENDING',
      title: 'Welcome to Cells & <Tissues>',
      actionUrl: `/learn/${course.id}`,
    });
    expect(rows.email).toMatchObject({ status: 'PENDING', failureReason: null });
    // push is not among ENROLL_WELCOME's default channels
    expect(rows.push).toMatchObject({ status: 'SKIPPED', failureReason: 'channel_disabled' });
    expect(
      await t.db
        .select()
        .from(jobs)
        .where(and(eq(jobs.name, 'notifications.deliver'), eq(jobs.status, 'queued'))),
    ).toHaveLength(1);

    // Listed while PENDING (spec 4.7: SENT or PENDING), but no e-mail left yet.
    const list = await t.request('GET', '/api/notifications', { token: student });
    expect(list.body.data.notifications).toHaveLength(1);
    expect(mailer.sent).toHaveLength(0);

    await t.worker.drain();
    const after = await byChannel(DEMO_STUDENT_ID);
    expect(after.IN_APP.status).toBe('SENT');
    expect(after.email.status).toBe('SENT');
    expect(mailer.sent).toHaveLength(1);
    const mail = mailer.sent[0]!;
    // The address is the CRM contact's.
    expect(mail.to).toBe((await t.deps.crm.getContact('demo', DEMO_STUDENT_ID)).email);
    expect(mail.subject).toBe('Welcome to Cells & <Tissues>');
    expect(mail.messageId).toBe(`<${after.email.id}@lms>`);
    // HTML-escaped in the e-mail body, with an absolute link.
    expect(mail.html).toContain('Cells &amp; &lt;Tissues&gt;');
    expect(mail.html).toContain(`href="http://lms.test/learn/${course.id}"`);
    expect(mail.text).toContain(`http://lms.test/learn/${course.id}`);

    // Delivered once: running the worker again sends nothing more.
    await t.worker.drain();
    expect(mailer.sent).toHaveLength(1);
  });

  it('follows preferences: a disabled channel and frequency OFF are SKIPPED and never listed', async () => {
    await t.request('PATCH', '/api/notifications/preferences', { token: student, body: { key: 'ASSESS_GRADED', inAppEnabled: false } });
    await t.request('PATCH', '/api/notifications/preferences', { token: sibling, body: { key: 'ASSESS_GRADED', frequency: 'OFF' } });
    await send({ key: 'ASSESS_GRADED', recipients: [DEMO_STUDENT_ID, DEMO_SIBLING_ID], metadata: { title: 'Essay', courseTitle: 'Biology', score: 8, maxScore: 10 } });

    const mine = await byChannel(DEMO_STUDENT_ID);
    expect(mine.IN_APP).toMatchObject({ status: 'SKIPPED', failureReason: 'channel_disabled' });
    expect(mine.email).toMatchObject({ status: 'PENDING', title: 'Graded: Essay', message: 'Your work "Essay" in Biology was graded: 8 / 10.' });
    expect(mine.push).toMatchObject({ status: 'SKIPPED', failureReason: 'no_push_device' });
    const theirs = await byChannel(DEMO_SIBLING_ID);
    expect(Object.values(theirs).map((r) => [r.status, r.failureReason])).toEqual([
      ['SKIPPED', 'frequency_off'],
      ['SKIPPED', 'frequency_off'],
      ['SKIPPED', 'frequency_off'],
    ]);
    expect((await t.request('GET', '/api/notifications', { token: student })).body.data.total).toBe(0);
    await t.worker.drain();
    expect(mailer.sent.map((m) => m.subject)).toEqual(['Graded: Essay']);
  });

  it('a key without a template is recorded FAILED missing_template and never delivered', async () => {
    await t.db.execute(sql`delete from notification_templates where key = 'BADGE_EARNED' and channel = 'IN_APP'`);
    try {
      await send({ key: 'BADGE_EARNED', recipients: [DEMO_STUDENT_ID], metadata: { badgeName: 'Starter' } });
      const rows = await byChannel(DEMO_STUDENT_ID);
      expect(rows.IN_APP).toMatchObject({ status: 'FAILED', failureReason: 'missing_template' });
      await t.worker.drain();
      expect((await byChannel(DEMO_STUDENT_ID)).IN_APP.status).toBe('FAILED');
      expect((await t.request('GET', '/api/notifications', { token: student })).body.data.notifications).toEqual([]);
    } finally {
      await t.db.execute(sql`insert into notification_templates (institution_id, id, key, channel, subject, body)
        values (null, 'tpl_badge_earned_in_app', 'BADGE_EARNED', 'IN_APP', 'Badge earned: {{badgeName}}', 'You earned the badge "{{badgeName}}".')`);
    }
  });

  it("an institution's template overrides the system default for that institution only", async () => {
    await t.db.execute(sql`insert into notification_templates (institution_id, id, key, channel, subject, body)
      values (${INST}, 'tpl_demo_badge', 'BADGE_EARNED', 'IN_APP', 'Well done: {{badgeName}}!', 'Demo Academy is proud of you.')`);
    try {
      await send({ key: 'BADGE_EARNED', recipients: [DEMO_STUDENT_ID], metadata: { badgeName: 'Starter' } });
      await send({ institutionId: 'inst_north', key: 'BADGE_EARNED', recipients: [NORTH_STUDENT_ID], metadata: { badgeName: 'Starter' } });
      expect((await byChannel(DEMO_STUDENT_ID)).IN_APP).toMatchObject({ title: 'Well done: Starter!', message: 'Demo Academy is proud of you.' });
      expect((await byChannel(NORTH_STUDENT_ID)).IN_APP).toMatchObject({ title: 'Badge earned: Starter' });
    } finally {
      await t.db.execute(sql`delete from notification_templates where id = 'tpl_demo_badge'`);
    }
  });

  it('a dedupe key makes notify idempotent per recipient, key and channel', async () => {
    const input = { key: 'ASSIGNMENT_DUE_REMINDER', recipients: [DEMO_STUDENT_ID], metadata: { title: 'Lab report', courseTitle: 'Biology' }, dedupeKey: 'assignment:a1' };
    expect((await send(input)).rows).toBe(3);
    expect((await send(input)).rows).toBe(0);
    expect(await rowsOf(DEMO_STUDENT_ID)).toHaveLength(3);
  });

  it('fans out in batches: one deliver job per 200 recipients, duplicates once', async () => {
    const recipients = Array.from({ length: 450 }, (_, i) => `c_fan_${i}`);
    const summary = await send({
      key: 'LIVE_CLASS_RECORDING_READY',
      recipients: [...recipients, ...recipients.slice(0, 10)],
      metadata: { title: 'Week 1', courseTitle: 'Biology' },
    });
    expect(summary).toEqual({ recipients: 450, rows: 1350, newRecipients: 450, batches: 3 });
    const [{ n }] = await rawRows<{ n: number }>(
      t.db,
      sql`select count(distinct batch_id)::int as n from notifications where key = 'LIVE_CLASS_RECORDING_READY' and batch_id is not null`,
    );
    expect(n).toBe(3);
  });

  it('rolls back with the change that caused it', async () => {
    await expect(
      t.db.transaction(async (tx) => {
        await notify(
          { db: tx, clock: t.clock, config: t.config, inTx: true },
          { institutionId: INST, key: 'ASSESS_GRADED', recipients: [DEMO_STUDENT_ID], metadata: { title: 'x' } },
        );
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(await rowsOf(DEMO_STUDENT_ID)).toEqual([]);
  });

  it('retries a transient mail failure, and records a permanent one as FAILED with its reason', async () => {
    await send({ key: 'ASSESS_GRADED', recipients: [DEMO_STUDENT_ID], metadata: { title: 'Quiz 1' } });
    mailer.failWith = () => new MailError('connection refused', false, 'smtp_unavailable');
    await t.worker.runOnce();
    let email = (await byChannel(DEMO_STUDENT_ID)).email;
    expect(email).toMatchObject({ status: 'PENDING', failureReason: 'smtp_unavailable' });
    const [job] = await t.db.select().from(jobs).where(eq(jobs.name, 'notifications.deliver'));
    expect(job).toMatchObject({ status: 'queued', attempts: 1 });
    expect(job!.runAt.getTime()).toBeGreaterThan(t.clock.now().getTime());

    mailer.failWith = undefined;
    t.clock.advance(60_000);
    await t.worker.drain();
    email = (await byChannel(DEMO_STUDENT_ID)).email;
    expect(email).toMatchObject({ status: 'SENT', failureReason: null });
    expect(mailer.sent).toHaveLength(1);

    await send({ key: 'ASSESS_GRADED', recipients: [DEMO_SIBLING_ID], metadata: { title: 'Quiz 2' } });
    mailer.failWith = () => new MailError('550 no such user', true, 'invalid_address');
    await t.worker.drain();
    expect((await byChannel(DEMO_SIBLING_ID)).email).toMatchObject({ status: 'FAILED', failureReason: 'invalid_address' });
  });

  it('an e-mail to a person the CRM does not know fails permanently with no_email_address', async () => {
    await send({ key: 'ASSESS_GRADED', recipients: ['c_nobody_here'], metadata: { title: 'Quiz' } });
    await t.worker.drain();
    expect((await byChannel('c_nobody_here')).email).toMatchObject({ status: 'FAILED', failureReason: 'no_email_address' });
  });

  it('pushes to every registered device; a gone device is removed and the row FAILED', async () => {
    const web = JSON.stringify({ endpoint: 'https://push.example/abc', keys: { p256dh: 'p', auth: 'a' } });
    expect((await t.request('POST', '/api/notifications/push-token', { token: student, body: { token: web, platform: 'web' } })).status).toBe(200);
    await send({ key: 'ASSESS_GRADED', recipients: [DEMO_STUDENT_ID], metadata: { title: 'Quiz 3' }, actionUrl: '/grades' });
    expect((await byChannel(DEMO_STUDENT_ID)).push.status).toBe('PENDING');
    await t.worker.drain();
    expect((await byChannel(DEMO_STUDENT_ID)).push.status).toBe('SENT');
    expect(push.sent).toEqual([
      { device: { token: web, platform: 'web', provider: 'webpush' }, payload: expect.objectContaining({ title: 'Graded: Quiz 3', url: 'http://lms.test/grades' }) },
    ]);

    push.answer = { ok: false, gone: true, permanent: true, reason: 'push_endpoint_gone' };
    await send({ key: 'ASSESS_GRADED', recipients: [DEMO_STUDENT_ID], metadata: { title: 'Quiz 4' } });
    await t.worker.drain();
    const rows = await t.db
      .select()
      .from(notifications)
      .where(and(eq(notifications.recipientId, DEMO_STUDENT_ID), eq(notifications.channel, 'push'), eq(notifications.title, 'Graded: Quiz 4')));
    expect(rows[0]).toMatchObject({ status: 'FAILED', failureReason: 'push_endpoint_gone' });
    expect(await t.db.select().from(notificationDevices)).toEqual([]);
    expect((await t.request('GET', '/api/notifications/preferences', { token: student })).body.data.hasPushToken).toBe(false);
  });
});

describe('digests', () => {
  it('three notifications for a DAILY_DIGEST user give one e-mail at their dailyTime in their zone, none before', async () => {
    // 2026-03-02T09:00Z is 10:00 in Berlin; the digest is due at 18:00 Berlin = 17:00Z.
    t.clock.set('2026-03-02T09:00:00.000Z');
    expect((await t.request('PATCH', '/api/notifications/preferences', { token: student, body: { key: 'ASSESS_GRADED', frequency: 'DAILY_DIGEST' } })).status).toBe(200);
    const times = await t.request('PATCH', '/api/notifications/preferences/digest-times', { token: student, body: { dailyTime: '18:00', timezoneOverride: 'Europe/Berlin' } });
    expect(times.body.data).toEqual({ dailyTime: '18:00', weeklyDay: 'MONDAY', weeklyTime: '08:00', timezone: 'Europe/Berlin', timezoneOverride: 'Europe/Berlin' });

    for (const title of ['Quiz A', 'Quiz B', 'Quiz <C>']) {
      await send({ key: 'ASSESS_GRADED', recipients: [DEMO_STUDENT_ID], metadata: { title } });
      t.clock.advance(60_000);
    }
    const held = await t.db
      .select()
      .from(notifications)
      .where(and(eq(notifications.recipientId, DEMO_STUDENT_ID), eq(notifications.channel, 'email')));
    expect(held.map((r) => [r.status, r.digestDueAt?.toISOString()])).toEqual(Array(3).fill(['PENDING', '2026-03-02T17:00:00.000Z']));
    // In-app rows are not held.
    await t.worker.drain();
    expect((await t.request('GET', '/api/notifications/unread-count', { token: student })).body.data).toEqual({ count: 3 });
    expect(mailer.sent).toHaveLength(0);

    t.clock.set('2026-03-02T16:59:00.000Z');
    await t.worker.drain();
    expect(mailer.sent).toHaveLength(0);

    t.clock.set('2026-03-02T17:00:00.000Z');
    await t.worker.drain();
    expect(mailer.sent).toHaveLength(1);
    const digest = mailer.sent[0]!;
    expect(digest.subject).toBe('Your daily digest: 3 notifications');
    expect(digest.text).toContain('Graded: Quiz A');
    expect(digest.text).toContain('Graded: Quiz <C>');
    expect(digest.html).toContain('Graded: Quiz &lt;C&gt;');
    const after = await t.db
      .select()
      .from(notifications)
      .where(and(eq(notifications.recipientId, DEMO_STUDENT_ID), eq(notifications.channel, 'email')));
    expect(after.every((r) => r.status === 'SENT')).toBe(true);
    t.clock.advance(3_600_000);
    await t.worker.drain();
    expect(mailer.sent).toHaveLength(1);
    t.clock.set('2026-03-02T09:00:00.000Z');
  });

  it('changing the daily time moves what is already waiting', async () => {
    t.clock.set('2026-03-02T09:00:00.000Z');
    await t.request('PATCH', '/api/notifications/preferences', { token: student, body: { key: 'ASSESS_GRADED', frequency: 'DAILY_DIGEST' } });
    await send({ key: 'ASSESS_GRADED', recipients: [DEMO_STUDENT_ID], metadata: { title: 'Quiz D' } });
    // default 08:00 UTC (the institution's zone) → tomorrow 08:00Z
    const [before] = await t.db
      .select()
      .from(notifications)
      .where(and(eq(notifications.recipientId, DEMO_STUDENT_ID), eq(notifications.channel, 'email')));
    expect(before!.digestDueAt?.toISOString()).toBe('2026-03-03T08:00:00.000Z');
    await t.request('PATCH', '/api/notifications/preferences/digest-times', { token: student, body: { dailyTime: '12:30' } });
    t.clock.set('2026-03-02T12:30:00.000Z');
    await t.worker.drain();
    expect(mailer.sent.map((m) => m.subject)).toEqual(['Your daily digest: 1 notification']);
    t.clock.set('2026-03-02T09:00:00.000Z');
  });

  it('a WEEKLY_DIGEST user gets one weekly e-mail at weeklyDay weeklyTime; a daily digest due at the same moment sends only its own rows', async () => {
    // 2026-03-02 is a Monday. Defaults: daily 08:00, weekly MONDAY 08:00, in UTC (the institution's zone).
    t.clock.set('2026-03-02T09:00:00.000Z');
    await t.request('PATCH', '/api/notifications/preferences', { token: student, body: { key: 'ASSESS_GRADED', frequency: 'WEEKLY_DIGEST' } });
    await t.request('PATCH', '/api/notifications/preferences', { token: student, body: { key: 'LIVE_CLASS_SCHEDULED', frequency: 'DAILY_DIGEST' } });
    try {
      for (const title of ['Quiz W1', 'Quiz W2']) {
        await send({ key: 'ASSESS_GRADED', recipients: [DEMO_STUDENT_ID], metadata: { title } });
        t.clock.advance(60_000);
      }
      const held = await t.db
        .select()
        .from(notifications)
        .where(and(eq(notifications.recipientId, DEMO_STUDENT_ID), eq(notifications.channel, 'email')));
      expect(held.map((r) => [r.status, r.frequency, r.digestDueAt?.toISOString()])).toEqual(Array(2).fill(['PENDING', 'WEEKLY_DIGEST', '2026-03-09T08:00:00.000Z']));

      // Daily digest times pass during the week: nothing weekly goes out.
      t.clock.set('2026-03-03T08:00:00.000Z');
      await t.worker.drain();
      expect(mailer.sent).toHaveLength(0);

      // Sunday: a live class is scheduled; its daily digest is due Monday 08:00, the weekly digest's moment.
      t.clock.set('2026-03-08T12:00:00.000Z');
      await send({
        key: 'LIVE_CLASS_SCHEDULED',
        recipients: [DEMO_STUDENT_ID],
        metadata: { title: 'Revision class', courseTitle: 'Biology', scheduledAt: '2026-03-10T15:00:00Z' },
      });
      t.clock.set('2026-03-09T07:59:00.000Z');
      await t.worker.drain();
      expect(mailer.sent).toHaveLength(0);

      t.clock.set('2026-03-09T08:00:00.000Z');
      await t.worker.drain();
      const bySubject = Object.fromEntries(mailer.sent.map((m) => [m.subject, m]));
      expect(Object.keys(bySubject).sort()).toEqual(['Your daily digest: 1 notification', 'Your weekly digest: 2 notifications']);
      expect(bySubject['Your weekly digest: 2 notifications']!.text).toContain('Graded: Quiz W1');
      expect(bySubject['Your weekly digest: 2 notifications']!.text).toContain('Graded: Quiz W2');
      expect(bySubject['Your weekly digest: 2 notifications']!.text).not.toContain('Revision class');
      expect(bySubject['Your daily digest: 1 notification']!.text).toContain('Revision class');
      const after = await t.db
        .select()
        .from(notifications)
        .where(and(eq(notifications.recipientId, DEMO_STUDENT_ID), eq(notifications.channel, 'email')));
      expect(after.every((r) => r.status === 'SENT')).toBe(true);
      // Nothing more the following week.
      t.clock.set('2026-03-16T08:00:00.000Z');
      await t.worker.drain();
      expect(mailer.sent).toHaveLength(2);
    } finally {
      t.clock.set('2026-03-02T09:00:00.000Z');
    }
  });

  it('two digest jobs of one person due at once (the old time and a rescheduled one) send the held rows once', async () => {
    t.clock.set('2026-03-02T09:00:00.000Z');
    await t.request('PATCH', '/api/notifications/preferences', { token: student, body: { key: 'ASSESS_GRADED', frequency: 'DAILY_DIGEST' } });
    try {
      await send({ key: 'ASSESS_GRADED', recipients: [DEMO_STUDENT_ID], metadata: { title: 'Quiz R1' } });
      await send({ key: 'ASSESS_GRADED', recipients: [DEMO_STUDENT_ID], metadata: { title: 'Quiz R2' } });
      // Due tomorrow 08:00; moving the daily time to 07:00 adds a job at 07:00 while the 08:00 one stays queued.
      await t.request('PATCH', '/api/notifications/preferences/digest-times', { token: student, body: { dailyTime: '07:00' } });
      const queued = await t.db.select().from(jobs).where(eq(jobs.name, 'notifications.sendDigest'));
      expect(queued.map((j) => j.runAt.toISOString()).sort()).toEqual(['2026-03-03T07:00:00.000Z', '2026-03-03T08:00:00.000Z']);
      // The worker was down overnight: both are due, and run side by side.
      t.clock.set('2026-03-03T09:00:00.000Z');
      await t.worker.drain();
      expect(mailer.sent.map((m) => m.subject)).toEqual(['Your daily digest: 2 notifications']);
    } finally {
      t.clock.set('2026-03-02T09:00:00.000Z');
    }
  });

  it('forceImmediate sends a digest user their e-mail at once', async () => {
    await t.request('PATCH', '/api/notifications/preferences', { token: student, body: { key: 'ASSESS_PEER_GRADED', frequency: 'DAILY_DIGEST' } });
    await send({ key: 'ASSESS_PEER_GRADED', recipients: [DEMO_STUDENT_ID], metadata: { title: 'Essay' }, forceImmediate: true });
    await t.worker.drain();
    expect(mailer.sent.map((m) => m.subject)).toEqual(['Peer reviews complete: Essay']);
  });
});

describe('GET /api/notifications and marking read', () => {
  async function seedInbox(n: number, recipient = DEMO_STUDENT_ID) {
    for (let i = 0; i < n; i++) {
      await send({ key: i % 2 ? 'ASSESS_GRADED' : 'BADGE_EARNED', recipients: [recipient], metadata: { title: `T${i}`, badgeName: `B${i}` } });
      t.clock.advance(1000);
    }
  }

  it('lists the caller’s in-app rows newest first with total, unreadCount, filters and page size 25 by default', async () => {
    await seedInbox(30);
    const res = await t.request('GET', '/api/notifications', { token: student });
    expect(res.status).toBe(200);
    expect(res.body.error).toBeNull();
    expect(res.body.data.notifications).toHaveLength(25);
    expect(res.body.data.total).toBe(30);
    expect(res.body.data.unreadCount).toBe(30);
    expect(res.body.meta).toEqual({ total: 30, page: 1, perPage: 25, totalPages: 2 });
    const first = res.body.data.notifications[0];
    expect(first).toEqual({
      id: expect.any(String),
      title: 'Graded: T29',
      message: expect.any(String),
      type: 'ASSESS_GRADED',
      key: 'ASSESS_GRADED',
      category: 'ASSESSMENT',
      actionUrl: null,
      isRead: false,
      readAt: null,
      createdAt: expect.any(String),
      metadata: { title: 'T29', badgeName: 'B29' },
    });
    const page2 = await t.request('GET', '/api/notifications', { token: student, query: { page: 2, limit: 25 } });
    expect(page2.body.data.notifications).toHaveLength(5);
    const cat = await t.request('GET', '/api/notifications', { token: student, query: { category: 'ENGAGEMENT', limit: 100 } });
    expect(cat.body.data.total).toBe(15);
    expect(cat.body.data.notifications.every((n: { key: string }) => n.key === 'BADGE_EARNED')).toBe(true);
    expectError(await t.request('GET', '/api/notifications', { token: student, query: { limit: 101 } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('GET', '/api/notifications', { token: student, query: { unreadOnly: 'maybe' } }), 400, 'VALIDATION_ERROR');
    // Nobody else sees them: another student, and a student of another institution.
    expect((await t.request('GET', '/api/notifications', { token: sibling })).body.data.total).toBe(0);
    expect((await t.request('GET', '/api/notifications', { token: northStudent })).body.data.total).toBe(0);
    expect((await t.request('GET', '/api/notifications/unread-count', { token: northStudent })).body.data.count).toBe(0);
  });

  it('an empty category or unreadOnly (an "All" choice of a filter form) is the same as leaving it out', async () => {
    await seedInbox(4);
    const list = (await t.request('GET', '/api/notifications', { token: student })).body.data.notifications;
    await t.request('PATCH', '/api/notifications/read', { token: student, body: { ids: [list[0].id] } });
    const res = await t.request('GET', '/api/notifications', { token: student, query: { category: '', unreadOnly: '' } });
    expect(res.status).toBe(200);
    expect(res.body.error).toBeNull();
    expect(res.body.data).toMatchObject({ total: 4, unreadCount: 3 });
    expect(res.body.data.notifications.map((n: { id: string }) => n.id)).toEqual(list.map((n: { id: string }) => n.id));
    const unreadOnly = await t.request('GET', '/api/notifications', { token: student, query: { category: '', unreadOnly: 'true' } });
    expect(unreadOnly.body.data.total).toBe(3);
    const assessments = await t.request('GET', '/api/notifications', { token: student, query: { category: 'ASSESSMENT', unreadOnly: '' } });
    expect(assessments.body.data.total).toBe(2);
  });

  it('marks read by ids (own only) or all; unreadOnly and unread-count follow; legacy forms work', async () => {
    await seedInbox(4);
    await seedInbox(1, DEMO_SIBLING_ID);
    const list = (await t.request('GET', '/api/notifications', { token: student })).body.data.notifications;
    const [theirs] = (await t.request('GET', '/api/notifications', { token: sibling })).body.data.notifications;

    const res = await t.request('PATCH', '/api/notifications/read', { token: student, body: { ids: [list[0].id, theirs.id, 'nope'] } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { updated: 1 }, error: null });
    expect((await t.request('GET', '/api/notifications/unread-count', { token: sibling })).body.data.count).toBe(1);
    expect((await t.request('GET', '/api/notifications/unread-count', { token: student })).body).toEqual({ data: { count: 3 }, error: null });
    const unread = await t.request('GET', '/api/notifications', { token: student, query: { unreadOnly: true } });
    expect(unread.body.data.notifications.map((n: { id: string }) => n.id)).not.toContain(list[0].id);
    expect(unread.body.data.total).toBe(3);
    const read = (await t.request('GET', '/api/notifications', { token: student })).body.data.notifications[0];
    expect(read).toMatchObject({ id: list[0].id, isRead: true, readAt: t.clock.now().toISOString() });

    expect((await t.request('PATCH', '/api/notifications', { token: student, body: { notificationId: list[1].id } })).body.data).toEqual({ updated: 1 });
    expectError(await t.request('PATCH', '/api/notifications', { token: student, body: { notificationId: theirs.id } }), 404, 'NOT_FOUND');
    expect((await t.request('PATCH', '/api/notifications', { token: student, body: { markAllRead: true } })).body.data).toEqual({ updated: 2 });
    expect((await t.request('PATCH', '/api/notifications/read', { token: student, body: { all: true } })).body.data).toEqual({ updated: 0 });
    expect((await t.request('GET', '/api/notifications/unread-count', { token: sibling })).body.data.count).toBe(1);
    // A student of another institution marking everything read changes nothing here.
    await t.request('PATCH', '/api/notifications/read', { token: northStudent, body: { all: true } });
    expect((await t.request('GET', '/api/notifications/unread-count', { token: sibling })).body.data.count).toBe(1);

    expectError(await t.request('PATCH', '/api/notifications/read', { token: student, body: { all: false } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('PATCH', '/api/notifications/read', { token: student, body: {} }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('PATCH', '/api/notifications', { token: student, body: { markAllRead: false } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('GET', '/api/notifications'), 401, 'AUTH_REQUIRED');
  });

  it('legacy {notificationId}: someone else’s or an unknown id is 404 and changes nothing; the caller’s own read one is updated 0', async () => {
    await seedInbox(1);
    await seedInbox(1, DEMO_SIBLING_ID);
    await send({ key: 'BADGE_EARNED', institutionId: 'inst_north', recipients: [NORTH_STUDENT_ID], metadata: { badgeName: 'N' } });
    const [mine] = (await t.request('GET', '/api/notifications', { token: student })).body.data.notifications;
    const [theirs] = (await t.request('GET', '/api/notifications', { token: sibling })).body.data.notifications;
    const [north] = (await t.request('GET', '/api/notifications', { token: northStudent })).body.data.notifications;
    const before = await t.db.select().from(notifications).orderBy(notifications.id);
    t.clock.advance(60_000);

    for (const notificationId of [theirs.id, north.id, 'no-such-notification']) {
      const res = await t.request('PATCH', '/api/notifications', { token: student, body: { notificationId } });
      expectError(res, 404, 'NOT_FOUND');
    }
    // The caller's e-mail row of a notification is not an in-app notification either.
    const mineEmail = (await rowsOf(DEMO_STUDENT_ID)).find((r) => r.channel === 'email')!;
    expectError(await t.request('PATCH', '/api/notifications', { token: student, body: { notificationId: mineEmail.id } }), 404, 'NOT_FOUND');
    expect(await t.db.select().from(notifications).orderBy(notifications.id)).toEqual(before);

    const first = await t.request('PATCH', '/api/notifications', { token: student, body: { notificationId: mine.id } });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ data: { updated: 1 }, error: null });
    const again = await t.request('PATCH', '/api/notifications', { token: student, body: { notificationId: mine.id } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ data: { updated: 0 }, error: null });
    expect((await t.request('GET', '/api/notifications/unread-count', { token: sibling })).body.data.count).toBe(1);
  });

  it('PATCH /read accepts {ids, all: false} (the ids change) and names the field and problem of a bad body', async () => {
    await seedInbox(3);
    const list = (await t.request('GET', '/api/notifications', { token: student })).body.data.notifications;
    const res = await t.request('PATCH', '/api/notifications/read', { token: student, body: { ids: [list[0].id], all: false } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { updated: 1 }, error: null });
    expect((await t.request('GET', '/api/notifications/unread-count', { token: student })).body.data.count).toBe(2);

    const refused = async (body: unknown) => {
      const r = await t.request('PATCH', '/api/notifications/read', { token: student, body });
      expectError(r, 400, 'VALIDATION_ERROR');
      return r.body.error.details.fields as Array<{ field: string; message: string }>;
    };
    expect(await refused({ ids: Array.from({ length: 501 }, (_, i) => `n${i}`) })).toEqual([{ field: 'body.ids', message: 'at most 500 ids at once' }]);
    expect(await refused({ ids: [list[1].id, 42] })).toEqual([{ field: 'body.ids.1', message: 'must be a notification id (a string)' }]);
    expect(await refused({ ids: 'abc' })).toEqual([{ field: 'body.ids', message: 'must be a list of notification ids' }]);
    expect(await refused({ all: 'yes' })).toEqual([{ field: 'body.all', message: 'must be true or false' }]);
    expect(await refused({ all: false })).toEqual([{ field: 'body', message: 'send {ids: [...]} or {all: true}' }]);
    expect(await refused({})).toEqual([{ field: 'body', message: 'send {ids: [...]} or {all: true}' }]);
    expect(await refused({ ids: [list[1].id], all: true })).toEqual([{ field: 'body.all', message: 'send either ids or all: true, not both' }]);
    // None of the refused bodies changed anything.
    expect((await t.request('GET', '/api/notifications/unread-count', { token: student })).body.data.count).toBe(2);
  });
});

describe('preferences', () => {
  const keysOf = (body: any) => Object.keys(body.data.preferences).sort();

  it('each role sees a row for every key visible to it, grouped by category, with digest times and hasPushToken', async () => {
    const s = await t.request('GET', '/api/notifications/preferences', { token: student });
    expect(s.status).toBe(200);
    expect(s.body.data.role).toBe('STUDENT');
    expect(keysOf(s.body)).toContain('ASSESS_GRADED');
    expect(keysOf(s.body)).toContain('REENGAGE_NUDGE_INACTIVE_7D');
    expect(keysOf(s.body)).not.toContain('TEACHER_NEW_SUBMISSION');
    expect(s.body.data.preferences.ENROLL_WELCOME).toEqual({ emailEnabled: true, pushEnabled: false, inAppEnabled: true, frequency: 'IMMEDIATE' });
    const assessment = s.body.data.categories.find((c: any) => c.category === 'ASSESSMENT');
    expect(assessment.definitions.find((d: any) => d.key === 'ASSESS_GRADED')).toEqual({
      key: 'ASSESS_GRADED',
      label: 'Work graded',
      description: expect.any(String),
      category: 'ASSESSMENT',
      defaultChannels: ['IN_APP', 'email', 'push'],
      canDisable: true,
      canChangeFrequency: true,
      availableTo: ['STUDENT'],
      parentKey: null,
    });
    const child = s.body.data.categories.flatMap((c: any) => c.definitions).find((d: any) => d.key === 'REENGAGE_NUDGE_INACTIVE_7D');
    expect(child.parentKey).toBe('REENGAGE_NUDGE');
    expect(s.body.data.digestTimes).toEqual({ dailyTime: '08:00', weeklyDay: 'MONDAY', weeklyTime: '08:00', timezone: 'UTC', timezoneOverride: null });
    expect(s.body.data.hasPushToken).toBe(false);

    const te = await t.request('GET', '/api/notifications/preferences', { token: teacher });
    expect(te.body.data.role).toBe('TEACHER');
    expect(keysOf(te.body)).toContain('TEACHER_NEW_SUBMISSION');
    expect(keysOf(te.body)).not.toContain('ASSESS_GRADED');
    const ad = await t.request('GET', '/api/notifications/preferences', { token: admin });
    expect(ad.body.data.role).toBe('ADMIN');
    expect(keysOf(ad.body)).toContain('REPORT_ALERT');
    const pa = await t.request('GET', '/api/notifications/preferences', { token: parent });
    expect(pa.body.data.role).toBe('PARENT');
    expect(keysOf(pa.body)).toEqual(['COMPLIANCE_DUE', 'DISCUSSION_REPLY']);
  });

  it('updates only the fields sent and overlays the stored row on the defaults', async () => {
    const a = await t.request('PATCH', '/api/notifications/preferences', { token: student, body: { key: 'ASSESS_GRADED', emailEnabled: false } });
    expect(a.status).toBe(200);
    expect(a.body.data).toEqual({ key: 'ASSESS_GRADED', emailEnabled: false, pushEnabled: true, inAppEnabled: true, frequency: 'IMMEDIATE' });
    const b = await t.request('PATCH', '/api/notifications/preferences', { token: student, body: { key: 'ASSESS_GRADED', frequency: 'DAILY_DIGEST' } });
    expect(b.body.data).toEqual({ key: 'ASSESS_GRADED', emailEnabled: false, pushEnabled: true, inAppEnabled: true, frequency: 'DAILY_DIGEST' });
    // A child key follows its parent's stored preference.
    await t.request('PATCH', '/api/notifications/preferences', { token: student, body: { key: 'REENGAGE_NUDGE', pushEnabled: true, inAppEnabled: false } });
    const prefs = (await t.request('GET', '/api/notifications/preferences', { token: student })).body.data.preferences;
    expect(prefs.ASSESS_GRADED.frequency).toBe('DAILY_DIGEST');
    expect(prefs.REENGAGE_NUDGE_INACTIVE_7D).toEqual({ emailEnabled: true, pushEnabled: true, inAppEnabled: false, frequency: 'IMMEDIATE' });
    // Another user's view is unchanged.
    expect((await t.request('GET', '/api/notifications/preferences', { token: sibling })).body.data.preferences.ASSESS_GRADED.emailEnabled).toBe(true);
  });

  it('refuses a child key (400), another role’s key (403), disabling an undisableable key (403) and a frequency on a fixed-frequency key (400)', async () => {
    expectError(
      await t.request('PATCH', '/api/notifications/preferences', { token: student, body: { key: 'REENGAGE_NUDGE_INACTIVE_7D', emailEnabled: false } }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(await t.request('PATCH', '/api/notifications/preferences', { token: student, body: { key: 'TEACHER_NEW_SUBMISSION', emailEnabled: false } }), 403, 'FORBIDDEN');
    expectError(await t.request('PATCH', '/api/notifications/preferences', { token: teacher, body: { key: 'ASSESS_GRADED', emailEnabled: false } }), 403, 'FORBIDDEN');
    expectError(await t.request('PATCH', '/api/notifications/preferences', { token: student, body: { key: 'ENROLL_WELCOME', emailEnabled: false } }), 403, 'FORBIDDEN');
    expectError(await t.request('PATCH', '/api/notifications/preferences', { token: student, body: { key: 'ENROLL_WELCOME', frequency: 'OFF' } }), 403, 'FORBIDDEN');
    expectError(
      await t.request('PATCH', '/api/notifications/preferences', { token: student, body: { key: 'ASSIGNMENT_DUE_REMINDER', frequency: 'DAILY_DIGEST' } }),
      400,
      'VALIDATION_ERROR',
    );
    expect((await t.request('PATCH', '/api/notifications/preferences', { token: student, body: { key: 'ASSIGNMENT_DUE_REMINDER', frequency: 'IMMEDIATE' } })).status).toBe(200);
    expect((await t.request('PATCH', '/api/notifications/preferences', { token: student, body: { key: 'ENROLL_WELCOME', pushEnabled: true } })).body.data.pushEnabled).toBe(true);
    expectError(await t.request('PATCH', '/api/notifications/preferences', { token: student, body: { key: 'NO_SUCH_KEY' } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('PATCH', '/api/notifications/preferences', { token: student, body: { key: 'ASSESS_GRADED', frequency: 'HOURLY' } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('PATCH', '/api/notifications/preferences', { token: student, body: { emailEnabled: false } }), 400, 'VALIDATION_ERROR');
    const rows = await rawRows<{ key: string }>(t.db, sql`select key from notification_preferences`);
    expect(rows.map((r) => r.key).sort()).toEqual(['ASSIGNMENT_DUE_REMINDER', 'ENROLL_WELCOME']);
  });

  it('DELETE needs {confirm: true} and removes only the caller’s rows', async () => {
    await t.request('PATCH', '/api/notifications/preferences', { token: student, body: { key: 'ASSESS_GRADED', emailEnabled: false } });
    await t.request('PATCH', '/api/notifications/preferences', { token: sibling, body: { key: 'ASSESS_GRADED', emailEnabled: false } });
    expectError(await t.request('DELETE', '/api/notifications/preferences', { token: student, body: {} }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('DELETE', '/api/notifications/preferences', { token: student, body: { confirm: false } }), 400, 'VALIDATION_ERROR');
    const res = await t.request('DELETE', '/api/notifications/preferences', { token: student, body: { confirm: true } });
    expect(res.body).toEqual({ data: { reset: true }, error: null });
    expect((await t.request('GET', '/api/notifications/preferences', { token: student })).body.data.preferences.ASSESS_GRADED.emailEnabled).toBe(true);
    expect((await t.request('GET', '/api/notifications/preferences', { token: sibling })).body.data.preferences.ASSESS_GRADED.emailEnabled).toBe(false);
  });

  it('digest times: HH:MM, SUNDAY–SATURDAY and an IANA zone; only sent fields change', async () => {
    const res = await t.request('PATCH', '/api/notifications/preferences/digest-times', { token: student, body: { weeklyDay: 'FRIDAY', weeklyTime: '17:45' } });
    expect(res.body.data).toEqual({ dailyTime: '08:00', weeklyDay: 'FRIDAY', weeklyTime: '17:45', timezone: 'UTC', timezoneOverride: null });
    for (const body of [
      { dailyTime: '24:00' },
      { dailyTime: '7:00' },
      { weeklyTime: '12:60' },
      { weeklyDay: 'FUNDAY' },
      { timezoneOverride: 'Mars/Olympus' },
      { timezoneOverride: '' },
    ]) {
      expectError(await t.request('PATCH', '/api/notifications/preferences/digest-times', { token: student, body }), 400, 'VALIDATION_ERROR');
    }
    const zone = await t.request('PATCH', '/api/notifications/preferences/digest-times', { token: student, body: { timezoneOverride: 'America/New_York' } });
    expect(zone.body.data).toMatchObject({ weeklyDay: 'FRIDAY', timezone: 'America/New_York' });
    const cleared = await t.request('PATCH', '/api/notifications/preferences/digest-times', { token: student, body: { timezoneOverride: null } });
    expect(cleared.body.data).toMatchObject({ timezone: 'UTC', timezoneOverride: null });
    expect((await t.request('GET', '/api/notifications/preferences', { token: student })).body.data.digestTimes.weeklyTime).toBe('17:45');
  });

  it('digest times: a zone in another spelling is stored and answered in its canonical IANA name', async () => {
    const res = await t.request('PATCH', '/api/notifications/preferences/digest-times', { token: student, body: { timezoneOverride: 'europe/berlin' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: { dailyTime: '08:00', weeklyDay: 'MONDAY', weeklyTime: '08:00', timezone: 'Europe/Berlin', timezoneOverride: 'Europe/Berlin' },
      error: null,
    });
    const [stored] = await rawRows<{ timezone_override: string }>(t.db, sql`select timezone_override from notification_digest_settings where user_id = ${DEMO_STUDENT_ID}`);
    expect(stored!.timezone_override).toBe('Europe/Berlin');
    const utc = await t.request('PATCH', '/api/notifications/preferences/digest-times', { token: student, body: { timezoneOverride: 'utc' } });
    expect(utc.body.data).toMatchObject({ timezone: 'UTC', timezoneOverride: 'UTC' });
    // A row written before names were canonicalised is answered canonically too.
    await t.db.execute(sql`update notification_digest_settings set timezone_override = 'america/new_york' where user_id = ${DEMO_STUDENT_ID}`);
    expect((await t.request('GET', '/api/notifications/preferences', { token: student })).body.data.digestTimes).toMatchObject({
      timezone: 'America/New_York',
      timezoneOverride: 'America/New_York',
    });
  });
});

describe('push tokens and devices', () => {
  it('registers a token under sha256(userId:token); registering again reuses the row; the same token moves between users', async () => {
    const token = 'browser-subscription-1';
    const a = await t.request('POST', '/api/notifications/push-token', { token: student, body: { token, platform: 'web' } });
    expect(a.status).toBe(200);
    expect(a.body).toEqual({ data: { id: expect.any(String), registered: true }, error: null });
    const again = await t.request('POST', '/api/notifications/push-token', { token: student, body: { token, platform: 'web' } });
    expect(again.body.data.id).toBe(a.body.data.id);
    const [row] = await t.db.select().from(notificationDevices);
    expect(row).toMatchObject({
      userId: DEMO_STUDENT_ID,
      deviceId: createHash('sha256').update(`${DEMO_STUDENT_ID}:${token}`).digest('hex'),
      platform: 'web',
      provider: 'webpush',
    });
    expect((await t.request('GET', '/api/notifications/preferences', { token: student })).body.data.hasPushToken).toBe(true);

    // The sibling signs in on the same browser: the token leaves the first row.
    await t.request('POST', '/api/notifications/push-token', { token: sibling, body: { token, platform: 'web' } });
    const rows = await t.db.select().from(notificationDevices);
    expect(rows.map((r) => r.userId)).toEqual([DEMO_SIBLING_ID]);
    expect((await t.request('GET', '/api/notifications/preferences', { token: student })).body.data.hasPushToken).toBe(false);

    expectError(await t.request('POST', '/api/notifications/push-token', { token: student, body: { token, platform: 'windows' } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('POST', '/api/notifications/push-token', { token: student, body: { token: '', platform: 'web' } }), 400, 'VALIDATION_ERROR');
  });

  it('a token lives on one row of the whole platform: registering it in another institution clears it here, also when both register at once', async () => {
    const token = 'shared-kiosk-browser';
    expect((await t.request('POST', '/api/notifications/push-token', { token: student, body: { token, platform: 'web' } })).status).toBe(200);
    // A learner of another institution signs in on the same browser.
    expect((await t.request('POST', '/api/notifications/push-token', { token: northStudent, body: { token, platform: 'web' } })).status).toBe(200);
    const rows = await t.db.select().from(notificationDevices).where(eq(notificationDevices.token, token));
    expect(rows.map((r) => [r.institutionId, r.userId])).toEqual([['inst_north', NORTH_STUDENT_ID]]);
    expect((await t.request('GET', '/api/notifications/preferences', { token: student })).body.data.hasPushToken).toBe(false);
    expect((await t.request('GET', '/api/notifications/preferences', { token: northStudent })).body.data.hasPushToken).toBe(true);
    // A notification for the first user no longer reaches that browser.
    await send({ key: 'ASSESS_GRADED', recipients: [DEMO_STUDENT_ID], metadata: { title: 'Quiz K' } });
    await t.worker.drain();
    expect(push.sent).toEqual([]);

    // Two registrations of one new token at once, from two institutions: one row remains, no error.
    const both = await Promise.all([
      t.request('POST', '/api/v1/devices/fcm-token', { token: student, body: { token: 'fcm-shared', platform: 'android' } }),
      t.request('POST', '/api/v1/devices/fcm-token', { token: northStudent, body: { token: 'fcm-shared', platform: 'android' } }),
    ]);
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    expect(await t.db.select().from(notificationDevices).where(eq(notificationDevices.token, 'fcm-shared'))).toHaveLength(1);
  });

  it('mobile apps register through /api/v1/devices/{provider}-token with a bearer token and device metadata', async () => {
    const res = await t.request('POST', '/api/v1/devices/fcm-token', { token: student, body: { token: 'fcm-abc', platform: 'android', model: 'Pixel 9', appVersion: '3.2.0' } });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      id: expect.any(String),
      registered: true,
      deviceId: createHash('sha256').update(`${DEMO_STUDENT_ID}:fcm-abc`).digest('hex'),
      provider: 'fcm',
      platform: 'android',
    });
    const [row] = await t.db.select().from(notificationDevices);
    expect(row).toMatchObject({ provider: 'fcm', platform: 'android', metadata: { model: 'Pixel 9', appVersion: '3.2.0' } });
    expect((await t.request('POST', '/api/v1/devices/apns-token', { token: student, body: { token: 'apns-1', platform: 'ios' } })).body.data.provider).toBe('apns');
    expectError(await t.request('POST', '/api/v1/devices/apns-token', { token: student, body: { token: 'apns-2', platform: 'android' } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('POST', '/api/v1/devices/fcm-token', { body: { token: 'x', platform: 'android' } }), 401, 'AUTH_REQUIRED');
  });

  it('the device body keeps metadata fields it does not name (bounded); another provider is 400 naming the supported ones', async () => {
    const body = { token: 'fcm-meta', platform: 'android', model: 'Pixel 9', deviceId: 'A1B2-C3', manufacturer: 'Google', sdkInt: 35, isTablet: false };
    const res = await t.request('POST', '/api/v1/devices/fcm-token', { token: student, body });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: { id: expect.any(String), registered: true, deviceId: createHash('sha256').update(`${DEMO_STUDENT_ID}:fcm-meta`).digest('hex'), provider: 'fcm', platform: 'android' },
      error: null,
    });
    const [row] = await t.db.select().from(notificationDevices);
    expect(row!.metadata).toEqual({ model: 'Pixel 9', deviceId: 'A1B2-C3', manufacturer: 'Google', sdkInt: 35, isTablet: false });

    const refused = async (b: Record<string, unknown>) => {
      const r = await t.request('POST', '/api/v1/devices/apns-token', { token: student, body: { token: 'apns-meta', platform: 'ios', ...b } });
      expectError(r, 400, 'VALIDATION_ERROR');
      return r.body.error.details.fields as Array<{ field: string; message: string }>;
    };
    expect(await refused({ carrier: { name: 'x' } })).toEqual([{ field: 'body.carrier', message: 'must be a string (at most 200 characters), a number or a boolean' }]);
    expect(await refused({ carrier: null })).toEqual([{ field: 'body.carrier', message: 'must be a string (at most 200 characters), a number or a boolean' }]);
    expect((await refused({ carrier: 'x'.repeat(201) }))[0]!.field).toBe('body.carrier');
    expect(await refused({ 'bad key': 'x' })).toEqual([{ field: 'body.bad key', message: 'a metadata field name is 1 to 64 letters, digits, _, - or ., starting with a letter' }]);
    expect(await refused({ ['k'.repeat(65)]: 'x' })).toHaveLength(1);
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`field${i}`, i]));
    expect(await refused(many)).toEqual([{ field: 'body', message: 'at most 20 device metadata fields besides the named ones (21 sent)' }]);
    expect((await t.request('POST', '/api/v1/devices/apns-token', { token: student, body: { token: 'apns-meta', platform: 'ios', ...many, field20: undefined } })).status).toBe(
      200,
    );
    expect(await t.db.select().from(notificationDevices).where(eq(notificationDevices.token, 'apns-meta'))).toHaveLength(1);

    // A provider delivery cannot send through: 400 naming the supported ones, nothing stored.
    for (const path of ['/api/v1/devices/expo-token', '/api/devices/gcm-token']) {
      const other = await t.request('POST', path, { token: student, body: { token: 'ExponentPushToken[abc]', platform: 'android' } });
      expectError(other, 400, 'VALIDATION_ERROR');
      expect(other.body.error.message).toMatch(/not supported.*fcm, apns/);
      expect(other.body.error.details.fields).toEqual([{ field: 'params.provider', message: 'must be one of fcm, apns' }]);
    }
    expect(await t.db.select().from(notificationDevices).where(eq(notificationDevices.token, 'ExponentPushToken[abc]'))).toEqual([]);
    expectError(await t.request('POST', '/api/v1/devices/expo-token', { body: { token: 'x', platform: 'android' } }), 401, 'AUTH_REQUIRED');
    expectError(await t.request('POST', '/api/v1/devices/anything', { token: student, body: {} }), 404, 'NOT_FOUND');
  });

  it('registering a token again without metadata keeps the metadata stored earlier; new metadata replaces it', async () => {
    const first = await t.request('POST', '/api/v1/devices/fcm-token', { token: student, body: { token: 'fcm-keep', platform: 'android', model: 'Pixel 9', appVersion: '3.2.0' } });
    expect(first.status).toBe(200);
    const again = await t.request('POST', '/api/notifications/push-token', { token: student, body: { token: 'fcm-keep', platform: 'android' } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ data: { id: first.body.data.id, registered: true }, error: null });
    const device = async () => (await t.db.select().from(notificationDevices).where(eq(notificationDevices.token, 'fcm-keep')))[0];
    expect(await device()).toMatchObject({ id: first.body.data.id, provider: 'fcm', platform: 'android', metadata: { model: 'Pixel 9', appVersion: '3.2.0' } });
    // The device endpoint without metadata keeps it too.
    expect((await t.request('POST', '/api/v1/devices/fcm-token', { token: student, body: { token: 'fcm-keep', platform: 'android' } })).status).toBe(200);
    expect((await device())!.metadata).toEqual({ model: 'Pixel 9', appVersion: '3.2.0' });
    // Metadata sent again describes the device as it is now.
    expect((await t.request('POST', '/api/v1/devices/fcm-token', { token: student, body: { token: 'fcm-keep', platform: 'android', appVersion: '3.3.0' } })).status).toBe(200);
    expect((await device())!.metadata).toEqual({ appVersion: '3.3.0' });
    expect(await t.db.select().from(notificationDevices)).toHaveLength(1);
  });
});

describe('definitions and system templates', () => {
  it('every key has a system template per channel, and the migration matches notifications.default-templates.ts', async () => {
    const rows = await rawRows<{
      key: string;
      channel: string;
      subject: string;
      body: string;
      html_body: string | null;
    }>(t.db, sql`select key, channel, subject, body, html_body from notification_templates where institution_id is null`);
    for (const d of DEFINITIONS) {
      for (const channel of CHANNELS) {
        const row = rows.find((r) => r.key === d.key && r.channel === channel);
        expect(row, `${d.key}/${channel}`).toBeDefined();
        expect({ subject: row!.subject, body: row!.body }).toEqual(DEFAULT_TEMPLATES[d.key]);
        expect(row!.html_body).toBe(channel === 'email' ? emailHtmlOf(DEFAULT_TEMPLATES[d.key]!.body) : null);
      }
    }
    expect(rows).toHaveLength(DEFINITIONS.length * CHANNELS.length);
  });

  it('child keys name an existing top-level parent of the same roles', () => {
    for (const d of DEFINITIONS.filter((x) => x.parentKey)) {
      const parentDef = DEFINITIONS.find((p) => p.key === d.parentKey);
      expect(parentDef?.parentKey, d.key).toBeNull();
      expect(parentDef?.availableTo).toEqual(d.availableTo);
    }
  });
});
