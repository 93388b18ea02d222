import { z } from 'zod';
import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { envelope, ok } from '../../platform/http/envelope.js';

export const webConfigSchema = z.object({
  signInUrl: z.string().nullable().describe('AUTH_SIGNIN_URL: where the web app sends people without a session (the CRM’s sign-in page)'),
  devSignIn: z.boolean().describe('true outside production: GET /api/dev/people and POST /api/dev/sign-in exist'),
  vapidPublicKey: z.string().nullable().describe('VAPID_PUBLIC_KEY, the applicationServerKey of browser push subscriptions; null when web push is not configured'),
});

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
