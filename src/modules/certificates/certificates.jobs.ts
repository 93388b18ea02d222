import type { ModuleJobs } from '../types.js';
import { renderStoredPdf } from './certificates.service.js';

/** Worker jobs of certificates: render and store each issued certificate's PDF once. */
export const certificatesJobs: ModuleJobs = (deps) => {
  const pdfDeps = { db: deps.database.db, crm: deps.crm, clock: deps.clock, storage: deps.storage };
  return {
    'certificates.renderPdf': async ({ payload, institutionId }) => {
      await renderStoredPdf(pdfDeps, payload.certificateId, payload.institutionId ?? institutionId);
    },
  };
};
