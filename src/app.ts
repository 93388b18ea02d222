import Fastify, { type FastifyInstance } from 'fastify';
import cors from '@fastify/cors';
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import './platform/http/types.js';
import type { Deps } from './platform/context.js';
import { clientErrorHandler, registerErrorHandling, sendFrameworkError } from './platform/http/errors-plugin.js';
import { registerCommonErrorResponses } from './platform/http/error-responses.js';
import { parseJsonBody, registerInputGuard } from './platform/http/input-guard.js';
import { zodResponseSerializer, type ZodSerializedRoute } from './platform/http/serializer.js';
import { lazyRequestLogger, loggerOptions, OneLineRequestLog } from './platform/http/logging.js';
import { registerAuth } from './platform/auth/auth-plugin.js';
import { registerRateLimits } from './platform/http/rate-limit.js';
import { registerDocs } from './platform/http/docs.js';
import { defaultWebDir, registerWebApp, webAppAt } from './platform/http/web-app.js';
import { registerResponseHeaders, requestIdOf } from './platform/http/response-headers.js';
import { modules } from './modules/index.js';

const V1_PREFIX = '/api/v1/';

/** Builds the Fastify app from platform plugins and domain modules. Does not listen. */
export async function buildApp(deps: Deps, opts: { logger?: boolean | object } = {}): Promise<FastifyInstance> {
  const loggerExtra = typeof opts.logger === 'object' ? (opts.logger as Record<string, unknown>) : {};
  // LOG_LEVEL=silent builds Fastify without a logger, as logging off is meant in Fastify: a pino
  // at level silent writes nothing, yet Fastify would still time every request and listen for
  // its end to log it (about 2 µs a request, bench/RESULTS.md).
  const logging = opts.logger !== false && (loggerExtra.level ?? deps.config.LOG_LEVEL) !== 'silent';
  const app = Fastify({
    // pino options; cast as its serializer types want pino's exact error shape
    logger: logging ? (loggerOptions(deps.config.LOG_LEVEL, loggerExtra) as never) : false,
    bodyLimit: deps.config.BODY_LIMIT_BYTES,
    // Slow clients: the whole request within REQUEST_TIMEOUT_MS, its headers within
    // HEADERS_TIMEOUT_MS, and no socket idle longer than CONNECTION_TIMEOUT_MS.
    requestTimeout: deps.config.REQUEST_TIMEOUT_MS,
    connectionTimeout: deps.config.CONNECTION_TIMEOUT_MS,
    http: {
      headersTimeout: deps.config.HEADERS_TIMEOUT_MS,
      // Node checks those timeouts on this interval (30 s by default, too coarse for them).
      connectionsCheckingInterval: Math.min(1000, deps.config.HEADERS_TIMEOUT_MS),
    },
    clientErrorHandler,
    // Off unless TRUST_PROXY names the proxies (or a hop count): otherwise any client could
    // choose its req.ip with X-Forwarded-For, and with it a fresh rate-limit budget.
    trustProxy: deps.config.trustProxy as never, // a hop count is supported, though not in the types
    requestIdHeader: false,
    genReqId: (req) => requestIdOf(req.headers['x-request-id']),
    // One log line per request, at its end, instead of two.
    ...(logging ? { logController: new OneLineRequestLog(), childLoggerFactory: lazyRequestLogger } : {}),
    // /api/v1/<path> is the same route as /api/<path> (spec part 9).
    rewriteUrl: (req) => (req.url?.startsWith(V1_PREFIX) ? `/api/${req.url.slice(V1_PREFIX.length)}` : (req.url ?? '/')),
    routerOptions: { ignoreTrailingSlash: true },
    // Bad percent-encoding and over-long path parameters, answered in the envelope.
    frameworkErrors: sendFrameworkError,
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  const zodSerialized: ZodSerializedRoute[] = [];
  app.decorate('zodSerializedRoutes', zodSerialized);
  app.setSerializerCompiler(zodResponseSerializer(deps.config.RESPONSE_VALIDATION, app.log, zodSerialized) as never);
  const web = webAppAt(deps.config.WEB_DIR ?? defaultWebDir());
  registerErrorHandling(app, { pageFallback: web.sendIndex });
  registerCommonErrorResponses(app);
  registerInputGuard(app);

  app.decorate('draining', false);
  // JSON bodies keep their raw bytes (webhook signatures are computed over them).
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, parseJsonBody);
  app.addContentTypeParser(/^application\/[\w.-]+\+json$/, { parseAs: 'buffer' }, parseJsonBody);

  registerResponseHeaders(app);
  // Without CORS_ORIGINS there is nothing to allow, and the plugin would run a hook on every
  // request to add no header. A preflight then gets the 405 of a method the path does not take.
  if (deps.config.corsOrigins.length > 0) {
    await app.register(cors, {
      origin: deps.config.corsOrigins,
      credentials: true,
      // The plugin's default is the CORS-safelisted GET, HEAD and POST: a web client on an allowed
      // origin could not edit or delete anything.
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      // What a browser may read of an answer beyond the safelisted headers.
      exposedHeaders: ['x-request-id', 'content-disposition', 'retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'],
    });
  }

  registerAuth(app, deps);
  await registerRateLimits(app, deps.config);
  await registerDocs(app, deps.config.SESSION_COOKIE_NAME);

  for (const mod of modules) if (mod.routes) await mod.routes(app, deps);
  await registerWebApp(app, web);

  return app;
}
