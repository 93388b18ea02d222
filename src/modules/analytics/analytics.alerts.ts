/**
 * Report alerts (spec 4.9, evaluated by the 4.8 `report-schedules` cron): a metric of a saved
 * report compared with a threshold. The metric is `rowCount` (the rows the report yields) or one
 * of its aggregates computed over all its rows (grouping dropped). An alert notifies once per
 * trigger: the OK → TRIGGERED change is a conditional UPDATE, and REPORT_ALERT is sent in its
 * transaction (deduplicated per trigger too); it stays quiet while the condition holds, and
 * a later evaluation that finds it false clears it (TRIGGERED → OK), so the next crossing
 * notifies again.
 */
import { and, asc, eq, sql } from 'drizzle-orm';
import { withTx, type Deps, type ServiceContext } from '../../platform/context.js';
import { iso } from '../../platform/dto.js';
import { byId, inTenant } from '../../platform/db/tenancy.js';
import { validationError } from '../../platform/http/errors.js';
import { newId } from '../../platform/ids.js';
import { requireAccess } from '../access/access.service.js';
import { audit, changes, snapshot } from '../audit/audit.js';
import { notify } from '../notifications/notify.js';
import type { ReportDefinitionInput } from './analytics.definition.js';
import { withStatementTimeout } from './analytics.query.js';
import { compileFor, staffRecipients } from './analytics.service.js';
import { analyticsReportAlerts, analyticsReports, type AlertComparison, type AnalyticsReport, type AnalyticsReportAlert } from './analytics.tables.js';
import type { CreateAlert, UpdateAlert } from './analytics.schemas.js';

const AUDITED = ['name', 'metric', 'comparison', 'threshold', 'recipients', 'isActive'] as const;
const COMPARISON_TEXT: Record<AlertComparison, string> = { gt: '>', gte: '≥', lt: '<', lte: '≤', eq: '=', neq: '≠' };

export const ROW_COUNT_METRIC = 'rowCount';

function alertDto(a: AnalyticsReportAlert) {
  return {
    id: a.id,
    reportId: a.reportId,
    createdBy: a.createdBy,
    name: a.name,
    metric: a.metric,
    comparison: a.comparison,
    threshold: a.threshold,
    recipients: a.recipients,
    isActive: a.isActive,
    state: a.state,
    lastValue: a.lastValue,
    lastEvaluatedAt: iso(a.lastEvaluatedAt),
    lastError: a.lastError,
    triggeredAt: iso(a.triggeredAt),
    clearedAt: iso(a.clearedAt),
    triggerCount: a.triggerCount,
    createdAt: iso(a.createdAt)!,
    updatedAt: iso(a.updatedAt)!,
  };
}

/** The metrics a report offers: `rowCount` and the names of its aggregates. */
const metricsOf = (def: ReportDefinitionInput) => [ROW_COUNT_METRIC, ...(def.aggregates ?? []).map((a) => a.as)];

function requireMetric(report: AnalyticsReport, metric: string) {
  const offered = metricsOf(report.definition);
  if (!offered.includes(metric))
    throw validationError('Unknown metric', [{ field: 'body.metric', message: `"${metric}" is not a metric of this report; metrics: ${offered.join(', ')}` }]);
}

/** GET /api/analytics/reports/{id}/alerts: whoever may see the report. */
export async function listAlerts(ctx: ServiceContext, reportId: string) {
  const report = await requireAccess(ctx, 'report.view', reportId);
  const rows = await ctx.db
    .select()
    .from(analyticsReportAlerts)
    .where(and(inTenant(ctx, analyticsReportAlerts), eq(analyticsReportAlerts.reportId, report.id)))
    .orderBy(asc(analyticsReportAlerts.createdAt), asc(analyticsReportAlerts.id));
  return rows.map(alertDto);
}

/** The name of an alert created without one. */
const defaultAlertName = (a: Pick<AnalyticsReportAlert, 'metric' | 'comparison' | 'threshold'>) => `${a.metric} ${a.comparison} ${a.threshold}`;

