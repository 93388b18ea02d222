import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { commonErrors, envelope, ok } from '../../platform/http/envelope.js';
import { serviceContext, type ServiceContext } from '../../platform/context.js';
import { actorOf } from '../../platform/auth/auth-plugin.js';
import { requireAdmin } from '../../platform/auth/permissions.js';
import { institutions } from '../institutions/institutions.tables.js';
import { getInstitution, institutionSettingsPatchSchema, settingsOf } from '../institutions/institutions.service.js';

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

async function readSettings(ctx: ServiceContext) {
  const row = await getInstitution(ctx.db, ctx.institutionId);
  return { institutionId: ctx.institutionId, name: row?.name ?? null, slug: row?.slug ?? null, ...settingsOf(row?.settings) };
}

/** Institution settings (spec 4.9): everyone reads, ADMIN writes; unknown keys are refused. */
async function patchSettings(ctx: ServiceContext, body: z.infer<typeof patchBody>) {
  requireAdmin(ctx.actor);
  const { name, ...settings } = body;
  await ctx.db.transaction(async (tx) => {
    const row = await getInstitution(tx, ctx.institutionId);
    const merged = { ...settingsOf(row?.settings), ...Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined)) };
    await tx
      .update(institutions)
      .set({ settings: merged, ...(name !== undefined ? { name } : {}), updatedAt: ctx.clock.now() })
      .where(eq(institutions.id, ctx.institutionId));
  });
  return readSettings(ctx);
}

const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);
  const ctx = (req: Parameters<typeof actorOf>[0]) => serviceContext(deps, actorOf(req));
  r.get('/api/settings', {
    schema: { tags: ['settings'], operationId: 'getSettings', summary: 'Institution settings, including the fee gating toggle', response: { 200: envelope(settingsResponse), ...commonErrors } },
  }, async (req) => ok(await readSettings(ctx(req))));
  r.patch('/api/settings', {
    schema: { tags: ['settings'], operationId: 'updateSettings', summary: 'Change institution settings (ADMIN); only sent fields change', body: patchBody, response: { 200: envelope(settingsResponse), ...commonErrors } },
  }, async (req) => ok(await patchSettings(ctx(req), req.body)));
};

export const settingsModule: AppModule = { name: 'settings', routes };
