/**
 * Notifications benchmark, on PostgreSQL:
 *
 *   DATABASE_URL=postgres://… npx tsx bench/notifications-bench.ts
 *
 * 1. Fan-out: one notify() of LIVE_CLASS_RECORDING_READY to 10,000 recipients (BENCH_FANOUT)
 *    inside a transaction, timed from the call to the commit; BENCH_ROUNDS rounds (default 3),
 *    the median reported. Target: under 2 s.
 * 2. In-app delivery alone: notify() of BADGE_EARNED (in-app only by default: its e-mail and
 *    push rows are SKIPPED) to BENCH_INAPP recipients (default 10,000), then the worker's
 *    `notifications.deliver` jobs drained by one in-process worker; reports in-app rows/s (each
 *    job marks its batch's in-app rows SENT in one UPDATE), with no SMTP in the way.
 * 3. Delivery: notify() of ENROLL_WELCOME (in-app + e-mail) to BENCH_DELIVERY recipients
 *    (default 2,000), then the worker's `notifications.deliver` jobs drained by one in-process
 *    worker (WORKER_CONCURRENCY jobs at a time) against a real SMTP sink on loopback
 *    (smtp-server, messages written as .eml files). Reports in-app rows/s (the batch UPDATE)
 *    and e-mails/s (SMTP round trips through nodemailer's pool). The CRM is a stub that knows
 *    every recipient, so the rate is the worker's and the SMTP path's, not the simulator's.
 *
 * Rows of earlier runs (institution `inst_bench_notify`) are deleted first. Results are
 * printed and written to bench/results/notifications-<timestamp>.json.
 */
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { rawRows } from '../src/platform/db/client.js';
import { loadConfig } from '../src/config.js';
import { createDeps } from '../src/platform/bootstrap.js';
import { openDatabase } from '../src/platform/db/client.js';
import { systemClock } from '../src/platform/clock.js';
import { Worker } from '../src/platform/queue/queue.js';
import { notify } from '../src/modules/notifications/notify.js';
import { notificationsJobs } from '../src/modules/notifications/notifications.jobs.js';
import { startSmtpSink } from '../src/dev/smtp-sink.js';
import type { CrmClient } from '../src/platform/crm/types.js';

