import type { ModuleJobs } from '../types.js';

/**
 * Removes stored objects whose rows are gone (the caption files of a deleted lesson). Deleting
 * an absent object succeeds, so a retry after a partial run is harmless.
 */
export const captionsJobs: ModuleJobs = (deps) => ({
  'storage.deleteObjects': async ({ payload }) => {
    for (const key of payload.keys) await deps.storage.delete(key);
  },
});
