/**
 * Faults injected while the workload runs, at random times (seeded), one at a time; the probes
 * that watch the replicas meanwhile (/readyz of each replica, HAProxy's view of them); and the
 * check that rate limits are shared by the replicas.
 */
import type pg from 'pg';
import { request } from 'undici';
import { mintToken } from '../../src/platform/auth/tokens.js';
import { REPLICA_SETTINGS, type Cluster, type Replica, type WorkerReplica } from './cluster.js';
import { haproxyServerStates } from './infra.js';
import { sleep } from './procs.js';
import { INSTITUTION, type Workload } from './workload.js';
import { studentClaims } from '../claims.js';

export type FaultKind = 'web-kill' | 'worker-kill' | 'pg-restart' | 'redis-restart' | 'crm-outage' | 'rolling-restart';
export const FAULT_KINDS: FaultKind[] = ['web-kill', 'worker-kill', 'pg-restart', 'redis-restart', 'crm-outage', 'rolling-restart'];

export interface FaultEvent {
  kind: FaultKind;
  /** ms since the load started: the fault begins. */
  start: number;
  /** The component is back (restarted, reachable, switched back). */
  back: number;
  /** The next fault's start, or the end of the load: the recovery window ends. */
  end: number;
  /** Notable moments (ms since the load started). */
  marks: Record<string, number>;
  details: Record<string, unknown>;
}

/** Mulberry32: a small seeded generator, so a run's fault times can be replayed with --seed. */
export function seededRandom(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface ReadyzSample {
  t: number;
  name: string;
  status: number;
}

/** Polls /readyz of every web replica directly (not through HAProxy) every 250 ms. */
export class ReadyzProbe {
  readonly samples: ReadyzSample[] = [];
  readonly lbStates: Array<{ t: number; states: Record<string, string> }> = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly cluster: Cluster,
    private readonly now: () => number,
  ) {}

  start() {
    let busy = false;
    this.timer = setInterval(() => {
      if (busy) return;
      busy = true;
      const t = this.now();
      Promise.all([
        ...this.cluster.web.map(async (w) => this.samples.push({ t, name: w.name, status: await this.cluster.readyz(w) })),
        haproxyServerStates(this.cluster.haproxyDir).then(
          (states) => this.lbStates.push({ t, states }),
          () => undefined,
        ),
      ]).finally(() => (busy = false));
    }, 250);
  }

  stop() {
    clearInterval(this.timer);
  }
}

export interface RateLimitCheck {
  label: string;
  limit: number;
  /** 2xx answers to one caller alternating between the two replicas, before the first 429. */
  allowed: number;
  /** What each replica answered once the limit was reached. */
  after: Record<string, number>;
  pass: boolean;
}

/**
 * One caller alternates GET /api/auth/session between the two replicas (their own ports, not
 * the load balancer) until refused: shared counters let exactly RATE_LIMIT_READ through in
 * total (per-process counters would let twice as many), and then both replicas refuse.
 */
export async function checkSharedRateLimit(cluster: Cluster, label: string): Promise<RateLimitCheck> {
  const limit = REPLICA_SETTINGS.rateLimitRead;
  const caller = `c_demo_ratelimit_${label.replace(/\W+/g, '_')}_${Date.now()}`;
  const token = await mintToken(cluster.secrets.auth, studentClaims(caller, INSTITUTION));
  const get = async (w: Replica) => {
    const res = await request(`http://127.0.0.1:${w.port}/api/auth/session`, { headers: { authorization: `Bearer ${token}` } });
    await res.body.dump();
    return res.statusCode;
  };
  let allowed = 0;
  for (let i = 0; i < limit * 3; i++) {
    const status = await get(cluster.web[i % 2]);
    if (status === 429) break;
    if (status === 200) allowed++;
  }
  const after: Record<string, number> = {};
  for (const w of cluster.web) after[w.name] = await get(w);
  return { label, limit, allowed, after, pass: allowed === limit && Object.values(after).every((s) => s === 429) };
}

export interface FaultContext {
  cluster: Cluster;
  workload: Workload;
  db: pg.Pool;
  now: () => number;
  random: () => number;
  log: (line: string) => void;
  rateLimitChecks: RateLimitCheck[];
}

const pick = <T>(random: () => number, list: T[]): T => list[Math.floor(random() * list.length)];

async function restartWeb(ctx: FaultContext, w: Replica, marks: Record<string, number>) {
  const ms = await ctx.cluster.startWeb(w);
  marks.ready = ctx.now();
  await ctx.cluster.waitLbUp([w.name]);
  marks.lbUp = ctx.now();
  return ms;
}

/** A running delivery batch some of whose e-mails are sent and some not, held by a live worker. */
async function findBatchMidway(ctx: FaultContext, workers: WorkerReplica[]) {
  const ids = new Map(workers.filter((w) => w.proc.running).map((w) => [w.ids[w.ids.length - 1], w]));
  const res = await ctx.db.query<{ id: string; locked_by: string; batch_id: string; sent: number; pending: number }>(`
    select j.id, j.locked_by, j.payload->>'batchId' as batch_id,
      count(*) filter (where n.status = 'SENT')::int as sent,
      count(*) filter (where n.status = 'PENDING')::int as pending
    from jobs j join notifications n on n.batch_id = j.payload->>'batchId' and n.channel = 'email'
    where j.name = 'notifications.deliver' and j.status = 'running'
    group by j.id, j.locked_by, j.payload->>'batchId'`);
  const row = res.rows.find((r) => r.sent > 0 && r.pending > 0 && ids.has(r.locked_by));
  return row ? { ...row, worker: ids.get(row.locked_by)! } : undefined;
}

