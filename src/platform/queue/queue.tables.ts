import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

/**
 * Background jobs. Written in the same transaction as the change that causes them,
 * claimed by workers with FOR UPDATE SKIP LOCKED, leased (the running worker extends the lease)
 * so a dead worker's job is retried by another.
 */
export const jobs = pgTable(
  'jobs',
  {
    id: text('id').primaryKey(),
    institutionId: text('institution_id'),
    name: text('name').notNull(),
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull().default({}),
    /** queued → running → done | queued (retry) | dead */
    status: text('status').notNull().default('queued'),
    attempts: integer('attempts').notNull().default(0),
    maxAttempts: integer('max_attempts').notNull().default(5),
    runAt: timestamp('run_at', { withTimezone: true, mode: 'date' }).notNull(),
    lockedUntil: timestamp('locked_until', { withTimezone: true, mode: 'date' }),
    lockedBy: text('locked_by'),
    lastError: text('last_error'),
    /**
     * At most one queued or running job per key (partial unique index): recurring jobs keep one
     * pending occurrence across worker replicas; enqueue with a key is idempotent while pending.
     */
    singletonKey: text('singleton_key'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull(),
    completedAt: timestamp('completed_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    index('jobs_claim_idx').on(t.status, t.runAt),
    index('jobs_name_idx').on(t.name, t.status),
    // Retention purge and `lms jobs` (dead jobs, newest first).
    index('jobs_status_updated_idx').on(t.status, t.updatedAt),
    uniqueIndex('jobs_singleton_key_idx')
      .on(t.singletonKey)
      .where(sql`status in ('queued', 'running')`),
  ],
);

export type Job = typeof jobs.$inferSelect;
export type JobStatus = 'queued' | 'running' | 'done' | 'dead';
