import type { ModuleJobs } from '../types.js';
import { sendScheduledReport } from './analytics.schedules.js';

/** Worker jobs of analytics: write and e-mail one scheduled report run. */
export const analyticsJobs: ModuleJobs = (deps) => ({
  'analytics.sendScheduledReport': async (job) => {
    await sendScheduledReport(deps, job.payload, job.attempts >= job.maxAttempts);
  },
});
