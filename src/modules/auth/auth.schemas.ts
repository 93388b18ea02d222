import { z } from 'zod';
import { ROLES } from '../../platform/auth/tokens.js';

export const sessionSchema = z.object({
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
