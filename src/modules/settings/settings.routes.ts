import { eq } from 'drizzle-orm';
import type { AppModule } from '../types.js';
import { typed } from '../types.js';
import { envelope, ok } from '../../platform/http/envelope.js';
import { serviceContext, type ServiceContext } from '../../platform/context.js';
import { actorOf } from '../../platform/auth/auth-plugin.js';
import { requireAdmin } from '../../platform/auth/permissions.js';
import { institutions } from '../institutions/institutions.tables.js';
import { getInstitution, settingsOf } from '../institutions/institutions.service.js';
import { settingsSchema as settingsResponse, settingsPatchBody as patchBody, type SettingsPatch } from './settings.schemas.js';

async function readSettings(ctx: ServiceContext) {
  const row = await getInstitution(ctx.db, ctx.institutionId);
  return { institutionId: ctx.institutionId, name: row?.name ?? null, slug: row?.slug ?? null, ...settingsOf(row?.settings) };
}

/** Institution settings (spec 4.9): everyone reads, ADMIN writes; unknown keys are refused. */
async function patchSettings(ctx: ServiceContext, body: SettingsPatch) {
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

export const settingsModule: AppModule = async (app, deps) => {
  const r = typed(app);
  const ctx = (req: Parameters<typeof actorOf>[0]) => serviceContext(deps, actorOf(req), req.log);
  r.get('/api/settings', {
    schema: { tags: ['settings'], operationId: 'getSettings', summary: 'Institution settings, including the fee gating toggle', response: { 200: envelope(settingsResponse) } },
  }, async (req) => ok(await readSettings(ctx(req))));
  r.patch('/api/settings', {
    schema: { tags: ['settings'], operationId: 'updateSettings', summary: 'Change institution settings (ADMIN); only sent fields change', body: patchBody, response: { 200: envelope(settingsResponse) } },
  }, async (req) => ok(await patchSettings(ctx(req), req.body)));
};
