import { z } from 'zod';
import { optionalFilter } from '../../platform/http/query-filters.js';
import { pageMetaSchema } from '../../platform/http/envelope.js';
import { MAX_PAGE_SIZE, paginationFields } from '../../platform/http/pagination.js';
import { AGGREGATES, GRANULARITIES, OPERATORS, reportDefinitionSchema } from './analytics.definition.js';
import { FIELD_TYPES } from './analytics.registry.js';
import { WEEKDAY_NAMES } from './analytics.cadence.js';
import { ALERT_COMPARISONS, type AlertComparison, ALERT_STATES, EXPORT_FORMATS, REPORT_RUN_STATUSES, REPORT_VISIBILITIES, SCHEDULE_CADENCES } from './analytics.tables.js';

export const idParams = z.object({ id: z.string().min(1).max(200) });

/**
 * An enum of upper-case values that also takes them in lower case (issue 16 writes cadences as
 * daily/weekly/monthly); the value is kept and answered in upper case.
 */
function anyCaseEnum<const T extends readonly [string, ...string[]]>(values: T) {
  const accepted = [...values, ...values.map((v) => v.toLowerCase())] as unknown as [string, ...string[]];
  return z.enum(accepted).transform((v) => v.toUpperCase() as T[number]);
}
const exportFormat = anyCaseEnum(EXPORT_FORMATS);
const cadence = anyCaseEnum(SCHEDULE_CADENCES);
const weekday = anyCaseEnum(WEEKDAY_NAMES);

// ── registry ───────────────────────────────────────────────────────────────────

const fieldSchema = z.object({
  name: z.string().describe('how a definition names it: `status`, or `course.title` for a field of a join'),
  label: z.string(),
  type: z.enum(FIELD_TYPES),
  values: z.array(z.string()).nullable().describe('the values of an enum field'),
  filterable: z.boolean(),
  groupable: z.boolean().describe('timestamps group by day, week, month or year'),
  aggregatable: z.boolean().describe('sum/avg (numbers), min/max (numbers, timestamps); count and countDistinct take any filterable field'),
  description: z.string().nullable(),
});

export const registrySchema = z.object({
  entities: z.array(
    z.object({
      name: z.string(),
      label: z.string(),
      description: z.string(),
      dateField: z.string().describe('the timestamp a dateRange applies to by default'),
      aggregateOnly: z.boolean().describe('rows can only be counted, never listed (notes)'),
      fields: z.array(fieldSchema),
      joins: z.array(z.object({ name: z.string(), label: z.string(), fields: z.array(fieldSchema) })),
    }),
  ),
  operators: z.record(z.string(), z.array(z.enum(OPERATORS))).describe('the filter operators of each field type'),
  aggregates: z.array(z.enum(AGGREGATES)),
  granularities: z.array(z.enum(GRANULARITIES)),
  maxRows: z.number().int().describe('the most rows a report yields and an export writes'),
});

// ── run and export ─────────────────────────────────────────────────────────────

const source = {
  reportId: z.string().min(1).max(200).optional().describe('a saved report the caller may see'),
  definition: reportDefinitionSchema.optional(),
};

export const runBody = z.strictObject({
  ...source,
  page: z.number().int().min(1).max(100_000).optional().describe('1-indexed page (default 1)'),
  perPage: z.number().int().min(1).max(MAX_PAGE_SIZE).optional().describe('rows per page, at most 100 (default 50); when both perPage and limit are sent, perPage wins'),
  limit: z.number().int().min(1).max(MAX_PAGE_SIZE).optional().describe('alias of perPage (spec 4.1; default 50); perPage wins when both are sent'),
});
export type RunBody = z.infer<typeof runBody>;

/** The page may also be asked in the query string, as on every paginated GET; the body's values win. */
export const runQuery = z.object({
  page: z.coerce.number().int().min(1).max(100_000).optional().describe('as `page` in the body (default 1); the body’s wins'),
  perPage: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).optional().describe('as `perPage` in the body (default 50); the body’s page size wins, then perPage over limit'),
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).optional().describe('alias of perPage (default 50); perPage wins when both are sent'),
});