export const faults: Record<FaultKind, (ctx: FaultContext, ev: FaultEvent) => Promise<void>> = {
  /** SIGKILL one web replica; restart it a second later. */
  async 'web-kill'(ctx, ev) {
    const w = pick(ctx.random, ctx.cluster.web);
    ev.details.replica = w.name;
    ev.details.pid = w.proc.pid;
    w.proc.kill9();
    await w.proc.exited();
    ev.marks.killed = ctx.now();
    await sleep(1000);
    ev.details.startMs = await restartWeb(ctx, w, ev.marks);
    ev.back = ev.marks.lbUp;
  },

  /**
   * Start a fan-out (a live class of the large course notifies every student), wait until a
   * worker is in the middle of a delivery batch (some of its e-mails sent, some not), SIGKILL
   * that worker, restart it a second later. The batch is taken over when its lease expires.
   */
  async 'worker-kill'(ctx, ev) {
    void ctx.workload.liveClass();
    let target: Awaited<ReturnType<typeof findBatchMidway>>;
    const deadline = Date.now() + 45_000;
    while (!target && Date.now() < deadline) {
      target = await findBatchMidway(ctx, ctx.cluster.workers).catch(() => undefined);
      if (!target) await sleep(30);
    }
    const w = target?.worker ?? pick(ctx.random, ctx.cluster.workers);
    ev.details.worker = w.name;
    ev.details.workerId = w.ids[w.ids.length - 1];
    ev.details.midBatch = target ? { job: target.id, batch: target.batch_id, sentBeforeKill: target.sent, pendingBeforeKill: target.pending } : null;
    w.proc.kill9();
    await w.proc.exited();
    ev.marks.killed = ctx.now();
    await sleep(1000);
    ev.details.startMs = await ctx.cluster.startWorker(w);
    ev.back = ctx.now();
  },

  /** PostgreSQL fast shutdown (every connection closed, open transactions rolled back), 3 s down, started again. */
  async 'pg-restart'(ctx, ev) {
    ev.details.webPids = Object.fromEntries(ctx.cluster.web.map((w) => [w.name, w.proc.pid]));
    ev.details.workerPids = Object.fromEntries(ctx.cluster.workers.map((w) => [w.name, w.proc.pid]));
    await ctx.cluster.pg.stopFast();
    ev.marks.down = ctx.now();
    await sleep(3000);
    await ctx.cluster.pg.startAsync();
    ev.marks.up = ctx.now();
    ev.back = ev.marks.up;
  },

  /** Redis stopped (its counters and caches are gone), 1 s down, started again; then the rate-limit check once more. */
  async 'redis-restart'(ctx, ev) {
    await ctx.cluster.redis.stop('SIGTERM');
    ev.marks.down = ctx.now();
    await sleep(1000);
    await ctx.cluster.restartRedisStartOnly();
    ev.marks.up = ctx.now();
    ev.back = ev.marks.up;
    // ioredis reconnects with backoff: give the replicas a moment before checking.
    await sleep(2000);
    ctx.rateLimitChecks.push(await checkSharedRateLimit(ctx.cluster, 'after Redis restart'));
  },

  /** The CRM answers 2.5 s late for 6 s, then resets every connection for 6 s, then is back. */
  async 'crm-outage'(ctx, ev) {
    await ctx.cluster.crmFault('slow', 2500);
    await sleep(6000);
    await ctx.cluster.crmFault('down');
    ev.marks.down = ctx.now();
    await sleep(6000);
    await ctx.cluster.crmFault(null);
    ev.back = ctx.now();
  },

  /**
   * Both web replicas restarted one after the other under load: SIGTERM (the replica answers
   * /readyz 503 for SHUTDOWN_DELAY_MS while still serving, HAProxy takes it out, then it
   * finishes its requests and exits), start, wait until HAProxy has it UP, next.
   */
  async 'rolling-restart'(ctx, ev) {
    const steps: Array<Record<string, unknown>> = [];
    for (const w of ctx.cluster.web) {
      const marks: Record<string, number> = { sigterm: ctx.now() };
      const oldPid = w.proc.pid;
      await w.proc.stop('SIGTERM', 60_000);
      marks.exited = ctx.now();
      const startMs = await restartWeb(ctx, w, marks);
      steps.push({ replica: w.name, oldPid, newPid: w.proc.pid, startMs, ...marks });
    }
    ev.details.steps = steps;
    ev.back = ctx.now();
  },
};

/**
 * The fault schedule: `kinds` in a random order, one per slot after the steady phase, each at a
 * random point of the first third of its slot. A fault that overruns its slot pushes the next.
 */
export function schedule(kinds: FaultKind[], durationMs: number, steadyMs: number, random: () => number): Array<{ kind: FaultKind; at: number }> {
  const order = [...kinds];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  const slot = (durationMs - steadyMs) / order.length;
  return order.map((kind, i) => ({ kind, at: Math.round(steadyMs + i * slot + random() * slot * 0.33) }));
}
