/**
 * Live-session recording webhook benchmark (issue 12):
 *
 *   npm run bench:live                                   # embedded PGlite in a temp directory
 *   BENCH_DATABASE_URL=postgres://… npm run bench:live   # PostgreSQL
 *
 * The app listens on loopback; one course has BENCH_ENROLLMENTS (default 5,000) ACTIVE
 * enrollments. Each round puts a fresh session of that course in PROCESSING and POSTs a signed
 * `recording_uploaded` webhook over HTTP, then measures:
 * - the webhook's answer (target: under 100 ms);
 * - the time from sending it until all the course's LIVE_CLASS_RECORDING_READY rows exist
 *   (one IN_APP row per enrollment, three rows each), written by the `liveSessions.recordingReady`
 *   job of an in-process worker polling every WORKER_POLL_MS (default 1000 ms, as in production);
 * - a replay of the same webhook (ignored, nothing written).
 * BENCH_WARMUP rounds (default 1) run first and are not recorded.
 * Only that job is run: delivery jobs stay queued, so the rows measured are the fan-out's.
 * Results are printed and written to bench/results/live-webhook-<timestamp>.json.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { request } from 'undici';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDeps } from '../src/platform/bootstrap.js';
import { rawRows } from '../src/platform/db/client.js';
import { systemClock } from '../src/platform/clock.js';
import { hmacSha256Hex } from '../src/platform/auth/signatures.js';
import { newId } from '../src/platform/ids.js';
import { Worker } from '../src/platform/queue/queue.js';
import { liveSessionsJobs } from '../src/modules/live-sessions/live-sessions.jobs.js';

const INSTITUTION = 'inst_bench_live';
const SLUG = 'benchlive';
const ENROLLMENTS = Number(process.env.BENCH_ENROLLMENTS ?? 5_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** Unrecorded rounds first: the first request of a process pays for JIT and cold query plans. */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1);
const SECRET = 'bench-recording-webhook-secret';
const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round1 = (x: number) => Math.round(x * 10) / 10;

