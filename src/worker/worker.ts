import type { Deps } from '../platform/context.js';
import { Worker } from '../platform/queue/queue.js';
import { jobHandlers } from './jobs.js';

/** The worker: claims and runs every module's jobs. */
export function createWorker(deps: Deps, opts: { workerId?: string; pollMs?: number } = {}): Worker {
  return new Worker({
    db: deps.database.db,
    clock: deps.clock,
    handlers: jobHandlers(deps),
    workerId: opts.workerId,
    pollMs: opts.pollMs ?? deps.config.WORKER_POLL_MS,
    batchSize: deps.config.WORKER_CONCURRENCY,
    log: deps.log,
  });
}
