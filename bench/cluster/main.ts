/**
 * `npm run cluster [-- --duration 60 --seed 1 --fanout 600 --students 10 --record]`
 *
 * Starts PostgreSQL and Redis (Debian packages, installed with apt when missing), the CRM and
 * recorder simulators and an SMTP sink, two `lms serve` replicas behind HAProxy and two
 * `lms worker` replicas, all on loopback; runs the mixed workload (bench/cluster/workload.ts)
 * for --duration seconds while it injects one fault of each kind at random times (seeded):
 * a web replica SIGKILLed, a worker SIGKILLed mid-batch, PostgreSQL restarted, Redis restarted,
 * the CRM slow then down, and a rolling restart of both web replicas. Then it waits for the
 * workers to finish, checks the invariants (bench/cluster/invariants.ts), prints throughput and
 * latency per phase, and exits 1 when an invariant fails. Everything it started is stopped on
 * exit, on failure and on Ctrl-C.
 *
 * The replicas run what production runs: `src/` compiled into a deployment directory (bin/,
 * dist/, drizzle/, package.json, node_modules) with NODE_ENV=production; --tsx runs the
 * sources through tsx instead (no build, slower starts).
 * --broken mark-sent-before-send builds from a patched copy of the sources (src/ is not
 * touched) whose worker marks an e-mail SENT before sending it, --broken send-twice one whose
 * worker sends each e-mail twice: the invariants must fail. Bench only: production code has no
 * such switch.
 * --record appends the report to bench/RESULTS.md; --keep keeps the temp directory (logs).
 */
import { cpSync, readFileSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Cluster, REPLICA_SETTINGS, REPO } from './cluster.js';
import { checkSharedRateLimit, FAULT_KINDS, faults, ReadyzProbe, schedule, seededRandom, type FaultContext, type FaultEvent, type RateLimitCheck } from './faults.js';
import { checkInvariants, quiesce, RECOVERY_BOUND_MS } from './invariants.js';
import { run, runAsync, sleep } from './procs.js';
import { markdown, phasesOf, phaseStats } from './report.js';
import { Workload } from './workload.js';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '60' },
    seed: { type: 'string' },
    fanout: { type: 'string', default: '600' },
    students: { type: 'string', default: '10' },
    'recording-every': { type: 'string', default: '30' },
    broken: { type: 'string' },
    tsx: { type: 'boolean', default: false },
    record: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    'pg-port': { type: 'string' },
    'redis-port': { type: 'string' },
  },
});

const BROKEN_VARIANTS: Record<string, { file: string; from: string; to: string; what: string }> = {
  'mark-sent-before-send': {
    file: 'src/modules/notifications/notifications.delivery.ts',
    from: 'await send();\n    await markSent(deps, [row.id]);',
    to: 'await markSent(deps, [row.id]);\n    await send();',
    what: 'the worker marks each e-mail SENT before sending it',
  },
  'send-twice': {
    file: 'src/modules/notifications/notifications.delivery.ts',
    from: 'await send();\n    await markSent(deps, [row.id]);',
    to: 'await send();\n    await send();\n    await markSent(deps, [row.id]);',
    what: 'the worker sends each e-mail twice before marking it SENT',
  },
};

/**
 * Each fault gets at least this long to recover before the next one starts (and before the load
 * stops): longer than RECOVERY_BOUND_MS, so a fault whose errors do not stop is seen failing.
 */
const MIN_RECOVERY_MS = RECOVERY_BOUND_MS + 5000;

