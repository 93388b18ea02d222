import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Clock } from '../../platform/clock.js';
import type { CrmClient } from '../../platform/crm/types.js';
import type { Db, DbOrTx } from '../../platform/db/client.js';
import { AppError } from '../../platform/http/errors.js';
import { institutions } from './institutions.tables.js';
import { canonicalTimeZone, isTimeZone } from '../../platform/time-zone.js';

/** Validators of each institution setting (stored as jsonb, validated on write). */
const settingFields = {
  /** When on, self-enrollment and opening lesson content check the CRM fee status. */
  feeGatingEnabled: z.boolean(),
  // Intl accepts any letter case; the setting is kept and shown in the zone's own spelling (europe/berlin → Europe/Berlin).
  timezone: z.string().refine(isTimeZone, 'must be an IANA time zone name').transform(canonicalTimeZone),
  locale: z.string().regex(/^[a-z]{2,3}(-[A-Z]{2})?$/, 'must be a locale like en or en-GB'),
  allowSelfEnrollment: z.boolean(),
  certificateValidityMonths: z.number().int().min(1).max(600).nullable(),
};

/** Settings with their defaults. */
export const institutionSettingsSchema = z.object({
  feeGatingEnabled: settingFields.feeGatingEnabled.default(false),
  timezone: settingFields.timezone.default('UTC'),
  locale: settingFields.locale.default('en'),
  allowSelfEnrollment: settingFields.allowSelfEnrollment.default(true),
  certificateValidityMonths: settingFields.certificateValidityMonths.default(null),
});

/**
 * A change to some settings: every field optional and without defaults (zod 4 applies a
 * default even under `.optional()`, which would reset unsent settings), unknown keys refused.
 */
export const institutionSettingsPatchSchema = z.strictObject({
  feeGatingEnabled: settingFields.feeGatingEnabled.optional(),
  timezone: settingFields.timezone.optional(),
  locale: settingFields.locale.optional(),
  allowSelfEnrollment: settingFields.allowSelfEnrollment.optional(),
  certificateValidityMonths: settingFields.certificateValidityMonths.optional(),
});
export type InstitutionSettings = z.infer<typeof institutionSettingsSchema>;

export function settingsOf(stored: Record<string, unknown> | null | undefined): InstitutionSettings {
  const parsed = institutionSettingsSchema.safeParse(stored ?? {});
  // Stored settings were validated on write; an unreadable row falls back to defaults.
  return parsed.success ? parsed.data : institutionSettingsSchema.parse({});
}

export async function getInstitution(db: DbOrTx, institutionId: string) {
  const [row] = await db.select().from(institutions).where(eq(institutions.id, institutionId)).limit(1);
  return row ?? null;
}

export async function getSettings(db: DbOrTx, institutionId: string): Promise<InstitutionSettings> {
  return settingsOf((await getInstitution(db, institutionId))?.settings);
}

/**
 * The institution's CRM tenant label: from its row, or looked up through the CRM's institution
 * lookup and stored. Null when neither knows it (calls then fail cleanly).
 */
export async function institutionSlug(deps: { db: Db; crm: CrmClient; clock: Clock }, institutionId: string): Promise<string | null> {
  const row = await getInstitution(deps.db, institutionId);
  if (row?.slug) return row.slug;
  const found = await deps.crm.lookupInstitution(institutionId).catch(() => null);
  if (!found) return null;
  const now = deps.clock.now();
  await deps.db
    .insert(institutions)
    .values({ id: institutionId, slug: found.slug, name: found.name, settings: {}, createdAt: now, updatedAt: now })
    .onConflictDoUpdate({ target: institutions.id, set: { slug: found.slug, name: row?.name ?? found.name, updatedAt: now } });
  return found.slug;
}

/** Slug or a clean failure, for strict CRM calls. */
export async function requireInstitutionSlug(deps: { db: Db; crm: CrmClient; clock: Clock }, institutionId: string): Promise<string> {
  const slug = await institutionSlug(deps, institutionId);
  if (!slug) throw new AppError('BAD_GATEWAY', 'The institution is not known to the CRM');
  return slug;
}
