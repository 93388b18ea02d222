import { index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Background jobs. Written in the same transaction as the change that causes them,
 * claimed by workers with FOR UPDATE SKIP LOCKED, leased so a dead worker's job is retried.
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
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull(),
    completedAt: timestamp('completed_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [index('jobs_claim_idx').on(t.status, t.runAt), index('jobs_name_idx').on(t.name, t.status)],
);

export type Job = typeof jobs.$inferSelect;
