import { z } from 'zod';
import { institutionSettingsPatchSchema } from '../institutions/institutions.service.js';

export const settingsSchema = z.object({
  institutionId: z.string(),
  name: z.string().nullable(),
  slug: z.string().nullable(),
  feeGatingEnabled: z.boolean().describe('self-enroll and opening lesson content check the CRM fee status (OVERDUE → 402)'),
  timezone: z.string().describe('IANA time zone name, in its own spelling (sent as europe/berlin, kept as Europe/Berlin)'),
  locale: z.string(),
  allowSelfEnrollment: z.boolean(),
  certificateValidityMonths: z.number().int().nullable(),
});

export const settingsPatchBody = institutionSettingsPatchSchema
  .extend({ name: z.string().trim().min(1).max(200).optional() })
  .refine((b) => Object.keys(b).length > 0, 'at least one setting is required');
export type SettingsPatch = z.infer<typeof settingsPatchBody>;
