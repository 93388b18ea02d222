/**
 * Analytics reports (spec 4.9): the entity registry, running and exporting definitions, and
 * saved reports. Who may do what is in access.service.ts (`analytics.use`, `report.view`,
 * `report.edit`); every query is filtered by the caller's institution by the compiler.
 */
import { and, desc, eq, or, sql, type SQL } from 'drizzle-orm';
import type { Readable } from 'node:stream';
import { withTx, type ServiceContext } from '../../platform/context.js';
import type { Database } from '../../platform/db/client.js';
import { iso } from '../../platform/dto.js';
import { inTenant, byId } from '../../platform/db/tenancy.js';
import { notFound, validationError } from '../../platform/http/errors.js';
import { pageMeta, pageOffset, toPage } from '../../platform/http/pagination.js';
import { newId } from '../../platform/ids.js';
import { isAdmin } from '../../platform/auth/permissions.js';
import { requireAccess } from '../access/access.service.js';
import { audit, changes, snapshot } from '../audit/audit.js';
import { getSettings } from '../institutions/institutions.service.js';
import { requireStaffUsers } from '../institutions/staff.js';
import { AGGREGATES, GRANULARITIES, MAX_REPORT_ROWS, OPERATORS_BY_TYPE, validateDefinition, type ReportDefinitionInput } from './analytics.definition.js';
import { compileReport, type CompiledReport, type ReportScope } from './analytics.compiler.js';
import { registryDto } from './analytics.registry.js';
import { reportBatches, runPage } from './analytics.query.js';
import { contentDisposition, exportFileName, exportReport } from './analytics.export.js';
import { analyticsReports, type AnalyticsReport, type ExportFormat } from './analytics.tables.js';
import type { CreateReport, ExportBody, RunBody, UpdateReport } from './analytics.schemas.js';

const AUDITED = ['name', 'description', 'visibility', 'definition'] as const;

/** Where a report of this institution runs: its id, now, and its time zone (time buckets). */
export async function reportScope(scope: { db: ServiceContext['db']; institutionId: string }, now: Date): Promise<ReportScope> {
  const { timezone } = await getSettings(scope.db, scope.institutionId);
  return { institutionId: scope.institutionId, now, timezone };
}

/** A definition checked against the registry and compiled for the caller's institution. */
export async function compileFor(ctx: { db: ServiceContext['db']; institutionId: string }, definition: ReportDefinitionInput, path: string, now: Date): Promise<CompiledReport> {
  const valid = validateDefinition(definition, path, now);
  return compileReport(valid, await reportScope(ctx, now));
}

/** GET /api/analytics/entities. */
export async function entities(ctx: ServiceContext) {
  await requireAccess(ctx, 'analytics.use', null);
  return {
    entities: registryDto(),
    operators: Object.fromEntries(Object.entries(OPERATORS_BY_TYPE).map(([type, ops]) => [type, [...ops]])),
    aggregates: [...AGGREGATES],
    granularities: [...GRANULARITIES],
    maxRows: MAX_REPORT_ROWS,
  };
}

/** The definition a run or export names: given inline, or a saved report the caller may see (exactly one). */
async function sourceOf(ctx: ServiceContext, body: { reportId?: string; definition?: ReportDefinitionInput }) {
  await requireAccess(ctx, 'analytics.use', null);
  if ((body.reportId === undefined) === (body.definition === undefined)) {
    throw validationError('Give a saved reportId or a definition', [{ field: 'body', message: 'exactly one of reportId and definition' }]);
  }
  if (body.reportId !== undefined) {
    const report = await requireAccess(ctx, 'report.view', body.reportId);
    return { report, compiled: await compileFor(ctx, report.definition, 'definition', ctx.clock.now()) };
  }
  return { report: null, compiled: await compileFor(ctx, body.definition!, 'body.definition', ctx.clock.now()) };
}

/** POST /api/analytics/reports/run: one page of the report's rows (default 50, at most 100) and the total. */
export async function runReport(ctx: ServiceContext, body: RunBody) {
  const { compiled } = await sourceOf(ctx, body);
  const page = toPage({ page: body.page ?? 1, perPage: body.perPage }, 50);
  const { rows, total } = await runPage(ctx.db, compiled, { offset: pageOffset(page), limit: page.perPage }, ctx.config.REPORT_STATEMENT_TIMEOUT_MS);
  return { data: { columns: compiled.columns, rows }, meta: pageMeta(page, total) };
}

export interface ExportResult {
  stream: Readable;
  contentType: string;
  fileName: string;
  contentDisposition: string;
}

/**
 * The file of a compiled report, streamed from batches. The first batch is read before the file
 * starts, so a report that fails (a statement timeout) still answers with an error envelope.
 */
export async function exportFile(database: Database, compiled: CompiledReport, format: ExportFormat, title: string, now: Date, timeoutMs: number) {
  const batches = reportBatches(database, compiled, timeoutMs);
  const first = await batches.next();
  async function* all() {
    if (first.done) return;
    yield first.value;
    yield* batches;
  }
  const file = exportReport(format, compiled.columns, all(), { title, generatedAt: now });
  return { ...file, fileName: exportFileName(title, format, now) };
}