async function main() {
  const databaseUrl = process.env.BENCH_DATABASE_URL;
  const dataDir = await mkdtemp(join(tmpdir(), 'lms-bench-live-'));
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATA_DIR: dataDir,
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    AUTH_SECRET: 'bench-auth-secret-0123456789abcdef',
    PUBLIC_BASE_URL: 'http://lms.bench',
    RECORDING_WEBHOOK_SECRET: SECRET,
    RATE_LIMIT_DISABLED: 'true',
    WORKER_POLL_MS: process.env.WORKER_POLL_MS ?? '1000',
  });
  const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };
  const deps = await createDeps(config, { log: quiet });
  await deps.database.migrate();
  const { db } = deps.database;
  const app = await buildApp(deps, { logger: false });
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  const worker = new Worker({ db, clock: systemClock, handlers: liveSessionsJobs(deps), pollMs: config.WORKER_POLL_MS, batchSize: config.WORKER_CONCURRENCY, log: quiet });

  // One course with ENROLLMENTS active students (set-based; earlier runs' rows removed first).
  const courseId = `bench_live_course`;
  await db.execute(sql`delete from live_sessions where institution_id = ${INSTITUTION}`);
  await db.execute(sql`delete from notifications where institution_id = ${INSTITUTION}`);
  await db.execute(sql`delete from jobs where institution_id = ${INSTITUTION}`);
  await db.execute(sql`delete from enrollments where institution_id = ${INSTITUTION}`);
  await db.execute(sql`delete from courses where institution_id = ${INSTITUTION}`);
  await db.execute(
    sql`insert into institutions (id, slug, name, settings, created_at, updated_at) values (${INSTITUTION}, ${SLUG}, 'Bench', '{}'::jsonb, now(), now()) on conflict (id) do nothing`,
  );
  await db.execute(
    sql`insert into courses (id, institution_id, title, owner_id, status, created_at, updated_at) values (${courseId}, ${INSTITUTION}, 'Bench course', 'u_bench', 'PUBLISHED', now(), now())`,
  );
  await db.execute(sql`insert into enrollments (id, institution_id, course_id, student_id, status, enrolled_at, updated_at)
    select 'bench_enr_' || g, ${INSTITUTION}, ${courseId}, 'c_bench_' || g, 'ACTIVE', now(), now() from generate_series(1, ${ENROLLMENTS}) g`);
  worker.start();

  const rounds: Array<{ responseMs: number; rowsMs: number; replayMs: number; rows: number }> = [];
  for (let r = -WARMUP; r < ROUNDS; r++) {
    const id = newId();
    const roomName = `lms-${SLUG}-${id}`;
    await db.execute(sql`insert into live_sessions (institution_id, id, course_id, title, scheduled_at, duration_minutes, host_id, created_by, status, room_name,
        started_at, recording_status, recording_started_at, recording_stopped_at, created_at, updated_at)
      values (${INSTITUTION}, ${id}, ${courseId}, ${`Bench class ${r + 1}`}, now(), 60, 'u_bench', 'u_bench', 'LIVE', ${roomName}, now(), 'PROCESSING', now(), now(), now(), now())`);
    const body = JSON.stringify({ event: 'recording_uploaded', sessionId: id, roomName, recordingUrl: `https://recordings.bench/${id}.mp4`, duration: 3600 });
    const headers = { 'content-type': 'application/json', 'x-recorder-signature': `sha256=${hmacSha256Hex(SECRET, body)}` };

    const t0 = performance.now();
    const res = await request(`${base}/api/webhooks/meet-recording`, { method: 'POST', headers, body });
    const answer = (await res.body.json()) as { data: { status: string; ignored: boolean } };
    const responseMs = performance.now() - t0;
    if (res.statusCode !== 200 || answer.data.status !== 'READY' || answer.data.ignored) throw new Error(`webhook answered ${res.statusCode} ${JSON.stringify(answer)}`);

    let rows = 0;
    const deadline = Date.now() + 120_000;
    while (rows < ENROLLMENTS) {
      if (Date.now() > deadline) throw new Error(`only ${rows} of ${ENROLLMENTS} rows after 120 s`);
      await new Promise((done) => setTimeout(done, 10));
      const [row] = await rawRows<{ n: number }>(
        db,
        sql`select count(*)::int as n from notifications where institution_id = ${INSTITUTION} and key = 'LIVE_CLASS_RECORDING_READY'
            and channel = 'IN_APP' and metadata->>'sessionId' = ${id}`,
      );
      rows = Number(row?.n ?? 0);
    }
    const rowsMs = performance.now() - t0;

    const t1 = performance.now();
    const replay = await request(`${base}/api/webhooks/meet-recording`, { method: 'POST', headers, body });
    const replayed = (await replay.body.json()) as { data: { ignored: boolean } };
    const replayMs = performance.now() - t1;
    if (!replayed.data.ignored) throw new Error('the replay was not ignored');
    if (r < 0) {
      console.log(`warm-up: webhook answered in ${responseMs.toFixed(1)} ms; all ${rows} in-app rows after ${rowsMs.toFixed(0)} ms (not recorded)`);
      continue;
    }
    rounds.push({ responseMs: round1(responseMs), rowsMs: Math.round(rowsMs), replayMs: round1(replayMs), rows });
    console.log(`round ${r + 1}: webhook answered in ${responseMs.toFixed(1)} ms; all ${rows} in-app rows after ${rowsMs.toFixed(0)} ms; replay ${replayMs.toFixed(1)} ms`);
  }

  const [total] = await rawRows<{ n: number }>(db, sql`select count(*)::int as n from notifications where institution_id = ${INSTITUTION}`);
  const result = {
    at: new Date().toISOString(),
    driver: deps.database.driver,
    enrollments: ENROLLMENTS,
    workerPollMs: config.WORKER_POLL_MS,
    warmupRounds: WARMUP,
    loadavg: loadavg(),
    rounds,
    medianResponseMs: median(rounds.map((x) => x.responseMs)),
    maxResponseMs: Math.max(...rounds.map((x) => x.responseMs)),
    medianRowsMs: median(rounds.map((x) => x.rowsMs)),
    medianReplayMs: median(rounds.map((x) => x.replayMs)),
    notificationRowsWritten: Number(total?.n ?? 0),
    targetResponseMs: 100,
  };
  console.log(JSON.stringify(result, null, 2));
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(join(RESULTS_DIR, `live-webhook-${result.at.replace(/[:.]/g, '-')}.json`), `${JSON.stringify(result, null, 2)}\n`);

  await worker.stop();
  await app.close();
  await deps.database.close();
  await rm(dataDir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
