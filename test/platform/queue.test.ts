import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import { ManualClock, systemClock } from '../../src/platform/clock.js';
import type { Database } from '../../src/platform/db/client.js';
import {
  enqueue,
  enqueueJob,
  JobPayloadError,
  JobTimeoutError,
  LeaseLostError,
  retryDelayMs,
  UnknownJobError,
  Worker,
  type JobHandlersOf,
  type WorkerOptions,
} from '../../src/platform/queue/queue.js';
import { defineJobs, jobDefinitions, OUTAGE_RETRY, QUEUE_MAINTENANCE_JOB, type JobDefinitions } from '../../src/platform/queue/jobs.schemas.js';
import { jobs } from '../../src/platform/queue/queue.tables.js';
import { purgeJobs, queueJobs } from '../../src/platform/queue/maintenance.js';
import { jobsCommand, JobsCliError } from '../../src/platform/queue/cli.js';
import { nextRunAt } from '../../src/platform/queue/schedule.js';
import { retryFor } from '../../src/platform/queue/retry.js';
import { institutions } from '../../src/modules/institutions/institutions.tables.js';
import { jobHandlers } from '../../src/worker/worker.js';
import { loadConfig } from '../../src/config.js';
import type { Deps } from '../../src/platform/context.js';
import { freshDatabase } from '../helpers/database.js';

let database: Database;
const clock = new ManualClock('2026-03-02T09:00:00Z');
const quiet = { info: () => {}, warn: () => {}, error: () => {} };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  database = await freshDatabase();
});
afterAll(() => database.close());
beforeEach(async () => {
  await database.db.delete(jobs);
});

const any = z.object({}).passthrough();
const defs = defineJobs({
  'test.job': { payload: z.object({ n: z.number().int() }) },
  'test.count': { payload: z.object({ i: z.number() }) },
  'test.lease': { payload: any },
  'test.fail': { payload: any },
  'test.capped': { payload: any, maxAttempts: 10, maxRetryDelayMs: 5_000 },
  'test.later': { payload: any },
  'test.loop': { payload: any },
  'test.slow': { payload: any, timeoutMs: 5_000 },
  'test.timeout': { payload: any, timeoutMs: 50 },
  'test.every': { payload: z.object({}), schedule: { everyMs: 60_000 } },
  'test.daily': { payload: z.object({}), schedule: { cron: '0 7 * * *' }, maxAttempts: 1 },
  'other.job': { payload: any },
});
type Defs = typeof defs;

const put = <N extends keyof Defs & string>(name: N, payload: z.input<Defs[N]['payload']>, opts = {}) => enqueueJob(defs, database.db, clock, name, payload, opts);

const worker = (handlers: JobHandlersOf<Defs>, opts: Partial<WorkerOptions<Defs>> = {}) =>
  new Worker<Defs>({ db: database.db, clock, definitions: defs, handlers, log: quiet, ...opts });

const rows = () => database.db.select().from(jobs).orderBy(jobs.createdAt, jobs.id);
const until = async (cond: () => boolean, ms = 5_000) => {
  for (let waited = 0; !cond(); waited += 5) {
    if (waited > ms) throw new Error('condition not met in time');
    await sleep(5);
  }
};

