import type { JobRegistration } from '../../worker/jobs.js';
import { completionJobs } from './sync.service.js';

export const syncJobs: JobRegistration = (deps) =>
  completionJobs({ db: deps.database.db, crm: deps.crm, clock: deps.clock, log: deps.log });
