/**
 * Growth scenario of GET /api/me/notes: `BENCH_DATABASE_URL=postgres://… npm run bench:growth`.
 *
 * For each size in BENCH_GROWTH_SIZES (default 100,10000,100000), bench/notes-scenario.ts
 * regenerates the data with the timed student holding that many notes in a table of
 * BENCH_NOTES_TOTAL notes (default 1,000,000; at least the size), then the app (bench/server.ts
 * app-pg, pinned to CPU 1 when it can, the load generator on CPU 0) is loaded with autocannon at
 * BENCH_CONNECTIONS (10) for BENCH_DURATION seconds (10) after BENCH_WARMUP seconds (2), on the
 * unfiltered first page and on `?search=mitochondria`. One line per size: req/s, p50 and p99 of
 * each. Flat is the target: neither the page (counter row, index walk of 20 rows) nor the search
 * (trigram GIN index bounded to the student's keys) should grow with the student's notes.
 * The lines are also written to bench/results/growth-<timestamp>.json.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { createHistogram } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { mintToken } from '../src/platform/auth/tokens.js';
import { prepareNotesScenario } from './notes-scenario.js';
import { canPin } from './pinning.js';
import { READY_PREFIX } from './server.js';

const DATABASE_URL = process.env.BENCH_DATABASE_URL;
const SIZES = (process.env.BENCH_GROWTH_SIZES ?? '100,10000,100000').split(',').map((s) => Number(s.trim()));
const TOTAL = Number(process.env.BENCH_NOTES_TOTAL ?? 1_000_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2);
const AUTH_SECRET = 'bench-auth-secret-0123456789abcdef';
const SERVER_FILE = fileURLToPath(new URL('./server.ts', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));

async function startApp(dataDir: string): Promise<{ url: string; child: ChildProcess }> {
  const nodeArgs = ['--import', 'tsx', SERVER_FILE, 'app-pg'];
  const pin = canPin();
  const [cmd, args] = pin ? ['taskset', ['-c', '1', process.execPath, ...nodeArgs]] : [process.execPath, nodeArgs];
  const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, BENCH_AUTH_SECRET: AUTH_SECRET, BENCH_DATA_DIR: dataDir } });
  if (pin) execFileSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`app-pg exited with ${code} before it was ready`)));
    lines.on('line', (line) => {
      if (line.startsWith(READY_PREFIX)) resolve((JSON.parse(line.slice(READY_PREFIX.length)) as { url: string }).url);
    });
  });
  return { url, child };
}

interface Timing {
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

async function time(url: string, headers: Record<string, string>, check: (body: unknown) => string | undefined): Promise<Timing> {
  const probe = await fetch(url, { headers });
  const problem = probe.status === 200 ? check(await probe.json()) : `status ${probe.status}`;
  if (problem) throw new Error(`${url}: ${problem}`);
  if (WARMUP > 0) await autocannon({ url, headers, connections: CONNECTIONS, duration: WARMUP });
  const histogram = createHistogram();
  const run = autocannon({ url, headers, connections: CONNECTIONS, duration: DURATION });
  run.on('response', (_c, _status, _bytes, ms) => histogram.record(Math.max(1, Math.round(ms * 1000))));
  const r = await run;
  const ms = (us: number) => Math.round(us) / 1000;
  return { requestsPerSec: Math.round(r.requests.average), p50Ms: ms(histogram.percentile(50)), p99Ms: ms(histogram.percentile(99)), errors: r.errors + r.timeouts + r.non2xx };
}

async function main() {
  if (!DATABASE_URL) {
    console.error('usage: BENCH_DATABASE_URL=postgres://… npm run bench:growth   (BENCH_GROWTH_SIZES=100,10000,100000 BENCH_NOTES_TOTAL=1000000)');
    process.exit(2);
  }
  if (SIZES.some((n) => !Number.isInteger(n) || n < 1)) throw new Error('BENCH_GROWTH_SIZES must be positive integers');
  const loadAverageAtStart = os.loadavg();
  console.log(
    `growth: sizes ${SIZES.join(', ')} in a table of ≥ ${TOTAL}, ${CONNECTIONS} connections, ${DURATION} s runs; load average ${loadAverageAtStart.map((n) => n.toFixed(2)).join(' ')}`,
  );
  const dataDir = await mkdtemp(join(os.tmpdir(), 'lms-growth-'));
  // The first generation migrates the database the app then runs on.
  const first = await prepareNotesScenario({ databaseUrl: DATABASE_URL, heavyStudentNotes: SIZES[0], totalNotes: Math.max(TOTAL, SIZES[0]!), log: () => undefined });
  const app = await startApp(dataDir);
  const lines: Array<{ studentNotes: number; totalNotes: number; generationSeconds: number; page: Timing; search: Timing }> = [];
  try {
    for (const [i, size] of SIZES.entries()) {
      const scenario =
        i === 0
          ? first
          : await prepareNotesScenario({ databaseUrl: DATABASE_URL, heavyStudentNotes: size, totalNotes: Math.max(TOTAL, size), migrate: false, log: () => undefined });
      const [page, search] = scenario.requests;
      const headers = { authorization: `Bearer ${await mintToken(AUTH_SECRET, page!.actor)}` };
      const pageTiming = await time(new URL(page!.path, app.url).toString(), headers, page!.check);
      const searchTiming = await time(new URL(search!.path, app.url).toString(), headers, search!.check);
      lines.push({ studentNotes: size, totalNotes: scenario.notes.total, generationSeconds: scenario.generationSeconds, page: pageTiming, search: searchTiming });
      console.log(
        `${size.toLocaleString('en').padStart(9)} notes of ${scenario.notes.total.toLocaleString('en')}: ` +
          `page p50 ${pageTiming.p50Ms} ms, p99 ${pageTiming.p99Ms} ms (${pageTiming.requestsPerSec} req/s); ` +
          `search p50 ${searchTiming.p50Ms} ms, p99 ${searchTiming.p99Ms} ms (${searchTiming.requestsPerSec} req/s, ${scenario.notes.studentMatchingSearch} match)` +
          (pageTiming.errors + searchTiming.errors > 0 ? `; ${pageTiming.errors + searchTiming.errors} failed` : ''),
      );
    }
  } finally {
    app.child.stdin!.end();
    app.child.kill('SIGTERM');
    if (app.child.exitCode === null) await once(app.child, 'exit');
    await rm(dataDir, { recursive: true, force: true });
  }
  const finishedAt = new Date();
  await mkdir(RESULTS_DIR, { recursive: true });
  const file = `${RESULTS_DIR}growth-${finishedAt.toISOString().replace(/[:.]/g, '-')}.json`;
  const report = {
    date: finishedAt.toISOString(),
    command: 'npm run bench:growth',
    settings: { connections: CONNECTIONS, durationSec: DURATION, warmupSec: WARMUP },
    machine: { cpus: os.availableParallelism(), cpuModel: os.cpus()[0]?.model, loadAverageAtStart, loadAverageAtEnd: os.loadavg() },
    lines,
  };
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(
    `load average at end ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}; results written to ${file}`,
  );
}

await main();
