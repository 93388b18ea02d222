import { and, eq, sql } from 'drizzle-orm';
import type { Clock } from '../clock.js';
import type { Db, DbOrTx } from '../db/client.js';
import { newId } from '../ids.js';
import { jobs, type Job } from './queue.tables.js';

export interface EnqueueOptions {
  institutionId?: string | null;
  /** Run no earlier than this (scheduled jobs). */
  runAt?: Date;
  maxAttempts?: number;
}

export type JobHandler = (job: Job) => Promise<void>;

/**
 * Enqueue a job through `tx`: pass the transaction of the write that causes the job,
 * so a rollback enqueues nothing.
 */
export async function enqueue(
  tx: DbOrTx,
  clock: Clock,
  name: string,
  payload: Record<string, unknown>,
  opts: EnqueueOptions = {},
): Promise<string> {
  const now = clock.now();
  const id = newId();
  await tx.insert(jobs).values({
    id,
    name,
    payload,
    institutionId: opts.institutionId ?? null,
    runAt: opts.runAt ?? now,
    maxAttempts: opts.maxAttempts ?? 5,
    createdAt: now,
    updatedAt: now,
  });
  return id;
}

/** Delay before retry n (1-based): 2^n seconds, capped at one hour. */
export const retryDelayMs = (attempt: number) => Math.min(2 ** attempt * 1000, 3_600_000);

export interface WorkerOptions {
  db: Db;
  clock: Clock;
  handlers: Map<string, JobHandler>;
  workerId?: string;
  batchSize?: number;
  /** How long a claim lasts; a job still running after this is handed to another worker. */
  leaseMs?: number;
  pollMs?: number;
  log?: Pick<Console, 'error' | 'warn' | 'info'>;
}

export class Worker {
  readonly id: string;
  private stopped = true;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;

  constructor(private readonly opts: WorkerOptions) {
    this.id = opts.workerId ?? `worker-${newId()}`;
  }

  /** Claim due jobs (and jobs whose lease expired) without blocking other workers. */
  async claim(limit = this.opts.batchSize ?? 10): Promise<Job[]> {
    const names = [...this.opts.handlers.keys()];
    if (names.length === 0) return [];
    const now = this.opts.clock.now();
    const leaseUntil = new Date(now.getTime() + (this.opts.leaseMs ?? 60_000));
    const nameList = sql.join(names.map((n) => sql`${n}`), sql`, `);
    const nowIso = now.toISOString();
    const res = (await this.opts.db.execute(sql`
      update jobs set status = 'running', attempts = attempts + 1,
        locked_until = ${leaseUntil.toISOString()}, locked_by = ${this.id}, updated_at = ${nowIso}
      where id in (
        select id from jobs
        where name in (${nameList})
          and ((status = 'queued' and run_at <= ${nowIso}) or (status = 'running' and locked_until < ${nowIso}))
        order by run_at
        limit ${limit}
        for update skip locked
      )
      returning id`)) as unknown as { rows: Array<{ id: string }> };
    if (res.rows.length === 0) return [];
    const ids = res.rows.map((r) => r.id);
    const claimed = await this.opts.db.select().from(jobs).where(sql`${jobs.id} in (${sql.join(ids.map((i) => sql`${i}`), sql`, `)})`);
    return claimed.sort((a, b) => a.runAt.getTime() - b.runAt.getTime());
  }

  private async finish(job: Job, error: unknown) {
    const now = this.opts.clock.now();
    const mine = and(eq(jobs.id, job.id), eq(jobs.lockedBy, this.id));
    if (!error) {
      await this.opts.db
        .update(jobs)
        .set({ status: 'done', completedAt: now, updatedAt: now, lockedUntil: null, lastError: null })
        .where(mine);
      return;
    }
    const message = error instanceof Error ? error.message : String(error);
    const dead = job.attempts >= job.maxAttempts;
    await this.opts.db
      .update(jobs)
      .set({
        status: dead ? 'dead' : 'queued',
        lastError: message.slice(0, 2000),
        runAt: dead ? job.runAt : new Date(now.getTime() + retryDelayMs(job.attempts)),
        lockedUntil: null,
        lockedBy: null,
        updatedAt: now,
      })
      .where(mine);
    (this.opts.log ?? console)[dead ? 'error' : 'warn'](
      `[lms] job ${job.name} ${job.id} failed (attempt ${job.attempts}/${job.maxAttempts})${dead ? ', moved to dead' : ''}: ${message}`,
    );
  }

  private async run(job: Job) {
    const handler = this.opts.handlers.get(job.name);
    let error: unknown;
    try {
      if (!handler) throw new Error(`no handler for job ${job.name}`);
      await handler(job);
    } catch (err) {
      error = err ?? new Error('job failed');
    }
    await this.finish(job, error);
  }

  /** Run one batch of due jobs; returns how many ran. */
  async runOnce(): Promise<number> {
    const batch = await this.claim();
    await Promise.all(batch.map((job) => this.run(job)));
    return batch.length;
  }

  /** Run batches until nothing is due (tests and the sync endpoint use this). */
  async drain(maxBatches = 100): Promise<number> {
    let total = 0;
    for (let i = 0; i < maxBatches; i++) {
      const n = await this.runOnce();
      total += n;
      if (n === 0) break;
    }
    return total;
  }

  start() {
    if (!this.stopped) return;
    this.stopped = false;
    this.loop = (async () => {
      while (!this.stopped) {
        let ran = 0;
        try {
          ran = await this.runOnce();
        } catch (err) {
          (this.opts.log ?? console).error(`[lms] worker poll failed: ${(err as Error).message}`);
        }
        if (ran === 0 && !this.stopped) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, this.opts.pollMs ?? 1000);
            this.wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
        }
      }
    })();
  }

  /** Stop polling; the batch in flight finishes first. */
  async stop() {
    this.stopped = true;
    this.wake?.();
    await this.loop;
  }
}
