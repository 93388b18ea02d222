import type { Deps } from '../platform/context.js';
import type { JobHandler } from '../platform/queue/queue.js';
import { syncJobs } from '../modules/sync/sync.jobs.js';
import { certificatesJobs } from '../modules/certificates/certificates.jobs.js';
import { captionsJobs } from '../modules/captions/captions.jobs.js';

/** A module's job handlers, keyed by job name. */
export type JobRegistration = (deps: Deps) => Record<string, JobHandler>;

/** Every module's jobs; a module with jobs adds its registration here. */
export const jobRegistrations: JobRegistration[] = [syncJobs, certificatesJobs, captionsJobs];

export function jobHandlers(deps: Deps): Map<string, JobHandler> {
  const map = new Map<string, JobHandler>();
  for (const register of jobRegistrations) {
    for (const [name, handler] of Object.entries(register(deps))) map.set(name, handler);
  }
  return map;
}
