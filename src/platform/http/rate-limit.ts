import type { FastifyInstance, FastifyRequest } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import { Redis } from 'ioredis';
import type { Config } from '../../config.js';
import { AppError } from './errors.js';

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const isRead = (req: FastifyRequest) => READ_METHODS.has(req.method);

/** Per-route overrides of spec part 8, as route `config.rateLimit` values. */
export const routeRateLimits = (config: Config) => ({
  reportRun: { max: config.RATE_LIMIT_REPORT_RUN, groupId: 'report-run' },
  reportExport: { max: config.RATE_LIMIT_REPORT_EXPORT, groupId: 'report-export' },
  scormContent: { max: config.RATE_LIMIT_SCORM_CONTENT, groupId: 'scorm-content' },
  xapi: { max: config.RATE_LIMIT_XAPI, groupId: 'xapi' },
  // A recorder calls back from one address for every recording: not in the budget that
  // anonymous callers of that address share (still per IP, as its signature is checked later).
  webhook: { max: config.RATE_LIMIT_WEBHOOK, groupId: 'webhook' },
});

const isAnonymous = (req: FastifyRequest) => !req.session && !req.apiCaller;

/** Who a limit counts against: the person (per tenant), an API credential (an xAPI key, the cron secret), or the IP for anonymous callers. */
function callerKey(req: FastifyRequest): string {
  const who = req.session ? `p:${req.session.institutionId}:${req.session.personId}` : req.apiCaller ? `c:${req.apiCaller}` : `ip:${req.ip}`;
  return `${who}:${isRead(req) ? 'r' : 'w'}`;
}

/**
 * Rate limits of spec part 8: reads 100/min and writes 30/min per caller, with route overrides;
 * callers without a session count by IP (RATE_LIMIT_ANONYMOUS, when set, is their budget).
 * Counters live in memory, or in Redis when REDIS_URL is set so replicas share them.
 */
export async function registerRateLimits(app: FastifyInstance, config: Config) {
  if (config.RATE_LIMIT_DISABLED === 'true') return;
  const redis = config.REDIS_URL ? new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false }) : undefined;
  if (redis) {
    redis.on('error', (err) => app.log.warn({ err: err.message }, 'redis error (rate limits)'));
    app.addHook('onClose', async () => void redis.quit().catch(() => undefined));
  }
  // Only /api routes are limited: the others (health checks, the web app, docs) get no limiter
  // hook at all, rather than one that runs on every request to find them on an allow list.
  app.addHook('onRoute', (route) => {
    if (!(route.url ?? route.path ?? '').startsWith('/api/')) route.config = { ...route.config, rateLimit: false };
  });
  await app.register(rateLimit, {
    global: true,
    // onRequest, right after authentication (a global hook, so it runs first): requests that
    // authentication refuses, and bodies that fail to parse or validate, count too (against
    // the caller's IP when there is no session).
    hook: 'onRequest',
    timeWindow: config.RATE_LIMIT_WINDOW_MS,
    // Spec 8's per-user budgets; an address without a session gets the same unless
    // RATE_LIMIT_ANONYMOUS sets its own (e.g. a school's many browsers behind one NAT).
    max: (req) => (isAnonymous(req) && config.RATE_LIMIT_ANONYMOUS !== undefined ? config.RATE_LIMIT_ANONYMOUS : isRead(req) ? config.RATE_LIMIT_READ : config.RATE_LIMIT_WRITE),
    keyGenerator: callerKey,
    enableDraftSpec: true,
    // If Redis is down, serve rather than fail every request.
    skipOnError: true,
    redis,
    nameSpace: 'lms-rl:',
    errorResponseBuilder: (_req, ctx) =>
      new AppError('RATE_LIMITED', `Rate limit exceeded, retry in ${Math.ceil(ctx.ttl / 1000)} s`, {
        limit: ctx.max,
        retryAfterSeconds: Math.ceil(ctx.ttl / 1000),
      }),
  });
}
