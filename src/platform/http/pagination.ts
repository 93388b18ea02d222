import { z } from 'zod';
import type { PageMeta } from './envelope.js';
import { blankIsAbsent } from './query-filters.js';

/** Spec 4.1: `page` (1-indexed) and a page size as `perPage` or `limit`, at most 100. */
export const MAX_PAGE_SIZE = 100;

/** `page`: 1-indexed, default 1 (an empty `?page=` too: a form's blank field counts as absent). */
export const pageNumber = z.preprocess(blankIsAbsent, z.coerce.number().int().min(1).default(1));
/** A page size (`perPage` or `limit`): 1 to 100, optional (each list has its own default). */
export const pageSize = z.preprocess(blankIsAbsent, z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).optional());

/** Query fields to spread into a route's querystring schema. */
export const paginationFields = {
  page: pageNumber.describe('1-indexed page number'),
  perPage: pageSize.describe('page size (max 100)'),
  limit: pageSize.describe('alias of perPage'),
};

export interface Page {
  page: number;
  perPage: number;
}

export function toPage(q: { page: number; perPage?: number; limit?: number }, defaultSize = 20): Page {
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
