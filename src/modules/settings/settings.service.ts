import { sql } from 'drizzle-orm';
import type { z } from 'zod';
import type { ServiceContext } from '../../platform/context.js';
import { institutions } from '../institutions/institutions.tables.js';
import { getInstitution, settingsOf, type institutionSettingsPatchSchema } from '../institutions/institutions.service.js';
import { requireAccess } from '../access/access.service.js';

export async function readSettings(ctx: ServiceContext) {
  const row = await getInstitution(ctx.db, ctx.institutionId);
  return { institutionId: ctx.institutionId, name: row?.name ?? null, slug: row?.slug ?? null, ...settingsOf(row?.settings) };
}

/**
 * Institution settings (spec 4.9): everyone reads, ADMIN writes; unknown keys are refused.
 * Only the sent keys change, merged in SQL (`settings || changes`) in one statement, so two
 * admins changing different keys at the same time keep both changes.
 */
export async function patchSettings(ctx: ServiceContext, body: z.infer<typeof institutionSettingsPatchSchema> & { name?: string }) {
  await requireAccess(ctx, 'institution.admin', null);
  const { name, ...settings } = body;
  const changes = JSON.stringify(Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined)));
  const now = ctx.clock.now();
  await ctx.db
    .insert(institutions)
    .values({ id: ctx.institutionId, name: name ?? null, settings: sql`${changes}::jsonb`, createdAt: now, updatedAt: now })
    .onConflictDoUpdate({
      target: institutions.id,
      set: { settings: sql`${institutions.settings} || ${changes}::jsonb`, ...(name !== undefined ? { name } : {}), updatedAt: now },
    });
  return readSettings(ctx);
}
