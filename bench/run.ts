/**
 * HTTP benchmarks: `npm run bench` (= `tsx bench/run.ts`).
 *
 * Each target server (bench/server.ts) runs in its own child process; this process only
 * generates load with autocannon over loopback. On a machine with two or more cores and
 * `taskset`, the load generator is pinned to CPU 0 and the servers to CPU 1, so load
 * generator and server never share a core. Every scenario runs with the same settings: one
 * warm-up, then BENCH_ROUNDS measured runs, the scenarios interleaved round by round so a
 * slow spell of the machine does not land on one scenario only; the report gives the median
 * of the rounds. Besides client-side req/s and latency, each run records the server's own
 * CPU time per request, event-loop delay and memory, and the load generator's stalls (gaps
 * over 100 ms in its own event loop: the machine paused it).
 * Results are printed as a table (each scenario also as a ratio to the baseline, a bare
 * Fastify hello-world) and written to bench/results/<timestamp>.json.
 *
 * Settings (environment): BENCH_DURATION seconds per measured run (10), BENCH_WARMUP seconds
 * of warm-up (3), BENCH_ROUNDS (3), BENCH_CONNECTIONS (10), BENCH_PIN=0 to not pin CPUs,
 * BENCH_ONLY=a,b to run only some scenarios (the baseline always runs), BENCH_START_TIMEOUT
 * seconds a server may take to start (600).
 *
 * With BENCH_DATABASE_URL (a PostgreSQL URL; its database is filled with bench data) the run
 * also has the notes scenarios (bench/notes-scenario.ts): GET /api/me/notes and a search (also
 * as me-notes-search-uncached, on an app that counts the matches every time), for
 * a student with 10,000 notes in a table of 1,000,000 (BENCH_NOTES_TOTAL changes the total),
 * and unread-count-pg: GET /api/notifications/unread-count for a student with 15,000
 * notification rows (5,000 notifications, a third unread) in a table of 1,000,000
 * (bench/inbox-scenario.ts; BENCH_INBOX_TOTAL changes the total). Only the data of the
 * scenarios BENCH_ONLY names is generated. Each notes scenario runs next to its hand-written
 * floor (`floor-me-notes`, `floor-me-notes-search`: bench/floor.ts, a minimal Fastify + pg +
 * fast-jwt server running the page query and the exact count on the same data), and the table
 * gives our route's req/s as a ratio to the floor's (× floor) next to the ratio to bare Fastify.
 * `healthz` has a floor too (`floor-healthz`): bare Fastify sending the same answer, headers
 * included, so × floor there is the cost of our pipeline beyond the bytes it sends.
 *
 * Memory: each target's process.memoryUsage() (RSS, V8 heap, external, ArrayBuffers) is taken
 * once all targets have started (idle) and at the end of every measured run (under load).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { createHistogram } from 'node:perf_hooks';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon, { type Result } from 'autocannon';
import { mintToken, type MintInput } from '../src/platform/auth/tokens.js';
import { DEMO_STUDENT_ID } from '../src/dev/crm-sim/fixtures.js';
import { canPin } from './pinning.js';
import { READY_PREFIX, STATS_PREFIX, TARGETS, type ServerStats } from './server.js';
import { prepareNotesScenario } from './notes-scenario.js';
import { prepareInboxScenario } from './inbox-scenario.js';
import { studentClaims } from './claims.js';

// ---------------------------------------------------------------------------------------
// Scenarios. Add one by appending to SCENARIOS; `target` names a server in bench/server.ts.
// ---------------------------------------------------------------------------------------

interface ScenarioContext {
  /** The AUTH_SECRET the app target runs with. */
  authSecret: string;
  /** `Authorization` header with a freshly minted HS256 session token. */
  bearer(input: MintInput): Promise<Record<string, string>>;
}

interface Scenario {
  name: string;
  description: string;
  target: keyof typeof TARGETS;
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  headers?: (ctx: ScenarioContext) => Promise<Record<string, string>> | Record<string, string>;
  body?: unknown;
  /** Every response must have this status (default 200); checked before and after the run. */
  expectStatus?: number;
  /** A look at one response before the run; return a message when it is wrong. */
  check?: (body: any) => string | undefined;
  /** The scenario of the hand-written floor doing the same work (bench/floor.ts, or bare Fastify for healthz): reported as × floor. */
  floor?: string;
}

