/**
 * Report schedules (spec 4.9, 4.8 `report-schedules`): a saved report e-mailed to staff as a
 * CSV, XLSX or PDF attachment, daily, weekly or monthly at a local time in a time zone.
 *
 * Once per due time: the cron claims a due schedule with a conditional UPDATE that moves
 * `next_run_at` on (two concurrent crons: one wins, the other updates nothing) and, in the same
 * transaction, inserts the run under its unique key (schedule, due time) and enqueues one
 * `analytics.sendScheduledReport` job. The worker writes the export to storage and sends
 * REPORT_SCHEDULED through notify(), whose e-mail carries the file as an attachment.
 */
import { and, asc, desc, eq, inArray, lte } from 'drizzle-orm';
import { withTx, type Deps, type ServiceContext } from '../../platform/context.js';
import { iso } from '../../platform/dto.js';
import { byId, inTenant } from '../../platform/db/tenancy.js';
import { validationError } from '../../platform/http/errors.js';
import { newId } from '../../platform/ids.js';
import { enqueue } from '../../platform/queue/queue.js';
import { tenantSegment } from '../../platform/storage/keys.js';
import { requireAccess } from '../access/access.service.js';
import { audit, changes, snapshot } from '../audit/audit.js';
import { getSettings } from '../institutions/institutions.service.js';
import { canonicalTimeZone, isTimeZone } from '../../platform/time-zone.js';
import { notify } from '../notifications/notify.js';
import { nextRunAfter, WEEKDAY_NAMES, type WeekdayName } from './analytics.cadence.js';
import { EXTENSIONS } from './analytics.export.js';
import { compileFor, exportFile, staffRecipients } from './analytics.service.js';
import { analyticsReportRuns, analyticsReports, analyticsReportSchedules, type AnalyticsReportRun, type AnalyticsReportSchedule } from './analytics.tables.js';
import type { CreateSchedule, UpdateSchedule } from './analytics.schemas.js';

const AUDITED = ['cadence', 'timeOfDay', 'dayOfWeek', 'dayOfMonth', 'timezone', 'format', 'recipients', 'isActive'] as const;

/** Schedules the cron claims per run, oldest due first (the rest wait for the next run). */
export const SCHEDULES_PER_RUN = 500;
/** Exports above this size are linked (a signed URL valid 7 days) instead of attached. */
export const ATTACHMENT_MAX_BYTES = 10 * 1024 * 1024;
/** Largest stored export. */
const STORED_EXPORT_MAX_BYTES = 512 * 1024 * 1024;
/** How long a scheduled export stays in storage (the e-mail's link works as long). */
export const EXPORT_RETENTION_MS = 7 * 86_400_000;

const weekdayNumber = (d: WeekdayName) => WEEKDAY_NAMES.indexOf(d) + 1;
const weekdayName = (n: number | null) => (n ? WEEKDAY_NAMES[n - 1]! : null);

function scheduleDto(s: AnalyticsReportSchedule, lastRun: AnalyticsReportRun | null) {
  return {
    id: s.id,
    reportId: s.reportId,
    createdBy: s.createdBy,
    cadence: s.cadence,
    time: s.timeOfDay,
    dayOfWeek: weekdayName(s.dayOfWeek),
    dayOfMonth: s.dayOfMonth,
    timezone: s.timezone,
    format: s.format,
    recipients: s.recipients,
    isActive: s.isActive,
    nextRunAt: iso(s.nextRunAt)!,
    lastRunAt: iso(s.lastRunAt),
    lastRun: lastRun ? { dueAt: iso(lastRun.dueAt)!, status: lastRun.status, rowCount: lastRun.rowCount, completedAt: iso(lastRun.completedAt), error: lastRun.error } : null,
    createdAt: iso(s.createdAt)!,
    updatedAt: iso(s.updatedAt)!,
  };
}

