import { and, desc, eq, sql } from 'drizzle-orm';
import type { Clock } from '../clock.js';
import type { Db } from '../db/client.js';
import { jobs, type Job, type JobStatus } from './queue.tables.js';
import { QUEUE_MAINTENANCE_JOB } from './jobs.schemas.js';
import type { JobHandlers } from './queue.js';

const DAY_MS = 86_400_000;

export interface RetentionOptions {
  /** Days a done job is kept (default 7). */
  doneDays: number;
  /** Days a dead job is kept, for `lms jobs` and a retry (default 30). */
  deadDays: number;
  /** Rows deleted per statement, so no delete holds a long transaction (default 1000). */
  batchSize?: number;
}

/** Delete finished jobs past their retention, in short batches. Queued and running jobs are never touched. */
export async function purgeJobs(db: Db, clock: Clock, opts: RetentionOptions): Promise<{ done: number; dead: number }> {
  const now = clock.now().getTime();
  const batch = opts.batchSize ?? 1000;
  const purge = async (status: JobStatus, days: number) => {
    const cutoff = new Date(now - days * DAY_MS).toISOString();
    let total = 0;
    for (;;) {
      const res = (await db.execute(sql`
        delete from jobs where id in (
          select id from jobs where status = ${status} and updated_at < ${cutoff} limit ${batch}
        ) returning id`)) as unknown as { rows: unknown[] };
      total += res.rows.length;
      if (res.rows.length < batch) return total;
    }
  };
  return { done: await purge('done', opts.doneDays), dead: await purge('dead', opts.deadDays) };
}

/** The queue's own jobs: the recurring maintenance job (retention purge). */
export function queueJobs(deps: { db: Db; clock: Clock; retention: RetentionOptions; log?: Pick<Console, 'info'> }): JobHandlers {
  return {
    [QUEUE_MAINTENANCE_JOB]: async () => {
      const purged = await purgeJobs(deps.db, deps.clock, deps.retention);
      if (purged.done + purged.dead > 0) deps.log?.info(`[lms] purged ${purged.done} done and ${purged.dead} dead jobs`);
    },
  };
}

export interface ListJobsOptions {
  /** One status, or all of them when absent. */
  status?: JobStatus;
  name?: string;
  limit?: number;
}

/** Jobs, most recently updated first (`lms jobs`). */
export async function listJobs(db: Db, opts: ListJobsOptions = {}): Promise<Job[]> {
  const where = and(opts.status ? eq(jobs.status, opts.status) : undefined, opts.name ? eq(jobs.name, opts.name) : undefined);
  return db
    .select()
    .from(jobs)
    .where(where)
    .orderBy(desc(jobs.updatedAt), desc(jobs.id))
    .limit(opts.limit ?? 20);
}

export type RetryOutcome = 'queued' | 'not_found' | 'not_dead' | 'pending_exists';

/**
 * Queue a dead job again, now, with a fresh set of attempts (`lms jobs retry <id>`).
 * A recurring job whose next occurrence is already pending is not duplicated.
 */
export async function retryJob(db: Db, clock: Clock, id: string): Promise<RetryOutcome> {
  const [job] = await db.select().from(jobs).where(eq(jobs.id, id)).limit(1);
  if (!job) return 'not_found';
  if (job.status !== 'dead') return 'not_dead';
  if (job.singletonKey) {
    const [pending] = await db
      .select({ id: jobs.id })
      .from(jobs)
      .where(and(eq(jobs.singletonKey, job.singletonKey), sql`${jobs.status} in ('queued', 'running')`))
      .limit(1);
    if (pending) return 'pending_exists';
  }
  const now = clock.now();
  const updated = await db
    .update(jobs)
    .set({ status: 'queued', attempts: 0, runAt: now, lockedBy: null, lockedUntil: null, updatedAt: now })
    .where(and(eq(jobs.id, id), eq(jobs.status, 'dead')))
    .returning({ id: jobs.id });
  return updated.length > 0 ? 'queued' : 'not_dead';
}
