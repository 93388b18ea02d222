import { sql } from 'drizzle-orm';
import { boolean, date, doublePrecision, foreignKey, index, integer, jsonb, pgTable, real, text, timestamp, unique } from 'drizzle-orm/pg-core';
import { courses } from '../courses/courses.tables.js';
import type { ReportDefinitionInput } from './analytics.definition.js';

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
    metrics: jsonb('metrics').$type<Record<string, number | null>>().notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [unique('analytics_daily_snapshots_inst_id_uq').on(t.institutionId, t.id), unique('analytics_daily_snapshots_day_uq').on(t.institutionId, t.day)],
);

/**
 * The same per course and local day: the time series of the course dashboard
 * (`GET /api/analytics/courses/{id}`), written by the same cron in one statement per institution.
 */
export const analyticsCourseDailySnapshots = pgTable(
  'analytics_course_daily_snapshots',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    courseId: text('course_id').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    enrollments: integer('enrollments').notNull(),
    active: integer('active').notNull(),
    completed: integer('completed').notNull(),
    dropped: integer('dropped').notNull(),
    enrollmentsToday: integer('enrollments_today').notNull(),
    completionsToday: integer('completions_today').notNull(),
    activeLearnersToday: integer('active_learners_today').notNull(),
    /** Mean progress (0–100) of ACTIVE and COMPLETED enrollments; null without any. */
    averageProgress: real('average_progress'),
    /** Mean final score of enrollments that have one; null without any. */
    averageScore: real('average_score'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('analytics_course_daily_snapshots_inst_id_uq').on(t.institutionId, t.id),
    unique('analytics_course_daily_snapshots_day_uq').on(t.institutionId, t.courseId, t.day),
    foreignKey({ name: 'analytics_course_daily_snapshots_course_fk', columns: [t.institutionId, t.courseId], foreignColumns: [courses.institutionId, courses.id] }).onDelete(
      'cascade',
    ),
  ],
);

export const REPORT_VISIBILITIES = ['PRIVATE', 'SHARED'] as const;
export type ReportVisibility = (typeof REPORT_VISIBILITIES)[number];

/** A saved report: a definition (validated against the entity registry when saved) and who sees it. */
export const analyticsReports = pgTable(
  'analytics_reports',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    ownerId: text('owner_id').notNull(),
    name: text('name').notNull(),
    description: text('description'),
    /** PRIVATE: the owner (and ADMIN); SHARED: every staff member of the institution. */
    visibility: text('visibility', { enum: REPORT_VISIBILITIES }).notNull().default('PRIVATE'),
    definition: jsonb('definition').$type<ReportDefinitionInput>().notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [unique('analytics_reports_inst_id_uq').on(t.institutionId, t.id), index('analytics_reports_inst_owner_idx').on(t.institutionId, t.ownerId, t.createdAt)],
);

