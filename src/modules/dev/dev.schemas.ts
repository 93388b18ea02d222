import { z } from 'zod';
import { ROLES } from '../../platform/auth/tokens.js';
import { sessionSchema } from '../auth/auth.schemas.js';

export const seedResultSchema = z.object({
  institutionId: z.string(),
  courses: z.number().int(),
  lessons: z.number().int(),
  enrollments: z.number().int(),
  created: z.boolean(),
});

export const demoPersonSchema = z.object({
  personId: z.string(),
  name: z.string(),
  role: z.enum(ROLES),
  institutionId: z.string(),
  institutionName: z.string(),
  detail: z.string().nullable().describe("a student's class and section, a parent's children"),
});
export const demoPeopleSchema = z.array(demoPersonSchema);

export const signInBodySchema = z.object({
  personId: z.string().min(1).max(100).describe('a personId from GET /api/dev/people'),
});

export const signInResultSchema = sessionSchema;

export const signOutResultSchema = z.object({ signedOut: z.literal(true) });
