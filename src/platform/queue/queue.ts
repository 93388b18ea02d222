import { and, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Clock } from '../clock.js';
import type { Db, DbOrTx } from '../db/client.js';
import { newId } from '../ids.js';
import { retryWhileUnavailable } from '../db/errors.js';
import { jobs, type Job } from './queue.tables.js';
import {
  DEFAULT_JOB_TIMEOUT_MS,
  DEFAULT_MAX_ATTEMPTS,
  jobDefinitions,
  type AppJobDefinitions,
  type JobDefinition,
  type JobDefinitions,
  type JobName,
  type PayloadInputOf,
  type PayloadOf,
} from './jobs.schemas.js';
import { assertSchedule, nextRunAt, scheduleKey } from './schedule.js';
import { retryDelayMs } from './retry.js';

export interface EnqueueOptions {
  institutionId?: string | null;
  /** Run no earlier than this (scheduled jobs). */
  runAt?: Date;
  /** Overrides the definition's `maxAttempts`. */
  maxAttempts?: number;
  /**
   * While a job with this key is queued or running, enqueueing another one with the same key
   * does nothing and returns null (debounce, one pending occurrence).
   */
  singletonKey?: string;
}

/** `enqueue` of a name the registry does not define. */
export class UnknownJobError extends Error {}

