import type { Deps } from '../platform/context.js';
import { Worker, type JobHandler, type JobHandlers } from '../platform/queue/queue.js';
import { queueJobs } from '../platform/queue/maintenance.js';
import { modules } from '../modules/index.js';
import type { AppModule } from '../modules/types.js';

/**
 * Every job handler: the queue's own (retention maintenance) and each module's `jobs`, from the
 * one module list. A job name handled twice is a wiring bug and stops the worker.
 */
export function jobHandlers(deps: Deps, list: AppModule[] = modules): JobHandlers {
  const handlers: Record<string, JobHandler<any>> = {
    ...queueJobs({
      db: deps.database.db,
      clock: deps.clock,
      retention: { doneDays: deps.config.JOB_RETENTION_DAYS, deadDays: deps.config.JOB_DEAD_RETENTION_DAYS },
      log: deps.log,
    }),
  };
  for (const mod of list) {
    for (const [name, handler] of Object.entries(mod.jobs?.(deps) ?? {})) {
      if (!handler) continue;
      if (handlers[name]) throw new Error(`job ${name} is handled twice (module ${mod.name})`);
      handlers[name] = handler;
    }
  }
  return handlers as JobHandlers;
}

/** The worker: claims and runs every module's jobs, and keeps the recurring ones scheduled. */
export function createWorker(deps: Deps, opts: { workerId?: string; pollMs?: number } = {}): Worker {
  return new Worker({
    db: deps.database.db,
    clock: deps.clock,
    handlers: jobHandlers(deps),
    workerId: opts.workerId,
    pollMs: opts.pollMs ?? deps.config.WORKER_POLL_MS,
    batchSize: deps.config.WORKER_CONCURRENCY,
    leaseMs: deps.config.WORKER_LEASE_MS,
    log: deps.log,
  });
}
