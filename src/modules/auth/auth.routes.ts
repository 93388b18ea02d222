import { z } from 'zod';
import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { envelope, ok } from '../../platform/http/envelope.js';
import { ROLES } from '../../platform/auth/tokens.js';

const sessionSchema = z.object({
  userId: z.string(),
  personId: z.string().describe('contactId when present, else userId: the id stored on records'),
  institutionId: z.string(),
  role: z.enum(ROLES),
  contactId: z.string().nullable(),
  isContact: z.boolean(),
  contactType: z.string().nullable(),
  permissions: z.array(z.string()),
  email: z.string().nullable(),
  name: z.string().nullable(),
  expiresAt: z.string().nullable(),
});

const routes: ModuleRoutes = async (app) => {
  typed(app).get(
    '/api/auth/session',
    {
      config: { auth: 'optional' },
      schema: {
        tags: ['auth'],
        operationId: 'getSession',
        summary: 'The decoded session of the caller, or null',
        response: { 200: envelope(sessionSchema.nullable()) },
      },
    },
    async (req) => ok(req.session),
  );
};

export const authModule: AppModule = { name: 'auth', routes };
