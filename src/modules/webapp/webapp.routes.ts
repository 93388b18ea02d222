import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { envelope, ok } from '../../platform/http/envelope.js';
import { webConfigSchema } from './webapp.schemas.js';

/** What the web app needs to know before anyone signs in. Public: it holds no secret. */
const routes: ModuleRoutes = async (app, deps) => {
  typed(app).get(
    '/api/web/config',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['web'],
        operationId: 'getWebConfig',
        summary: 'Sign-in address, development sign-in and the web push key, for the web app',
        description:
          'Public (no authentication: the sign-in page reads it), holds no secret: AUTH_SIGNIN_URL (null when unset), whether the development sign-in is available (false in production), and the VAPID public key for web push (null when unset). Only rate limiting (429 RATE_LIMITED) can refuse it.',
        response: { 200: envelope(webConfigSchema) },
      },
    },
    async () =>
      ok({
        signInUrl: deps.config.AUTH_SIGNIN_URL ?? null,
        devSignIn: !deps.config.isProduction,
        vapidPublicKey: deps.config.VAPID_PUBLIC_KEY ?? null,
      }),
  );
};

export const webappModule: AppModule = { name: 'webapp', routes };