/** `enqueue` of a payload its job's schema refuses; nothing was inserted. */
export class JobPayloadError extends Error {
  constructor(
    readonly jobName: string,
    readonly issues: z.core.$ZodIssue[],
  ) {
    super(`invalid payload for job ${jobName}: ${issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  }
}

/** The handler ran past its definition's `timeoutMs`. */
export class JobTimeoutError extends Error {
  constructor(jobName: string, timeoutMs: number) {
    super(`job ${jobName} timed out after ${timeoutMs} ms`);
  }
}

/** Another worker took the job over (this worker's lease expired before a heartbeat landed). */
export class LeaseLostError extends Error {}

/** A claimed job as its handler sees it: the stored row with the parsed, typed payload. */
export type RunningJob<P> = Omit<Job, 'payload'> & { payload: P };

export interface JobContext {
  /** Aborted when the job times out or its lease is lost: stop work and return (or throw). */
  signal: AbortSignal;
}

export type JobHandler<P = Record<string, unknown>> = (job: RunningJob<P>, ctx: JobContext) => Promise<void>;

/** Handlers of some of the jobs of `D`, keyed by job name. */
export type JobHandlersOf<D extends JobDefinitions> = { [N in keyof D]?: JobHandler<PayloadOf<D, N>> };
/** Handlers of the application's jobs (what a module's `jobs` returns). */
export type JobHandlers = JobHandlersOf<AppJobDefinitions>;

function definitionOf(definitions: JobDefinitions, name: string): JobDefinition {
  const def = Object.hasOwn(definitions, name) ? definitions[name] : undefined;
  if (!def) throw new UnknownJobError(`unknown job ${name}: add it to the job definitions (platform/queue/jobs.schemas.ts)`);
  return def;
}

/** The row of a new job: the payload validated (JobPayloadError, nothing inserted), the definition's defaults applied. */
function jobRow<D extends JobDefinitions>(definitions: D, name: keyof D & string, payload: unknown, opts: EnqueueOptions, now: Date) {
  const def = definitionOf(definitions, name);
  const parsed = def.payload.safeParse(payload);
  if (!parsed.success) throw new JobPayloadError(name, parsed.error.issues);
  return {
    id: newId(),
    name,
    payload: parsed.data as Record<string, unknown>,
    institutionId: opts.institutionId ?? null,
    runAt: opts.runAt ?? now,
    maxAttempts: opts.maxAttempts ?? def.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    singletonKey: opts.singletonKey ?? null,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * Enqueue a job of `definitions` through `tx`. The payload is validated first: an invalid one
 * throws `JobPayloadError` and inserts nothing.
 */
export async function enqueueJob<D extends JobDefinitions, N extends keyof D & string>(
  definitions: D,
  tx: DbOrTx,
  clock: Clock,
  name: N,
  payload: PayloadInputOf<D, N>,
  opts: EnqueueOptions = {},
): Promise<string | null> {
  const row = jobRow(definitions, name, payload, opts, clock.now());
  const insert = tx.insert(jobs).values(row);
  const id = row.id;
  if (!opts.singletonKey) {
    await insert;
    return id;
  }
  const inserted = await insert.onConflictDoNothing().returning({ id: jobs.id });
  return inserted.length > 0 ? id : null;
}

/**
 * Enqueue one of the application's jobs through `tx`: pass the transaction of the write that
 * causes the job, so a rollback enqueues nothing. Name and payload are type-checked against the
 * registry (jobs.schemas.ts) and the payload is validated before the insert.
 * Returns the job id, or null when `singletonKey` matched a pending job.
 */
export function enqueue<N extends JobName>(
  tx: DbOrTx,
  clock: Clock,
  name: N,
  payload: PayloadInputOf<AppJobDefinitions, N>,
  opts?: EnqueueOptions & { singletonKey?: undefined },
): Promise<string>;
export function enqueue<N extends JobName>(tx: DbOrTx, clock: Clock, name: N, payload: PayloadInputOf<AppJobDefinitions, N>, opts: EnqueueOptions): Promise<string | null>;
export function enqueue<N extends JobName>(tx: DbOrTx, clock: Clock, name: N, payload: PayloadInputOf<AppJobDefinitions, N>, opts: EnqueueOptions = {}): Promise<string | null> {
  return enqueueJob(jobDefinitions, tx, clock, name, payload, opts);
}

/**
 * Enqueue many jobs of one name in one statement (a fan-out's delivery batches). Payloads are
 * validated first; an invalid one throws and inserts nothing. Items with a `singletonKey` that
 * matches a pending job are skipped. Returns how many were inserted.
 */
export async function enqueueMany<N extends JobName>(
  tx: DbOrTx,
  clock: Clock,
  name: N,
  items: { payload: PayloadInputOf<AppJobDefinitions, N>; opts?: EnqueueOptions }[],
): Promise<number> {
  if (items.length === 0) return 0;
  const now = clock.now();
  const rows = items.map(({ payload, opts = {} }) => jobRow(jobDefinitions, name, payload, opts, now));
  const inserted = await tx.insert(jobs).values(rows).onConflictDoNothing().returning({ id: jobs.id });
  return inserted.length;
}

export { retryDelayMs } from './retry.js';

export const DEFAULT_LEASE_MS = 60_000;

export interface WorkerOptions<D extends JobDefinitions = AppJobDefinitions> {
  db: Db;
  clock: Clock;
  handlers: JobHandlersOf<D>;
  /** The registry the handlers belong to; default: the application's (jobs.schemas.ts). */
  definitions?: D;
  workerId?: string;
  batchSize?: number;
  /**
   * How long a claim lasts without a heartbeat. The worker extends it every `heartbeatMs`
   * while the handler runs; a job whose lease expired (its worker died) is claimed again.
   */
  leaseMs?: number;
  /** Lease extension period; default leaseMs / 3. */
  heartbeatMs?: number;
  /** Handler time limit for definitions without `timeoutMs`. */
  defaultTimeoutMs?: number;
  pollMs?: number;
  /** How often the worker makes sure each recurring job has its pending occurrence (default 60 s). */
  scheduleCheckMs?: number;
  log?: Pick<Console, 'error' | 'warn' | 'info'>;
}

export class Worker<D extends JobDefinitions = AppJobDefinitions> {
  readonly id: string;
  private readonly definitions: JobDefinitions;
  private readonly handlers = new Map<string, JobHandler<any>>();
  private readonly leaseMs: number;
  private stopped = true;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private lastScheduleCheck = Number.NEGATIVE_INFINITY;

  constructor(private readonly opts: WorkerOptions<D>) {
    this.id = opts.workerId ?? `worker-${newId()}`;
    this.definitions = opts.definitions ?? jobDefinitions;
    this.leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
    for (const [name, handler] of Object.entries(opts.handlers) as Array<[string, JobHandler<any> | undefined]>) {
      if (!handler) continue;
      const def = definitionOf(this.definitions, name);
      if (def.schedule) {
        assertSchedule(name, def.schedule);
        if (!def.payload.safeParse({}).success) throw new Error(`recurring job ${name}: its payload schema must accept {}`);
      }
      this.handlers.set(name, handler);
    }
  }

  private get log() {
    return this.opts.log ?? console;
  }

  /** The job names this worker runs. */
  get jobNames(): string[] {
    return [...this.handlers.keys()];
  }

  /** This worker's hold on a claimed job: the claim of this attempt, still running. */
  private mine(job: Job) {
    return and(eq(jobs.id, job.id), eq(jobs.lockedBy, this.id), eq(jobs.status, 'running'), eq(jobs.attempts, job.attempts));
  }

  /** Claim due jobs (and jobs whose lease expired) without blocking other workers. */
  async claim(limit = this.opts.batchSize ?? 10): Promise<Job[]> {
    const names = this.jobNames;
    if (names.length === 0) return [];
    const now = this.opts.clock.now();
    const leaseUntil = new Date(now.getTime() + this.leaseMs);
    const nameList = sql.join(
      names.map((n) => sql`${n}`),
      sql`, `,
    );
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
    const claimed = await this.opts.db
      .select()
      .from(jobs)
      .where(
        sql`${jobs.id} in (${sql.join(
          ids.map((i) => sql`${i}`),
          sql`, `,
        )})`,
      );
    return claimed.sort((a, b) => a.runAt.getTime() - b.runAt.getTime());
  }

  /**
   * Make sure every recurring job this worker runs has its one pending occurrence. Safe from any
   * number of replicas at once: the singleton key's unique index lets one insert win.
   * Returns how many occurrences this call created.
   */
  async ensureScheduled(): Promise<number> {
    const now = this.opts.clock.now();
    this.lastScheduleCheck = now.getTime();
    let created = 0;
    for (const name of this.jobNames) {
      if (await this.scheduleNext(this.opts.db, name, now)) created++;
    }
    return created;
  }

  /** Insert the next occurrence of recurring job `name` unless one is pending. */
  private async scheduleNext(db: DbOrTx, name: string, now: Date): Promise<boolean> {
    const def = this.definitions[name];
    if (!def?.schedule) return false;
    const inserted = await db
      .insert(jobs)
      .values({
        id: newId(),
        name,
        payload: def.payload.parse({}) as Record<string, unknown>,
        runAt: nextRunAt(def.schedule, now),
        maxAttempts: def.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
        singletonKey: scheduleKey(name),
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing()
      .returning({ id: jobs.id });
    return inserted.length > 0;
  }

  /** Extend the lease every heartbeat period while the handler runs; abort when it was lost. */
  private startHeartbeat(job: Job, controller: AbortController) {
    const every = this.opts.heartbeatMs ?? Math.max(1, Math.floor(this.leaseMs / 3));
    let stopped = false;
    let inFlight = false;
    const beat = async () => {
      if (stopped || inFlight) return;
      inFlight = true;
      try {
        const lockedUntil = new Date(this.opts.clock.now().getTime() + this.leaseMs);
        const kept = await this.opts.db.update(jobs).set({ lockedUntil }).where(this.mine(job)).returning({ id: jobs.id });
        if (kept.length === 0 && !stopped) {
          controller.abort(new LeaseLostError(`job ${job.name} ${job.id}: lease lost to another worker`));
        }
      } catch (err) {
        this.log.warn(`[lms] heartbeat of job ${job.name} ${job.id} failed: ${(err as Error).message}`);
      } finally {
        inFlight = false;
      }
    };
    const timer = setInterval(() => void beat(), every);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }

  private async finish(job: Job, error: unknown) {
    const now = this.opts.clock.now();
    const def = this.definitions[job.name];
    const recurring = Boolean(def?.schedule) && job.singletonKey === scheduleKey(job.name);
    const message = error === undefined ? null : error instanceof Error ? error.message : String(error);
    const dead = error !== undefined && job.attempts >= job.maxAttempts;
    const values =
      error === undefined
        ? { status: 'done', completedAt: now, updatedAt: now, lockedUntil: null, lastError: null }
        : {
            status: dead ? 'dead' : 'queued',
            lastError: message!.slice(0, 2000),
            runAt: dead ? job.runAt : new Date(now.getTime() + retryDelayMs(job.attempts, def?.maxRetryDelayMs)),
            lockedUntil: null,
            lockedBy: null,
            updatedAt: now,
          };
    const apply = async (db: DbOrTx) => {
      const updated = await db.update(jobs).set(values).where(this.mine(job)).returning({ id: jobs.id });
      // A finished occurrence of a recurring job frees its key: schedule the next one with it.
      if (updated.length > 0 && recurring && values.status !== 'queued') await this.scheduleNext(db, job.name, now);
    };
    // The job ran: record that even across a short database outage, or it would run again.
    await retryWhileUnavailable(() => (recurring ? this.opts.db.transaction(apply) : apply(this.opts.db)), {
      budgetMs: this.leaseMs,
      onRetry: (err) => this.log.warn(`[lms] recording the outcome of job ${job.name} ${job.id} waits for the database: ${(err as Error).message}`),
    });
    if (error !== undefined) {
      this.log[dead ? 'error' : 'warn'](`[lms] job ${job.name} ${job.id} failed (attempt ${job.attempts}/${job.maxAttempts})${dead ? ', moved to dead' : ''}: ${message}`);
    }
  }

  private async run(job: Job) {
    const def = this.definitions[job.name];
    const handler = this.handlers.get(job.name);
    const controller = new AbortController();
    const aborted = new Promise<never>((_, reject) => {
      controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
    });
    aborted.catch(() => undefined);
    const timeoutMs = def?.timeoutMs ?? this.opts.defaultTimeoutMs ?? DEFAULT_JOB_TIMEOUT_MS;
    const timer = setTimeout(() => controller.abort(new JobTimeoutError(job.name, timeoutMs)), timeoutMs);
    const stopHeartbeat = this.startHeartbeat(job, controller);
    let error: unknown;
    try {
      if (!handler || !def) throw new Error(`no handler for job ${job.name}`);
      const payload = def.payload.parse(job.payload);
      const running = Promise.resolve().then(() => handler({ ...job, payload }, { signal: controller.signal }));
      running.catch(() => undefined); // a handler that rejects after it was abandoned
      await Promise.race([running, aborted]);
    } catch (err) {
      error = err ?? new Error('job failed');
    } finally {
      clearTimeout(timer);
      stopHeartbeat();
    }
    if (error instanceof LeaseLostError) {
      // Another worker owns the job now; its outcome is theirs to record.
      this.log.warn(`[lms] ${error.message}`);
      return;
    }
    await this.finish(job, error);
  }

  private async maybeSchedule() {
    const now = this.opts.clock.now().getTime();
    if (now - this.lastScheduleCheck >= (this.opts.scheduleCheckMs ?? 60_000)) await this.ensureScheduled();
  }

  /** Run one batch of due jobs; returns how many ran. */
  async runOnce(): Promise<number> {
    await this.maybeSchedule();
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
          this.log.error(`[lms] worker poll failed: ${(err as Error).message}`);
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

  /** Stop polling; the batch in flight finishes first (each job within its timeout). */
  async stop() {
    this.stopped = true;
    this.wake?.();
    await this.loop;
  }
}
