import { z } from 'zod';

export const livenessSchema = z.object({ status: z.literal('ok') });

export const readinessSchema = z.object({ status: z.literal('ready'), database: z.string() });
