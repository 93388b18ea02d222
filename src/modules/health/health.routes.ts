import type { AppModule, ModuleRoutes } from '../types.js';
import { envelope, errorResponse, ok } from '../../platform/http/envelope.js';
import { sendError } from '../../platform/http/errors-plugin.js';
import { livenessSchema, readinessSchema } from './health.schemas.js';

/** Liveness and readiness probes, public and outside /api. */
const routes: ModuleRoutes = async (app, deps) => {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['health'],
        operationId: 'healthz',
        summary: 'The process is alive',
        description:
          'Liveness probe: public, outside /api, not rate-limited. 200 while the process serves requests; it does not touch the database (see /readyz). Only a server fault answers otherwise (500 INTERNAL_ERROR).',
        response: { 200: envelope(livenessSchema) },
      },
    },
    async () => ok({ status: 'ok' as const }),
  );
  app.get(
    '/readyz',
    {
      schema: {
        tags: ['health'],
        operationId: 'readyz',
        summary: 'The database is reachable and the process is not shutting down',
        description:
          'Readiness probe: public, outside /api, not rate-limited. 200 with the database driver when the database answers a ping; 503 SERVICE_UNAVAILABLE while the process drains after SIGTERM or when the database is unreachable (load balancers stop sending requests).',
        response: { 200: envelope(readinessSchema), 503: errorResponse(503, 'shutting down, or the database is not reachable') },
      },
    },
    async (_req, reply) => {
      // Unready is an expected answer (shutting down, PostgreSQL restarting): not logged as an error.
      if (app.draining) return sendError(reply, 503, 'SERVICE_UNAVAILABLE', 'Shutting down');
      try {
        await deps.database.ping();
      } catch {
        return sendError(reply, 503, 'SERVICE_UNAVAILABLE', 'Database is not reachable');
      }
      return ok({ status: 'ready' as const, database: deps.database.driver });
    },
  );
};

export const healthModule: AppModule = { name: 'health', routes };
