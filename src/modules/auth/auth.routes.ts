import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { envelope, ok } from '../../platform/http/envelope.js';
import { sessionSchema } from './auth.schemas.js';

const routes: ModuleRoutes = async (app) => {
  typed(app).get(
    '/api/auth/session',
    {
      config: { auth: 'optional' },
      schema: {
        tags: ['auth'],
        operationId: 'getSession',
        summary: 'The decoded session of the caller, or null',
        description:
          'Authentication optional: a valid session cookie or bearer token gives its decoded claims (person, institution, role, permissions, contact fields, expiry); none, or one that is expired or not valid, gives `data: null` (never 401). Only rate limiting (429 RATE_LIMITED) can refuse it.',
        response: { 200: envelope(sessionSchema.nullable()) },
      },
    },
    async (req) => ok(req.session),
  );
};

export const authModule: AppModule = { name: 'auth', routes };
