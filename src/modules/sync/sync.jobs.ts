import type { ModuleJobs } from '../types.js';
import { sendCompletion } from './sync.service.js';

/**
 * Worker jobs of the CRM sync: a failed push throws so the queue retries it, for up to 24 h
 * (`OUTAGE_RETRY`): a CRM outage of hours delays the push, and it goes out with no manual sync.
 */
export const syncJobs: ModuleJobs = (deps) => {
  const sender = { db: deps.database.db, crm: deps.crm, clock: deps.clock, log: deps.log };
  return {
    'crm.pushCompletion': async ({ payload, institutionId }) => {
      const outcome = await sendCompletion(sender, payload.completionId, payload.institutionId ?? institutionId);
      if (outcome === 'failed') throw new Error('completion push failed; will retry');
    },
  };
};