const INSTITUTION = 'inst_bench_notify';
const SLUG = 'benchnotify';
const FANOUT = Number(process.env.BENCH_FANOUT ?? 10_000);
const DELIVERY = Number(process.env.BENCH_DELIVERY ?? 2_000);
const IN_APP = Number(process.env.BENCH_INAPP ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** A CRM that knows everyone: each person's e-mail is `<id>@bench.example`. */
function stubCrm(): CrmClient {
  const person = (id: string) => ({ id, firstName: 'Bench', lastName: id, email: `${id}@bench.example`, contactType: 'CONTACT_STUDENT', status: 'ACTIVE', role: 'TEACHER' });
  const fail = () => Promise.reject(new Error('not used by this benchmark'));
  return {
    getContact: async (_s, id) => person(id),
    getContactOrNull: async (_s, id) => person(id),
    getUser: async (_s, id) => person(id),
    getUserOrNull: async (_s, id) => person(id),
    lookupInstitution: async (id) => ({ id, slug: SLUG, name: 'Bench' }),
    displayNameOrNull: async (_s, id) => id,
    getStudent: fail,
    getStudentOrNull: async () => null,
    getStudentParents: fail,
    getClasses: fail,
    getSectionRoster: fail,
    getFeeStatus: fail,
    getAttendance: fail,
    getParentChildren: fail,
    pushCompletion: fail,
  };
}

async function main() {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl?.startsWith('postgres')) throw new Error('set DATABASE_URL to a PostgreSQL database (postgres://…)');
  const mailDir = await mkdtemp(join(tmpdir(), 'lms-bench-mail-'));
  const sink = await startSmtpSink({ dir: mailDir });
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    AUTH_SECRET: 'bench-auth-secret-0123456789abcdef',
    CRM_API_KEY: 'bench',
    SMTP_URL: sink.url,
    PUBLIC_BASE_URL: 'http://lms.bench',
  });
  const migrator = await openDatabase({ databaseUrl, dataDir: config.DATA_DIR });
  await migrator.migrate();
  await migrator.close();
  const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
  const deps = await createDeps(config, { crm: stubCrm(), log: quiet });
  const { db } = deps.database;
  const cleanup = async () => {
    await db.execute(sql`delete from notifications where institution_id = ${INSTITUTION}`);
    await db.execute(sql`delete from jobs where institution_id = ${INSTITUTION}`);
  };
  await db.execute(
    sql`insert into institutions (id, slug, name, settings, created_at, updated_at) values (${INSTITUTION}, ${SLUG}, 'Bench', '{}'::jsonb, now(), now()) on conflict (id) do nothing`,
  );
  await cleanup();
  const started = { at: new Date().toISOString(), loadavg: loadavg() };

  // 1. Fan-out: time to commit.
  const fanout: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const recipients = Array.from({ length: FANOUT }, (_, i) => `c_bench_${round}_${i}`);
    const t0 = performance.now();
    const summary = await db.transaction((tx) =>
      notify(
        { db: tx, clock: systemClock, config, inTx: true },
        { institutionId: INSTITUTION, key: 'LIVE_CLASS_RECORDING_READY', recipients, metadata: { title: 'Week 1', courseTitle: 'Bench' } },
      ),
    );
    fanout.push(performance.now() - t0);
    if (summary.rows !== FANOUT * 3) throw new Error(`fan-out wrote ${summary.rows} rows`);
    console.log(`fan-out round ${round + 1}: ${FANOUT} recipients, ${summary.rows} rows, ${summary.batches} jobs in ${fanout[round]!.toFixed(0)} ms`);
  }
  await cleanup();

  // 2. In-app delivery alone.
  const inAppRecipients = Array.from({ length: IN_APP }, (_, i) => `c_inapp_${i}`);
  const inAppSummary = await notify(
    { db, clock: systemClock, config },
    { institutionId: INSTITUTION, key: 'BADGE_EARNED', recipients: inAppRecipients, metadata: { badgeName: 'Bench' } },
  );
  const inAppWorker = new Worker({ db, clock: systemClock, handlers: notificationsJobs(deps), batchSize: config.WORKER_CONCURRENCY, log: quiet });
  const tInApp = performance.now();
  await inAppWorker.drain(10_000);
  const inAppMs = performance.now() - tInApp;
  const [inAppSent] = await rawRows<{ n: number }>(
    db,
    sql`select count(*)::int as n from notifications where institution_id = ${INSTITUTION} and channel = 'IN_APP' and status = 'SENT'`,
  );
  if (inAppSent?.n !== IN_APP) throw new Error(`in-app delivery sent ${inAppSent?.n} of ${IN_APP} rows`);
  console.log(`in-app only: ${IN_APP} rows in ${inAppSummary.batches} jobs delivered in ${inAppMs.toFixed(0)} ms`);
  await cleanup();

  // 3. Delivery against the SMTP sink.
  const recipients = Array.from({ length: DELIVERY }, (_, i) => `c_deliver_${i}`);
  await notify({ db, clock: systemClock, config }, { institutionId: INSTITUTION, key: 'ENROLL_WELCOME', recipients, metadata: { courseTitle: 'Bench' } });
  const worker = new Worker({ db, clock: systemClock, handlers: notificationsJobs(deps), batchSize: config.WORKER_CONCURRENCY, log: quiet });
  const t0 = performance.now();
  let inAppDoneAt = 0;
  const watch = setInterval(async () => {
    const [row] = await rawRows<{ n: number }>(
      db,
      sql`select count(*)::int as n from notifications where institution_id = ${INSTITUTION} and channel = 'IN_APP' and status = 'PENDING'`,
    );
    if (row?.n === 0 && !inAppDoneAt) inAppDoneAt = performance.now();
  }, 50);
  await worker.drain(10_000);
  clearInterval(watch);
  const elapsed = performance.now() - t0;
  const counts = await rawRows<{ channel: string; status: string; n: number }>(
    db,
    sql`select channel, status, count(*)::int as n from notifications where institution_id = ${INSTITUTION} group by channel, status order by channel, status`,
  );
  const sentMail = counts.find((c) => c.channel === 'email' && c.status === 'SENT')?.n ?? 0;
  await cleanup();
  await deps.mailer.close();
  await sink.close();
  await deps.database.close();
  await rm(mailDir, { recursive: true, force: true });

  const result = {
    ...started,
    fanout: { recipients: FANOUT, roundsMs: fanout.map((x) => Math.round(x)), medianMs: Math.round(median(fanout)), targetMs: 2000 },
    inAppDelivery: {
      recipients: IN_APP,
      jobs: inAppSummary.batches,
      concurrency: config.WORKER_CONCURRENCY,
      elapsedMs: Math.round(inAppMs),
      rowsPerSecond: Math.round((IN_APP / inAppMs) * 1000),
    },
    delivery: {
      recipients: DELIVERY,
      concurrency: config.WORKER_CONCURRENCY,
      elapsedMs: Math.round(elapsed),
      // In-app rows of this mixed run wait for their batch's job, which also sends its e-mails.
      inAppPerSecondMixed: Math.round((DELIVERY / ((inAppDoneAt || performance.now()) - t0)) * 1000),
      emailsSent: sentMail,
      emailsPerSecond: Math.round((sentMail / elapsed) * 1000),
      rows: counts,
    },
    loadavgAfter: loadavg(),
  };
  console.log(JSON.stringify(result, null, 2));
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(join(RESULTS_DIR, `notifications-${started.at.replace(/[:.]/g, '-')}.json`), JSON.stringify(result, null, 2));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