const BASELINE = 'hello-world';

const DEMO_STUDENT: MintInput = studentClaims();

const SCENARIOS: Scenario[] = [
  {
    name: BASELINE,
    description: 'bare Fastify, GET / → {"hello":"world"}',
    target: 'hello',
    path: '/',
    check: (b) => (b?.hello === 'world' ? undefined : 'unexpected body'),
  },
  {
    name: 'healthz',
    description: 'our app, GET /healthz (public, no database)',
    target: 'app',
    path: '/healthz',
    check: (b) => (b?.data?.status === 'ok' ? undefined : 'unexpected body'),
    floor: 'floor-healthz',
  },
  {
    name: 'floor-healthz',
    description: 'bare Fastify sending what our /healthz sends (same body, x-request-id, the four API security headers)',
    target: 'hello-headers',
    path: '/healthz',
    check: (b) => (b?.data?.status === 'ok' ? undefined : 'unexpected body'),
  },
  {
    name: 'auth-session',
    description: 'our app, GET /api/auth/session with a student bearer token (HS256 verify, no database)',
    target: 'app',
    path: '/api/auth/session',
    headers: (ctx) => ctx.bearer(DEMO_STUDENT),
    check: (b) => (b?.data?.personId === DEMO_STUDENT_ID ? undefined : 'session not decoded'),
  },
  {
    name: 'unread-count',
    description: 'our app, GET /api/notifications/unread-count (bearer, one indexed count; polled every 30 s per open tab)',
    target: 'app',
    path: '/api/notifications/unread-count',
    headers: (ctx) => ctx.bearer(DEMO_STUDENT),
    check: (b) => (typeof b?.data?.count === 'number' ? undefined : 'no count'),
  },
];

// ---------------------------------------------------------------------------------------

const DURATION = positive('BENCH_DURATION', 10);
const WARMUP = nonNegative('BENCH_WARMUP', 3);
const CONNECTIONS = positive('BENCH_CONNECTIONS', 10);
const ROUNDS = positive('BENCH_ROUNDS', 3);
const START_TIMEOUT = positive('BENCH_START_TIMEOUT', 600);
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',').map((s) => s.trim())) : undefined;
const AUTH_SECRET = 'bench-auth-secret-0123456789abcdef';
const SERVER_FILE = fileURLToPath(new URL('./server.ts', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));

function positive(name: string, fallback: number): number {
  const v = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number`);
  return v;
}
function nonNegative(name: string, fallback: number): number {
  const v = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name} must be a number ≥ 0`);
  return v;
}

const PIN = canPin();
const LOADGEN_CPU = '0';
const SERVER_CPU = '1';

interface RunningServer {
  url: string;
  child: ChildProcess;
  /** Starts the server's measurement window (CPU time, event-loop delay). */
  reset(): void;
  /** The server's numbers since the last reset. */
  stats(): Promise<ServerStats>;
}

async function startServer(target: string, dataDir: string): Promise<RunningServer> {
  const nodeArgs = ['--import', 'tsx', SERVER_FILE, target];
  const [cmd, args] = PIN ? ['taskset', ['-c', SERVER_CPU, process.execPath, ...nodeArgs]] : [process.execPath, nodeArgs];
  const child = spawn(cmd, args, {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, BENCH_AUTH_SECRET: AUTH_SECRET, BENCH_DATA_DIR: dataDir },
  });
  child.stdin!.on('error', () => undefined); // a server that died is reported by 'exit'
  const lines = createInterface({ input: child.stdout! });
  const statsWaiters: Array<(s: ServerStats) => void> = [];
  const ready = new Promise<RunningServer>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`target ${target} did not start within ${START_TIMEOUT} s (BENCH_START_TIMEOUT)`)), START_TIMEOUT * 1000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`target ${target} exited with code ${code} before it was ready`));
    });
    lines.on('line', (line) => {
      if (line.startsWith(READY_PREFIX)) {
        clearTimeout(timer);
        const { url } = JSON.parse(line.slice(READY_PREFIX.length)) as { url: string };
        resolve({
          url,
          child,
          reset: () => child.stdin!.write('reset\n'),
          stats: () =>
            new Promise<ServerStats>((res) => {
              statsWaiters.push(res);
              child.stdin!.write('stats\n');
            }),
        });
      } else if (line.startsWith(STATS_PREFIX)) {
        statsWaiters.shift()?.(JSON.parse(line.slice(STATS_PREFIX.length)) as ServerStats);
      } else {
        process.stderr.write(`[${target}] ${line}\n`);
      }
    });
  });
  try {
    return await ready;
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
}