/** The cadence fields after a change, checked together (the body schema checks each alone). */
function cadenceOf(merged: { cadence: AnalyticsReportSchedule['cadence']; dayOfWeek: WeekdayName | null; dayOfMonth: number | null; timezone: string }) {
  const issues: { field: string; message: string }[] = [];
  if (!isTimeZone(merged.timezone)) issues.push({ field: 'body.timezone', message: 'must be an IANA time zone name' });
  if (merged.cadence === 'WEEKLY' && !merged.dayOfWeek) issues.push({ field: 'body.dayOfWeek', message: 'required for WEEKLY' });
  if (merged.cadence !== 'WEEKLY' && merged.dayOfWeek) issues.push({ field: 'body.dayOfWeek', message: 'only for WEEKLY' });
  if (merged.cadence === 'MONTHLY' && !merged.dayOfMonth) issues.push({ field: 'body.dayOfMonth', message: 'required for MONTHLY' });
  if (merged.cadence !== 'MONTHLY' && merged.dayOfMonth) issues.push({ field: 'body.dayOfMonth', message: 'only for MONTHLY' });
  if (issues.length > 0) throw validationError('Invalid schedule', issues);
  return { dayOfWeek: merged.dayOfWeek ? weekdayNumber(merged.dayOfWeek) : null, dayOfMonth: merged.dayOfMonth };
}

async function lastRuns(ctx: ServiceContext, scheduleIds: string[]) {
  if (scheduleIds.length === 0) return new Map<string, AnalyticsReportRun>();
  const rows = await ctx.db
    .selectDistinctOn([analyticsReportRuns.scheduleId])
    .from(analyticsReportRuns)
    .where(and(inTenant(ctx, analyticsReportRuns), inArray(analyticsReportRuns.scheduleId, scheduleIds)))
    .orderBy(analyticsReportRuns.scheduleId, desc(analyticsReportRuns.dueAt));
  return new Map(rows.map((r) => [r.scheduleId, r]));
}

/** GET /api/analytics/reports/{id}/schedules: whoever may see the report. */
export async function listSchedules(ctx: ServiceContext, reportId: string) {
  const report = await requireAccess(ctx, 'report.view', reportId);
  const rows = await ctx.db
    .select()
    .from(analyticsReportSchedules)
    .where(and(inTenant(ctx, analyticsReportSchedules), eq(analyticsReportSchedules.reportId, report.id)))
    .orderBy(asc(analyticsReportSchedules.createdAt), asc(analyticsReportSchedules.id));
  const runs = await lastRuns(
    ctx,
    rows.map((r) => r.id),
  );
  return rows.map((r) => scheduleDto(r, runs.get(r.id) ?? null));
}

/** POST /api/analytics/reports/{id}/schedules: the report's owner or ADMIN; recipients are staff of the institution. */
export async function createSchedule(ctx: ServiceContext, reportId: string, body: CreateSchedule) {
  const report = await requireAccess(ctx, 'report.edit', reportId);
  // Kept in the zone's own spelling (europe/berlin → Europe/Berlin), as settings and digest times are.
  const timezone = canonicalTimeZone(body.timezone ?? (await getSettings(ctx.db, ctx.institutionId)).timezone);
  const days = cadenceOf({ cadence: body.cadence, dayOfWeek: body.dayOfWeek ?? null, dayOfMonth: body.dayOfMonth ?? null, timezone });
  const recipients = await staffRecipients(ctx, body.recipients, 'body.recipients');
  const row = await withTx(ctx, async (tx) => {
    const now = tx.clock.now();
    const fields = { cadence: body.cadence, timeOfDay: body.time, ...days, timezone };
    const [saved] = (await tx.db
      .insert(analyticsReportSchedules)
      .values({
        institutionId: tx.institutionId,
        id: newId(),
        reportId: report.id,
        createdBy: tx.actor.personId,
        ...fields,
        format: body.format,
        recipients,
        isActive: body.isActive ?? true,
        nextRunAt: nextRunAfter(fields, now),
        createdAt: now,
        updatedAt: now,
      })
      .returning()) as [AnalyticsReportSchedule];
    await audit(tx, { action: 'report_schedule.create', targetType: 'report_schedule', targetId: saved.id, after: { reportId: report.id, ...snapshot(saved, AUDITED) } });
    return saved;
  });
  return scheduleDto(row, null);
}