export const exportBody = z.strictObject({
  ...source,
  format: exportFormat,
  title: z.string().trim().min(1).max(200).optional().describe('the heading and file name (default: the saved report name, or the entity)'),
});
export type ExportBody = z.infer<typeof exportBody>;

const cellSchema = z.union([z.string(), z.number(), z.boolean(), z.null()]);
export const columnSchema = z.object({ key: z.string(), label: z.string(), type: z.enum([...FIELD_TYPES, 'date']) });

export const runResponse = z.object({
  data: z.object({
    columns: z.array(columnSchema).describe('in row order; `key` names the value in each row'),
    rows: z.array(z.record(z.string(), cellSchema)).describe('timestamps are ISO 8601 UTC text; time buckets YYYY-MM-DD in the institution zone'),
  }),
  error: z.null(),
  meta: pageMetaSchema,
});

// ── saved reports ──────────────────────────────────────────────────────────────

const reportName = z.string().trim().min(1).max(200);
const reportDescription = z.string().trim().max(2000).nullable();

export const createReportBody = z.strictObject({
  name: reportName,
  description: reportDescription.optional(),
  visibility: z.enum(REPORT_VISIBILITIES).optional().describe('PRIVATE (default): the owner and administrators; SHARED: every teacher and administrator'),
  definition: reportDefinitionSchema,
});
export type CreateReport = z.infer<typeof createReportBody>;

export const updateReportBody = z.strictObject({
  name: reportName.optional(),
  description: reportDescription.optional(),
  visibility: z.enum(REPORT_VISIBILITIES).optional(),
  definition: reportDefinitionSchema.optional(),
});
export type UpdateReport = z.infer<typeof updateReportBody>;

export const listReportsQuery = z.object({
  ...paginationFields,
  visibility: optionalFilter(z.enum(REPORT_VISIBILITIES)),
  mine: optionalFilter(z.enum(['true', 'false'])).describe('true: only the caller’s own reports'),
});

export const reportSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  visibility: z.enum(REPORT_VISIBILITIES),
  ownerId: z.string(),
  canEdit: z.boolean().describe('the caller may change or delete it (owner or ADMIN)'),
  definition: reportDefinitionSchema,
  createdAt: z.string(),
  updatedAt: z.string(),
});

// ── schedules ──────────────────────────────────────────────────────────────────

const recipients = z.array(z.string().min(1).max(200)).min(1).max(50).describe('staff person ids of the institution (checked with the CRM); default: the caller');
const timeOfDay = z
  .string()
  .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be HH:MM')
  .describe('local time, HH:MM');

export const createScheduleBody = z.strictObject({
  cadence,
  time: timeOfDay,
  dayOfWeek: weekday.optional().describe('WEEKLY only (required there)'),
  dayOfMonth: z.number().int().min(1).max(31).optional().describe('MONTHLY only (required there); a shorter month runs on its last day'),
  timezone: z.string().min(1).max(100).optional().describe("an IANA zone; default: the institution's"),
  format: exportFormat,
  recipients: recipients.optional(),
  isActive: z.boolean().optional(),
});
export type CreateSchedule = z.infer<typeof createScheduleBody>;

export const updateScheduleBody = z.strictObject({
  cadence: cadence.optional(),
  time: timeOfDay.optional(),
  dayOfWeek: weekday.nullable().optional(),
  dayOfMonth: z.number().int().min(1).max(31).nullable().optional(),
  timezone: z.string().min(1).max(100).optional(),
  format: exportFormat.optional(),
  recipients: recipients.optional(),
  isActive: z.boolean().optional(),
});
export type UpdateSchedule = z.infer<typeof updateScheduleBody>;

