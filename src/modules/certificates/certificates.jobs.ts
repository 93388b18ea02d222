import type { JobRegistration } from '../../worker/jobs.js';
import { certificateJobs } from './certificates.service.js';

export const certificatesJobs: JobRegistration = (deps) =>
  certificateJobs({ db: deps.database.db, crm: deps.crm, clock: deps.clock, storage: deps.storage });
