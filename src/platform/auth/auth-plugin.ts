import type { FastifyInstance, FastifyRequest } from 'fastify';
import { fastifyCookie } from '@fastify/cookie';
import { sql } from 'drizzle-orm';
import { AppError } from '../http/errors.js';
import type { AuthMode } from '../http/types.js';
import { serviceContext, type Deps, type ServiceContext } from '../context.js';
import { createSessionDecoder, TokenError, type Session } from './tokens.js';
import { verifyCronAuthorization } from './signatures.js';

/** Read the session cookie, joining `name.0`, `name.1`, … when it arrived split. */
export function readSessionCookie(cookies: Record<string, string | undefined>, name: string): string | undefined {
  const whole = cookies[name];
  if (whole) return whole;
  const chunks: string[] = [];
  for (let i = 0; cookies[`${name}.${i}`] !== undefined; i++) chunks.push(cookies[`${name}.${i}`] as string);
  return chunks.length > 0 ? chunks.join('') : undefined;
}

function tokenFrom(req: FastifyRequest, cookieName: string): { token: string; source: 'bearer' | 'cookie' } | undefined {
  const header = req.headers.authorization;
  if (header && /^Bearer\s+/i.test(header)) return { token: header.replace(/^Bearer\s+/i, '').trim(), source: 'bearer' };
  // Parsed here, the one place that reads a cookie, rather than by a hook on every request.
  const cookies = req.headers.cookie;
  const token = cookies ? readSessionCookie(fastifyCookie.parse(cookies), cookieName) : undefined;
  return token ? { token, source: 'cookie' } : undefined;
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const originOf = (url: string): string | null => {
  try {
    const o = new URL(url).origin;
    return o === 'null' ? null : o.toLowerCase();
  } catch {
    return null;
  }
};

/**
 * CSRF guard of cookie-authenticated writes: the browser's `Origin` must be the service's own
 * (PUBLIC_BASE_URL, or the address the request came to) or one of CORS_ORIGINS. Without
 * `Origin`, `Sec-Fetch-Site` must be same-origin or none (typed in the address bar). A request
 * with neither header is no browser's cross-site request (browsers send Origin on every
 * cross-origin POST, PUT, PATCH and DELETE), so it passes.
 */
function crossSiteWrite(req: FastifyRequest, allowed: Set<string>): boolean {
  if (!STATE_CHANGING.has(req.method)) return false;
  const origin = req.headers.origin;
  if (typeof origin === 'string' && origin !== '') {
    const given = originOf(origin);
    if (!given) return true;
    return !(allowed.has(given) || given === originOf(`${req.protocol}://${req.host}`));
  }
  const site = req.headers['sec-fetch-site'];
  if (typeof site === 'string' && site !== '') return !['same-origin', 'none'].includes(site.toLowerCase());
  return false;
}

const INSTITUTION_ID_KEY = 'institutionId';

/**
 * Calls `visit` on every plain object in `value`, at any depth of objects and arrays.
 * Iterative, so a deeply nested body cannot overflow the stack.
 */
function eachRecord(value: unknown, visit: (record: Record<string, unknown>) => void) {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (!node || typeof node !== 'object' || Buffer.isBuffer(node)) continue;
    if (Array.isArray(node)) {
      for (const item of node) stack.push(item);
      continue;
    }
    const record = node as Record<string, unknown>;
    visit(record);
    for (const v of Object.values(record)) stack.push(v);
  }
}

/**
 * Every `institutionId` value anywhere in `value` (a repeated query parameter arrives as an
 * array: every value counts).
 */
export function institutionIdsIn(value: unknown): string[] {
  const found: string[] = [];
  eachRecord(value, (record) => {
    const v = record[INSTITUTION_ID_KEY];
    for (const item of Array.isArray(v) ? v : [v]) {
      if (typeof item === 'string' || typeof item === 'number') found.push(String(item));
    }
  });
  return found;
}

/** Deletes every `institutionId` key in `value`, wherever `institutionIdsIn` would find one. */
function dropInstitutionIds(value: unknown) {
  eachRecord(value, (record) => {
    if (INSTITUTION_ID_KEY in record) delete record[INSTITUTION_ID_KEY];
  });
}

/**
 * The one tenant check of supplied data: any `institutionId` in `value` (query, JSON body at
 * any depth, path, multipart fields) must be the session's, else 403 TENANT_MISMATCH.
 */
export function assertSessionTenant(req: FastifyRequest, value: unknown) {
  const session = req.session;
  if (!session) return;
  for (const id of institutionIdsIn(value)) {
    if (id !== session.institutionId) {
      throw new AppError('TENANT_MISMATCH', 'institutionId does not match your session');
    }
  }
}

/** The auth mode of a route: its `config.auth`, else `session` under /api and `public` elsewhere. */
export function routeAuthMode(url: string, config: { auth?: AuthMode } | undefined): AuthMode {
  return config?.auth ?? (url.startsWith('/api/') ? 'session' : 'public');
}

type HookList<T> = T | T[] | undefined;
/** A route option's hooks with `hook` first (route hooks run after the app's global ones). */
function withFirst<T>(hooks: HookList<T>, hook: T): T[] {
  return [hook, ...(hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks])];
}

/**
 * Authentication (DESIGN.md §4): session cookie or bearer on /api routes; cron bearer on cron
 * routes; nothing on public ones. Also makes sure the caller's institution has a row.
 *
 * The hooks are the route's own, added as each route is registered for what its auth mode
 * needs: a public route (health checks, the web app, docs, webhooks) runs none of them, and
 * the mode is known without looking it up per request. They go first among the route's hooks,
 * so the rate limiter (a route hook too, added later) sees the session.
 */