/** POST /api/analytics/reports/{id}/alerts: the report's owner or ADMIN. */
export async function createAlert(ctx: ServiceContext, reportId: string, body: CreateAlert) {
  const report = await requireAccess(ctx, 'report.edit', reportId);
  requireMetric(report, body.metric);
  const recipients = await staffRecipients(ctx, body.recipients, 'body.recipients');
  const row = await withTx(ctx, async (tx) => {
    const now = tx.clock.now();
    const [saved] = (await tx.db
      .insert(analyticsReportAlerts)
      .values({
        institutionId: tx.institutionId,
        id: newId(),
        reportId: report.id,
        createdBy: tx.actor.personId,
        name: body.name ?? defaultAlertName(body),
        metric: body.metric,
        comparison: body.comparison,
        threshold: body.threshold,
        recipients,
        isActive: body.isActive ?? true,
        createdAt: now,
        updatedAt: now,
      })
      .returning()) as [AnalyticsReportAlert];
    await audit(tx, { action: 'report_alert.create', targetType: 'report_alert', targetId: saved.id, after: { reportId: report.id, ...snapshot(saved, AUDITED) } });
    return saved;
  });
  return alertDto(row);
}

/** PATCH /api/analytics/reports/alerts/{id}: a changed condition starts again from OK. */
export async function updateAlert(ctx: ServiceContext, id: string, body: UpdateAlert) {
  const { alert, report } = await requireAccess(ctx, 'reportAlert.edit', id);
  if (body.metric !== undefined) requireMetric(report, body.metric);
  const recipients = body.recipients ? await staffRecipients(ctx, body.recipients, 'body.recipients') : alert.recipients;
  const row = await withTx(ctx, async (tx) => {
    const condition = (['metric', 'comparison', 'threshold'] as const).some((k) => body[k] !== undefined && body[k] !== alert[k]);
    // A name that was the default follows the changed condition; a name someone chose stays.
    const name =
      body.name ??
      (condition && alert.name === defaultAlertName(alert)
        ? defaultAlertName({ metric: body.metric ?? alert.metric, comparison: body.comparison ?? alert.comparison, threshold: body.threshold ?? alert.threshold })
        : undefined);
    const [saved] = (await tx.db
      .update(analyticsReportAlerts)
      .set({
        ...(name !== undefined ? { name } : {}),
        ...(body.metric !== undefined ? { metric: body.metric } : {}),
        ...(body.comparison !== undefined ? { comparison: body.comparison } : {}),
        ...(body.threshold !== undefined ? { threshold: body.threshold } : {}),
        ...(body.isActive !== undefined ? { isActive: body.isActive } : {}),
        recipients,
        ...(condition ? { state: 'OK' as const, lastValue: null, lastError: null } : {}),
        updatedAt: tx.clock.now(),
      })
      .where(byId(tx, analyticsReportAlerts, alert.id))
      .returning()) as [AnalyticsReportAlert];
    await audit(tx, { action: 'report_alert.update', targetType: 'report_alert', targetId: saved.id, ...changes(alert, saved, AUDITED) });
    return saved;
  });
  return alertDto(row);
}

/** DELETE /api/analytics/reports/alerts/{id}. */
export async function deleteAlert(ctx: ServiceContext, id: string) {
  const { alert } = await requireAccess(ctx, 'reportAlert.edit', id);
  await withTx(ctx, async (tx) => {
    const [gone] = await tx.db
      .delete(analyticsReportAlerts)
      .where(byId(tx, analyticsReportAlerts, alert.id))
      .returning({ id: analyticsReportAlerts.id });
    if (gone) await audit(tx, { action: 'report_alert.delete', targetType: 'report_alert', targetId: alert.id, before: { reportId: alert.reportId, ...snapshot(alert, AUDITED) } });
  });
  return { id: alert.id, deleted: true as const };
}

// ── evaluation ─────────────────────────────────────────────────────────────────

export function holds(value: number | null, comparison: AlertComparison, threshold: number): boolean {
  if (value === null) return false;
  switch (comparison) {
    case 'gt':
      return value > threshold;
    case 'gte':
      return value >= threshold;
    case 'lt':
      return value < threshold;
    case 'lte':
      return value <= threshold;
    case 'eq':
      return value === threshold;
    case 'neq':
      return value !== threshold;
  }
}

