import type { Session } from '../auth/tokens.js';

/** How a route authenticates; default is `session` under /api and `public` elsewhere. */
export type AuthMode = 'session' | 'optional' | 'public' | 'cron' | 'basic';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
  }
  interface FastifyInstance {
    /** Every documented /api route (method, url), for the docs completeness test. */
    registeredRoutes: Array<{ method: string; url: string }>;
  }
  interface FastifyRequest {
    session: Session | null;
    rawBody: Buffer | undefined;
    /** Reached through the /api/v1 prefix. */
    isV1: boolean;
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
