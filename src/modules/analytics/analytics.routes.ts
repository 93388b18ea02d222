import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { deletedSchema, envelope, errorResponse, ok, paged, pagedEnvelope } from '../../platform/http/envelope.js';
import { actorOf, requestContext } from '../../platform/auth/auth-plugin.js';
import { routeRateLimits } from '../../platform/http/rate-limit.js';
import * as reports from './analytics.service.js';
import * as schedules from './analytics.schedules.js';
import * as alerts from './analytics.alerts.js';
import * as dashboards from './analytics.dashboards.js';
import { analyticsJobs } from './analytics.jobs.js';
import {
  alertSchema,
  courseAnalyticsQuery,
  courseAnalyticsSchema,
  createAlertBody,
  createReportBody,
  createScheduleBody,
  exportBody,
  idParams,
  listReportsQuery,
  registrySchema,
  reportSchema,
  revenueQuery,
  revenueSchema,
  runBody,
  runQuery,
  runResponse,
  scheduleSchema,
  updateAlertBody,
  updateReportBody,
  updateScheduleBody,
  csvFileSchema,
  xlsxFileSchema,
  pdfFileSchema,
  scheduleListSchema,
  alertListSchema,
} from './analytics.schemas.js';

const tags = ['analytics'];
const STAFF = 'Teachers and administrators (others 403).';
/** A report stopped by its statement timeout (analytics.query.ts `reportTimeoutError`). */
const REPORT_TIMEOUT = errorResponse(503, 'the report ran past REPORT_STATEMENT_TIMEOUT_MS and was stopped (`details.reason` statement_timeout)');
const OWNER = 'The report’s owner or an administrator (other staff who can see it 403; a report the caller cannot see 404).';