/** The alert's metric now: the report's row count, or one aggregate over all its rows (no groups, no sort). */
async function metricValue(deps: Deps, report: AnalyticsReport, metric: string, now: Date): Promise<number | null> {
  const { db } = deps.database;
  const scope = { db, institutionId: report.institutionId };
  const timeout = deps.config.REPORT_STATEMENT_TIMEOUT_MS;
  if (metric === ROW_COUNT_METRIC) {
    const compiled = await compileFor(scope, report.definition, 'definition', now);
    return withStatementTimeout(db, timeout, (tx) => compiled.count(tx));
  }
  const aggregate = (report.definition.aggregates ?? []).find((a) => a.as === metric);
  if (!aggregate) throw new Error(`the report has no aggregate "${metric}" any more`);
  const total: ReportDefinitionInput = { entity: report.definition.entity, filters: report.definition.filters, dateRange: report.definition.dateRange, aggregates: [aggregate] };
  const compiled = await compileFor(scope, total, 'definition', now);
  const [row] = await withStatementTimeout(db, timeout, async (tx) => compiled.page(tx, { limit: 1 }));
  const value = row ? compiled.toRow(row)[metric] : null;
  return typeof value === 'number' ? value : null;
}

export interface AlertSummary {
  evaluated: number;
  fired: number;
  cleared: number;
}

/** The alerts part of the `report-schedules` cron: every active alert of every institution, evaluated once. */
export async function evaluateAlerts(deps: Deps): Promise<AlertSummary> {
  const { db } = deps.database;
  const active = await db
    .select({ alert: analyticsReportAlerts, report: analyticsReports })
    .from(analyticsReportAlerts)
    .innerJoin(analyticsReports, and(eq(analyticsReports.institutionId, analyticsReportAlerts.institutionId), eq(analyticsReports.id, analyticsReportAlerts.reportId)))
    .where(eq(analyticsReportAlerts.isActive, true))
    .orderBy(asc(analyticsReportAlerts.institutionId), asc(analyticsReportAlerts.id));
  const summary: AlertSummary = { evaluated: 0, fired: 0, cleared: 0 };
  for (const { alert, report } of active) {
    const now = deps.clock.now();
    const where = (state?: 'OK' | 'TRIGGERED') =>
      and(eq(analyticsReportAlerts.institutionId, alert.institutionId), eq(analyticsReportAlerts.id, alert.id), state ? eq(analyticsReportAlerts.state, state) : undefined);
    let value: number | null;
    try {
      value = await metricValue(deps, report, alert.metric, now);
    } catch (err) {
      // A report that cannot run (timeout, a definition the registry no longer takes) leaves the state as it is.
      deps.log.warn?.(`[lms] alert ${alert.id}: ${(err as Error).message}`);
      await db
        .update(analyticsReportAlerts)
        .set({ lastError: (err as Error).message.slice(0, 500), lastEvaluatedAt: now, updatedAt: now })
        .where(where());
      continue;
    }
    summary.evaluated++;
    const observed = { lastValue: value, lastEvaluatedAt: now, lastError: null, updatedAt: now };
    if (holds(value, alert.comparison, alert.threshold)) {
      const fired = await db.transaction(async (tx) => {
        const [row] = await tx
          .update(analyticsReportAlerts)
          .set({ ...observed, state: 'TRIGGERED', triggeredAt: now, triggerCount: sql`${analyticsReportAlerts.triggerCount} + 1` })
          .where(where('OK'))
          .returning({ triggerCount: analyticsReportAlerts.triggerCount });
        if (!row) return false;
        await notify(
          { db: tx, clock: deps.clock, config: deps.config, inTx: true },
          {
            institutionId: alert.institutionId,
            key: 'REPORT_ALERT',
            recipients: alert.recipients,
            metadata: {
              title: alert.name,
              alertId: alert.id,
              reportId: report.id,
              reportName: report.name,
              metric: alert.metric,
              value,
              condition: `${COMPARISON_TEXT[alert.comparison]} ${alert.threshold}`,
            },
            actionUrl: `/analytics/reports/${report.id}`,
            dedupeKey: `report-alert:${alert.id}:${row.triggerCount}`,
          },
        );
        return true;
      });
      if (fired) summary.fired++;
      else await db.update(analyticsReportAlerts).set(observed).where(where('TRIGGERED'));
    } else {
      const [cleared] = await db
        .update(analyticsReportAlerts)
        .set({ ...observed, state: 'OK', clearedAt: now })
        .where(where('TRIGGERED'))
        .returning({ id: analyticsReportAlerts.id });
      if (cleared) summary.cleared++;
      else await db.update(analyticsReportAlerts).set(observed).where(where('OK'));
    }
  }
  return summary;
}