const started = Date.now();
const log = (line: string) => console.log(`[cluster +${((Date.now() - started) / 1000).toFixed(1)}s] ${line}`);
const num = (v: string | undefined, name: string) => {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number`);
  return n;
};
const loadavg = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');

/**
 * What production ships (README, Production deployment): `bin/`, `dist/` compiled from `src/`
 * by `tsconfig.build.json`, `drizzle/`, `package.json` and `node_modules/`, in a directory of
 * its own. With `broken`, the sources are copied and patched first (src/ stays as it is).
 */
async function buildDeployment(workDir: string, broken: string | undefined): Promise<string> {
  const dir = join(workDir, 'deploy');
  mkdirSync(dir);
  for (const p of ['bin', 'drizzle', 'package.json']) cpSync(join(REPO, p), join(dir, p), { recursive: true });
  symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'));
  let sources = REPO;
  if (broken) {
    const variant = BROKEN_VARIANTS[broken];
    if (!variant) throw new Error(`--broken: one of ${Object.keys(BROKEN_VARIANTS).join(', ')}`);
    sources = join(workDir, 'broken-sources');
    mkdirSync(sources);
    for (const p of ['src', 'package.json', 'tsconfig.json', 'tsconfig.build.json']) cpSync(join(REPO, p), join(sources, p), { recursive: true });
    symlinkSync(join(REPO, 'node_modules'), join(sources, 'node_modules'));
    const file = join(sources, variant.file);
    const text = readFileSync(file, 'utf8');
    if (!text.includes(variant.from)) throw new Error(`--broken ${broken} no longer applies to ${variant.file}`);
    writeFileSync(file, text.replace(variant.from, variant.to));
    log(`BROKEN BUILD: ${variant.what} (patched copy of src/ in ${sources})`);
  }
  const t0 = Date.now();
  await runAsync(join(REPO, 'node_modules/.bin/tsc'), ['-p', join(sources, 'tsconfig.build.json'), '--outDir', join(dir, 'dist')]);
  log(`compiled src/ into ${join(dir, 'dist')} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return dir;
}