describe('queue: enqueue', () => {
  it('enqueues inside the transaction: a rollback enqueues nothing', async () => {
    await expect(
      database.db.transaction(async (tx) => {
        await tx.insert(institutions).values({ id: 'inst_q', settings: {} });
        await enqueueJob(defs, tx, clock, 'test.job', { n: 1 });
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');
    expect(await rows()).toHaveLength(0);
    await database.db.transaction(async (tx) => {
      await enqueueJob(defs, tx, clock, 'test.job', { n: 2 });
    });
    expect(await rows()).toHaveLength(1);
  });

  it('validates the payload with the job schema before inserting', async () => {
    // @ts-expect-error n must be a number
    await expect(put('test.job', { n: 'x' })).rejects.toBeInstanceOf(JobPayloadError);
    // @ts-expect-error n is required
    await expect(put('test.job', {})).rejects.toThrow(/invalid payload for job test\.job: n:/);
    // @ts-expect-error not a defined job
    await expect(put('test.nope', {})).rejects.toBeInstanceOf(UnknownJobError);
    expect(await rows()).toHaveLength(0);
  });

  it('type-checks and validates the application jobs against the registry', async () => {
    // @ts-expect-error completionId must be a string
    await expect(enqueue(database.db, clock, 'crm.pushCompletion', { completionId: 7 })).rejects.toBeInstanceOf(JobPayloadError);
    // @ts-expect-error unknown job name
    await expect(enqueue(database.db, clock, 'crm.unknown', {})).rejects.toBeInstanceOf(UnknownJobError);
    const id: string = await enqueue(database.db, clock, 'crm.pushCompletion', { completionId: 'c1' }, { institutionId: 'inst_q' });
    const [row] = await rows();
    expect(row).toMatchObject({ id, name: 'crm.pushCompletion', payload: { completionId: 'c1' }, maxAttempts: OUTAGE_RETRY.maxAttempts, status: 'queued' });
  });

  it('stores the parsed payload (unknown keys stripped)', async () => {
    await put('test.job', { n: 1, extra: true } as never);
    expect((await rows())[0].payload).toEqual({ n: 1 });
  });

  it('a singleton key allows one pending job; once finished another may be enqueued', async () => {
    const first = await put('test.job', { n: 1 }, { singletonKey: 'k' });
    expect(first).toEqual(expect.any(String));
    expect(await put('test.job', { n: 2 }, { singletonKey: 'k' })).toBeNull();
    expect(await rows()).toHaveLength(1);
    await worker({ 'test.job': async () => {} }).drain();
    expect(await put('test.job', { n: 3 }, { singletonKey: 'k' })).toEqual(expect.any(String));
    expect((await rows()).map((r) => r.status)).toEqual(['done', 'queued']);
  });
});

describe('queue: worker', () => {
  it('runs a job once with its typed payload and marks it done', async () => {
    const seen: number[] = [];
    await put('test.job', { n: 3 });
    const w = worker({ 'test.job': async (job) => void seen.push(job.payload.n) });
    expect(await w.drain()).toBe(1);
    expect(seen).toEqual([3]);
    const [row] = await rows();
    expect(row.status).toBe('done');
    expect(row.completedAt).not.toBeNull();
    expect(await w.drain()).toBe(0);
  });

  it('fails a job whose stored payload no longer matches its schema', async () => {
    await database.db.insert(jobs).values({
      id: 'j_bad',
      name: 'test.job',
      payload: { n: 'nope' },
      maxAttempts: 1,
      runAt: clock.now(),
      createdAt: clock.now(),
      updatedAt: clock.now(),
    });
    let ran = 0;
    await worker({ 'test.job': async () => void ran++ }).drain();
    expect(ran).toBe(0);
    const [row] = await rows();
    expect(row.status).toBe('dead');
    expect(row.lastError).toMatch(/expected number/);
  });

  it('never runs one job twice across two workers', async () => {
    for (let i = 0; i < 40; i++) await put('test.count', { i });
    const runs = new Map<number, number>();
    const handler = async (job: { payload: { i: number } }) => {
      runs.set(job.payload.i, (runs.get(job.payload.i) ?? 0) + 1);
      await sleep(2);
    };
    const a = worker({ 'test.count': handler }, { batchSize: 5 });
    const b = worker({ 'test.count': handler }, { batchSize: 5 });
    await Promise.all([a.drain(), b.drain(), a.drain(), b.drain()]);
    expect(runs.size).toBe(40);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
  });

  it('retries with backoff and moves a job to dead after max attempts with its last error', async () => {
    await put('test.fail', {}, { maxAttempts: 3 });
    let calls = 0;
    const w = worker({
      'test.fail': async () => {
        calls++;
        throw new Error(`boom ${calls}`);
      },
    });
    expect(await w.runOnce()).toBe(1);
    let [row] = await rows();
    expect(row.status).toBe('queued');
    expect(row.runAt.getTime()).toBe(clock.now().getTime() + retryDelayMs(1));
    expect(await w.runOnce()).toBe(0); // backing off
    clock.advance(retryDelayMs(1));
    expect(await w.runOnce()).toBe(1);
    clock.advance(retryDelayMs(2));
    expect(await w.runOnce()).toBe(1);
    [row] = await rows();
    expect(row.status).toBe('dead');
    expect(row.attempts).toBe(3);
    expect(row.lastError).toBe('boom 3');
    clock.advance(3_600_000);
    expect(await w.runOnce()).toBe(0);
  });

  it("waits at most the definition's maxRetryDelayMs between attempts", async () => {
    await put('test.capped', {});
    const w = worker({
      'test.capped': async () => {
        throw new Error('dependency down');
      },
    });
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      expect(await w.runOnce()).toBe(1);
      const [row] = await rows();
      waits.push(row.runAt.getTime() - clock.now().getTime());
      clock.set(row.runAt);
    }
    expect(waits).toEqual([2_000, 4_000, 5_000, 5_000]);
  });

  it('retryFor: enough capped attempts to span the window, and no more (OUTAGE_RETRY: 24 h, 10 min apart)', () => {
    const span = ({ maxAttempts, maxRetryDelayMs }: { maxAttempts: number; maxRetryDelayMs: number }, attempts = maxAttempts) =>
      Array.from({ length: attempts - 1 }, (_, i) => retryDelayMs(i + 1, maxRetryDelayMs)).reduce((a, b) => a + b, 0);
    expect(OUTAGE_RETRY).toEqual({ maxAttempts: 153, maxRetryDelayMs: 600_000 });
    expect(span(OUTAGE_RETRY)).toBeGreaterThanOrEqual(24 * 3_600_000);
    expect(span(OUTAGE_RETRY, OUTAGE_RETRY.maxAttempts - 1)).toBeLessThan(24 * 3_600_000);
    expect(retryFor(10_000, 3_600_000)).toEqual({ maxAttempts: 4, maxRetryDelayMs: 3_600_000 }); // 2 + 4 + 8 s
    for (const name of ['notifications.deliver', 'notifications.sendDigest', 'crm.pushCompletion'] as const) {
      expect(jobDefinitions[name]).toMatchObject(OUTAGE_RETRY);
    }
  });

  it('runs a scheduled job only when it is due', async () => {
    await put('test.later', {}, { runAt: new Date(clock.now().getTime() + 3_600_000) });
    let ran = 0;
    const w = worker({ 'test.later': async () => void ran++ });
    expect(await w.drain()).toBe(0);
    clock.advance(3_600_000);
    expect(await w.drain()).toBe(1);
    expect(ran).toBe(1);
  });

  it('the polling loop picks jobs up and stops cleanly', async () => {
    let ran = 0;
    const w = worker({ 'test.loop': async () => void ran++ }, { pollMs: 10 });
    w.start();
    await put('test.loop', {});
    await until(() => ran > 0);
    await w.stop();
    expect(ran).toBe(1);
    const [row] = await database.db.select().from(jobs).where(eq(jobs.name, 'test.loop'));
    expect(row.status).toBe('done');
  });

  it('ignores jobs it has no handler for', async () => {
    await put('other.job', {});
    expect(await worker({ 'test.job': async () => {} }).drain()).toBe(0);
    const res = await database.db.execute(sql`select status from jobs`);
    expect((res as unknown as { rows: Array<{ status: string }> }).rows[0].status).toBe('queued');
  });

  it('refuses handlers for jobs the registry does not define', () => {
    expect(() => worker({ 'test.nope': async () => {} } as never)).toThrow(UnknownJobError);
  });
});

describe('queue: handler timeout', () => {
  it('fails a handler running past its timeout, aborts its signal, and retries it with backoff', async () => {
    await put('test.timeout', {}, { maxAttempts: 2 });
    let signal: AbortSignal | undefined;
    let stoppedEarly = false;
    const w = worker({
      'test.timeout': async (_job, ctx) => {
        signal = ctx.signal;
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, 3_000);
          ctx.signal.addEventListener('abort', () => {
            clearTimeout(t);
            stoppedEarly = true;
            resolve();
          });
        });
      },
    });
    const started = Date.now();
    expect(await w.runOnce()).toBe(1);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBeInstanceOf(JobTimeoutError);
    expect(stoppedEarly).toBe(true);
    let [row] = await rows();
    expect(row).toMatchObject({ status: 'queued', attempts: 1, lastError: 'job test.timeout timed out after 50 ms' });
    expect(row.runAt.getTime()).toBe(clock.now().getTime() + retryDelayMs(1));
    clock.advance(retryDelayMs(1));
    expect(await w.runOnce()).toBe(1);
    [row] = await rows();
    expect(row).toMatchObject({ status: 'dead', attempts: 2 });
  });

  it('a handler that ignores the signal is still failed at the timeout', async () => {
    await put('test.timeout', {}, { maxAttempts: 1 });
    let finished = false;
    const w = worker({
      'test.timeout': async () => {
        await sleep(400);
        finished = true;
      },
    });
    expect(await w.runOnce()).toBe(1);
    expect(finished).toBe(false);
    expect((await rows())[0]).toMatchObject({ status: 'dead', attempts: 1 });
    await sleep(450);
    expect(finished).toBe(true);
    // Finishing late does not overwrite the recorded outcome.
    expect((await rows())[0]).toMatchObject({ status: 'dead', attempts: 1 });
  });
});