async function stopServer(server: RunningServer) {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  const exited = once(server.child, 'exit');
  server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** One measured run of one scenario. */
interface RunResult {
  round: number;
  /** Mean and standard deviation of the per-second request counts. */
  requestsPerSec: { average: number; stddev: number; min: number; max: number };
  requestsTotal: number;
  /** Latency of every response, recorded by us at microsecond resolution, in milliseconds. */
  latencyMs: { mean: number; p50: number; p90: number; p99: number; max: number };
  /** autocannon's own latency histogram (2xx only, whole milliseconds), for comparison. */
  autocannonLatencyMs: { average: number; p50: number; p99: number; max: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  /** Responses with another status than the scenario expects. */
  unexpectedStatus: number;
  statusCodes: Record<string, number>;
  /** Measured inside the server process over the measured run. */
  server: ServerStats & { cpuUsPerRequest: number };
  /** Gaps over 100 ms in the load generator's own event loop during the run. */
  loadGeneratorStalls: { count: number; totalMs: number; maxMs: number };
}

interface Figures {
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  serverCpuUsPerRequest: number;
}

/** A scenario over all rounds: the median of each figure, and its ratio to the baseline's. */
interface Summary {
  name: string;
  description: string;
  target: string;
  method: string;
  path: string;
  median: Figures;
  /** Lowest and highest req/s of the rounds. */
  requestsPerSecRange: [number, number];
  ratioToBaseline?: Figures;
  /** With a floor scenario: this scenario's req/s and p50 as ratios to the floor's (req/s: higher is better). */
  floor?: string;
  ratioToFloor?: { requestsPerSec: number; p50Ms: number };
  errors: number;
  runs: RunResult[];
}

/** Prepared once per scenario: the request it sends, checked by one probe request. */
interface Prepared {
  scenario: Scenario;
  server: RunningServer;
  options: { url: string; method: string; headers: Record<string, string>; body: string | undefined };
}

function stallWatch() {
  const gaps: number[] = [];
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    if (now - last > 100) gaps.push(now - last);
    last = now;
  }, 10);
  return () => {
    clearInterval(timer);
    return {
      count: gaps.length,
      totalMs: Math.round(gaps.reduce((a, b) => a + b, 0)),
      maxMs: Math.round(Math.max(0, ...gaps)),
    };
  };
}

async function prepare(scenario: Scenario, server: RunningServer, ctx: ScenarioContext): Promise<Prepared> {
  const method = scenario.method ?? 'GET';
  const url = new URL(scenario.path, server.url).toString();
  const headers: Record<string, string> = { ...(await scenario.headers?.(ctx)) };
  let body: string | undefined;
  if (scenario.body !== undefined) {
    body = JSON.stringify(scenario.body);
    headers['content-type'] ??= 'application/json';
  }
  const expected = scenario.expectStatus ?? 200;

  // One request first: the scenario must do what it claims before we time it.
  const probe = await fetch(url, { method, headers, body });
  const probeText = await probe.text();
  if (probe.status !== expected) {
    throw new Error(`${scenario.name}: expected ${expected}, got ${probe.status}: ${probeText.slice(0, 300)}`);
  }
  const problem = scenario.check?.(probeText ? JSON.parse(probeText) : undefined);
  if (problem) throw new Error(`${scenario.name}: ${problem}: ${probeText.slice(0, 300)}`);
  return { scenario, server, options: { url, method, headers, body } };
}