/** Spec 4.9 analytics rows: registry, run and export, saved reports, schedules, alerts, dashboards. */
const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);
  const ctxOf = (req: Parameters<typeof actorOf>[0]) => requestContext(deps, req);
  const limits = routeRateLimits(deps.config);

  r.get(
    '/api/analytics/entities',
    {
      schema: {
        tags,
        operationId: 'listAnalyticsEntities',
        summary: 'The entity registry: reportable entities, their fields and joins, operators and aggregates',
        description: `${STAFF} A report definition may only name what is listed here. Note content is never reportable: notes can only be counted.`,
        response: { 200: envelope(registrySchema) },
      },
    },
    async (req) => ok(await reports.entities(ctxOf(req))),
  );

  r.post(
    '/api/analytics/reports/run',
    {
      config: { rateLimit: limits.reportRun },
      schema: {
        tags,
        operationId: 'runReport',
        summary: 'Run a report definition, or a saved report, and get one page of its rows (30 per minute per user)',
        description:
          `${STAFF} Give \`definition\` or \`reportId\`. The definition is checked against the registry: an unknown entity, field, join, operator or aggregate, ` +
          'a field that may not be filtered, grouped or aggregated, or a value of the wrong type is 400 VALIDATION_ERROR naming each offending part ' +
          '(`details.fields[].field`, e.g. `body.definition.filters.0.op`). Only the caller’s institution is ever read. A report running past ' +
          '`REPORT_STATEMENT_TIMEOUT_MS` is stopped: 503 with `details.reason` `statement_timeout`. Pages of at most 100 rows (default 50): `page` and `perPage` (or its alias `limit`) in the body, or else in the query string; `meta.total` counts all rows (at most 100,000).',
        body: runBody,
        querystring: runQuery,
        response: { 200: runResponse, 503: REPORT_TIMEOUT },
      },
    },
    async (req) => {
      const { body, query } = req;
      const page = { page: body.page ?? query.page, perPage: body.perPage ?? body.limit ?? query.perPage ?? query.limit };
      const { data, meta } = await reports.runReport(ctxOf(req), { ...body, ...page });
      return { data, error: null, meta };
    },
  );

  r.post(
    '/api/analytics/reports/export',
    {
      config: { rateLimit: limits.reportExport },
      schema: {
        tags,
        operationId: 'exportReport',
        summary: 'Export a report definition, or a saved report, as CSV, XLSX or PDF (10 per minute per user)',
        description:
          `${STAFF} The same definitions and errors as run. The file (up to 100,000 rows) is streamed as it is read, with \`Content-Disposition: attachment; ` +
          'filename="<title>-<date>.<ext>"`. CSV and XLSX text cells beginning with `=`, `+`, `-`, `@`, a tab or a carriage return get a leading `\'` ' +
          '(formula injection). Timestamps are ISO 8601 UTC.',
        body: exportBody,
        response: {
          200: {
            description: 'the report file',
            content: {
              'text/csv': { schema: csvFileSchema },
              'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': { schema: xlsxFileSchema },
              'application/pdf': { schema: pdfFileSchema },
            },
          },
          503: REPORT_TIMEOUT,
        },
      },
    },
    async (req, reply) => {
      const file = await reports.exportReportFile(ctxOf(req), deps.database, req.body);
      return (
        reply
          .header('content-type', file.contentType)
          .header('content-disposition', file.contentDisposition)
          .header('cache-control', 'no-store')
          // A stream, not the schema's string: Fastify pipes it as it is written.
          .send(file.stream as unknown as string)
      );
    },
  );

  r.get(
    '/api/analytics/reports',
    {
      schema: {
        tags,
        operationId: 'listReports',
        summary: 'Saved reports the caller may see, newest first',
        description: `${STAFF} The caller’s own reports and the SHARED ones (administrators see every report). \`mine=true\`: own only. Paginated (default 20).`,
        querystring: listReportsQuery,
        response: { 200: pagedEnvelope(reportSchema) },
      },
    },
    async (req) => {
      const { rows, meta } = await reports.listReports(ctxOf(req), req.query);
      return paged(rows, meta);
    },
  );

  r.post(
    '/api/analytics/reports',
    {
      schema: {
        tags,
        operationId: 'createReport',
        summary: 'Save a report definition',
        description: `${STAFF} The definition is validated against the registry first (400 naming each problem). PRIVATE by default; SHARED shows it to every teacher and administrator. Audited (\`report.create\`).`,
        body: createReportBody,
        response: { 201: envelope(reportSchema) },
      },
    },
    async (req, reply) => reply.code(201).send(ok(await reports.createReport(ctxOf(req), req.body))),
  );

  r.get(
    '/api/analytics/reports/:id',
    {
      config: { recordScope: 'owner' },
      schema: {
        tags,
        operationId: 'getReport',
        summary: 'One saved report',
        description: 'Its owner; any teacher or administrator when SHARED; administrators always. Anyone else 404.',
        params: idParams,
        response: { 200: envelope(reportSchema) },
      },
    },
    async (req) => ok(await reports.getReport(ctxOf(req), req.params.id)),
  );

  r.patch(
    '/api/analytics/reports/:id',
    {
      config: { recordScope: 'owner' },
      schema: {
        tags,
        operationId: 'updateReport',
        summary: 'Change a saved report',
        description: `${OWNER} A new definition is validated first. Audited (\`report.update\`).`,
        params: idParams,
        body: updateReportBody,
        response: { 200: envelope(reportSchema) },
      },
    },
    async (req) => ok(await reports.updateReport(ctxOf(req), req.params.id, req.body)),
  );

  r.delete(
    '/api/analytics/reports/:id',
    {
      config: { recordScope: 'owner' },
      schema: {
        tags,
        operationId: 'deleteReport',
        summary: 'Delete a saved report with its schedules and alerts',
        description: `${OWNER} Audited (\`report.delete\`).`,
        params: idParams,
        response: { 200: envelope(deletedSchema) },
      },
    },
    async (req) => ok(await reports.deleteReport(ctxOf(req), req.params.id)),
  );

  r.get(
    '/api/analytics/reports/:id/schedules',
    {
      config: { recordScope: 'owner' },
      schema: {
        tags,
        operationId: 'listReportSchedules',
        summary: 'Schedules of a saved report, with each one’s next due time and last run',
        description:
          'Whoever may see the report: TEACHER or ADMIN (anyone else 403 FORBIDDEN), its owner, any staff when it is SHARED, an ADMIN always; a report the caller cannot see 404 NOT_FOUND.',
        params: idParams,
        response: { 200: envelope(scheduleListSchema) },
      },
    },
    async (req) => ok(await schedules.listSchedules(ctxOf(req), req.params.id)),
  );

  r.post(
    '/api/analytics/reports/:id/schedules',
    {
      config: { recordScope: 'owner', errors: ['BAD_GATEWAY'] },
      schema: {
        tags,
        operationId: 'createReportSchedule',
        summary: 'E-mail a saved report daily, weekly or monthly, as CSV, XLSX or PDF',
        description:
          `${OWNER} \`time\` is local in \`timezone\` (default the institution’s); WEEKLY needs \`dayOfWeek\`, MONTHLY \`dayOfMonth\` (a shorter month runs on its last day). ` +
          '`recipients` are staff user ids of the institution, checked with the CRM (default: the caller). The report-schedules cron sends each due time ' +
          'once: REPORT_SCHEDULED with the export attached (a link instead above 10 MB). Audited (`report_schedule.create`). A recipient the CRM does not know as staff of the institution is 400 VALIDATION_ERROR naming it; 502 BAD_GATEWAY when the CRM cannot answer that check.',
        params: idParams,
        body: createScheduleBody,
        response: { 201: envelope(scheduleSchema) },
      },
    },
    async (req, reply) => reply.code(201).send(ok(await schedules.createSchedule(ctxOf(req), req.params.id, req.body))),
  );

  r.patch(
    '/api/analytics/reports/schedules/:id',
    {
      config: { recordScope: 'owner', errors: ['BAD_GATEWAY'] },
      schema: {
        tags,
        operationId: 'updateReportSchedule',
        summary: 'Change a report schedule',
        description: `${OWNER} A changed cadence, time or zone (or switching it back on) counts the next due time from now. Audited (\`report_schedule.update\`). When \`recipients\` is sent, a recipient the CRM does not know as staff of the institution is 400 VALIDATION_ERROR naming it; 502 BAD_GATEWAY when the CRM cannot answer that check.`,
        params: idParams,
        body: updateScheduleBody,
        response: { 200: envelope(scheduleSchema) },
      },
    },
    async (req) => ok(await schedules.updateSchedule(ctxOf(req), req.params.id, req.body)),
  );

  r.delete(
    '/api/analytics/reports/schedules/:id',
    {
      config: { recordScope: 'owner' },
      schema: {
        tags,
        operationId: 'deleteReportSchedule',
        summary: 'Delete a report schedule',
        description: `${OWNER} Audited (\`report_schedule.delete\`).`,
        params: idParams,
        response: { 200: envelope(deletedSchema) },
      },
    },
    async (req) => ok(await schedules.deleteSchedule(ctxOf(req), req.params.id)),
  );

  r.get(
    '/api/analytics/reports/:id/alerts',
    {
      config: { recordScope: 'owner' },
      schema: {
        tags,
        operationId: 'listReportAlerts',
        summary: 'Alerts of a saved report, with their state and last value',
        description:
          'Whoever may see the report: TEACHER or ADMIN (anyone else 403 FORBIDDEN), its owner, any staff when it is SHARED, an ADMIN always; a report the caller cannot see 404 NOT_FOUND.',
        params: idParams,
        response: { 200: envelope(alertListSchema) },
      },
    },
    async (req) => ok(await alerts.listAlerts(ctxOf(req), req.params.id)),
  );

  r.post(
    '/api/analytics/reports/:id/alerts',
    {
      config: { recordScope: 'owner', errors: ['BAD_GATEWAY'] },
      schema: {
        tags,
        operationId: 'createReportAlert',
        summary: 'Alert when a metric of a saved report crosses a threshold',
        description:
          `${OWNER} \`metric\` is \`rowCount\` or the \`as\` name of one of the report’s aggregates (computed over all its rows). The report-schedules cron ` +
          'evaluates it: when the comparison starts to hold the recipients get REPORT_ALERT once; it is not sent again until an evaluation finds it ' +
          'false (cleared). Audited (`report_alert.create`). A recipient the CRM does not know as staff of the institution is 400 VALIDATION_ERROR naming it; 502 BAD_GATEWAY when the CRM cannot answer that check.',
        params: idParams,
        body: createAlertBody,
        response: { 201: envelope(alertSchema) },
      },
    },
    async (req, reply) => reply.code(201).send(ok(await alerts.createAlert(ctxOf(req), req.params.id, req.body))),
  );

  r.patch(
    '/api/analytics/reports/alerts/:id',
    {
      config: { recordScope: 'owner', errors: ['BAD_GATEWAY'] },
      schema: {
        tags,
        operationId: 'updateReportAlert',
        summary: 'Change a report alert',
        description: `${OWNER} A changed metric, comparison or threshold starts again from OK. Audited (\`report_alert.update\`). When \`recipients\` is sent, a recipient the CRM does not know as staff of the institution is 400 VALIDATION_ERROR naming it; 502 BAD_GATEWAY when the CRM cannot answer that check.`,
        params: idParams,
        body: updateAlertBody,
        response: { 200: envelope(alertSchema) },
      },
    },
    async (req) => ok(await alerts.updateAlert(ctxOf(req), req.params.id, req.body)),
  );

  r.delete(
    '/api/analytics/reports/alerts/:id',
    {
      config: { recordScope: 'owner' },
      schema: {
        tags,
        operationId: 'deleteReportAlert',
        summary: 'Delete a report alert',
        description: `${OWNER} Audited (\`report_alert.delete\`).`,
        params: idParams,
        response: { 200: envelope(deletedSchema) },
      },
    },
    async (req) => ok(await alerts.deleteAlert(ctxOf(req), req.params.id)),
  );

  r.get(
    '/api/analytics/dashboard/revenue',
    {
      config: { errors: ['BAD_GATEWAY'] },
      schema: {
        tags,
        operationId: 'getRevenueDashboard',
        summary: 'Enrollment volume by period and, optionally, the CRM fee standing of enrolled students (ADMIN)',
        description:
          'Administrators only (others 403). No prices or payments exist in this service, so no money is computed from its data: see `definition` in the answer. ' +
          '`includeFees=true` reads the fee status of up to 500 students with an ACTIVE enrollment from the CRM. Cached until the next analytics-snapshot run. With includeFees, a student whose fee status the CRM cannot give counts as UNKNOWN; 502 BAD_GATEWAY only when the CRM cannot name the institution.',
        querystring: revenueQuery,
        response: { 200: envelope(revenueSchema) },
      },
    },
    async (req) => ok(await dashboards.revenueDashboard(ctxOf(req), req.query)),
  );

  r.get(
    '/api/analytics/courses/:id',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'getCourseAnalytics',
        summary: 'Course analytics (legacy endpoint): enrollments, completion rate, average progress and score, lesson drop-off, daily series',
        description:
          `${STAFF} Any course of the institution (else 404). The series comes from the analytics-snapshot cron’s daily course snapshots. ` +
          'Cached until the next analytics-snapshot run.',
        params: idParams,
        querystring: courseAnalyticsQuery,
        response: { 200: envelope(courseAnalyticsSchema) },
      },
    },
    async (req) => ok(await dashboards.courseAnalytics(ctxOf(req), req.params.id, req.query)),
  );
};

export const analyticsModule: AppModule = { name: 'analytics', routes, jobs: analyticsJobs };