describe('queue: leases', () => {
  it('hands a job whose worker died to another after its lease expires', async () => {
    await put('test.lease', {});
    const dead = worker({ 'test.lease': async () => {} }, { leaseMs: 30_000 });
    const claimed = await dead.claim(); // claims, then "dies" without finishing or heartbeating
    expect(claimed).toHaveLength(1);
    let ran = 0;
    const other = worker({ 'test.lease': async () => void ran++ }, { leaseMs: 30_000 });
    expect(await other.runOnce()).toBe(0); // still leased
    clock.advance(31_000);
    expect(await other.runOnce()).toBe(1);
    expect(ran).toBe(1);
    const [row] = await rows();
    expect(row.status).toBe('done');
    expect(row.attempts).toBe(2);
  });

  it('a live worker extends its lease while the handler runs, so nobody takes the job over (manual clock)', async () => {
    await put('test.slow', {});
    let release!: () => void;
    let started = false;
    const a = worker(
      {
        'test.slow': async () => {
          started = true;
          await new Promise<void>((r) => (release = r));
        },
      },
      { leaseMs: 30_000, heartbeatMs: 10 },
    );
    let bRan = 0;
    const b = worker({ 'test.slow': async () => void bRan++ }, { leaseMs: 30_000 });
    const aRun = a.runOnce();
    await until(() => started);
    const claimedUntil = (await rows())[0].lockedUntil!.getTime();
    // Three lease lengths pass; A's heartbeats keep pushing its lease past "now".
    for (let i = 0; i < 3; i++) {
      clock.advance(25_000);
      const now = clock.now().getTime();
      for (let tries = 0; (await rows())[0].lockedUntil!.getTime() <= now; tries++) {
        if (tries > 400) throw new Error('no heartbeat');
        await sleep(5);
      }
      expect(await b.runOnce()).toBe(0);
    }
    expect((await rows())[0].lockedUntil!.getTime()).toBeGreaterThan(claimedUntil);
    release();
    expect(await aRun).toBe(1);
    expect(bRan).toBe(0);
    expect((await rows())[0]).toMatchObject({ status: 'done', attempts: 1, lockedBy: a.id });
  });

  it("with a real clock: a long job keeps its short lease alive, a dead worker's job is reclaimed", async () => {
    const real = (handlers: JobHandlersOf<Defs>) =>
      new Worker<Defs>({ db: database.db, clock: systemClock, definitions: defs, handlers, log: quiet, leaseMs: 1_000, heartbeatMs: 100 });
    await enqueueJob(defs, database.db, systemClock, 'test.slow', { long: true });
    let aRuns = 0;
    let bRuns = 0;
    const a = real({ 'test.slow': async () => void (aRuns++, await sleep(3_200)) });
    const b = real({ 'test.slow': async () => void bRuns++ });
    const aRun = a.runOnce();
    // A claims first (on PostgreSQL's pool, B's first claim could otherwise overtake A's).
    for (let tries = 0; (await rows())[0]?.lockedBy !== a.id; tries++) {
      if (tries > 400) throw new Error('A never claimed the job');
      await sleep(5);
    }
    // More than three lease lengths; a heartbeat every 100 ms leaves room for a loaded machine.
    const deadline = Date.now() + 3_000;
    while (Date.now() < deadline) {
      expect(await b.runOnce()).toBe(0);
      await sleep(30);
    }
    expect(await aRun).toBe(1);
    expect([aRuns, bRuns]).toEqual([1, 0]);
    expect((await rows())[0]).toMatchObject({ status: 'done', attempts: 1 });

    await database.db.delete(jobs);
    await enqueueJob(defs, database.db, systemClock, 'test.slow', { dies: true });
    expect(await real({ 'test.slow': async () => {} }).claim()).toHaveLength(1); // then dies: no heartbeat
    expect(await b.runOnce()).toBe(0);
    await sleep(1_100);
    expect(await b.runOnce()).toBe(1);
    expect(bRuns).toBe(1);
    expect((await rows())[0]).toMatchObject({ status: 'done', attempts: 2, lockedBy: b.id });
  });

  it('a worker whose lease was taken over aborts its handler and records nothing', async () => {
    await put('test.slow', {});
    let reason: unknown;
    const a = worker(
      {
        'test.slow': (_job, ctx) =>
          new Promise<void>((resolve) =>
            ctx.signal.addEventListener('abort', () => {
              reason = ctx.signal.reason;
              resolve();
            }),
          ),
      },
      { leaseMs: 30_000, heartbeatMs: 10 },
    );
    const aRun = a.runOnce();
    for (let i = 0; (await rows())[0].status !== 'running'; i++) await sleep(5);
    // Another worker took the job over (as after a long pause of A's process).
    await database.db.update(jobs).set({ lockedBy: 'worker-b', attempts: 2 }).where(eq(jobs.name, 'test.slow'));
    expect(await aRun).toBe(1);
    expect(reason).toBeInstanceOf(LeaseLostError);
    expect((await rows())[0]).toMatchObject({ status: 'running', lockedBy: 'worker-b', attempts: 2 });
  });
});

