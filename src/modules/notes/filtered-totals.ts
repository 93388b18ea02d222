import { LRUCache } from 'lru-cache';

/**
 * Exact totals of the filtered lists of my notes and my bookmarks (a search, a course filter),
 * cached against the student's version.
 *
 * Counting the matches of a search is what a filtered page costs (a bitmap scan of every match:
 * 2 ms for 834 of 10,000 notes, ten times that for ten times the matches), while its page of 20
 * is cheap. So the count is kept, per database handle, under the student's version:
 * `student_annotation_counts.notes_version` (`bookmarks_version`), the id of the last transaction
 * that inserted, updated or deleted one of their rows, set by the same triggers that keep the
 * unfiltered counts (migration 0021). The page query reads the version in its own snapshot; the
 * cached total is used only when it was counted at that very version, otherwise the total is
 * counted again (with the version, in one statement) and replaces the entry. Transaction ids
 * never repeat in a cluster, so a version never comes back to describe other rows, and every
 * replica can keep its own cache: nothing needs invalidating across processes.
 */
export interface VersionedTotal {
  total: number;
  /** The student's version the total was counted at (0: no counter row yet). */
  version: number;
  /** All the student's rows of the list (unfiltered) at that version: with `total`, the density of matches. */
  all: number;
}

/** Reading the student's rows in order costs about a quarter of fetching one match through the trigram index. */
const ORDERED_ROWS_PER_MATCH = 4;
/** An ordered read this short is always cheap (the index walk of a page of 20 reads ~250 rows for 8 % matches). */
const ORDERED_SCAN_FLOOR = 1000;

/**
 * How many of the student's newest rows a search page should read in order to find its rows, or
 * undefined to let the trigram index find every match and sort them. Only with a cached total
 * (the density of matches is known exactly then): the rows up to the page's end are expected at
 * `end × all / total`, read with half again as margin. A dense search (8 % of 10,000 notes
 * match) reads ~500 rows for page 1 instead of fetching and sorting all 834 matches; a sparse one
 * (5 of 10,000) goes through the index. The planner cannot make this choice well: its estimate
 * of an `ILIKE '%…%'` selectivity is a guess, and it flipped between the plans on the same data.
 */
export function orderedScanFor(cached: VersionedTotal | undefined, end: number): number | undefined {
  if (!cached || cached.total === 0) return undefined;
  const scan = Math.ceil(((end * cached.all) / cached.total) * 1.5) + 100;
  return scan <= Math.max(ORDERED_SCAN_FLOOR, ORDERED_ROWS_PER_MATCH * cached.total) ? scan : undefined;
}

/** A page row with the student's version read in the same statement (null: no counter row). */
export interface Versioned {
  version: number | null;
}

type TotalsCache = LRUCache<string, VersionedTotal>;

const cachesByDb = new WeakMap<object, TotalsCache>();
/** The average key length the cache's size budget allows (a typical key is ~80 characters). */
const KEY_CHARS_PER_ENTRY = 256;

/** The cache of one database handle (caches of another database must never answer), or none when `maxEntries` is 0. */
export function totalsCacheOf(db: object, maxEntries: number): TotalsCache | undefined {
  if (maxEntries <= 0) return undefined;
  let cache = cachesByDb.get(db);
  if (!cache) {
    // Keys hold the caller's filters: bounded by their length too, so long course ids or
    // searches cannot make 10,000 entries weigh more than ~5 MB of keys.
    cache = new LRUCache<string, VersionedTotal>({ max: maxEntries, maxSize: maxEntries * KEY_CHARS_PER_ENTRY, sizeCalculation: (_total, key) => key.length + 1 });
    cachesByDb.set(db, cache);
  }
  return cache;
}

/** The cache key of one filtered list of one student. NUL cannot occur in ids or query strings. */
export const totalsKey = (...parts: Array<string | undefined>) => parts.map((p) => p ?? '').join('\u0000');

/**
 * A filtered page and its exact total. With a cached total for `key`, only the page runs (it is
 * given the cached entry, to choose how to find its rows: `orderedScanFor`); its
 * version decides whether the cached total still holds (a page with no rows carries no version,
 * so the total is counted). Without one, the page and the count run side by side, as uncached.
 */
export async function pageWithTotal<Row extends Versioned>(
  cache: TotalsCache | undefined,
  key: string,
  page: (cached: VersionedTotal | undefined) => Promise<Row[]>,
  count: () => Promise<VersionedTotal>,
): Promise<{ rows: Row[]; total: number }> {
  const cached = cache?.get(key);
  if (cached) {
    const rows = await page(cached);
    if (rows.length > 0 && (rows[0]!.version ?? 0) === cached.version) return { rows, total: cached.total };
    const counted = await count();
    cache!.set(key, counted);
    return { rows, total: counted.total };
  }
  const [rows, counted] = await Promise.all([page(undefined), count()]);
  cache?.set(key, counted);
  return { rows, total: counted.total };
}
