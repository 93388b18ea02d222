import type { ServiceContext } from '../../platform/context.js';
import { institutionSlug } from './institutions.service.js';

/**
 * Display names of people through the CRM's optional lookup (spec 4.10 rule 2): one lookup per
 * distinct id (the client caches them), and the generic label with the id (`Student c_…`) when
 * the CRM does not know the person or cannot answer, so a screen degrades instead of failing.
 */
export async function displayNames(ctx: ServiceContext, people: Iterable<{ id: string; label: string }>): Promise<Map<string, string>> {
  const unique = new Map<string, string>();
  for (const p of people) if (!unique.has(p.id)) unique.set(p.id, p.label);
  if (unique.size === 0) return new Map();
  const slug = await institutionSlug(ctx, ctx.institutionId).catch(() => null);
  const pairs = await Promise.all(
    [...unique].map(async ([id, label]) => [id, (slug ? await ctx.crm.displayNameOrNull(slug, id).catch(() => null) : null) ?? `${label} ${id}`] as const),
  );
  return new Map(pairs);
}