describe('queue: recurring jobs', () => {
  it('computes occurrences from an interval or a cron expression', () => {
    const at = new Date('2026-03-02T09:00:30Z');
    expect(nextRunAt({ everyMs: 60_000 }, at).toISOString()).toBe('2026-03-02T09:01:00.000Z');
    expect(nextRunAt({ everyMs: 60_000 }, new Date('2026-03-02T09:01:00Z')).toISOString()).toBe('2026-03-02T09:02:00.000Z');
    expect(nextRunAt({ cron: '0 7 * * *' }, at).toISOString()).toBe('2026-03-03T07:00:00.000Z');
    expect(nextRunAt({ cron: '0 7 * * *' }, new Date('2026-03-03T07:00:00Z')).toISOString()).toBe('2026-03-04T07:00:00.000Z');
    expect(nextRunAt({ cron: '0 7 * * *', tz: 'Europe/Berlin' }, at).toISOString()).toBe('2026-03-03T06:00:00.000Z');
  });

  it('refuses an invalid cron expression when the worker starts', () => {
    const bad = defineJobs({ 'test.bad': { payload: z.object({}), schedule: { cron: 'every day' } } });
    expect(() => new Worker({ db: database.db, clock, definitions: bad, handlers: { 'test.bad': async () => {} } })).toThrow(/invalid cron/);
  });

  it('two workers create exactly one pending occurrence', async () => {
    clock.set('2026-03-02T09:00:30Z');
    const a = worker({ 'test.every': async () => {}, 'test.daily': async () => {} });
    const b = worker({ 'test.every': async () => {}, 'test.daily': async () => {} });
    const created = await Promise.all([a.ensureScheduled(), b.ensureScheduled(), a.ensureScheduled(), b.ensureScheduled()]);
    expect(created.reduce((x, y) => x + y)).toBe(2);
    const pending = await rows();
    expect(pending.map((r) => [r.name, r.status, r.runAt.toISOString(), r.singletonKey]).sort()).toEqual([
      ['test.daily', 'queued', '2026-03-03T07:00:00.000Z', 'schedule:test.daily'],
      ['test.every', 'queued', '2026-03-02T09:01:00.000Z', 'schedule:test.every'],
    ]);
  });

  it('runs each occurrence once across replicas and schedules the next one when it finishes', async () => {
    clock.set('2026-03-02T09:00:30Z');
    let runs = 0;
    const handlers = { 'test.every': async () => void (runs++, await sleep(5)) };
    const a = worker(handlers);
    const b = worker(handlers);
    expect(await a.drain()).toBe(0); // schedules 09:01, nothing due yet
    for (let minute = 1; minute <= 3; minute++) {
      clock.advance(60_000);
      await Promise.all([a.drain(), b.drain()]);
      expect(runs).toBe(minute);
    }
    const all = await rows();
    expect(all.map((r) => [r.status, r.runAt.toISOString()])).toEqual([
      ['done', '2026-03-02T09:01:00.000Z'],
      ['done', '2026-03-02T09:02:00.000Z'],
      ['done', '2026-03-02T09:03:00.000Z'],
      ['queued', '2026-03-02T09:04:00.000Z'],
    ]);
  });

  it('a missed schedule runs once, not once per missed slot', async () => {
    clock.set('2026-03-02T09:00:30Z');
    let runs = 0;
    const w = worker({ 'test.every': async () => void runs++ });
    await w.ensureScheduled();
    clock.advance(3_600_000); // the workers were down for an hour
    expect(await w.drain()).toBe(1);
    expect(runs).toBe(1);
    const pending = (await rows()).filter((r) => r.status === 'queued');
    expect(pending.map((r) => r.runAt.toISOString())).toEqual(['2026-03-02T10:01:00.000Z']);
  });

  it('a recurring occurrence that dies does not stop the schedule', async () => {
    clock.set('2026-03-02T09:00:00Z');
    const w = worker({
      'test.daily': async () => {
        throw new Error('smtp down');
      },
    });
    await w.ensureScheduled();
    clock.set('2026-03-02T07:00:00Z');
    clock.advance(86_400_000);
    expect(await w.drain()).toBe(1);
    const all = await rows();
    expect(all.map((r) => [r.status, r.runAt.toISOString(), r.lastError])).toEqual([
      ['dead', '2026-03-03T07:00:00.000Z', 'smtp down'],
      ['queued', '2026-03-04T07:00:00.000Z', null],
    ]);
  });
});

