import { z } from 'zod';
import { optionalFilter } from '../../platform/http/query-filters.js';
import { paginationFieldsFor } from '../../platform/http/pagination.js';
import { rangeInOrder, timeOrDay } from '../../platform/http/time-range.js';
/** The audit log's page size when neither perPage nor limit is sent. */
export const AUDIT_PAGE_SIZE = 50;
const name = z.string().trim().min(1).max(200);

export const auditQuery = z
  .object({
    ...paginationFieldsFor(AUDIT_PAGE_SIZE),
    actorId: optionalFilter(name).describe("the actor's person id"),
    action: optionalFilter(
      z
        .string()
        .trim()
        .min(1)
        .max(100)
        .regex(/^[a-z_]+(\.[a-z_]+)*$/, 'an action such as course.update'),
    ).describe('an exact action (`course.update`) or a target type (`course`) for all its actions'),
    targetType: optionalFilter(name),
    targetId: optionalFilter(name),
    from: optionalFilter(timeOrDay).describe('rows written at or after this time (a date: from the start of that day, UTC)'),
    to: optionalFilter(timeOrDay).describe('rows written before this time (a date: up to the end of that day, UTC)'),
    // Issue 14 says "by actor, target and date range": those words work too.
    actor: optionalFilter(name).describe('the same as actorId'),
    target: optionalFilter(name).describe('the same as targetId'),
    startDate: optionalFilter(timeOrDay).describe('the same as from'),
    endDate: optionalFilter(timeOrDay).describe('the same as to'),
  })
  .refine(
    (q) => {
      const { from, to } = auditRange(q);
      return rangeInOrder(from, to);
    },
    { message: 'from must not be after to', path: ['from'] },
  );
export type AuditQuery = z.infer<typeof auditQuery>;

/** The range asked for, under either name (`from`/`to` win). */
export const auditRange = (q: { from?: string; to?: string; startDate?: string; endDate?: string }) => ({ from: q.from ?? q.startDate, to: q.to ?? q.endDate });

export const auditRowSchema = z.object({
  id: z.string(),
  actorId: z.string(),
  actorRole: z.string(),
  action: z.string(),
  targetType: z.string(),
  targetId: z.string(),
  before: z.record(z.string(), z.unknown()).nullable().describe('the changed fields before the write (null for a creation)'),
  after: z.record(z.string(), z.unknown()).nullable().describe('the changed fields after the write (null for a deletion)'),
  requestId: z.string().nullable(),
  createdAt: z.string(),
});
