/**
 * Notifications end to end with real parts: an enrollment through the HTTP API, the worker,
 * nodemailer to a real SMTP server started here (subject and body checked), and web push
 * (the web-push library's encrypted request with its VAPID JWT) to a local HTTP server
 * standing in for the browser's push service; a 410 from it removes the device.
 */
import { createECDH, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import webpush from 'web-push';
import { decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { createTestApp, silentLog, type TestApp } from '../helpers/app.js';
import { createCourse } from '../helpers/factories.js';
import { startTestSmtp, type TestSmtp } from '../helpers/smtp.js';
import { createMailer } from '../../src/platform/mail/mailer.js';
import { notificationDevices, notifications } from '../../src/modules/notifications/notifications.tables.js';
import { DEMO_STUDENT_ID } from '../../src/dev/crm-sim/fixtures.js';

interface PushRequest {
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

let t: TestApp;
let smtp: TestSmtp;
let pushService: Server;
let pushBase: string;
let pushStatus = 201;
const pushRequests: PushRequest[] = [];
const vapid = webpush.generateVAPIDKeys();
let student: string;

beforeAll(async () => {
  smtp = await startTestSmtp();
  pushService = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      pushRequests.push({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(pushStatus).end();
    });
  });
  await new Promise<void>((r) => pushService.listen(0, '127.0.0.1', r));
  pushBase = `http://127.0.0.1:${(pushService.address() as { port: number }).port}`;
  const env = {
    SMTP_URL: smtp.url,
    MAIL_FROM: 'Demo Academy <lms@demo.example>',
    VAPID_PUBLIC_KEY: vapid.publicKey,
    VAPID_PRIVATE_KEY: vapid.privateKey,
    VAPID_SUBJECT: 'mailto:ops@demo.example',
  };
  t = await createTestApp({ env, mailer: createMailer({ SMTP_URL: smtp.url, MAIL_FROM: env.MAIL_FROM, DATA_DIR: '.data' }, silentLog) });
  student = await t.token({ role: 'STUDENT', id: DEMO_STUDENT_ID });
});

afterAll(async () => {
  await t?.close();
  await smtp?.close();
  await new Promise((r) => pushService?.close(r));
});

/** A browser's PushSubscription: a real P-256 key pair and auth secret, as the web-push protocol needs. */
function subscription(path: string) {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return JSON.stringify({ endpoint: `${pushBase}${path}`, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') } });
}

/** Verifies the `Authorization: vapid t=<jwt>, k=<key>` header against the VAPID public key. */
async function verifyVapid(header: string | undefined) {
  const match = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(header ?? '');
  expect(match, header).not.toBeNull();
  const [, jwt, k] = match!;
  expect(k).toBe(vapid.publicKey);
  const raw = Buffer.from(vapid.publicKey, 'base64url');
  const key = await importJWK({ kty: 'EC', crv: 'P-256', x: raw.subarray(1, 33).toString('base64url'), y: raw.subarray(33, 65).toString('base64url') }, 'ES256');
  expect(decodeProtectedHeader(jwt!).alg).toBe('ES256');
  const { payload } = await jwtVerify(jwt!, key, { audience: pushBase });
  return payload;
}

const enrollIn = async (title: string) => {
  const course = await createCourse(t, { status: 'PUBLISHED', title });
  const res = await t.request('POST', `/api/courses/${course.id}/enroll`, { token: student });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return course;
};

describe('delivery with real SMTP and web push', () => {
  it('an enrollment reaches the student by e-mail (rendered, escaped) and by web push with a valid VAPID JWT', async () => {
    const sub = subscription('/push/device-1');
    expect((await t.request('POST', '/api/notifications/push-token', { token: student, body: { token: sub, platform: 'web' } })).status).toBe(200);
    // ENROLL_WELCOME has no push by default; the student turns it on.
    expect((await t.request('PATCH', '/api/notifications/preferences', { token: student, body: { key: 'ENROLL_WELCOME', pushEnabled: true } })).status).toBe(200);
    const course = await enrollIn('Chemistry & "Lab" <1>');
    expect(smtp.messages).toHaveLength(0); // nothing until the worker runs
    await t.worker.drain();

    const [mail] = await smtp.waitFor(1);
    const contact = await t.deps.crm.getContact('demo', DEMO_STUDENT_ID);
    expect(mail!.to).toMatchObject({ value: [{ address: contact.email }] });
    expect(mail!.from?.text).toContain('lms@demo.example');
    expect(mail!.subject).toBe('Welcome to Chemistry & "Lab" <1>');
    expect(mail!.text).toContain('You are enrolled in Chemistry & "Lab" <1>.');
    expect(mail!.text).toContain(`http://lms.test/learn/${course.id}`);
    expect(mail!.html).toContain('Chemistry &amp; &quot;Lab&quot; &lt;1&gt;');
    const [emailRow] = await t.db
      .select()
      .from(notifications)
      .where(and(eq(notifications.channel, 'email'), eq(notifications.recipientId, DEMO_STUDENT_ID)));
    expect(mail!.messageId).toBe(`<${emailRow!.id}@lms>`);
    expect(emailRow!.status).toBe('SENT');

    expect(pushRequests).toHaveLength(1);
    const push = pushRequests[0]!;
    expect(push.url).toBe('/push/device-1');
    expect(push.headers['content-encoding']).toBe('aes128gcm');
    expect(Number(push.headers.ttl)).toBeGreaterThan(0);
    expect(push.body.length).toBeGreaterThan(0);
    expect(push.body.toString('utf8')).not.toContain('Welcome'); // encrypted
    const claims = await verifyVapid(push.headers.authorization);
    expect(claims.sub).toBe('mailto:ops@demo.example');
    expect(claims.exp! * 1000).toBeGreaterThan(Date.now());
    const [pushRow] = await t.db
      .select()
      .from(notifications)
      .where(and(eq(notifications.channel, 'push'), eq(notifications.recipientId, DEMO_STUDENT_ID)));
    expect(pushRow!.status).toBe('SENT');
  });

  it('a 410 from the push service removes the device and fails the row; e-mail still goes', async () => {
    await t.db.delete(notifications);
    pushStatus = 410;
    pushRequests.length = 0;
    await enrollIn('Physics');
    await t.worker.drain();
    expect(pushRequests).toHaveLength(1);
    expect(await t.db.select().from(notificationDevices).where(eq(notificationDevices.userId, DEMO_STUDENT_ID))).toEqual([]);
    const rows = await t.db.select().from(notifications).where(eq(notifications.recipientId, DEMO_STUDENT_ID));
    expect(rows.find((r) => r.channel === 'push')).toMatchObject({ status: 'FAILED', failureReason: 'push_endpoint_gone' });
    expect(rows.find((r) => r.channel === 'email')?.status).toBe('SENT');
    await smtp.waitFor(2);
    expect((await t.request('GET', '/api/notifications/preferences', { token: student })).body.data.hasPushToken).toBe(false);
  });

  it('a mailbox the SMTP server refuses (550) is FAILED with the reason, not retried', async () => {
    await t.db.delete(notifications);
    const contact = await t.deps.crm.getContact('demo', DEMO_STUDENT_ID);
    smtp.reject(contact.email!);
    const before = smtp.messages.length;
    await enrollIn('Geology');
    await t.worker.drain();
    const [row] = await t.db
      .select()
      .from(notifications)
      .where(and(eq(notifications.channel, 'email'), eq(notifications.recipientId, DEMO_STUDENT_ID)));
    expect(row!.status).toBe('FAILED');
    expect(row!.failureReason).toMatch(/invalid_address|smtp_rejected/);
    expect(smtp.messages.length).toBe(before);
  });
});
