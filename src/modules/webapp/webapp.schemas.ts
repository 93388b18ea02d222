import { z } from 'zod';

/** GET /api/web/config: what the web app needs before anyone signs in. */
export const webConfigSchema = z.object({
  signInUrl: z.string().nullable().describe('AUTH_SIGNIN_URL: where the web app sends people without a session (the CRM’s sign-in page)'),
  devSignIn: z.boolean().describe('true outside production: GET /api/dev/people and POST /api/dev/sign-in exist'),
  vapidPublicKey: z.string().nullable().describe('VAPID_PUBLIC_KEY, the applicationServerKey of browser push subscriptions; null when web push is not configured'),
});