const loadOptions = (p: Prepared) => ({ ...p.options, connections: CONNECTIONS, pipelining: 1, timeout: 10 });

async function warmUp(p: Prepared) {
  if (WARMUP > 0) await autocannon({ ...loadOptions(p), duration: WARMUP });
}

async function measure(p: Prepared, roundNo: number): Promise<RunResult> {
  const { scenario, server } = p;
  const expected = scenario.expectStatus ?? 200;
  const histogram = createHistogram();
  server.reset();
  const stalls = stallWatch();
  const run = autocannon({ ...loadOptions(p), duration: DURATION });
  run.on('response', (_client, _status, _bytes, ms) => histogram.record(Math.max(1, Math.round(ms * 1000))));
  const r: Result = await run;
  const loadGeneratorStalls = stalls();
  const serverStats = await server.stats();

  const us = (n: number) => round(n / 1000, 3);
  const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats).map(([code, s]) => [code, s.count]));
  const wrongStatus = Object.entries(statusCodes).filter(([code]) => Number(code) !== expected);
  const result: RunResult = {
    round: roundNo,
    requestsPerSec: {
      average: round(r.requests.average, 1),
      stddev: round(r.requests.stddev, 1),
      min: r.requests.min,
      max: r.requests.max,
    },
    requestsTotal: r.requests.total,
    latencyMs: {
      mean: us(histogram.mean),
      p50: us(histogram.percentile(50)),
      p90: us(histogram.percentile(90)),
      p99: us(histogram.percentile(99)),
      max: us(histogram.max),
    },
    autocannonLatencyMs: { average: r.latency.average, p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max },
    errors: r.errors,
    timeouts: r.timeouts,
    non2xx: r.non2xx,
    unexpectedStatus: wrongStatus.reduce((n, [, count]) => n + count, 0),
    statusCodes,
    server: { ...serverStats, cpuUsPerRequest: round((serverStats.cpuMs * 1000) / Math.max(1, r.requests.total), 1) },
    loadGeneratorStalls,
  };
  if (r.errors > 0 || r.timeouts > 0 || wrongStatus.length > 0) {
    console.error(`[bench] ${scenario.name}: ${r.errors} errors, ${r.timeouts} timeouts, status codes ${JSON.stringify(statusCodes)}`);
  }
  return result;
}

function median(values: number[]): number {
  const v = [...values].sort((a, b) => a - b);
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
}

function summarize(p: Prepared, runs: RunResult[]): Summary {
  const rps = runs.map((r) => r.requestsPerSec.average);
  return {
    name: p.scenario.name,
    description: p.scenario.description,
    target: p.scenario.target,
    method: p.options.method,
    path: p.scenario.path,
    median: {
      requestsPerSec: round(median(rps), 1),
      p50Ms: round(median(runs.map((r) => r.latencyMs.p50)), 3),
      p99Ms: round(median(runs.map((r) => r.latencyMs.p99)), 3),
      serverCpuUsPerRequest: round(median(runs.map((r) => r.server.cpuUsPerRequest)), 1),
    },
    requestsPerSecRange: [Math.min(...rps), Math.max(...rps)],
    floor: p.scenario.floor,
    errors: runs.reduce((n, r) => n + r.errors + r.timeouts + r.unexpectedStatus, 0),
    runs,
  };
}

function round(n: number, digits: number) {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

async function packageVersion(name: string): Promise<string> {
  const file = fileURLToPath(new URL(`../node_modules/${name}/package.json`, import.meta.url));
  return (JSON.parse(await readFile(file, 'utf8')) as { version: string }).version;
}

async function machine() {
  let osName = `${os.type()} ${os.release()}`;
  try {
    const release = await readFile('/etc/os-release', 'utf8');
    osName = /^PRETTY_NAME="?([^"\n]*)"?/m.exec(release)?.[1] ?? osName;
  } catch {
    // not Linux
  }
  return {
    cpus: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: round(os.totalmem() / 2 ** 30, 1),
    os: osName,
    node: process.version,
    fastify: await packageVersion('fastify'),
    autocannon: await packageVersion('autocannon'),
    loadAverageAtStart: os.loadavg().map((n) => round(n, 2)),
  };
}

