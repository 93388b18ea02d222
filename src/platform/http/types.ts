import type { Session } from '../auth/tokens.js';
import type { ErrorCode } from './errors.js';
import type { ZodSerializedRoute } from './serializer.js';

/** How a route authenticates; default is `session` under /api and `public` elsewhere. */
export type AuthMode = 'session' | 'optional' | 'public' | 'cron' | 'basic';

/**
 * Whose record the id in a route's path names. Every route with a path parameter declares it
 * (`config.recordScope`); the OpenAPI document carries it as `x-record-scope`, and the
 * cross-tenant sweep (test/platform/tenancy-sweep.test.ts) checks each route against it:
 * - `institution`: shared within the institution; role, enrollment and course rules decide
 *   (another institution's users get 404);
 * - `owner`: one person's private record (a note, an assigned peer review, a student's
 *   enrollment, a parent's child): to anyone else of the institution it does not exist, 404;
 * - `owner-edit`: readable by others of the institution but changed only by its owner (a
 *   discussion post's author, an announcement's author, a live session's host) or as the
 *   access rule says: others who can see it get 403 FORBIDDEN.
 */
export type RecordScope = 'institution' | 'owner' | 'owner-edit';
export const RECORD_SCOPES: readonly RecordScope[] = ['institution', 'owner', 'owner-edit'];

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
    /** Required on every route with a path parameter (see `RecordScope`). */
    recordScope?: RecordScope;
    /**
     * Error codes the route answers beyond the ones every route documents (error-responses.ts
     * adds their statuses to its OpenAPI responses): FEE_OVERDUE where fee gating applies
     * (access rules lesson.open, lesson.learn, quiz.take, scorm.*, self-enrollment),
     * BAD_GATEWAY where a CRM failure surfaces, SERVICE_UNAVAILABLE… Documentation only.
     */
    errors?: readonly ErrorCode[];
  }
  interface FastifyInstance {
    /** Set on SIGTERM: /readyz answers 503 so load balancers stop sending requests (main.ts). */
    draining: boolean;
    /** Every documented /api route (method, url), for the docs completeness test. */
    registeredRoutes: Array<{ method: string; url: string }>;
    /** Responses written through zod + JSON.stringify instead of the compiled serializer, and why (serializer.ts). */
    zodSerializedRoutes: ZodSerializedRoute[];
  }
  interface FastifyRequest {
    session: Session | null;
    rawBody: Buffer | undefined;
    /**
     * Why authentication refused the request, decided in onRequest and thrown in preParsing,
     * so the rate limiter (an onRequest hook of each route) counts refused requests too.
     */
    authRefusal: Error | null;
    /**
     * A caller a module authenticated by its own scheme (an xAPI Basic credential), set in an
     * onRequest hook: the rate limiter counts it like a person.
     */
    apiCaller: string | null;
  }
}
