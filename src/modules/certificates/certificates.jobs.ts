import type { ModuleJobs } from '../types.js';
import { certificateJobs } from './certificates.service.js';

/** Worker jobs of certificates: render and store each issued certificate's PDF once. */
export const certificatesJobs: ModuleJobs = (deps) => certificateJobs({ db: deps.database.db, crm: deps.crm, clock: deps.clock, storage: deps.storage });
