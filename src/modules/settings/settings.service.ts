import { eq, sql } from 'drizzle-orm';
import type { z } from 'zod';
import { withTx, type ServiceContext } from '../../platform/context.js';
import { audit, changes as changedFields } from '../audit/audit.js';
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
  const sent = Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined));
  const changes = JSON.stringify(sent);
  const now = ctx.clock.now();
  await withTx(ctx, async (tx) => {
    // The row is locked so the audit row's "before" is exactly what this change replaced.
    const [current] = await tx.db.select().from(institutions).where(eq(institutions.id, tx.institutionId)).for('update');
    await tx.db
      .insert(institutions)
      .values({ id: tx.institutionId, name: name ?? null, settings: sql`${changes}::jsonb`, createdAt: now, updatedAt: now })
      .onConflictDoUpdate({
        target: institutions.id,
        set: { settings: sql`${institutions.settings} || ${changes}::jsonb`, ...(name !== undefined ? { name } : {}), updatedAt: now },
      });
    const before: Record<string, unknown> = { ...settingsOf(current?.settings), name: current?.name ?? null };
    const after: Record<string, unknown> = { ...before, ...sent, ...(name !== undefined ? { name } : {}) };
    const keys = [...Object.keys(sent), ...(name !== undefined ? ['name'] : [])];
    // A call that changes nothing writes no audit row (audit() drops it; README, Audit log).
    await audit(tx, { action: 'settings.update', targetType: 'institution', targetId: tx.institutionId, ...changedFields(before, after, keys) });
  });
  return readSettings(ctx);
}
