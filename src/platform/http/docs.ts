import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import type { AuthMode } from './types.js';

const SECURITY_BY_MODE: Record<AuthMode, Array<Record<string, string[]>>> = {
  session: [{ sessionCookie: [] }, { bearerAuth: [] }],
  optional: [{ sessionCookie: [] }, { bearerAuth: [] }, {}],
  cron: [{ cronSecret: [] }],
  basic: [{ basicAuth: [] }],
  public: [],
};

/** The description of a success response that gives none (instead of fastify-swagger's "Default Response"). */
const SUCCESS_DESCRIPTIONS: Record<string, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content' };

/** The zod transform, then a description by status for each success response without one. */
const transform: typeof jsonSchemaTransform = (input) => {
  const out = jsonSchemaTransform(input);
  const response = (out.schema as { response?: Record<string, Record<string, unknown>> } | undefined)?.response;
  for (const [status, entry] of Object.entries(response ?? {})) {
    const text = SUCCESS_DESCRIPTIONS[status];
    if (text && entry && typeof entry === 'object' && !entry.description) entry['x-response-description'] = text;
  }
  return out;
};

/** OpenAPI 3.1 generated from the route schemas, served at /openapi.json, and a docs page at /docs. */
export async function registerDocs(app: FastifyInstance, cookieName: string) {
  // Each route's security follows its auth mode, so the document tells clients what to send.
  const routes: Array<{ method: string; url: string }> = [];
  app.decorate('registeredRoutes', routes);
  app.addHook('onRoute', (route) => {
    const url = route.url;
    if (!route.schema?.hide && url.startsWith('/api/')) {
      for (const m of [route.method].flat()) if (m !== 'HEAD') routes.push({ method: m, url });
    }
    const mode: AuthMode = route.config?.auth ?? (url.startsWith('/api/') ? 'session' : 'public');
    if (route.schema && !route.schema.hide) {
      (route.schema as Record<string, unknown>).security ??= SECURITY_BY_MODE[mode];
      // Whose record the path's id names: documented for clients, checked by the tenancy sweep.
      if (route.config?.recordScope) (route.schema as Record<string, unknown>)['x-record-scope'] = route.config.recordScope;
    }
  });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Learning Management Service',
        version: '1.0.0',
        description:
          'Multi-tenant LMS REST/JSON API. Every response uses the envelope `{data, error, meta?}`. ' +
          'Every `/api/<path>` is also served at `/api/v1/<path>` (bearer auth for mobile clients).',
      },
      components: {
        securitySchemes: {
          sessionCookie: { type: 'apiKey', in: 'cookie', name: cookieName },
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          basicAuth: { type: 'http', scheme: 'basic' },
          cronSecret: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <CRON_SECRET>' },
        },
      },
    },
    transform,
  });
  app.get('/openapi.json', { schema: { hide: true }, config: { auth: 'public' } }, async () => app.swagger());
  // Imported here, not at module load: processes that never build the HTTP app (the worker) skip it.
  const { default: scalar } = await import('@scalar/fastify-api-reference');
  await app.register(scalar, { routePrefix: '/docs', configuration: { url: '/openapi.json' } });
}