describe('queue: retention', () => {
  const day = 86_400_000;
  const seed = async (id: string, status: string, ageDays: number) => {
    const at = new Date(clock.now().getTime() - ageDays * day);
    await database.db.insert(jobs).values({ id, name: 'test.job', payload: { n: 1 }, status, runAt: at, createdAt: at, updatedAt: at, completedAt: status === 'done' ? at : null });
  };

  it('purges done jobs after the done retention and dead jobs after the dead retention, never pending ones', async () => {
    clock.set('2026-03-20T12:00:00Z');
    await seed('done_old', 'done', 8);
    await seed('done_new', 'done', 6);
    await seed('dead_old', 'dead', 31);
    await seed('dead_new', 'dead', 10);
    await seed('queued_old', 'queued', 90);
    await seed('running_old', 'running', 90);
    expect(await purgeJobs(database.db, clock, { doneDays: 7, deadDays: 30, batchSize: 1 })).toEqual({ done: 1, dead: 1 });
    expect((await rows()).map((r) => r.id).sort()).toEqual(['dead_new', 'done_new', 'queued_old', 'running_old']);
  });

  it('the worker runs the recurring maintenance job that purges', async () => {
    clock.set('2026-03-20T12:00:00Z');
    await seed('done_old', 'done', 8);
    await seed('done_new', 'done', 1);
    const w = new Worker({
      db: database.db,
      clock,
      handlers: queueJobs({ db: database.db, clock, retention: { doneDays: 7, deadDays: 30 } }),
      log: quiet,
    });
    expect(await w.drain()).toBe(0);
    const [pending] = (await rows()).filter((r) => r.name === QUEUE_MAINTENANCE_JOB);
    expect(pending).toMatchObject({ status: 'queued', runAt: new Date('2026-03-20T12:17:00Z') });
    clock.advance(17 * 60_000);
    expect(await w.drain()).toBe(1);
    const left = await rows();
    expect(left.map((r) => r.id)).not.toContain('done_old');
    expect(left.map((r) => r.id)).toContain('done_new');
    expect(left.filter((r) => r.name === QUEUE_MAINTENANCE_JOB).map((r) => [r.status, r.runAt.toISOString()])).toEqual([
      ['done', '2026-03-20T12:17:00.000Z'],
      ['queued', '2026-03-20T13:17:00.000Z'],
    ]);
  });
});

