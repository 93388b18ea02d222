/**
 * The analytics cache: dashboards are computed once and served from the shared read cache
 * (`Deps.cache`: in memory, or Redis with REDIS_URL) until the analytics-snapshot cron
 * invalidates the institution, at most an hour later (spec 4.8). Invalidation is a new
 * generation per institution: entries are keyed by it, so a new generation leaves the old
 * entries unread until they expire, on one replica or many.
 */
import type { CrmCache } from '../../platform/crm/cache.js';
import { newId } from '../../platform/ids.js';

/** Entries outlive an hourly snapshot run only when the cron stops; then they expire. */
export const ANALYTICS_CACHE_TTL_SECONDS = 2 * 3600;
const GENERATION_TTL_SECONDS = 30 * 86_400;

const generationKey = (institutionId: string) => `analytics:gen:${institutionId}`;

async function generation(cache: CrmCache, institutionId: string): Promise<string> {
  const current = await cache.get(generationKey(institutionId));
  if (typeof current === 'string') return current;
  const fresh = newId();
  await cache.set(generationKey(institutionId), fresh, GENERATION_TTL_SECONDS);
  return fresh;
}

/** The cached value of `key` for the institution, or `compute()`'s, stored for the next reader. */
export async function cachedAnalytics<T>(cache: CrmCache, institutionId: string, key: string, compute: () => Promise<T>): Promise<T> {
  const fullKey = `analytics:${institutionId}:${await generation(cache, institutionId)}:${key}`;
  const hit = await cache.get(fullKey);
  if (hit !== undefined) return hit as T;
  const value = await compute();
  await cache.set(fullKey, value, ANALYTICS_CACHE_TTL_SECONDS);
  return value;
}

/** Drops every cached analytics value of the institution (the snapshot cron, after its run). */
export async function invalidateAnalytics(cache: CrmCache, institutionId: string): Promise<void> {
  await cache.set(generationKey(institutionId), newId(), GENERATION_TTL_SECONDS);
}