export function registerAuth(app: FastifyInstance, deps: Deps) {
  const known = new Set<string>();
  async function ensureInstitution(id: string) {
    if (known.has(id)) return;
    const now = deps.clock.now().toISOString();
    await deps.database.db.execute(sql`insert into institutions (id, settings, created_at, updated_at) values (${id}, '{}'::jsonb, ${now}, ${now}) on conflict (id) do nothing`);
    known.add(id);
  }

  const allowedOrigins = new Set([deps.config.publicBaseUrl, ...deps.config.corsOrigins].map(originOf).filter((o): o is string => o !== null));
  const decoder = createSessionDecoder({
    secret: deps.config.AUTH_SECRET,
    cookieName: deps.config.SESSION_COOKIE_NAME,
    maxAgeSeconds: deps.config.AUTH_MAX_TOKEN_AGE_SECONDS,
  });

  /** A refused token: no session (logged at debug); anything else is a bug and propagates. */
  function refused(req: FastifyRequest, err: unknown): null {
    if (!(err instanceof TokenError)) throw err;
    req.log.debug({ reason: err.message }, 'session token refused');
    return null;
  }

  /** The session of a token verified before (undefined when it still needs verifying), or null when refused. */
  function knownSession(req: FastifyRequest, token: string): Session | null | undefined {
    try {
      return decoder.decodeVerified(token, deps.clock.now());
    } catch (err) {
      return refused(req, err);
    }
  }

  async function verifiedSession(req: FastifyRequest, token: string): Promise<Session | null> {
    try {
      return await decoder.decode(token, deps.clock.now());
    } catch (err) {
      return refused(req, err);
    }
  }

  app.decorateRequest('session', null);
  app.decorateRequest('rawBody', undefined);
  app.decorateRequest('authRefusal', null);
  app.decorateRequest('apiCaller', null);

  // Refusals are decided in onRequest and thrown in preParsing: in between, the rate limiter
  // (a later onRequest hook of the route) counts them against the caller's IP.
  const cronHook = (req: FastifyRequest, _reply: unknown, done: (err?: Error) => void) => {
    if (!verifyCronAuthorization(deps.config.CRON_SECRET, req.headers.authorization)) {
      req.authRefusal = new AppError('AUTH_REQUIRED', 'A valid cron secret is required');
    } else {
      req.apiCaller = 'cron'; // the scheduler's own budget, not its address's anonymous one
    }
    done();
  };
  type Done = (err?: Error) => void;
  /** The request's session from its token's, or why it is refused; then the caller's institution row. */
  function admit(req: FastifyRequest, source: 'bearer' | 'cookie', session: Session | null, optional: boolean, done: Done) {
    if (!session) {
      if (!optional) req.authRefusal = new AppError('AUTH_REQUIRED', 'Authentication is required');
      return done();
    }
    if (source === 'cookie' && crossSiteWrite(req, allowedOrigins)) {
      req.authRefusal = new AppError('FORBIDDEN', 'Cross-site request refused: the Origin is not allowed');
      return done();
    }
    req.session = session;
    if (known.has(session.institutionId)) return done();
    ensureInstitution(session.institutionId).then(() => done(), done);
  }
  // A callback hook, not an async one: a token seen before from a known institution (nearly
  // every request) is admitted without a promise or a microtask hop.
  const sessionHook = (optional: boolean) =>
    function authenticate(req: FastifyRequest, _reply: unknown, done: Done) {
      const found = tokenFrom(req, deps.config.SESSION_COOKIE_NAME);
      if (!found) return admit(req, 'bearer', null, optional, done);
      let session: Session | null | undefined;
      try {
        session = knownSession(req, found.token);
      } catch (err) {
        return done(err as Error);
      }
      if (session !== undefined) return admit(req, found.source, session, optional, done);
      verifiedSession(req, found.token).then((s) => admit(req, found.source, s, optional, done), done);
    };
  const refusalHook = (req: FastifyRequest, _reply: unknown, _payload: unknown, done: (err?: Error | null) => void) => done(req.authRefusal);
  // Before validation, so schemas that strip unknown keys cannot hide a supplied institutionId:
  // an institutionId in query, body or path must be the session's.
  // Multipart fields are read by the route (they stream): it calls assertSessionTenant on them.
  // A matching institutionId is then taken out of query and body: it says nothing the session
  // does not, and a strict schema would otherwise refuse it as an unknown key.
  const tenantHook = (req: FastifyRequest, _reply: unknown, done: (err?: Error) => void) => {
    try {
      assertSessionTenant(req, [req.query, req.body, req.params]);
    } catch (err) {
      return done(err as Error);
    }
    dropInstitutionIds(req.query);
    dropInstitutionIds(req.body);
    done();
  };

  app.addHook('onRoute', (route) => {
    const mode = routeAuthMode(route.url ?? route.path ?? '', route.config);
    if (mode === 'public' || mode === 'basic') return;
    route.onRequest = withFirst(route.onRequest, (mode === 'cron' ? cronHook : sessionHook(mode === 'optional')) as never);
    route.preParsing = withFirst(route.preParsing, refusalHook as never);
    if (mode !== 'cron') route.preValidation = withFirst(route.preValidation, tenantHook as never);
  });
}

/** The session of an authenticated route (the hook guarantees it). */
export function actorOf(req: FastifyRequest): Session {
  if (!req.session) throw new AppError('AUTH_REQUIRED', 'Authentication is required');
  return req.session;
}

/** The context of a route's service call: the caller's session, the request's logger and id. */
export function requestContext(deps: Deps, req: FastifyRequest): ServiceContext {
  return serviceContext(deps, actorOf(req), req.log, req.id);
}
