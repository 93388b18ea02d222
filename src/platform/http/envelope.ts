import { z } from 'zod';

/** Envelope of spec 2.1: `{ data, error }`, plus `meta` on paginated lists. */
export interface PageMeta {
  total: number;
  page: number;
  perPage: number;
  totalPages: number;
}

export const ok = <T>(data: T) => ({ data, error: null });
export const paged = <T>(data: T[], meta: PageMeta) => ({ data, error: null, meta });

const errorSchema = z.object({
  code: z.string(),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});

export const errorEnvelope = z.object({ data: z.null(), error: errorSchema }).describe('Error envelope');

export const pageMetaSchema = z.object({
  total: z.number().int(),
  page: z.number().int(),
  perPage: z.number().int(),
  totalPages: z.number().int(),
});

/** Response schema for a route returning `ok(data)`. */
export const envelope = <T extends z.ZodTypeAny>(data: T) => z.object({ data, error: z.null() });
/** Response schema for a route returning `paged(rows, meta)`. */
export const pagedEnvelope = <T extends z.ZodTypeAny>(row: T) => z.object({ data: z.array(row), error: z.null(), meta: pageMetaSchema });

/** Response schema for a paginated route whose `data` is an object holding the rows: `{data, error, meta}`. */
export const envelopeWithMeta = <T extends z.ZodTypeAny>(data: T) => z.object({ data, error: z.null(), meta: pageMetaSchema });

/** Data of every DELETE that removes something: `{id, deleted: true}`. */
export const deletedSchema = z.object({ id: z.string(), deleted: z.literal(true) }).describe('Deletion result');

/**
 * The error responses any route may give, for OpenAPI. The `onRoute` hook of
 * error-responses.ts adds each to every route that does not declare its own.
 */
export const commonErrors = {
  400: errorEnvelope,
  401: errorEnvelope,
  403: errorEnvelope,
  404: errorEnvelope,
  409: errorEnvelope,
  429: errorEnvelope,
  500: errorEnvelope,
};
