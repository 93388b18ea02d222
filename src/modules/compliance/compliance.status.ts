import { sql, type SQL, type SQLWrapper } from 'drizzle-orm';

/** The columns a compliance record's status is derived from, as SQL (table columns or aliases). */
export interface ComplianceStatusColumns {
  waivedAt: SQLWrapper;
  completedAt: SQLWrapper;
  assignedAt: SQLWrapper;
  dueAt: SQLWrapper;
  /** The completion time of the person's enrollment in the training's course. */
  enrollmentCompletedAt: SQLWrapper;
}

/**
 * When the record's cycle was completed: a completion recorded for it, or the course completed
 * since the cycle began. One definition for the compliance endpoints and the analytics entity.
 */
export const complianceCompletionSql = (c: ComplianceStatusColumns): SQL =>
  sql`coalesce(${c.completedAt}, case when ${c.enrollmentCompletedAt} >= ${c.assignedAt} then ${c.enrollmentCompletedAt} end)`;

/** The derived status: WAIVED, then COMPLETED, then OVERDUE (past due at `now`), else ASSIGNED. */
export const complianceStatusSql = (c: ComplianceStatusColumns, now: Date): SQL =>
  sql`case
  when ${c.waivedAt} is not null then 'WAIVED'
  when ${complianceCompletionSql(c)} is not null then 'COMPLETED'
  when ${c.dueAt} < ${now.toISOString()}::timestamptz then 'OVERDUE'
  else 'ASSIGNED' end`;