/** PATCH /api/analytics/reports/schedules/{id}: as creating; a changed cadence moves the next due time. */
export async function updateSchedule(ctx: ServiceContext, id: string, body: UpdateSchedule) {
  const { schedule } = await requireAccess(ctx, 'reportSchedule.edit', id);
  const merged = {
    cadence: body.cadence ?? schedule.cadence,
    timeOfDay: body.time ?? schedule.timeOfDay,
    dayOfWeek: body.dayOfWeek !== undefined ? body.dayOfWeek : weekdayName(schedule.dayOfWeek),
    dayOfMonth: body.dayOfMonth !== undefined ? body.dayOfMonth : schedule.dayOfMonth,
    timezone: canonicalTimeZone(body.timezone ?? schedule.timezone),
  };
  const days = cadenceOf(merged);
  const recipients = body.recipients ? await staffRecipients(ctx, body.recipients, 'body.recipients') : schedule.recipients;
  const row = await withTx(ctx, async (tx) => {
    const now = tx.clock.now();
    const fields = { cadence: merged.cadence, timeOfDay: merged.timeOfDay, ...days, timezone: merged.timezone };
    const timing = ['cadence', 'time', 'dayOfWeek', 'dayOfMonth', 'timezone'].some((k) => k in body);
    const [saved] = (await tx.db
      .update(analyticsReportSchedules)
      .set({
        ...fields,
        format: body.format ?? schedule.format,
        recipients,
        isActive: body.isActive ?? schedule.isActive,
        // A new timing, or switching back on, counts from now: no catch-up of what was missed.
        ...(timing || (body.isActive === true && !schedule.isActive) ? { nextRunAt: nextRunAfter(fields, now) } : {}),
        updatedAt: now,
      })
      .where(byId(tx, analyticsReportSchedules, schedule.id))
      .returning()) as [AnalyticsReportSchedule];
    await audit(tx, { action: 'report_schedule.update', targetType: 'report_schedule', targetId: saved.id, ...changes(schedule, saved, AUDITED) });
    return saved;
  });
  return scheduleDto(row, (await lastRuns(ctx, [row.id])).get(row.id) ?? null);
}

/** DELETE /api/analytics/reports/schedules/{id}. */
export async function deleteSchedule(ctx: ServiceContext, id: string) {
  const { schedule } = await requireAccess(ctx, 'reportSchedule.edit', id);
  await withTx(ctx, async (tx) => {
    const [gone] = await tx.db
      .delete(analyticsReportSchedules)
      .where(byId(tx, analyticsReportSchedules, schedule.id))
      .returning({ id: analyticsReportSchedules.id });
    if (gone) {
      await audit(tx, {
        action: 'report_schedule.delete',
        targetType: 'report_schedule',
        targetId: schedule.id,
        before: { reportId: schedule.reportId, ...snapshot(schedule, AUDITED) },
      });
    }
  });
  return { id: schedule.id, deleted: true as const };
}

// ── cron and worker ────────────────────────────────────────────────────────────

/**
 * The schedules part of the `report-schedules` cron: claims every due schedule once for its
 * due time and enqueues its run. Returns how many runs this call claimed.
 */
export async function runDueSchedules(deps: Deps): Promise<number> {
  const { db } = deps.database;
  const now = deps.clock.now();
  const due = await db
    .select()
    .from(analyticsReportSchedules)
    .where(and(eq(analyticsReportSchedules.isActive, true), lte(analyticsReportSchedules.nextRunAt, now)))
    .orderBy(asc(analyticsReportSchedules.nextRunAt))
    .limit(SCHEDULES_PER_RUN);
  let claimed = 0;
  for (const s of due) {
    const ok = await db.transaction(async (tx) => {
      // The claim: only the call that still sees this due time moves it on.
      const [moved] = await tx
        .update(analyticsReportSchedules)
        .set({ nextRunAt: nextRunAfter(s, now), lastRunAt: now, updatedAt: now })
        .where(
          and(
            eq(analyticsReportSchedules.institutionId, s.institutionId),
            eq(analyticsReportSchedules.id, s.id),
            eq(analyticsReportSchedules.isActive, true),
            eq(analyticsReportSchedules.nextRunAt, s.nextRunAt),
          ),
        )
        .returning({ id: analyticsReportSchedules.id });
      if (!moved) return false;
      const [run] = await tx
        .insert(analyticsReportRuns)
        .values({ institutionId: s.institutionId, id: newId(), scheduleId: s.id, reportId: s.reportId, dueAt: s.nextRunAt, format: s.format, createdAt: now })
        .onConflictDoNothing()
        .returning({ id: analyticsReportRuns.id });
      if (!run) return false;
      await enqueue(tx, deps.clock, 'analytics.sendScheduledReport', { institutionId: s.institutionId, runId: run.id }, { institutionId: s.institutionId });
      return true;
    });
    if (ok) claimed++;
  }
  return claimed;
}

