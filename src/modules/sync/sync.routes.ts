import { syncJobs } from './sync.jobs.js';
import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { envelope, ok } from '../../platform/http/envelope.js';
import { requestContext } from '../../platform/auth/auth-plugin.js';
import { syncCompletions } from './sync.service.js';
import { syncResultSchema } from './sync.schemas.js';

const routes: ModuleRoutes = async (app, deps) => {
  typed(app).post(
    '/api/sync/crm',
    {
      schema: {
        tags: ['sync'],
        operationId: 'syncCrm',
        summary: 'Push every pending or failed course completion of the institution to the CRM now (ADMIN)',
        description:
          'Answers how many completions this call sent, how many it attempted and failed, and how many are still not delivered. A call that attempted any push ' +
          'writes one audit row, `sync.crm` on the institution, with those counts. ADMIN only (403 FORBIDDEN otherwise). A completion the CRM refuses or cannot take stays FAILED and is counted, not an error of the call.',
        response: {
          200: envelope(syncResultSchema),
        },
      },
    },
    async (req) => ok(await syncCompletions(requestContext(deps, req))),
  );
};

export const syncModule: AppModule = { name: 'sync', routes, jobs: syncJobs };
