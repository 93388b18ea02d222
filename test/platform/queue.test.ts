import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eq, sql } from 'drizzle-orm';
import { ManualClock } from '../../src/platform/clock.js';
import type { Database } from '../../src/platform/db/client.js';
import { enqueue, retryDelayMs, Worker, type JobHandler } from '../../src/platform/queue/queue.js';
import { jobs } from '../../src/platform/queue/queue.tables.js';
import { institutions } from '../../src/modules/institutions/institutions.tables.js';
import { freshDatabase } from '../helpers/database.js';

let database: Database;
const clock = new ManualClock('2026-03-02T09:00:00Z');
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

beforeAll(async () => {
  database = await freshDatabase();
});
afterAll(() => database.close());
beforeEach(async () => {
  await database.db.delete(jobs);
});

const worker = (handlers: Record<string, JobHandler>, opts: Partial<ConstructorParameters<typeof Worker>[0]> = {}) =>
  new Worker({ db: database.db, clock, handlers: new Map(Object.entries(handlers)), log: quiet, ...opts });

describe('queue', () => {
  it('enqueues inside the transaction: a rollback enqueues nothing', async () => {
    await expect(
      database.db.transaction(async (tx) => {
        await tx.insert(institutions).values({ id: 'inst_q', settings: {} });
        await enqueue(tx, clock, 'test.job', { n: 1 });
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');
    expect(await database.db.select().from(jobs)).toHaveLength(0);
    await database.db.transaction(async (tx) => {
      await enqueue(tx, clock, 'test.job', { n: 2 });
    });
    expect(await database.db.select().from(jobs)).toHaveLength(1);
  });

  it('runs a job once and marks it done', async () => {
    const seen: unknown[] = [];
    await enqueue(database.db, clock, 'test.job', { n: 3 });
    const w = worker({ 'test.job': async (job) => void seen.push(job.payload) });
    expect(await w.drain()).toBe(1);
    expect(seen).toEqual([{ n: 3 }]);
    const [row] = await database.db.select().from(jobs);
    expect(row.status).toBe('done');
    expect(row.completedAt).not.toBeNull();
    expect(await w.drain()).toBe(0);
  });

  it('never runs one job twice across two workers', async () => {
    for (let i = 0; i < 40; i++) await enqueue(database.db, clock, 'test.count', { i });
    const runs = new Map<number, number>();
    const handler: JobHandler = async (job) => {
      const i = job.payload.i as number;
      runs.set(i, (runs.get(i) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, 2));
    };
    const a = worker({ 'test.count': handler }, { batchSize: 5 });
    const b = worker({ 'test.count': handler }, { batchSize: 5 });
    await Promise.all([a.drain(), b.drain(), a.drain(), b.drain()]);
    expect(runs.size).toBe(40);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
  });

  it('hands a job whose worker died to another after its lease expires', async () => {
    await enqueue(database.db, clock, 'test.lease', {});
    const dead = worker({ 'test.lease': async () => {} }, { leaseMs: 30_000 });
    const claimed = await dead.claim(); // claims, then "dies" without finishing
    expect(claimed).toHaveLength(1);
    let ran = 0;
    const other = worker({ 'test.lease': async () => void ran++ }, { leaseMs: 30_000 });
    expect(await other.runOnce()).toBe(0); // still leased
    clock.advance(31_000);
    expect(await other.runOnce()).toBe(1);
    expect(ran).toBe(1);
    const [row] = await database.db.select().from(jobs);
    expect(row.status).toBe('done');
    expect(row.attempts).toBe(2);
  });

  it('retries with backoff and moves a job to dead after max attempts with its last error', async () => {
    await enqueue(database.db, clock, 'test.fail', {}, { maxAttempts: 3 });
    let calls = 0;
    const w = worker({ 'test.fail': async () => { calls++; throw new Error(`boom ${calls}`); } });
    expect(await w.runOnce()).toBe(1);
    let [row] = await database.db.select().from(jobs);
    expect(row.status).toBe('queued');
    expect(row.runAt.getTime()).toBe(clock.now().getTime() + retryDelayMs(1));
    expect(await w.runOnce()).toBe(0); // backing off
    clock.advance(retryDelayMs(1));
    expect(await w.runOnce()).toBe(1);
    clock.advance(retryDelayMs(2));
    expect(await w.runOnce()).toBe(1);
    [row] = await database.db.select().from(jobs);
    expect(row.status).toBe('dead');
    expect(row.attempts).toBe(3);
    expect(row.lastError).toBe('boom 3');
    clock.advance(3_600_000);
    expect(await w.runOnce()).toBe(0);
  });

  it('runs a scheduled job only when it is due', async () => {
    await enqueue(database.db, clock, 'test.later', {}, { runAt: new Date(clock.now().getTime() + 3_600_000) });
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
    await enqueue(database.db, clock, 'test.loop', {});
    for (let i = 0; i < 100 && ran === 0; i++) await new Promise((r) => setTimeout(r, 10));
    await w.stop();
    expect(ran).toBe(1);
    const rows = await database.db.select().from(jobs).where(eq(jobs.name, 'test.loop'));
    expect(rows[0].status).toBe('done');
  });

  it('ignores jobs it has no handler for', async () => {
    await enqueue(database.db, clock, 'other.job', {});
    expect(await worker({ 'test.job': async () => {} }).drain()).toBe(0);
    const res = await database.db.execute(sql`select status from jobs`);
    expect((res as unknown as { rows: Array<{ status: string }> }).rows[0].status).toBe('queued');
  });
});