function table(results: Summary[]): string {
  const x = (n: number | undefined) => (n === undefined ? '—' : n.toFixed(2));
  const rows = [
    ['scenario', 'req/s', '(range)', '× base', '× floor', 'p50 ms', '× base', 'p99 ms', '× base', 'server CPU µs/req', '× base', 'RSS MiB', 'failed'],
    ...results.map((r) => [
      r.name,
      r.median.requestsPerSec.toFixed(0),
      `${r.requestsPerSecRange[0].toFixed(0)}–${r.requestsPerSecRange[1].toFixed(0)}`,
      x(r.ratioToBaseline?.requestsPerSec),
      x(r.ratioToFloor?.requestsPerSec),
      r.median.p50Ms.toFixed(2),
      x(r.ratioToBaseline?.p50Ms),
      r.median.p99Ms.toFixed(2),
      x(r.ratioToBaseline?.p99Ms),
      r.median.serverCpuUsPerRequest.toFixed(0),
      x(r.ratioToBaseline?.serverCpuUsPerRequest),
      Math.max(...r.runs.map((run) => run.server.rssMiB)).toFixed(0),
      String(r.errors),
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const line = (row: string[]) => `| ${row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  const sep = `|${widths.map((w, i) => (i === 0 ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(rows[0]!), sep, ...rows.slice(1).map(line)].join('\n');
}

/** process.memoryUsage() in words; on the PGlite target, PGlite's WASM memory is one of the ArrayBuffers. */
const memoryLine = (m: ServerStats | undefined) =>
  m ? `RSS ${m.rssMiB} MiB, of which V8 heap ${m.heapTotalMiB} (used ${m.heapUsedMiB}), external ${m.externalMiB} (ArrayBuffers ${m.arrayBuffersMiB})` : '—';
/** The server stats of the last run of a target's last scenario. */
const lastMemory = (summaries: Summary[], target: string) =>
  summaries
    .filter((s) => s.target === target)
    .at(-1)
    ?.runs.at(-1)?.server;

const wanted = (name: string) => !ONLY || ONLY.has(name);

/** The PostgreSQL scenarios: generate the data of those wanted and add them to SCENARIOS. */
async function addPostgresScenarios() {
  const databaseUrl = process.env.BENCH_DATABASE_URL;
  if (!databaseUrl) {
    console.log('PostgreSQL scenarios skipped: set BENCH_DATABASE_URL to a PostgreSQL database to run them');
    return;
  }
  if (wanted('me-notes') || wanted('me-notes-search') || wanted('me-notes-search-uncached')) {
    const totalNotes = process.env.BENCH_NOTES_TOTAL ? positive('BENCH_NOTES_TOTAL', 1) : undefined;
    const notes = await prepareNotesScenario({ databaseUrl, totalNotes });
    console.log(
      `notes data: ${notes.notes.total} notes in all, ${notes.notes.student} of the timed student ` +
        `(${notes.notes.studentMatchingSearch} matching "${notes.searchWord}"), generated in ${notes.generationSeconds} s`,
    );
    for (const r of notes.requests) {
      const floor = `floor-${r.name}`;
      const common = { method: r.method, path: r.path, expectStatus: r.expectStatus, headers: (ctx: ScenarioContext) => ctx.bearer(r.actor), check: r.check };
      SCENARIOS.push({ ...common, name: r.name, description: r.description, target: 'app-pg', floor });
      if (r.name === 'me-notes-search') {
        SCENARIOS.push({
          ...common,
          name: 'me-notes-search-uncached',
          description: `${r.description}, every request counting its matches (FILTERED_TOTALS_CACHE_SIZE=0)`,
          target: 'app-pg-uncached',
          floor,
        });
      }
      SCENARIOS.push({
        ...common,
        name: floor,
        description: `hand-written floor (bench/floor.ts: Fastify + pg + fast-jwt, page and exact count): ${r.description}`,
        target: 'floor',
      });
    }
  }
  if (wanted('unread-count-pg')) {
    const totalRows = process.env.BENCH_INBOX_TOTAL ? positive('BENCH_INBOX_TOTAL', 1) : undefined;
    const inbox = await prepareInboxScenario({ databaseUrl, totalRows });
    console.log(
      `inbox data: ${inbox.rows.total} notification rows in all, ${inbox.rows.student} of the polled student ` +
        `(${inbox.rows.studentUnread} unread in-app), generated in ${inbox.generationSeconds} s`,
    );
    SCENARIOS.push({
      name: 'unread-count-pg',
      description: `our app on PostgreSQL, GET /api/notifications/unread-count (bearer, one indexed count) for a student with ${inbox.rows.student} rows in a table of ${inbox.rows.total}`,
      target: 'app-pg',
      path: '/api/notifications/unread-count',
      headers: (ctx) => ctx.bearer(DEMO_STUDENT),
      check: inbox.check,
    });
  }
}

async function main() {
  if (!ONLY || [...ONLY].some((n) => n.startsWith('me-notes') || n.endsWith('-pg'))) await addPostgresScenarios();
  const floorsWanted = new Set(SCENARIOS.filter((s) => ONLY?.has(s.name) && s.floor).map((s) => s.floor!));
  const scenarios = SCENARIOS.filter((s) => s.name === BASELINE || !ONLY || ONLY.has(s.name) || floorsWanted.has(s.name));
  if (ONLY) {
    const unknown = [...ONLY].filter((n) => !SCENARIOS.some((s) => s.name === n));
    if (unknown.length > 0) throw new Error(`unknown scenario(s): ${unknown.join(', ')}`);
  }
  const info = await machine();
  if (PIN) execFileSync('taskset', ['-a', '-p', '-c', LOADGEN_CPU, String(process.pid)], { stdio: 'ignore' });
  const busy = info.loadAverageAtStart[0]! > info.cpus * 0.25;
  console.log(
    `bench: ${scenarios.length} scenarios × ${ROUNDS} rounds, ${WARMUP} s warm-up then ${DURATION} s runs, ` +
      `${CONNECTIONS} connections, ` +
      (PIN ? `load generator on CPU ${LOADGEN_CPU}, servers on CPU ${SERVER_CPU}` : 'no CPU pinning'),
  );
  console.log(`machine: ${info.cpus} CPUs (${info.cpuModel}), ${info.memoryGiB} GiB, ${info.os}, node ${info.node}`);
  if (busy) {
    console.warn(`warning: load average ${info.loadAverageAtStart.join(' ')} at start: other work is running, numbers will be noisy`);
  }

  const ctx: ScenarioContext = {
    authSecret: AUTH_SECRET,
    bearer: async (input) => ({ authorization: `Bearer ${await mintToken(AUTH_SECRET, input)}` }),
  };

  // One server process per target, all started first (an idle server costs nothing) so the
  // rounds can interleave scenarios of different targets.
  const targets = [...new Set(scenarios.map((s) => s.target))];
  const servers = new Map<string, RunningServer>();
  const idleMemory: Record<string, ServerStats> = {};
  const dataDirs: string[] = [];
  let summaries: Summary[];
  try {
    for (const target of targets) {
      process.stdout.write(`starting target ${target}… `);
      const startedAt = Date.now();
      const dataDir = await mkdtemp(join(os.tmpdir(), `lms-bench-${target}-`));
      dataDirs.push(dataDir);
      const server = await startServer(target, dataDir);
      servers.set(target, server);
      console.log(`ready at ${server.url} in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
    }
    // Idle memory: every server started (and migrated), none has taken a request yet.
    for (const [target, server] of servers) idleMemory[target] = await server.stats();
    const prepared: Prepared[] = [];
    for (const scenario of scenarios) prepared.push(await prepare(scenario, servers.get(scenario.target)!, ctx));
    console.log('warming up…');
    for (const p of prepared) await warmUp(p);

    const runs = new Map<string, RunResult[]>(prepared.map((p) => [p.scenario.name, []]));
    for (let round = 1; round <= ROUNDS; round++) {
      console.log(`round ${round}/${ROUNDS}`);
      for (const p of prepared) {
        process.stdout.write(`  ${p.scenario.name}: ${p.options.method} ${p.scenario.path}… `);
        const r = await measure(p, round);
        runs.get(p.scenario.name)!.push(r);
        console.log(
          `${r.requestsPerSec.average.toFixed(0)} req/s, p50 ${r.latencyMs.p50} ms, p99 ${r.latencyMs.p99} ms, ` +
            `server ${r.server.cpuUsPerRequest} µs CPU/req, RSS ${r.server.rssMiB} MiB, ` +
            `load-generator stalls ${r.loadGeneratorStalls.count} (${r.loadGeneratorStalls.totalMs} ms)`,
        );
      }
    }
    summaries = prepared.map((p) => summarize(p, runs.get(p.scenario.name)!));
  } finally {
    for (const server of servers.values()) await stopServer(server);
    for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
  }

  const base = summaries.find((r) => r.name === BASELINE)!.median;
  for (const r of summaries) {
    r.ratioToBaseline = {
      requestsPerSec: round(r.median.requestsPerSec / base.requestsPerSec, 3),
      p50Ms: round(r.median.p50Ms / base.p50Ms, 3),
      p99Ms: round(r.median.p99Ms / base.p99Ms, 3),
      serverCpuUsPerRequest: round(r.median.serverCpuUsPerRequest / base.serverCpuUsPerRequest, 3),
    };
  }
  for (const r of summaries) {
    const floor = r.floor ? summaries.find((f) => f.name === r.floor)?.median : undefined;
    if (floor) r.ratioToFloor = { requestsPerSec: round(r.median.requestsPerSec / floor.requestsPerSec, 3), p50Ms: round(r.median.p50Ms / floor.p50Ms, 3) };
  }
  const valid = summaries.every((r) => r.errors === 0);
  const loadAverageAtEnd = os.loadavg().map((n) => round(n, 2));
  const allRuns = summaries.flatMap((r) => r.runs);
  const stallMs = allRuns.reduce((n, r) => n + r.loadGeneratorStalls.totalMs, 0);
  const stallShare = round(stallMs / (allRuns.length * DURATION * 1000), 3);

  console.log(`\nmedian of ${ROUNDS} rounds:\n\n${table(summaries)}\n`);
  console.log('× base: the ratio to the bare Fastify hello-world baseline (req/s: higher is better; latency and CPU: lower is better).');
  console.log(
    '× floor: req/s as a ratio to the hand-written floor of the same route on the same data (bench/floor.ts; for healthz, bare Fastify ' +
      'sending the same body and headers; higher is better). RSS: the highest of the rounds.',
  );
  for (const [target, m] of Object.entries(idleMemory))
    console.log(`memory of ${target}: idle ${memoryLine(m)}; under load (last round) ${memoryLine(lastMemory(summaries, target))}`);
  console.log(`load average at start ${info.loadAverageAtStart.join(' ')}, at end ${loadAverageAtEnd.join(' ')}`);
  if (stallShare > 0.02) {
    console.warn(
      `warning: the load generator did not run for ${(stallShare * 100).toFixed(0)}% of the measured time (event-loop gaps over 100 ms): ` +
        'this machine pauses processes; latency percentiles and absolute req/s are unreliable here',
    );
  }

  const finishedAt = new Date();
  const report = {
    date: finishedAt.toISOString(),
    command: 'npm run bench',
    settings: {
      durationSec: DURATION,
      warmupSec: WARMUP,
      rounds: ROUNDS,
      connections: CONNECTIONS,
      pipelining: 1,
      cpuPinning: PIN ? { loadGenerator: LOADGEN_CPU, servers: SERVER_CPU } : false,
    },
    machine: { ...info, loadAverageAtEnd, loadGeneratorStallShare: stallShare },
    baseline: BASELINE,
    idleMemory,
    valid,
    results: summaries,
  };
  await mkdir(RESULTS_DIR, { recursive: true });
  const file = `${RESULTS_DIR}${finishedAt.toISOString().replace(/[:.]/g, '-')}.json`;
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`results written to ${file}`);
  if (!valid) {
    console.error('some requests failed or answered a status other than expected: see the table');
    process.exitCode = 1;
  }
}

await main();
