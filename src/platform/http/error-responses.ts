import type { FastifyInstance } from 'fastify';
import { commonErrors } from './envelope.js';

/**
 * Every route with a schema documents the common error envelopes (400, 401, 403, 404, 409,
 * 429, 500) without spelling them out: a route's own entry for a status wins.
 * Register before any route.
 */
export function registerCommonErrorResponses(app: FastifyInstance) {
  app.addHook('onRoute', (route) => {
    if (!route.schema) return;
    const response = (route.schema.response ?? {}) as Record<string, unknown>;
    const added = Object.fromEntries(Object.entries(commonErrors).filter(([status]) => !(status in response)));
    route.schema.response = { ...response, ...added };
  });
}