describe('lms jobs', () => {
  it('lists dead jobs with attempts and last error, and retries one', async () => {
    clock.set('2026-03-02T09:00:00Z');
    await put('test.fail', {}, { maxAttempts: 1 });
    await put('test.job', { n: 1 });
    await worker({
      'test.fail': async () => {
        throw new Error('SMTP 550\nmailbox unavailable');
      },
    }).drain();
    const [dead] = (await rows()).filter((r) => r.status === 'dead');
    const listed = await jobsCommand(database.db, clock, []);
    expect(listed.exitCode).toBe(0);
    const lines = listed.output.split('\n');
    expect(lines[0]).toMatch(/^id\s+name\s+status\s+attempts\s+updated\s+last error$/);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(dead.id);
    expect(lines[1]).toMatch(/test\.fail\s+dead\s+1\/1\s+2026-03-02T09:00:00\.000Z\s+SMTP 550 mailbox unavailable$/);
    expect((await jobsCommand(database.db, clock, ['--status', 'queued'])).output).toContain('test.job');
    expect((await jobsCommand(database.db, clock, ['--status', 'all', '--limit', '1'])).output.split('\n')).toHaveLength(2);
    expect((await jobsCommand(database.db, clock, ['--status', 'done'])).output).toBe('no done jobs');
    await expect(jobsCommand(database.db, clock, ['--status', 'weird'])).rejects.toBeInstanceOf(JobsCliError);

    expect(await jobsCommand(database.db, clock, ['retry', 'nope'])).toMatchObject({ exitCode: 1 });
    expect(await jobsCommand(database.db, clock, ['retry', dead.id])).toEqual({ output: `job ${dead.id} queued again`, exitCode: 0 });
    const [again] = await database.db.select().from(jobs).where(eq(jobs.id, dead.id));
    expect(again).toMatchObject({ status: 'queued', attempts: 0 });
    expect(await jobsCommand(database.db, clock, ['retry', dead.id])).toMatchObject({ exitCode: 1 });
    let ran = 0;
    await worker({ 'test.fail': async () => void ran++ }).drain();
    expect(ran).toBe(1);
  });
});

describe('module wiring', () => {
  const deps = () =>
    ({
      config: loadConfig({ NODE_ENV: 'test' }),
      database,
      clock,
      crm: {} as Deps['crm'],
      storage: {} as Deps['storage'],
      log: quiet,
      mailer: {} as Deps['mailer'],
      push: {} as Deps['push'],
      recorder: {} as Deps['recorder'],
      cache: {} as Deps['cache'],
    }) as Deps;

  it('every defined job has exactly one handler, from the module list or the queue', () => {
    expect(Object.keys(jobHandlers(deps())).sort()).toEqual(Object.keys(jobDefinitions as JobDefinitions).sort());
  });

  it('a job handled by two modules is refused', () => {
    const twice = { name: 'twice', jobs: () => ({ 'crm.pushCompletion': async () => {} }) };
    const again = { name: 'again', jobs: () => ({ 'crm.pushCompletion': async () => {} }) };
    expect(() => jobHandlers(deps(), [twice, again])).toThrow(/crm\.pushCompletion is handled twice \(module again\)/);
  });
});
