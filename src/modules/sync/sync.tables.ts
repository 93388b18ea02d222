import { foreignKey, index, integer, jsonb, pgTable, text, timestamp, unique, uniqueIndex } from 'drizzle-orm/pg-core';
import { enrollments } from '../enrollments/enrollments.tables.js';
import type { CompletionPush } from '../../platform/crm/types.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * Outbox of completion pushes to the CRM: written in the completing transaction, sent by the
 * worker (or POST /api/sync/crm). One row per completion of an enrollment (an enrollment a
 * compliance cycle reopened is completed, and pushed, once more), so a completion is pushed once.
 */
export const crmCompletions = pgTable(
  'crm_completions',
  {
    id: text('id').primaryKey(),
    institutionId: text('institution_id').notNull(),
    enrollmentId: text('enrollment_id').notNull(),
    /** When the enrollment was completed (the payload's completedAt): one push per completion. */
    completedAt: ts('completed_at').notNull(),
    payload: jsonb('payload').$type<CompletionPush>().notNull(),
    /** PENDING → SENT, or FAILED (retried) */
    status: text('status', { enum: ['PENDING', 'SENT', 'FAILED'] })
      .notNull()
      .default('PENDING'),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    /** A sender (worker or sync endpoint) holds the row until then, so two never send it at once. */
    claimedUntil: ts('claimed_until'),
    sentAt: ts('sent_at'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('crm_completions_inst_id_uq').on(t.institutionId, t.id),
    foreignKey({ name: 'crm_completions_enrollment_fk', columns: [t.institutionId, t.enrollmentId], foreignColumns: [enrollments.institutionId, enrollments.id] }).onDelete(
      'cascade',
    ),
    uniqueIndex('crm_completions_completion_uq').on(t.institutionId, t.enrollmentId, t.completedAt),
    index('crm_completions_inst_status_idx').on(t.institutionId, t.status),
  ],
);