/** bench/RESULTS.md keeps its runs newest first, after its introduction: the report goes before the first dated section. */
function recordResults(report: string) {
  const file = join(REPO, 'bench/RESULTS.md');
  const text = readFileSync(file, 'utf8');
  const at = text.search(/^## \d{4}-/m);
  const section = `${report.replace(/^### /, '## ')}\n`;
  writeFileSync(file, at < 0 ? `${text}\n${section}` : `${text.slice(0, at)}${section}\n${text.slice(at)}`);
}

async function main(): Promise<number> {
  const durationMs = num(args.duration, 'duration') * 1000;
  const seed = args.seed ? num(args.seed, 'seed') : Math.floor(Math.random() * 1_000_000);
  const fanout = num(args.fanout, 'fanout');
  const students = num(args.students, 'students');
  const recordingEverySec = num(args['recording-every'], 'recording-every');
  // A student goes through the three courses in 3 s or more (think times and ~30 requests; ~6 s
  // measured under load): a fresh one for every 2.5 s of each concurrent student, over the load
  // and the recovery windows that can stretch it (six faults), so no student comes round again.
  const loadBoundMs = durationMs + FAULT_KINDS.length * MIN_RECOVERY_MS;
  const studentPool = Math.max(fanout, Math.ceil((students * loadBoundMs) / 2500) + 50);
  const random = seededRandom(seed);
  const loadBefore = loadavg();
  log(`seed ${seed}, ${durationMs / 1000} s of load, ${students} students at a time, fan-out course of ${fanout}, load average ${loadBefore}`);

  const workDir = await mkdtemp(join(os.tmpdir(), 'lms-cluster-'));
  await chmod(workDir, 0o755);
  if (args.tsx && args.broken) throw new Error('--broken needs the compiled build (without --tsx)');
  const cluster = new Cluster({
    workDir,
    crmStudents: 30 + studentPool,
    deployDir: args.tsx ? REPO : await buildDeployment(workDir, args.broken),
    compiled: !args.tsx,
    pgPort: args['pg-port'] ? num(args['pg-port'], 'pg-port') : undefined,
    redisPort: args['redis-port'] ? num(args['redis-port'], 'redis-port') : undefined,
    log,
  });
  const stopOnSignal = (signal: NodeJS.Signals, code: number) =>
    process.once(signal, () => {
      log(`${signal}: stopping the cluster`);
      cluster.stop().finally(() => process.exit(code));
    });
  stopOnSignal('SIGINT', 130);
  stopOnSignal('SIGTERM', 143);
  process.on('exit', () => cluster.supervisor.killAllSync());

  let db: pg.Pool | undefined;
  let keep = args.keep;
  try {
    await cluster.start();
    db = new pg.Pool({ connectionString: cluster.pg.url, max: 3 });
    db.on('error', () => undefined);
    const workload = new Workload({
      baseUrl: cluster.lbUrl,
      authSecret: cluster.secrets.auth,
      webhookSecret: cluster.secrets.recordingWebhook,
      fanout,
      students,
      recordingEverySec,
      studentPool,
      log,
    });
    await workload.setup();
    log(`set up: a course of ${fanout} students and ${workload.courses.length} activity courses`);
    const rateLimitChecks: RateLimitCheck[] = [await checkSharedRateLimit(cluster, 'before the faults')];

    const probe = new ReadyzProbe(cluster, () => workload.now());
    workload.start();
    probe.start();
    const ctx: FaultContext = { cluster, workload, db, now: () => workload.now(), random, log, rateLimitChecks };
    const steadyMs = Math.max(8000, durationMs * 0.15);
    const plan = schedule(FAULT_KINDS, durationMs, steadyMs, random);
    const events: FaultEvent[] = [];
    const finish = async (ev: FaultEvent) => {
      ev.end = ctx.now();
      if (ev.kind === 'pg-restart') {
        // Recovered in place: the same processes, and each worker finished jobs after PostgreSQL came back.
        ev.details.webPidsAfter = Object.fromEntries(cluster.web.map((w) => [w.name, w.proc.pid]));
        ev.details.workerPidsAfter = Object.fromEntries(cluster.workers.map((w) => [w.name, w.proc.pid]));
        const since = new Date(workload.startedAt + ev.marks.up);
        const { rows } = await db!.query<{ locked_by: string; n: number }>(
          `select locked_by, count(*)::int as n from jobs where status = 'done' and completed_at > $1 group by 1`,
          [since],
        );
        ev.details.workerJobsAfter = Object.fromEntries(cluster.workers.map((w) => [w.name, rows.find((r) => w.ids.includes(r.locked_by))?.n ?? 0]));
      }
    };
    for (const { kind, at } of plan) {
      // One fault at a time: the next waits until the last one has had its recovery window.
      const previous = events[events.length - 1];
      while (ctx.now() < Math.max(at, previous ? previous.back + MIN_RECOVERY_MS : 0)) await sleep(100);
      if (events.length) await finish(events[events.length - 1]);
      const ev: FaultEvent = { kind, start: ctx.now(), back: ctx.now(), end: 0, marks: {}, details: {} };
      log(`fault: ${kind}`);
      await faults[kind](ctx, ev);
      log(`${kind}: back after ${((ev.back - ev.start) / 1000).toFixed(1)} s`);
      events.push(ev);
    }
    // Load continues to the end of the duration, and at least 10 s after the last fault.
    const last = events[events.length - 1];
    while (ctx.now() < Math.max(durationMs, last.back + MIN_RECOVERY_MS)) await sleep(100);
    await finish(last);
    const loadEnd = ctx.now();
    log('stopping the load');
    await workload.stop();
    probe.stop();
    log(`waiting for the workers to finish (load average ${loadavg()})`);
    const settled = await quiesce(db, 300_000, log);
    log(`settled in ${(settled.ms / 1000).toFixed(1)} s; checking the invariants`);
    const { invariants, stats } = await checkInvariants({
      db,
      records: workload.records,
      faults: events,
      readyz: probe.samples,
      rateLimitChecks,
      mailDir: cluster.mailDir,
      loadStartedAt: workload.startedAt,
      bigCourseId: workload.bigCourseId,
      fanout,
      settled: settled.settled,
      steadyEnd: events[0]?.start ?? loadEnd,
    });

    invariants.unshift({
      name: 'the load had fresh students to the end (a student reused after finishing a course is refused its writes)',
      pass: workload.studentsUsed <= studentPool,
      detail: `${workload.studentsUsed} of a pool of ${studentPool} students used`,
    });
    stats.studentsUsed = workload.studentsUsed;
    stats.studentPool = studentPool;
    const opsCount: Record<string, { ok: number; failed: number }> = {};
    for (const r of workload.records) {
      const c = (opsCount[r.op] ??= { ok: 0, failed: 0 });
      if (r.status >= 200 && r.status <= 299) c.ok++;
      else if (!r.accepted) c.failed++;
    }
    const phases = phaseStats(workload.records, phasesOf(events, loadEnd));
    const total = phaseStats(workload.records, [{ name: 'all', from: 0, to: loadEnd }])[0];
    const report = markdown({
      title: `${new Date(started).toISOString().slice(0, 16).replace('T', ' ')} UTC — cluster harness (issue 20): ${Math.round(loadEnd / 1000)} s of load, \`npm run cluster -- ${process.argv.slice(2).join(' ')}\`${args.broken ? `, BROKEN BUILD (${args.broken})` : ''}`,
      environment: {
        machine: `${os.cpus().length} cores, load average ${loadBefore} before and ${loadavg()} after (other work was running)`,
        software: `Node ${process.version}, ${cluster.pg.version}, ${run('redis-server', ['--version']).split(' ').slice(0, 3).join(' ')}, ${run('haproxy', ['-v']).split('\n')[0].split(' - ')[0]}`,
        seed: String(seed),
      },
      settings: {
        'web replicas': 2,
        'worker replicas': 2,
        'DB_POOL_SIZE web/worker': `${REPLICA_SETTINGS.webPoolSize}/${REPLICA_SETTINGS.workerPoolSize}`,
        WORKER_CONCURRENCY: REPLICA_SETTINGS.workerConcurrency,
        WORKER_LEASE_MS: REPLICA_SETTINGS.workerLeaseMs,
        SHUTDOWN_DELAY_MS: REPLICA_SETTINGS.shutdownDelayMs,
        'RATE_LIMIT_READ/WRITE': `${REPLICA_SETTINGS.rateLimitRead}/${REPLICA_SETTINGS.rateLimitWrite}`,
        'concurrent students': students,
        'fan-out course': fanout,
        'live class every': `${recordingEverySec} s`,
      },
      phases: [...phases, total],
      faults: events,
      invariants,
      stats,
      opsCount,
    });
    console.log(`\n${report}`);
    const failed = invariants.filter((i) => !i.pass);
    const resultsDir = join(REPO, 'bench/results');
    mkdirSync(resultsDir, { recursive: true });
    const stamp = new Date(started).toISOString().replace(/[:.]/g, '-');
    await writeFile(
      join(resultsDir, `cluster-${stamp}.json`),
      JSON.stringify({ seed, args, phases, total, faults: events, invariants, stats, opsCount, rateLimitChecks }, null, 2),
    );
    await writeFile(join(workDir, 'requests.json'), JSON.stringify(workload.records));
    await writeFile(join(workDir, 'probe.json'), JSON.stringify({ readyz: probe.samples, haproxy: probe.lbStates }));
    if (args.record) recordResults(report);
    if (failed.length > 0) {
      keep = true;
      log(`${failed.length} invariant(s) FAILED: ${failed.map((f) => f.name).join(' | ')}`);
      return 1;
    }
    log('every invariant holds');
    return 0;
  } catch (err) {
    keep = true;
    log(`the run failed: ${(err as Error).stack ?? err}`);
    return 1;
  } finally {
    await db?.end().catch(() => undefined);
    log('stopping the cluster');
    await cluster.stop();
    if (keep) log(`logs and data kept in ${workDir}`);
    else await rm(workDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