export const SCHEDULE_CADENCES = ['DAILY', 'WEEKLY', 'MONTHLY'] as const;
export type ScheduleCadence = (typeof SCHEDULE_CADENCES)[number];
export const EXPORT_FORMATS = ['CSV', 'XLSX', 'PDF'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** When a saved report is e-mailed, to whom and in which format. */
export const analyticsReportSchedules = pgTable(
  'analytics_report_schedules',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    reportId: text('report_id').notNull(),
    createdBy: text('created_by').notNull(),
    cadence: text('cadence', { enum: SCHEDULE_CADENCES }).notNull(),
    /** Local time of day, HH:MM, in `timezone`. */
    timeOfDay: text('time_of_day').notNull(),
    /** WEEKLY: 1 (Monday) … 7 (Sunday). */
    dayOfWeek: integer('day_of_week'),
    /** MONTHLY: 1 … 31 (a shorter month runs on its last day). */
    dayOfMonth: integer('day_of_month'),
    timezone: text('timezone').notNull(),
    format: text('format', { enum: EXPORT_FORMATS }).notNull(),
    /** Staff person ids of the institution. */
    recipients: jsonb('recipients').$type<string[]>().notNull(),
    isActive: boolean('is_active').notNull().default(true),
    /** The next due time; the cron claims a run by moving it on with a conditional UPDATE. */
    nextRunAt: ts('next_run_at').notNull(),
    lastRunAt: ts('last_run_at'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('analytics_report_schedules_inst_id_uq').on(t.institutionId, t.id),
    index('analytics_report_schedules_due_idx')
      .on(t.nextRunAt)
      .where(sql`is_active`),
    index('analytics_report_schedules_report_idx').on(t.institutionId, t.reportId),
    foreignKey({
      name: 'analytics_report_schedules_report_fk',
      columns: [t.institutionId, t.reportId],
      foreignColumns: [analyticsReports.institutionId, analyticsReports.id],
    }).onDelete('cascade'),
  ],
);

export const REPORT_RUN_STATUSES = ['QUEUED', 'SENT', 'FAILED'] as const;

/**
 * One run of a schedule for one due time. The unique (schedule, due time) is the run key: however
 * often and however concurrently the cron runs, a due time makes one row and one job.
 */
export const analyticsReportRuns = pgTable(
  'analytics_report_runs',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    scheduleId: text('schedule_id').notNull(),
    reportId: text('report_id').notNull(),
    dueAt: ts('due_at').notNull(),
    format: text('format', { enum: EXPORT_FORMATS }).notNull(),
    status: text('status', { enum: REPORT_RUN_STATUSES }).notNull().default('QUEUED'),
    rowCount: integer('row_count'),
    fileKey: text('file_key'),
    fileName: text('file_name'),
    error: text('error'),
    createdAt: ts('created_at').notNull(),
    completedAt: ts('completed_at'),
  },
  (t) => [
    unique('analytics_report_runs_inst_id_uq').on(t.institutionId, t.id),
    unique('analytics_report_runs_key_uq').on(t.institutionId, t.scheduleId, t.dueAt),
    foreignKey({
      name: 'analytics_report_runs_schedule_fk',
      columns: [t.institutionId, t.scheduleId],
      foreignColumns: [analyticsReportSchedules.institutionId, analyticsReportSchedules.id],
    }).onDelete('cascade'),
  ],
);

export const ALERT_COMPARISONS = ['gt', 'gte', 'lt', 'lte', 'eq', 'neq'] as const;
export type AlertComparison = (typeof ALERT_COMPARISONS)[number];
export const ALERT_STATES = ['OK', 'TRIGGERED'] as const;

/**
 * A threshold on a metric of a saved report, evaluated by the report-schedules cron. It notifies
 * when it goes from OK to TRIGGERED (a conditional UPDATE, so once per trigger) and stays quiet
 * until the metric has cleared.
 */
export const analyticsReportAlerts = pgTable(
  'analytics_report_alerts',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    reportId: text('report_id').notNull(),
    createdBy: text('created_by').notNull(),
    name: text('name').notNull(),
    /** `rowCount`, or the `as` name of one of the report's aggregates. */
    metric: text('metric').notNull(),
    comparison: text('comparison', { enum: ALERT_COMPARISONS }).notNull(),
    /** Double precision: every finite number the API accepts is stored exactly. */
    threshold: doublePrecision('threshold').notNull(),
    recipients: jsonb('recipients').$type<string[]>().notNull(),
    isActive: boolean('is_active').notNull().default(true),
    state: text('state', { enum: ALERT_STATES }).notNull().default('OK'),
    lastValue: doublePrecision('last_value'),
    lastEvaluatedAt: ts('last_evaluated_at'),
    lastError: text('last_error'),
    triggeredAt: ts('triggered_at'),
    clearedAt: ts('cleared_at'),
    triggerCount: integer('trigger_count').notNull().default(0),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('analytics_report_alerts_inst_id_uq').on(t.institutionId, t.id),
    index('analytics_report_alerts_report_idx').on(t.institutionId, t.reportId),
    foreignKey({
      name: 'analytics_report_alerts_report_fk',
      columns: [t.institutionId, t.reportId],
      foreignColumns: [analyticsReports.institutionId, analyticsReports.id],
    }).onDelete('cascade'),
  ],
);

export type AnalyticsDailySnapshot = typeof analyticsDailySnapshots.$inferSelect;
export type AnalyticsReport = typeof analyticsReports.$inferSelect;
export type AnalyticsReportSchedule = typeof analyticsReportSchedules.$inferSelect;
export type AnalyticsReportRun = typeof analyticsReportRuns.$inferSelect;
export type AnalyticsReportAlert = typeof analyticsReportAlerts.$inferSelect;