/**
 * The `analytics.sendScheduledReport` job: the run's export written to storage (streamed from
 * the report's rows, as the export endpoint does), then, in one transaction, the run marked
 * SENT and REPORT_SCHEDULED sent to the recipients with the file attached (deduplicated per
 * run, so a retried job sends nothing twice). A run whose schedule or report is gone is dropped.
 */
export async function sendScheduledReport(deps: Deps, payload: { institutionId: string; runId: string }, lastAttempt: boolean): Promise<void> {
  const { db } = deps.database;
  const [found] = await db
    .select({ run: analyticsReportRuns, schedule: analyticsReportSchedules, report: analyticsReports })
    .from(analyticsReportRuns)
    .innerJoin(
      analyticsReportSchedules,
      and(eq(analyticsReportSchedules.institutionId, analyticsReportRuns.institutionId), eq(analyticsReportSchedules.id, analyticsReportRuns.scheduleId)),
    )
    .innerJoin(analyticsReports, and(eq(analyticsReports.institutionId, analyticsReportRuns.institutionId), eq(analyticsReports.id, analyticsReportRuns.reportId)))
    .where(and(eq(analyticsReportRuns.institutionId, payload.institutionId), eq(analyticsReportRuns.id, payload.runId)))
    .limit(1);
  if (!found || found.run.status !== 'QUEUED') return;
  const { run, schedule, report } = found;
  const now = deps.clock.now();
  const scope = { db, institutionId: run.institutionId };

  let compiled;
  try {
    compiled = await compileFor(scope, report.definition, 'definition', now);
  } catch (err) {
    // The saved definition no longer fits the registry: nothing to send, say why.
    await db
      .update(analyticsReportRuns)
      .set({ status: 'FAILED', error: (err as Error).message.slice(0, 500), completedAt: now })
      .where(and(eq(analyticsReportRuns.institutionId, run.institutionId), eq(analyticsReportRuns.id, run.id)));
    return;
  }

  const key = `${tenantSegment(run.institutionId)}/reports/${run.id}.${EXTENSIONS[run.format]}`;
  // A retry after a failed attempt writes the file again from the start.
  await deps.storage.delete(key);
  try {
    const file = await exportFile(deps.database, compiled, run.format, report.name, now, deps.config.REPORT_STATEMENT_TIMEOUT_MS);
    const stored = await deps.storage.putStream(key, file.stream, file.contentType, STORED_EXPORT_MAX_BYTES);
    const attach = stored.size <= ATTACHMENT_MAX_BYTES;
    const link = attach ? `/analytics/reports/${report.id}` : await deps.storage.urlFor(key, EXPORT_RETENTION_MS / 1000);
    await db.transaction(async (tx) => {
      const [sent] = await tx
        .update(analyticsReportRuns)
        .set({ status: 'SENT', rowCount: file.rowCount(), fileKey: key, fileName: file.fileName, completedAt: deps.clock.now(), error: null })
        .where(and(eq(analyticsReportRuns.institutionId, run.institutionId), eq(analyticsReportRuns.id, run.id), eq(analyticsReportRuns.status, 'QUEUED')))
        .returning({ id: analyticsReportRuns.id });
      if (!sent) return;
      await notify(
        { db: tx, clock: deps.clock, config: deps.config, inTx: true },
        {
          institutionId: run.institutionId,
          key: 'REPORT_SCHEDULED',
          recipients: schedule.recipients,
          metadata: { title: report.name, reportId: report.id, scheduleId: schedule.id, runId: run.id, rowCount: file.rowCount(), format: run.format, fileName: file.fileName },
          actionUrl: link,
          forceImmediate: true,
          dedupeKey: `report-run:${run.id}`,
          attachments: attach ? [{ key, fileName: file.fileName, contentType: file.contentType }] : undefined,
        },
      );
      await enqueue(tx, deps.clock, 'storage.deleteObjects', { keys: [key] }, { institutionId: run.institutionId, runAt: new Date(now.getTime() + EXPORT_RETENTION_MS) });
    });
  } catch (err) {
    await deps.storage.delete(key).catch(() => undefined);
    if (lastAttempt) {
      await db
        .update(analyticsReportRuns)
        .set({ status: 'FAILED', error: (err as Error).message.slice(0, 500), completedAt: deps.clock.now() })
        .where(and(eq(analyticsReportRuns.institutionId, run.institutionId), eq(analyticsReportRuns.id, run.id), eq(analyticsReportRuns.status, 'QUEUED')));
    }
    throw err;
  }
}
