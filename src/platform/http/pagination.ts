import { z } from 'zod';
import type { PageMeta } from './envelope.js';
import { blankIsAbsent } from './query-filters.js';

/** Spec 4.1: `page` (1-indexed) and a page size as `perPage` or `limit`, at most 100. */
export const MAX_PAGE_SIZE = 100;

/** `page`: 1-indexed, default 1 (an empty `?page=` too: a form's blank field counts as absent). */
export const pageNumber = z.preprocess(blankIsAbsent, z.coerce.number().int().min(1).default(1));
/** A page size (`perPage` or `limit`): 1 to 100, optional (each list has its own default). */
export const pageSize = z.preprocess(blankIsAbsent, z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).optional());

/** The page size of a list that does not name its own. */
export const DEFAULT_PAGE_SIZE = 20;

/**
 * Query fields to spread into a route's querystring schema, documenting the list's default page
 * size (the one its service passes to `toPage`). Only the descriptions depend on it.
 */
export const paginationFieldsFor = (defaultSize: number) => ({
  page: pageNumber.describe('1-indexed page number (default 1)'),
  perPage: pageSize.describe(`page size, 1 to ${MAX_PAGE_SIZE} (default ${defaultSize}); when both perPage and limit are sent, perPage wins`),
  limit: pageSize.describe(`alias of perPage (default ${defaultSize}); perPage wins when both are sent`),
});

/** Query fields of a list with the default page size (20). */
export const paginationFields = paginationFieldsFor(DEFAULT_PAGE_SIZE);

export interface Page {
  page: number;
  perPage: number;
}

export function toPage(q: { page: number; perPage?: number; limit?: number }, defaultSize = DEFAULT_PAGE_SIZE): Page {
  return { page: q.page, perPage: q.perPage ?? q.limit ?? defaultSize };
}

export const pageOffset = ({ page, perPage }: Page) => (page - 1) * perPage;

/**
 * The total of a list whose page query also counts the rows (`count(*) over ()` as `total`): from
 * the page's first row; an empty page past the first (past the end) has no row to carry it, so
 * `count` counts apart.
 */
export async function pageTotal(rows: ReadonlyArray<{ total: number | string }>, page: Page, count: () => Promise<number>): Promise<number> {
  if (rows.length > 0) return Number(rows[0]!.total);
  return page.page > 1 ? count() : 0;
}

export const pageMeta = ({ page, perPage }: Page, total: number): PageMeta => ({
  total,
  page,
  perPage,
  totalPages: Math.ceil(total / perPage),
});
