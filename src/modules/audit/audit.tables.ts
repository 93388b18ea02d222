import { index, jsonb, pgTable, text, timestamp, unique } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * The audit log (spec 4.9 `GET /api/audit-log`): one row per staff write, written by `audit()`
 * (audit.ts) in the transaction of the change. Append-only: no route changes or deletes a row,
 * and the database refuses UPDATE, DELETE and TRUNCATE on the table (triggers in the migration).
 * `target_id` names rows of many tables (and outlives them), so it has no foreign key.
 */
export const auditLog = pgTable(
  'audit_log',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    /** The caller's person id (`contactId`, else `sub`). */
    actorId: text('actor_id').notNull(),
    actorRole: text('actor_role').notNull(),
    /** `<target>.<verb>`, e.g. `course.publish`, `enrollment.create`, `submission.grade`. */
    action: text('action').notNull(),
    targetType: text('target_type').notNull(),
    targetId: text('target_id').notNull(),
    /** The changed fields before and after the write (summarised: long text cut, large values described). */
    before: jsonb('before').$type<Record<string, unknown>>(),
    after: jsonb('after').$type<Record<string, unknown>>(),
    /** The id of the HTTP request that made the change (`x-request-id`). */
    requestId: text('request_id'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    unique('audit_log_inst_id_uq').on(t.institutionId, t.id),
    index('audit_log_inst_created_idx').on(t.institutionId, t.createdAt, t.id),
    index('audit_log_inst_actor_idx').on(t.institutionId, t.actorId, t.createdAt),
    index('audit_log_inst_action_idx').on(t.institutionId, t.action, t.createdAt),
    index('audit_log_inst_target_idx').on(t.institutionId, t.targetType, t.targetId, t.createdAt),
  ],
);

export type AuditRow = typeof auditLog.$inferSelect;
