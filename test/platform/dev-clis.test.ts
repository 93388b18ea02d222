/**
 * The development servers run as processes of their own (what the cluster harness in
 * bench/cluster/ runs): `lms smtp-sink` stores what it receives and `lms crm-sim` serves more
 * students and takes its fault switch from outside; both stop on SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createMailer } from '../../src/platform/mail/mailer.js';

const silentLog = { info: () => undefined, warn: () => undefined, error: () => undefined };
let child: ChildProcess | undefined;
let dir: string | undefined;

afterEach(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  if (dir) await rm(dir, { recursive: true, force: true });
  child = dir = undefined;
});

/** Spawns `lms <command>` and resolves with the first stdout match of `ready`. */
async function run(command: string, env: Record<string, string>, ready: RegExp): Promise<RegExpExecArray> {
  child = spawn(process.execPath, ['bin/lms.js', command], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    child!.stdout!.on('data', (d: Buffer) => {
      output += d;
      const m = ready.exec(output);
      if (m) resolve(m);
    });
    child!.stderr!.on('data', (d: Buffer) => (output += d));
    child!.once('exit', (code) => reject(new Error(`lms ${command} exited early (${code}):\n${output}`)));
  });
}

async function stops(): Promise<number | null> {
  const exited = once(child!, 'exit');
  child!.kill('SIGTERM');
  const [code] = await exited;
  return code as number | null;
}

describe('lms smtp-sink', () => {
  it('stores every message in SMTP_SINK_DIR as an .eml file, and exits 0 on SIGTERM', async () => {
    dir = await mkdtemp(join(tmpdir(), 'lms-sink-cli-'));
    const m = await run('smtp-sink', { SMTP_SINK_PORT: '0', SMTP_SINK_DIR: join(dir, 'mail') }, /SMTP sink on (smtp:\/\/127\.0\.0\.1:\d+), storing every message in (\S+)/);
    expect(m[2]).toBe(join(dir, 'mail'));
    const mailer = createMailer({ SMTP_URL: m[1], MAIL_FROM: 'LMS <no-reply@lms.test>', DATA_DIR: dir }, silentLog);
    try {
      await mailer.send({ to: 'ada@school.test', subject: 'Hello', text: 'Hi', messageId: '<cli-1@lms>' });
    } finally {
      await mailer.close();
    }
    const files = await readdir(join(dir, 'mail'));
    expect(files).toEqual([expect.stringMatching(/\.eml$/)]);
    expect((await simpleParser(await readFile(join(dir, 'mail', files[0])))).messageId).toBe('<cli-1@lms>');
    expect(await stops()).toBe(0);
  }, 60_000);
});

describe('lms crm-sim', () => {
  it('serves CRM_SIM_STUDENTS students and takes faults through PUT /_sim/fault', async () => {
    const m = await run('crm-sim', { CRM_SIM_PORT: '0', CRM_SIM_STUDENTS: '40', CRM_SIM_API_KEY: 'cli-key' }, /CRM simulator listening on http:\/\/(crm\.localhost:(\d+))/);
    const [, baseDomain, port] = m;
    const call = (path: string, opts: { host?: string; method?: 'GET' | 'PUT'; body?: unknown } = {}) =>
      request(`http://127.0.0.1:${port}${path}`, {
        method: opts.method ?? 'GET',
        headers: { host: opts.host ?? `demo.${baseDomain}`, authorization: 'Bearer cli-key', 'content-type': 'application/json' },
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      });
    const contact = await call('/api/lms/contact/c_demo_stu_40');
    expect(contact.statusCode).toBe(200);
    expect(((await contact.body.json()) as any).data.id).toBe('c_demo_stu_40');

    const set = await call('/_sim/fault', { host: baseDomain, method: 'PUT', body: { fault: 'error500' } });
    expect(set.statusCode).toBe(200);
    await set.body.dump();
    const failed = await call('/api/lms/contact/c_demo_stu_40');
    expect(failed.statusCode).toBe(500);
    await failed.body.dump();
    await (await call('/_sim/fault', { host: baseDomain, method: 'PUT', body: { fault: null } })).body.dump();
    const back = await call('/api/lms/contact/c_demo_stu_40');
    expect(back.statusCode).toBe(200);
    await back.body.dump();
    expect(await stops()).toBe(0);
  }, 60_000);
});

describe('lms token', () => {
  const token = (...args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const p = spawn(process.execPath, ['bin/lms.js', 'token', ...args], { env: { ...process.env, NODE_ENV: 'development' }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      p.stdout.on('data', (d: Buffer) => (stdout += d));
      p.stderr.on('data', (d: Buffer) => (stderr += d));
      p.once('exit', (code) => resolve({ code, stdout, stderr }));
    });

  it('prints a token whose claims are the flags, and answers an unknown flag or a bad value with the usage, not a stack trace', async () => {
    const ok = await token('--role', 'TEACHER', '--institution', 'inst_demo', '--sub', 'u_demo_teacher', '--expires-in', '60');
    expect(ok.code).toBe(0);
    const claims = JSON.parse(Buffer.from(ok.stdout.trim().split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ sub: 'u_demo_teacher', institutionId: 'inst_demo', role: 'TEACHER' });
    expect(claims.exp - claims.iat).toBe(60);

    const help = await token('--help');
    expect(help.code).toBe(1);
    expect(help.stderr).toContain("Unknown option '--help'");
    expect(help.stderr).toContain('usage: lms token --institution <id>');
    expect(help.stderr).not.toContain('    at ');

    const badExpiry = await token('--institution', 'inst_demo', '--contact', 'c_demo_stu_01', '--expires-in', 'soon');
    expect(badExpiry.code).toBe(1);
    expect(badExpiry.stderr).toContain('--expires-in must be a positive whole number of seconds');
    expect(badExpiry.stdout).toBe('');
  }, 60_000);
});
