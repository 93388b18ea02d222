import { z } from 'zod';
import { ERROR_STATUS, type ErrorCode } from './errors.js';

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

/** The codes ERROR_STATUS answers with `status`, in its order. */
export const codesOfStatus = (status: number): ErrorCode[] => (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((code) => ERROR_STATUS[code] === status);

const orList = (items: string[]) => (items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`);

/**
 * The error envelope of one status, for OpenAPI: `error.code` an enum of `codes` (by default the
 * codes ERROR_STATUS answers with that status), and a description naming them, with `note` (when
 * the route answers it) after a colon. Error answers are written with JSON.stringify, not through
 * this schema (errors-plugin.ts `sendError`): it documents, it does not filter.
 */
export function errorResponse(status: number, note?: string, codes: ErrorCode[] = codesOfStatus(status)) {
  if (codes.length === 0) throw new Error(`no error code has status ${status}`);
  const error = errorSchema.extend({ code: z.enum(codes as [ErrorCode, ...ErrorCode[]]) });
  return z.object({ data: z.null(), error }).describe(`${orList(codes)}${note ? `: ${note}` : ''}`);
}