export const scheduleSchema = z.object({
  id: z.string(),
  reportId: z.string(),
  createdBy: z.string(),
  cadence: z.enum(SCHEDULE_CADENCES),
  time: z.string(),
  dayOfWeek: z.enum(WEEKDAY_NAMES).nullable(),
  dayOfMonth: z.number().int().nullable(),
  timezone: z.string(),
  format: z.enum(EXPORT_FORMATS),
  recipients: z.array(z.string()),
  isActive: z.boolean(),
  nextRunAt: z.string(),
  lastRunAt: z.string().nullable(),
  lastRun: z
    .object({ dueAt: z.string(), status: z.enum(REPORT_RUN_STATUSES), rowCount: z.number().int().nullable(), completedAt: z.string().nullable(), error: z.string().nullable() })
    .nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

// ── alerts ─────────────────────────────────────────────────────────────────────

const metric = z.string().min(1).max(40).describe('`rowCount` (rows the report yields), or the `as` name of one of its aggregates (computed over all its rows, without grouping)');

/** The comparison of an alert: gt, gte, lt, lte, eq, neq, in either case, or as the symbol (>, >=, <, <=, =, !=). */
const COMPARISON_SYMBOLS = { '>': 'gt', '>=': 'gte', '<': 'lt', '<=': 'lte', '=': 'eq', '==': 'eq', '!=': 'neq', '<>': 'neq' } as const satisfies Record<string, AlertComparison>;
const comparison = z
  .enum([...ALERT_COMPARISONS, ...ALERT_COMPARISONS.map((c) => c.toUpperCase()), ...Object.keys(COMPARISON_SYMBOLS)] as unknown as [string, ...string[]])
  .transform((v) => (COMPARISON_SYMBOLS[v as keyof typeof COMPARISON_SYMBOLS] ?? v.toLowerCase()) as AlertComparison);

export const createAlertBody = z.strictObject({
  name: z.string().trim().min(1).max(200).optional().describe('Defaults to "<metric> <comparison> <threshold>", which then follows changes of the condition until a name is given'),
  metric,
  comparison,
  threshold: z.number().finite().describe('Any finite number, stored exactly (double precision)'),
  recipients: recipients.optional(),
  isActive: z.boolean().optional(),
});
export type CreateAlert = z.infer<typeof createAlertBody>;

export const updateAlertBody = z.strictObject({
  name: z.string().trim().min(1).max(200).optional(),
  metric: metric.optional(),
  comparison: comparison.optional(),
  threshold: z.number().finite().optional().describe('Any finite number, stored exactly (double precision)'),
  recipients: recipients.optional(),
  isActive: z.boolean().optional(),
});
export type UpdateAlert = z.infer<typeof updateAlertBody>;

export const alertSchema = z.object({
  id: z.string(),
  reportId: z.string(),
  createdBy: z.string(),
  name: z.string(),
  metric: z.string(),
  comparison: z.enum(ALERT_COMPARISONS),
  threshold: z.number(),
  recipients: z.array(z.string()),
  isActive: z.boolean(),
  state: z.enum(ALERT_STATES).describe('TRIGGERED from the evaluation that crossed the threshold until one finds it cleared'),
  lastValue: z.number().nullable(),
  lastEvaluatedAt: z.string().nullable(),
  lastError: z.string().nullable(),
  triggeredAt: z.string().nullable(),
  clearedAt: z.string().nullable(),
  triggerCount: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

// ── dashboards ─────────────────────────────────────────────────────────────────

const dayParam = z.iso.date().describe('YYYY-MM-DD');

export const courseAnalyticsQuery = z.object({
  from: optionalFilter(dayParam).describe('first day of the time series (default: 29 days before to)'),
  to: optionalFilter(dayParam).describe("last day of the time series (default: today in the institution's zone)"),
});

export const courseAnalyticsSchema = z.object({
  course: z.object({ id: z.string(), title: z.string(), status: z.string() }),
  enrollments: z.object({ total: z.number().int(), active: z.number().int(), completed: z.number().int(), dropped: z.number().int() }),
  completionRate: z.number().nullable().describe('completed ÷ all enrollments, percent (2 decimals); null without enrollments'),
  averageProgress: z.number().nullable().describe('mean progress (0–100) of ACTIVE and COMPLETED enrollments'),
  averageScore: z.number().nullable().describe('mean final score of the enrollments that have one'),
  lessons: z
    .array(
      z.object({
        lessonId: z.string(),
        title: z.string(),
        type: z.string(),
        position: z.number().int().describe('1-based, in reading order'),
        started: z.number().int().describe('enrollments with progress on it'),
        completed: z.number().int(),
        completionRate: z.number().nullable().describe('completed ÷ enrollments (ACTIVE and COMPLETED), percent'),
        dropOff: z.number().int().describe('completed the lesson before (for the first lesson: enrolled) but not this one'),
        dropOffRate: z.number().nullable().describe('dropOff ÷ the count before, percent'),
      }),
    )
    .describe('lessons in reading order (module order, then lesson order)'),
  series: z
    .array(
      z.object({
        day: z.string(),
        enrollments: z.number().int(),
        active: z.number().int(),
        completed: z.number().int(),
        dropped: z.number().int(),
        enrollmentsToday: z.number().int(),
        completionsToday: z.number().int(),
        activeLearnersToday: z.number().int(),
        averageProgress: z.number().nullable(),
        averageScore: z.number().nullable(),
      }),
    )
    .describe('one point per day that has a snapshot (the analytics-snapshot cron), oldest first'),
  generatedAt: z.string().describe('when these figures were computed (dashboards are cached until the next snapshot run)'),
});

export const revenueQuery = z.object({
  period: optionalFilter(z.enum(['day', 'week', 'month'])).describe('bucket (default month), in the institution zone'),
  from: optionalFilter(dayParam).describe('first day (default: the start of the 12th period back)'),
  to: optionalFilter(dayParam).describe('last day (default: today)'),
  includeFees: optionalFilter(z.enum(['true', 'false'])).describe('true: also read each enrolled student’s fee status from the CRM (at most 500 students)'),
});

const feeStatusCounts = z.object({ PAID: z.number().int(), PARTIAL: z.number().int(), OVERDUE: z.number().int(), UNKNOWN: z.number().int() });

export const revenueSchema = z.object({
  definition: z.string().describe('what the figures mean'),
  currency: z.null().describe('no prices or payments are stored here: no money figure is computed from this service’s data'),
  feeGatingEnabled: z.boolean(),
  period: z.enum(['day', 'week', 'month']),
  from: z.string(),
  to: z.string(),
  periods: z
    .array(
      z.object({
        period: z.string().describe('first day of the bucket, YYYY-MM-DD'),
        newEnrollments: z.number().int(),
        completions: z.number().int(),
        newLearners: z.number().int().describe('students whose first enrollment in the institution falls in the bucket'),
        feeGatedEnrollments: z.number().int().describe('new enrollments while fee gating is on (all of them when it is on, else 0)'),
      }),
    )
    .describe('every bucket of the window in order, those without events at zero'),
  totals: z.object({ enrollments: z.number().int(), activeEnrollments: z.number().int(), learners: z.number().int(), activeLearners: z.number().int() }),
  fees: z
    .object({
      students: z.number().int().describe('distinct students with an ACTIVE enrollment'),
      checked: z.number().int().describe('how many were looked up (at most 500)'),
      byStatus: feeStatusCounts.describe('UNKNOWN: the CRM had no answer for the student'),
      outstandingTotal: z.number().describe('sum of the `outstanding` amounts the CRM reports for the checked students (the CRM’s currency)'),
    })
    .nullable()
    .describe('null unless includeFees=true'),
  generatedAt: z.string(),
});

export const MAX_RUN_PAGE = MAX_PAGE_SIZE;

/** The exported files (spec 4.9 export), documented per content type. */
export const csvFileSchema = z.string().describe('CSV with a header row');
export const xlsxFileSchema = z.string().describe('XLSX workbook, one sheet');
export const pdfFileSchema = z.string().describe('PDF table');
export const scheduleListSchema = z.array(scheduleSchema);
export const alertListSchema = z.array(alertSchema);
