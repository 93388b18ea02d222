import type { ModuleJobs } from '../types.js';
import { deliverBatch, sendDigest } from './notifications.delivery.js';

/** Worker jobs of notifications: deliver a batch of rows; send one person's digest e-mail. */
export const notificationsJobs: ModuleJobs = (deps) => ({
  'notifications.deliver': async (job, { signal }) => {
    const summary = await deliverBatch(deps, job.payload, { lastAttempt: job.attempts >= job.maxAttempts, signal });
    deps.log.info?.(`[lms] notifications batch ${job.payload.batchId}: ${summary.inApp} in-app, ${summary.sent} sent, ${summary.failed} failed`);
  },
  'notifications.sendDigest': async (job, { signal }) => {
    await sendDigest(deps, job.payload, { lastAttempt: job.attempts >= job.maxAttempts, signal, jobId: job.id });
  },
});