/** POST /api/analytics/reports/export: CSV, XLSX or PDF of up to 100,000 rows, streamed. */
export async function exportReportFile(ctx: ServiceContext, database: Database, body: ExportBody): Promise<ExportResult> {
  const { report, compiled } = await sourceOf(ctx, body);
  const title = body.title ?? report?.name ?? `${compiled.definition.entity.label} report`;
  const now = ctx.clock.now();
  const file = await exportFile(database, compiled, body.format, title, now, ctx.config.REPORT_STATEMENT_TIMEOUT_MS);
  return { stream: file.stream, contentType: file.contentType, fileName: file.fileName, contentDisposition: contentDisposition(file.fileName) };
}

// ── saved reports ──────────────────────────────────────────────────────────────

export function reportDto(ctx: ServiceContext, r: AnalyticsReport) {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    visibility: r.visibility,
    ownerId: r.ownerId,
    canEdit: r.ownerId === ctx.actor.personId || isAdmin(ctx.actor),
    definition: r.definition,
    createdAt: iso(r.createdAt)!,
    updatedAt: iso(r.updatedAt)!,
  };
}

/** POST /api/analytics/reports: the definition is validated against the registry before it is saved. */
export async function createReport(ctx: ServiceContext, body: CreateReport) {
  await requireAccess(ctx, 'analytics.use', null);
  validateDefinition(body.definition, 'body.definition', ctx.clock.now());
  const row = await withTx(ctx, async (tx) => {
    const now = tx.clock.now();
    const [saved] = (await tx.db
      .insert(analyticsReports)
      .values({
        institutionId: tx.institutionId,
        id: newId(),
        ownerId: tx.actor.personId,
        name: body.name,
        description: body.description ?? null,
        visibility: body.visibility ?? 'PRIVATE',
        definition: body.definition,
        createdAt: now,
        updatedAt: now,
      })
      .returning()) as [AnalyticsReport];
    await audit(tx, { action: 'report.create', targetType: 'report', targetId: saved.id, after: snapshot(saved, AUDITED) });
    return saved;
  });
  return reportDto(ctx, row);
}

/** GET /api/analytics/reports: the caller's own and the SHARED ones (every report for ADMIN), newest first. */
export async function listReports(ctx: ServiceContext, q: { page: number; perPage?: number; limit?: number; visibility?: 'PRIVATE' | 'SHARED'; mine?: 'true' | 'false' }) {
  await requireAccess(ctx, 'analytics.use', null);
  const page = toPage(q);
  const filters: SQL[] = [inTenant(ctx, analyticsReports)];
  if (q.mine === 'true') filters.push(eq(analyticsReports.ownerId, ctx.actor.personId));
  else if (!isAdmin(ctx.actor)) filters.push(or(eq(analyticsReports.ownerId, ctx.actor.personId), eq(analyticsReports.visibility, 'SHARED'))!);
  if (q.visibility) filters.push(eq(analyticsReports.visibility, q.visibility));
  const where = and(...filters);
  const [rows, [{ total }]] = await Promise.all([
    ctx.db.select().from(analyticsReports).where(where).orderBy(desc(analyticsReports.createdAt), desc(analyticsReports.id)).limit(page.perPage).offset(pageOffset(page)),
    ctx.db
      .select({ total: sql<number>`count(*)::int` })
      .from(analyticsReports)
      .where(where),
  ]);
  return { rows: rows.map((r) => reportDto(ctx, r)), meta: pageMeta(page, Number(total)) };
}

export async function getReport(ctx: ServiceContext, id: string) {
  return reportDto(ctx, await requireAccess(ctx, 'report.view', id));
}

/** PATCH /api/analytics/reports/{id}: owner or ADMIN; a new definition is validated first. */
export async function updateReport(ctx: ServiceContext, id: string, body: UpdateReport) {
  const current = await requireAccess(ctx, 'report.edit', id);
  if (body.definition) validateDefinition(body.definition, 'body.definition', ctx.clock.now());
  const row = await withTx(ctx, async (tx) => {
    const [saved] = (await tx.db
      .update(analyticsReports)
      .set({
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.visibility !== undefined ? { visibility: body.visibility } : {}),
        ...(body.definition !== undefined ? { definition: body.definition } : {}),
        updatedAt: tx.clock.now(),
      })
      .where(byId(tx, analyticsReports, current.id))
      .returning()) as [AnalyticsReport | undefined];
    if (!saved) throw notFound('Report');
    await audit(tx, { action: 'report.update', targetType: 'report', targetId: saved.id, ...changes(current, saved, AUDITED) });
    return saved;
  });
  return reportDto(ctx, row);
}

/** DELETE /api/analytics/reports/{id}: owner or ADMIN; its schedules, runs and alerts go with it. */
export async function deleteReport(ctx: ServiceContext, id: string) {
  const current = await requireAccess(ctx, 'report.edit', id);
  await withTx(ctx, async (tx) => {
    const [gone] = await tx.db
      .delete(analyticsReports)
      .where(byId(tx, analyticsReports, current.id))
      .returning({ id: analyticsReports.id });
    if (gone) await audit(tx, { action: 'report.delete', targetType: 'report', targetId: current.id, before: snapshot(current, AUDITED) });
  });
  return { id: current.id, deleted: true as const };
}

// ── recipients ─────────────────────────────────────────────────────────────────

/**
 * Recipients of schedules and alerts (the caller when none are given): staff users of the
 * institution as the CRM knows them now, so a report is never e-mailed to a student or a stranger
 * (`requireStaffUsers`: 400 naming an unknown id, 502 when the CRM cannot answer).
 */
export const staffRecipients = (ctx: ServiceContext, ids: string[] | undefined, path: string): Promise<string[]> => requireStaffUsers(ctx, ids ?? [ctx.actor.personId], path);
