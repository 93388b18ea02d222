import type { JobRegistration } from '../../worker/jobs.js';
import { DELETE_OBJECTS_JOB } from '../courses/courses.service.js';

/**
 * Removes stored objects whose rows are gone (the caption files of a deleted lesson). Deleting
 * an absent object succeeds, so a retry after a partial run is harmless.
 */
export const captionsJobs: JobRegistration = (deps) => ({
  [DELETE_OBJECTS_JOB]: async (job) => {
    const keys = (job.payload as { keys?: unknown }).keys;
    if (!Array.isArray(keys)) throw new Error(`${DELETE_OBJECTS_JOB}: payload has no keys`);
    for (const key of keys) await deps.storage.delete(String(key));
  },
});
