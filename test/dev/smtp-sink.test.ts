/**
 * The development SMTP sink (`lms start` without SMTP_URL): real SMTP in, one .eml file out.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { afterEach, describe, expect, it } from 'vitest';
import { startSmtpSink, type SmtpSink } from '../../src/dev/smtp-sink.js';
import { createMailer, MailError, type Mailer } from '../../src/platform/mail/mailer.js';
import { silentLog } from '../helpers/app.js';

let dir: string | undefined;
let sink: SmtpSink | undefined;
let mailer: Mailer | undefined;

afterEach(async () => {
  await mailer?.close();
  await sink?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  mailer = sink = dir = undefined;
});

async function waitForFiles(path: string, n: number): Promise<string[]> {
  for (let i = 0; i < 100; i++) {
    const files = await readdir(path).catch(() => [] as string[]);
    if (files.length >= n) return files.sort();
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`expected ${n} file(s) in ${path}`);
}

describe('SMTP sink', () => {
  it('stores each message it receives as <dir>/<timestamp>-<n>.eml', async () => {
    dir = await mkdtemp(join(tmpdir(), 'lms-sink-'));
    sink = await startSmtpSink({ dir: join(dir, 'mailbox') });
    expect(sink.url).toBe(`smtp://127.0.0.1:${sink.port}`);
    expect(sink.dir).toBe(join(dir, 'mailbox'));
    mailer = createMailer({ SMTP_URL: sink.url, MAIL_FROM: 'LMS <no-reply@lms.test>', DATA_DIR: dir }, silentLog);
    await mailer.send({ to: 'ada@school.test', subject: 'Welcome', text: 'Hello Ada', html: '<p>Hello Ada</p>', messageId: '<welcome-1@lms>' });
    await mailer.send({ to: 'bob@school.test', subject: 'Reminder', text: 'Hello Bob' });

    // The SMTP reply (250) comes after the file is written.
    const files = await waitForFiles(sink.dir, 2);
    expect(files).toHaveLength(2);
    for (const f of files) expect(f).toMatch(/^\d{8}T\d{9}Z-\d+\.eml$/);
    const mails = await Promise.all(files.map(async (f) => simpleParser(await readFile(join(sink!.dir, f)))));
    const welcome = mails.find((m) => m.subject === 'Welcome')!;
    expect(welcome.messageId).toBe('<welcome-1@lms>');
    expect(welcome.text?.trim()).toBe('Hello Ada');
    expect(welcome.html).toContain('<p>Hello Ada</p>');
    expect(welcome.from?.value[0]?.address).toBe('no-reply@lms.test');
    expect(mails.map((m) => m.subject).sort()).toEqual(['Reminder', 'Welcome']);
  });

  it('refuses a message over its size limit with 552 (a permanent failure) and stores nothing', async () => {
    dir = await mkdtemp(join(tmpdir(), 'lms-sink-'));
    sink = await startSmtpSink({ dir: join(dir, 'mailbox'), maxBytes: 2000 });
    mailer = createMailer({ SMTP_URL: sink.url, MAIL_FROM: 'LMS <no-reply@lms.test>', DATA_DIR: dir }, silentLog);
    const err = await mailer.send({ to: 'ada@school.test', subject: 'Big', text: 'x'.repeat(10_000) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MailError);
    expect(err).toMatchObject({ permanent: true, reason: 'smtp_rejected' });
    expect(await readdir(sink.dir).catch(() => [])).toEqual([]);
  });

  it('listens on loopback only', async () => {
    await expect(startSmtpSink({ dir: tmpdir(), host: '0.0.0.0' })).rejects.toThrow(/loopback/);
  });
});
