import { z } from 'zod';

export const syncResultSchema = z.object({
  pushed: z.number().int().describe('sent in this call'),
  failed: z.number().int().describe('attempted in this call and failed'),
  pending: z.number().int().describe('still not delivered after this call'),
});
