import { date, jsonb, pgTable, text, timestamp, unique } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * The daily metric snapshot of an institution (spec 4.8 `analytics-snapshot`): one row per
 * institution and local day, rewritten by each hourly run of that day, so the last run of a day
 * holds its final numbers and history stays queryable without scanning the live tables.
 */
export const analyticsDailySnapshots = pgTable(
  'analytics_daily_snapshots',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    /** The day in the institution's time zone. */
    day: date('day', { mode: 'string' }).notNull(),
    metrics: jsonb('metrics').$type<Record<string, number>>().notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [unique('analytics_daily_snapshots_inst_id_uq').on(t.institutionId, t.id), unique('analytics_daily_snapshots_day_uq').on(t.institutionId, t.day)],
);

export type AnalyticsDailySnapshot = typeof analyticsDailySnapshots.$inferSelect;
