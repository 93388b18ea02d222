import type { ModuleJobs } from '../types.js';
import { removeUnregisteredUpload } from './files.service.js';

/** Worker jobs of the files module: unregistered uploads are removed a day after their presign. */
export const filesJobs: ModuleJobs = (deps) => ({
  'files.removeUnregistered': async ({ payload, institutionId }) => {
    await removeUnregisteredUpload(deps, payload.uploadId, payload.institutionId ?? institutionId);
  },
});
