/**
 * A real `lms worker` child process killed (SIGKILL) in the middle of a delivery batch: the
 * e-mails it had sent stay sent, a second worker takes the job over when the lease expires,
 * and every e-mail arrives exactly once. Needs PostgreSQL (two processes share the database),
 * so it runs in CI's PostgreSQL pass and is skipped on PGlite.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { sql } from 'drizzle-orm';
import { SMTPServer } from 'smtp-server';
import { simpleParser } from 'mailparser';
import { openDatabase, rawRows, type Database } from '../../src/platform/db/client.js';
import { systemClock } from '../../src/platform/clock.js';
import { newId } from '../../src/platform/ids.js';
import { startCrmSim, type CrmSim } from '../../src/dev/crm-sim/server.js';
import { notify } from '../../src/modules/notifications/notify.js';
import { withDatabase } from '../helpers/database.js';

const baseUrl = process.env.DATABASE_URL;
const LMS = fileURLToPath(new URL('../../bin/lms.js', import.meta.url));
const STUDENTS = Array.from({ length: 30 }, (_, i) => `c_demo_stu_${String(i + 1).padStart(2, '0')}`);
const SMTP_DELAY_MS = 150;

/**
 * An SMTP server that answers each message after a delay, and keeps it only if the client is
 * still connected when it accepts: a message whose sender died before the 250 reply was never
 * delivered, as with a real mail server that sees the connection drop mid-transaction. The
 * message numbered `hold.at` is not answered until `hold.release()` (the test kills its sender
 * first), so the kill lands mid-send whatever the machine's load.
 */
async function slowSmtp() {
  const accepted: string[] = [];
  /** Messages whose data arrived (accepted or not yet answered). */
  const received = { count: 0 };
  let release: () => void = () => undefined;
  const released = new Promise<void>((r) => (release = r));
  const hold = { at: 9, release };
  const closed = new Set<string>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onClose(session) {
      closed.add(session.id);
    },
    onData(stream, session, callback) {
      const n = ++received.count;
      simpleParser(stream)
        .then(async (mail) => {
          await new Promise((r) => setTimeout(r, SMTP_DELAY_MS));
          if (n === hold.at) await released;
          if (!closed.has(session.id)) accepted.push(mail.messageId ?? '');
          callback();
        })
        .catch(callback);
    },
  });
  // The killed worker's connection drops mid-transaction, sometimes with a reset (when its
  // socket still held unread bytes); smtp-server reports that as a server error. Expected here;
  // any other server error is kept, and the test checks there is none.
  const errors: Error[] = [];
  server.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'ECONNRESET' && err.code !== 'EPIPE') errors.push(err);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as { port: number }).port;
  return { url: `smtp://127.0.0.1:${port}`, accepted, received, hold, errors, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe.skipIf(!baseUrl)('a worker killed mid-batch', () => {
  let dbName: string;
  let database: Database;
  let crmSim: CrmSim;
  let smtp: Awaited<ReturnType<typeof slowSmtp>>;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    dbName = `lms_kill_${newId().replace(/-/g, '')}`;
    const admin = new pg.Client({ connectionString: baseUrl });
    await admin.connect();
    await admin.query(`create database ${dbName}`);
    await admin.end();
    database = await openDatabase({ databaseUrl: withDatabase(baseUrl!, dbName), poolSize: 2 });
    await database.migrate();
    crmSim = await startCrmSim({ port: 0 });
    smtp = await slowSmtp();
  });

  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await smtp?.close();
    await crmSim?.close();
    await database?.close();
    const admin = new pg.Client({ connectionString: baseUrl });
    await admin.connect();
    await admin.query(`drop database if exists ${dbName} with (force)`);
    await admin.end();
  });

  const startWorker = () => {
    const child = spawn(process.execPath, [LMS, 'worker'], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DATABASE_URL: withDatabase(baseUrl!, dbName),
        AUTH_SECRET: 'worker-kill-test-secret-0123456789abcdef',
        CRM_BASE_DOMAIN: crmSim.baseDomain,
        CRM_PROTOCOL: crmSim.protocol,
        CRM_API_KEY: crmSim.apiKey,
        SMTP_URL: smtp.url,
        WORKER_LEASE_MS: '3000',
        WORKER_POLL_MS: '100',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    return child;
  };

  const sentRows = async () => (await rawRows<{ n: number }>(database.db, sql`select count(*)::int as n from notifications where channel = 'email' and status = 'SENT'`))[0]!.n;

  const waitFor = async (what: string, check: () => Promise<boolean> | boolean, timeoutMs = 45_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };

  it('loses nothing and sends nothing twice once another worker takes over', async () => {
    await notify(
      { db: database.db, clock: systemClock, config: { publicBaseUrl: 'http://lms.test' } },
      { institutionId: 'inst_demo', key: 'ENROLL_WELCOME', recipients: STUDENTS, metadata: { courseTitle: 'Biology' } },
    );
    const first = startWorker();
    // Kill it while the 9th e-mail waits for the server's answer (held back): the worker sends
    // one at a time and records each before the next, so the first 8 are recorded SENT by now.
    await waitFor('the first worker to be sending its 9th e-mail', () => smtp.received.count >= 9);
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    await new Promise((r) => setTimeout(r, SMTP_DELAY_MS));
    smtp.hold.release();
    await new Promise((r) => setTimeout(r, SMTP_DELAY_MS * 2));
    // The 9th was never accepted (its sender died first); the 8 before it are recorded SENT.
    expect(smtp.accepted).toHaveLength(8);
    expect(await sentRows()).toBe(8);

    startWorker();
    await waitFor('every e-mail row to be SENT', async () => (await sentRows()) === STUDENTS.length);
    await new Promise((r) => setTimeout(r, SMTP_DELAY_MS * 3));
    expect(smtp.accepted).toHaveLength(STUDENTS.length);
    expect(new Set(smtp.accepted).size).toBe(STUDENTS.length);
    const rows = await rawRows<{ id: string; status: string }>(database.db, sql`select id, status from notifications where channel = 'email'`);
    expect(new Set(smtp.accepted)).toEqual(new Set(rows.map((r) => `<${r.id}@lms>`)));
    const inApp = await rawRows<{ n: number }>(database.db, sql`select count(*)::int as n from notifications where channel = 'IN_APP' and status = 'SENT'`);
    expect(inApp[0]!.n).toBe(STUDENTS.length);
    expect(smtp.errors).toEqual([]);
  });
});
