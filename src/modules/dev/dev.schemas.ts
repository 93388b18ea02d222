import { z } from 'zod';

export const seedResultSchema = z.object({
  institutionId: z.string(),
  courses: z.number().int(),
  lessons: z.number().int(),
  enrollments: z.number().int(),
  created: z.boolean(),
});
