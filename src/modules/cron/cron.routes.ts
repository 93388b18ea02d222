import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { envelope, ok } from '../../platform/http/envelope.js';
import { remindersSchema, schedulesSchema, snapshotSchema } from './cron.schemas.js';
import { runAnalyticsSnapshot, runReportSchedules, sendAssignmentReminders } from './cron.service.js';

const tags = ['cron'];
const config = { auth: 'cron' as const };
const security = [{ cronSecret: [] }];

/**
 * Spec 4.8: the hourly cron endpoints, called by the operator's scheduler with
 * `Authorization: Bearer <CRON_SECRET>` (open when CRON_SECRET is unset: development only).
 * Each answers a summary of what it did and is safe to run twice, or twice at once.
 */
const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);

  r.get(
    '/api/cron/assignment-reminders',
    {
      config,
      schema: {
        tags,
        security,
        operationId: 'cronAssignmentReminders',
        summary: 'Create in-app reminders for assignments due within the next 24 hours (hourly, minute 0)',
        description:
          'For each assignment due in [now, now + 24 h), every student with an ACTIVE enrollment in its course and no submission gets an in-app ASSIGNMENT_DUE_REMINDER, at most once per assignment and student however often (or concurrently) this runs. Authorization: Bearer <CRON_SECRET> (401 AUTH_REQUIRED otherwise; open when CRON_SECRET is unset, development only). Not rate-limited per user: the scheduler has its own budget (429 RATE_LIMITED past it).',
        response: { 200: envelope(remindersSchema) },
      },
    },
    async () => ok(await sendAssignmentReminders(deps)),
  );

  r.get(
    '/api/cron/report-schedules',
    {
      config,
      schema: {
        tags,
        security,
        operationId: 'cronReportSchedules',
        summary: 'Run due report schedules and evaluate alerts (hourly, minute 0)',
        description:
          'Each due schedule runs once per due time, also when this runs twice or concurrently (a conditional UPDATE of its next due time and a unique run key); ' +
          'the worker e-mails its export. A missed due time runs once, not as a backlog. Alerts notify once per trigger. Authorization: Bearer <CRON_SECRET> (401 AUTH_REQUIRED otherwise; open when CRON_SECRET is unset, development only). Not rate-limited per user: the scheduler has its own budget (429 RATE_LIMITED past it).',
        response: { 200: envelope(schedulesSchema) },
      },
    },
    async () => ok(await runReportSchedules(deps)),
  );

  r.get(
    '/api/cron/analytics-snapshot',
    {
      config,
      schema: {
        tags,
        security,
        operationId: 'cronAnalyticsSnapshot',
        summary: "Fill today's metric snapshot of every institution (hourly, minute 30)",
        description:
          'One row per institution and local day, and one per course and day, rewritten by each run of the day; then the institution’s analytics cache is invalidated. Authorization: Bearer <CRON_SECRET> (401 AUTH_REQUIRED otherwise; open when CRON_SECRET is unset, development only). Not rate-limited per user: the scheduler has its own budget (429 RATE_LIMITED past it).',
        response: { 200: envelope(snapshotSchema) },
      },
    },
    async () => ok(await runAnalyticsSnapshot(deps)),
  );
};

export const cronModule: AppModule = { name: 'cron', routes };
