/**
 * The mailer over real SMTP (a smtp-server on loopback) and in mailbox mode (.eml files).
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createMailer, MailError, toMailError, type Mailer } from '../../../src/platform/mail/mailer.js';
import { startTestSmtp, type TestSmtp } from '../../helpers/smtp.js';

const MAIL_FROM = 'LMS Test <no-reply@lms.test>';

function recordingLog() {
  const lines: string[] = [];
  const push = (...args: unknown[]) => void lines.push(args.map(String).join(' '));
  return { lines, info: push, warn: push, error: push };
}

async function rejection(p: Promise<unknown>): Promise<MailError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(MailError);
  return err as MailError;
}

describe('SMTP mailer', () => {
  let smtp: TestSmtp;
  let mailer: Mailer;
  let dataDir: string;

  beforeAll(async () => {
    smtp = await startTestSmtp();
    dataDir = await mkdtemp(join(tmpdir(), 'lms-mailer-'));
    mailer = createMailer({ SMTP_URL: smtp.url, MAIL_FROM, DATA_DIR: dataDir }, recordingLog());
  });

  afterAll(async () => {
    await mailer?.close();
    await smtp?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('delivers subject, text, html, Message-ID, extra headers, with From = MAIL_FROM', async () => {
    const result = await mailer.send({
      to: 'Ada Student <ada@school.test>',
      subject: 'New grade in Algebra — 95 %',
      text: 'Your quiz was graded.',
      html: '<p>Your quiz was <b>graded</b>.</p>',
      messageId: '<delivery-0001@lms>',
      headers: { 'X-LMS-Delivery': 'delivery-0001' },
    });
    expect(result.messageId).toBe('<delivery-0001@lms>');
    const [mail] = await smtp.waitFor(1);
    expect(mail.subject).toBe('New grade in Algebra — 95 %');
    expect(mail.text?.trim()).toBe('Your quiz was graded.');
    expect(mail.html).toContain('<p>Your quiz was <b>graded</b>.</p>');
    expect(mail.messageId).toBe('<delivery-0001@lms>');
    expect(mail.from?.value).toEqual([{ name: 'LMS Test', address: 'no-reply@lms.test' }]);
    const to = Array.isArray(mail.to) ? mail.to[0] : mail.to;
    expect(to?.value).toEqual([{ name: 'Ada Student', address: 'ada@school.test' }]);
    expect(mail.headers.get('x-lms-delivery')).toBe('delivery-0001');
  });

  it('sends text-only mail and reports the generated Message-ID', async () => {
    const before = smtp.messages.length;
    const { messageId } = await mailer.send({ to: 'bob@school.test', subject: 'Plain', text: 'Just text' });
    expect(messageId).toMatch(/^<.+@.+>$/);
    const mail = (await smtp.waitFor(before + 1))[before];
    expect(mail.messageId).toBe(messageId);
    expect(mail.html).toBe(false);
  });

  it('a recipient the server refuses with 550 is a permanent invalid_address failure', async () => {
    smtp.reject('gone@school.test');
    const err = await rejection(mailer.send({ to: 'gone@school.test', subject: 's', text: 't' }));
    expect(err).toMatchObject({ permanent: true, reason: 'invalid_address' });
    expect(err.message).toMatch(/550/);
    // The pooled connection survives the refusal: the next message goes through.
    await expect(mailer.send({ to: 'carol@school.test', subject: 'after', text: 't' })).resolves.toHaveProperty('messageId');
  });

  it('an address that is not one (no @, a list, header injection) fails permanently before any SMTP traffic', async () => {
    const before = smtp.messages.length;
    for (const to of ['not-an-address', 'a@school.test, b@school.test', 'a@school.test\r\nBcc: x@evil.test', '']) {
      const err = await rejection(mailer.send({ to, subject: 's', text: 't' }));
      expect(err).toMatchObject({ permanent: true, reason: 'invalid_address' });
    }
    expect(smtp.messages.length).toBe(before);
  });

  it('a closed port is a transient smtp_unavailable failure', async () => {
    const probe = createServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const { port } = probe.address() as { port: number };
    probe.close();
    await once(probe, 'close');
    const down = createMailer({ SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM, DATA_DIR: dataDir }, recordingLog());
    try {
      const err = await rejection(down.send({ to: 'ada@school.test', subject: 's', text: 't' }));
      expect(err).toMatchObject({ permanent: false, reason: 'smtp_unavailable' });
    } finally {
      await down.close();
    }
  });

  it('describes where mail goes without the credentials', () => {
    expect(mailer.describe()).toBe(smtp.url);
    const withCredentials = createMailer({ SMTP_URL: 'smtps://user:s3cret@mail.example.org:465', MAIL_FROM, DATA_DIR: dataDir }, recordingLog());
    expect(withCredentials.describe()).toBe('smtps://mail.example.org:465');
    return withCredentials.close();
  });
});

describe('SMTP failures as MailError (RFC 5321 reply classes)', () => {
  const where = 'smtp://mail.test';
  it.each([
    [{ code: 'EENVELOPE', responseCode: 550, command: 'RCPT TO' }, true, 'invalid_address'],
    [{ code: 'EENVELOPE', responseCode: 553, command: 'RCPT TO' }, true, 'invalid_address'],
    [{ code: 'EENVELOPE', command: 'API' }, true, 'invalid_address'],
    [{ code: 'EENVELOPE', responseCode: 550, command: 'MAIL FROM' }, true, 'smtp_rejected'],
    [{ code: 'EMESSAGE', responseCode: 554, command: 'DATA' }, true, 'smtp_rejected'],
    [{ code: 'EMESSAGE', responseCode: 552, command: 'DATA' }, true, 'smtp_rejected'],
    [{ code: 'EENVELOPE', responseCode: 450, command: 'RCPT TO' }, false, 'smtp_unavailable'],
    [{ code: 'EMESSAGE', responseCode: 451, command: 'DATA' }, false, 'smtp_unavailable'],
    [{ code: 'EPROTOCOL', responseCode: 503 }, false, 'smtp_unavailable'],
    [{ code: 'ECONNECTION', responseCode: 421 }, false, 'smtp_unavailable'],
    [{ code: 'ETIMEDOUT' }, false, 'smtp_unavailable'],
    [{ code: 'ESOCKET' }, false, 'smtp_unavailable'],
    [{ code: 'EAUTH', responseCode: 535 }, false, 'smtp_unavailable'],
  ])('%o → permanent %s, %s', (failure, permanent, reason) => {
    const err = toMailError(Object.assign(new Error('failed'), failure), where);
    expect(err).toMatchObject({ permanent, reason });
  });
});

describe('mailbox mailer (no SMTP_URL)', () => {
  let dataDir: string;
  afterEach(async () => {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('writes each message as a parseable .eml file under DATA_DIR/mailbox and logs a line', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'lms-mailbox-'));
    const log = recordingLog();
    const mailer = createMailer({ SMTP_URL: undefined, MAIL_FROM, DATA_DIR: dataDir }, log);
    expect(mailer.describe()).toBe(`mailbox directory ${join(dataDir, 'mailbox')}`);
    await mailer.send({ to: 'ada@school.test', subject: 'First', text: 'one', html: '<p>one</p>', messageId: '<d1@lms>' });
    await mailer.send({ to: 'bob@school.test', subject: 'Second', text: 'two' });
    await mailer.close();

    const files = (await readdir(join(dataDir, 'mailbox'))).sort();
    expect(files).toHaveLength(2);
    for (const f of files) expect(f).toMatch(/^\d{8}T\d{9}Z-\d+\.eml$/);
    const parsed = await Promise.all(files.map(async (f) => simpleParser(await readFile(join(dataDir, 'mailbox', f)))));
    const first = parsed.find((m) => m.subject === 'First')!;
    expect(first.messageId).toBe('<d1@lms>');
    expect(first.text?.trim()).toBe('one');
    expect(first.html).toContain('<p>one</p>');
    expect(first.from?.value).toEqual([{ name: 'LMS Test', address: 'no-reply@lms.test' }]);
    expect(parsed.map((m) => m.subject).sort()).toEqual(['First', 'Second']);
    expect(log.lines).toHaveLength(2);
    expect(log.lines[0]).toContain('ada@school.test');
    expect(log.lines[0]).toContain(join(dataDir, 'mailbox'));
  });

  it('refuses an invalid address permanently and writes nothing', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'lms-mailbox-'));
    const mailer = createMailer({ SMTP_URL: undefined, MAIL_FROM, DATA_DIR: dataDir }, recordingLog());
    const err = await rejection(mailer.send({ to: 'nobody', subject: 's', text: 't' }));
    expect(err).toMatchObject({ permanent: true, reason: 'invalid_address' });
    await expect(readdir(join(dataDir, 'mailbox'))).rejects.toThrow(/ENOENT/);
  });
});
