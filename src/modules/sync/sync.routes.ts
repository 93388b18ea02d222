import { z } from 'zod';
import { syncJobs } from './sync.jobs.js';
import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { commonErrors, envelope, ok } from '../../platform/http/envelope.js';
import { serviceContext } from '../../platform/context.js';
import { actorOf } from '../../platform/auth/auth-plugin.js';
import { syncCompletions } from './sync.service.js';

const routes: ModuleRoutes = async (app, deps) => {
  typed(app).post(
    '/api/sync/crm',
    {
      schema: {
        tags: ['sync'],
        operationId: 'syncCrm',
        summary: 'Push every pending or failed course completion of the institution to the CRM now (ADMIN)',
        response: {
          200: envelope(
            z.object({
              pushed: z.number().int().describe('sent in this call'),
              failed: z.number().int().describe('attempted in this call and failed'),
              pending: z.number().int().describe('still not delivered after this call'),
            }),
          ),
          ...commonErrors,
        },
      },
    },
    async (req) => ok(await syncCompletions(serviceContext(deps, actorOf(req)))),
  );
};

export const syncModule: AppModule = { name: 'sync', routes, jobs: syncJobs };
