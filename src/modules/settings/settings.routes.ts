import { z } from 'zod';
import type { AppModule } from '../types.js';
import { typed } from '../types.js';
import { commonErrors, envelope, ok } from '../../platform/http/envelope.js';
import { serviceContext } from '../../platform/context.js';
import { actorOf } from '../../platform/auth/auth-plugin.js';
import { institutionSettingsPatchSchema } from '../institutions/institutions.service.js';
import { patchSettings, readSettings } from './settings.service.js';

const settingsResponse = z.object({
  institutionId: z.string(),
  name: z.string().nullable(),
  slug: z.string().nullable(),
  feeGatingEnabled: z.boolean().describe('self-enroll and opening lesson content check the CRM fee status (OVERDUE → 402)'),
  timezone: z.string(),
  locale: z.string(),
  allowSelfEnrollment: z.boolean(),
  certificateValidityMonths: z.number().int().nullable(),
});

const patchBody = institutionSettingsPatchSchema
  .extend({ name: z.string().trim().min(1).max(200).optional() })
  .refine((b) => Object.keys(b).length > 0, 'at least one setting is required');

export const settingsModule: AppModule = async (app, deps) => {
  const r = typed(app);
  const ctx = (req: Parameters<typeof actorOf>[0]) => serviceContext(deps, actorOf(req));
  r.get('/api/settings', {
    schema: { tags: ['settings'], operationId: 'getSettings', summary: 'Institution settings, including the fee gating toggle', response: { 200: envelope(settingsResponse), ...commonErrors } },
  }, async (req) => ok(await readSettings(ctx(req))));
  r.patch('/api/settings', {
    schema: { tags: ['settings'], operationId: 'updateSettings', summary: 'Change institution settings (ADMIN); only sent fields change', body: patchBody, response: { 200: envelope(settingsResponse), ...commonErrors } },
  }, async (req) => ok(await patchSettings(ctx(req), req.body)));
};
