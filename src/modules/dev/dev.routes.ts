import type { FastifyRequest } from 'fastify';
import { fastifyCookie } from '@fastify/cookie';
import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { envelope, ok } from '../../platform/http/envelope.js';
import { actorOf } from '../../platform/auth/auth-plugin.js';
import { requireAdmin } from '../../platform/auth/permissions.js';
import { decodeSessionToken, mintToken } from '../../platform/auth/tokens.js';
import { AppError } from '../../platform/http/errors.js';
import { seedInstitution } from '../../dev/seed.js';
import { seedScormPackages } from '../../dev/scorm-demo.js';
import { demoClaims, demoPeople } from '../../dev/demo.js';
import { demoPeopleSchema, seedResultSchema, signInBodySchema, signInResultSchema, signOutResultSchema } from './dev.schemas.js';

/** The dev session cookie lives as long as a demo token (30 days). */
const SESSION_SECONDS = 30 * 24 * 3600;

/** A sign-in from another site's page (a form posting here) is refused: the cookie would sign the visitor in as someone. */
function refuseCrossSite(req: FastifyRequest) {
  const site = req.headers['sec-fetch-site'];
  if (typeof site === 'string' && !['same-origin', 'none'].includes(site.toLowerCase())) {
    throw new AppError('FORBIDDEN', 'Cross-site sign-in refused');
  }
}

/**
 * The options Auth.js uses for the session cookie (set here only: no cookie plugin runs on every
 * request); `__Secure-`/`__Host-` names need `Secure` (browsers accept it on http://localhost
 * and 127.0.0.1 too).
 */
function cookieOptions(name: string, req: FastifyRequest) {
  const secure = name.startsWith('__Secure-') || name.startsWith('__Host-') || req.protocol === 'https';
  return { path: '/', httpOnly: true, sameSite: 'lax' as const, secure };
}

/**
 * Development routes: seeding, and signing in as a person of the CRM simulator (the web app's
 * sign-in page; in production the CRM's Auth.js sets the session cookie). In production only the
 * seed route exists, to refuse with 403 as issue 4 pins; the others are unknown routes there (404).
 */
const routes: ModuleRoutes = async (app, deps) => {
  const cookieName = deps.config.SESSION_COOKIE_NAME;
  typed(app).post(
    '/api/dev/seed',
    {
      schema: {
        tags: ['dev'],
        operationId: 'devSeed',
        summary: "Seed demo courses, lessons, enrollments and progress into the caller's institution (ADMIN; 403 in production; idempotent)",
        description: 'ADMIN only (403 FORBIDDEN otherwise, and always in production). Running it again adds nothing twice.',
        response: {
          200: envelope(seedResultSchema),
        },
      },
    },
    async (req) => {
      const actor = actorOf(req);
      if (deps.config.isProduction) throw new AppError('FORBIDDEN', 'Seeding is disabled in production');
      requireAdmin(actor);
      const result = await seedInstitution(deps.database.db, deps.clock, actor.institutionId, actor.personId);
      await seedScormPackages(deps, actor.institutionId);
      return ok(result);
    },
  );
  if (deps.config.isProduction) return;

  typed(app).get(
    '/api/dev/people',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['dev'],
        operationId: 'devPeople',
        summary: 'The CRM simulator’s people one can sign in as (development only; not registered in production)',
        description:
          'Public (no authentication), development and test only: in production the route does not exist (404). Staff, students and parents of the simulator’s demo institution with the role and ids a sign-in gives them.',
        response: { 200: envelope(demoPeopleSchema) },
      },
    },
    async () => ok(demoPeople()),
  );

  typed(app).post(
    '/api/dev/sign-in',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['dev'],
        operationId: 'devSignIn',
        summary: 'Sign in as a person of the CRM simulator: sets the session cookie (development only; not registered in production)',
        description:
          'Public, development and test only (404 in production). An unknown personId is 404 NOT_FOUND; a request from another site (Sec-Fetch-Site cross-site or same-site) 403 FORBIDDEN; a body without personId 400 VALIDATION_ERROR. Answers the decoded session and sets a 30-day session cookie.',
        body: signInBodySchema,
        response: { 200: envelope(signInResultSchema) },
      },
    },
    async (req, reply) => {
      refuseCrossSite(req);
      const person = demoPeople().find((p) => p.personId === req.body.personId);
      if (!person) throw new AppError('NOT_FOUND', 'No such person in the CRM simulator');
      const now = deps.clock.now();
      const token = await mintToken(deps.config.AUTH_SECRET, { ...demoClaims(person), expiresIn: SESSION_SECONDS }, now);
      reply.header('set-cookie', fastifyCookie.serialize(cookieName, token, { ...cookieOptions(cookieName, req), maxAge: SESSION_SECONDS }));
      return ok(await decodeSessionToken(token, { secret: deps.config.AUTH_SECRET, cookieName, now, maxAgeSeconds: deps.config.AUTH_MAX_TOKEN_AGE_SECONDS }));
    },
  );

  typed(app).post(
    '/api/dev/sign-out',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['dev'],
        operationId: 'devSignOut',
        summary: 'Clear the session cookie (development only; not registered in production)',
        description:
          'Public, development and test only (404 in production). A request from another site (Sec-Fetch-Site cross-site or same-site) is 403 FORBIDDEN. Clears the session cookie whether or not one was set.',
        response: { 200: envelope(signOutResultSchema) },
      },
    },
    async (req, reply) => {
      refuseCrossSite(req);
      reply.header('set-cookie', fastifyCookie.serialize(cookieName, '', { ...cookieOptions(cookieName, req), expires: new Date(0), maxAge: 0 }));
      return ok({ signedOut: true as const });
    },
  );
};

export const devModule: AppModule = { name: 'dev', routes };
