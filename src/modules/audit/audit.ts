/**
 * The one audit writer. Every staff write calls `audit(tx, {action, targetType, targetId,
 * before?, after?})` with the context of its own transaction (inside `withTx`), so the row
 * commits or rolls back with the change: a failed write leaves no audit row, and an audit row
 * that cannot be written fails the change. Exported for every module (live-session recording,
 * compliance waivers, reports… call it the same way).
 *
 * Actions are `<targetType>.<verb>` in lower case (`course.publish`, `enrollment.drop`); the
 * README's "Audit log" section lists them. For the common shapes use `auditCreate`,
 * `auditUpdate` and `auditDelete` (below): a module that adds staff writes — analytics reports,
 * say — calls them in its transaction:
 *
 *   await withTx(ctx, async (tx) => {
 *     const [report] = await tx.db.insert(reports).values(...).returning();
 *     await auditCreate(tx, 'report', report.id, report, ['name', 'type', 'filters', 'schedule']);
 *   });
 *
 * and `auditUpdate(tx, 'report', id, before, after, keys)` / `auditDelete(tx, 'report', id,
 * before, keys)` for changes and deletions (actions `report.create`, `report.update`,
 * `report.delete`), then lists the actions in the README. `before`/`after` hold the changed fields only
 * (`changes()`), or the fields that describe a created or deleted record (`snapshot()`), with
 * long values summarised (`summarize()`), so a row stays small whatever was changed.
 */
import type { ServiceContext } from '../../platform/context.js';
import { newId } from '../../platform/ids.js';
import { auditLog } from './audit.tables.js';

export interface AuditEntry {
  /** `<targetType>.<verb>`, e.g. `course.update`. */
  action: string;
  targetType: string;
  targetId: string;
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
}

/** Strings longer than this are cut in the log. */
export const AUDIT_TEXT_MAX = 200;
/** Arrays and objects whose JSON is longer than this are described instead of stored. */
export const AUDIT_JSON_MAX = 1000;

/** A value as the audit log stores it: dates as ISO text, long text cut, large structures described. */
export function summarize(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'string') return value.length > AUDIT_TEXT_MAX ? `${value.slice(0, AUDIT_TEXT_MAX)}… (${value.length} characters)` : value;
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value === 'object') {
    const json = JSON.stringify(value);
    if (json.length <= AUDIT_JSON_MAX) return JSON.parse(json) as unknown;
    return Array.isArray(value) ? `[${value.length} items]` : `[object of ${Object.keys(value).length} keys]`;
  }
  return String(value);
}

const comparable = (value: unknown) => JSON.stringify(value instanceof Date ? value.toISOString() : (value ?? null));

/** `keys` of `row`: what describes a created or deleted record (`audit()` summarises the values). */
export function snapshot<T extends object>(row: T, keys: ReadonlyArray<keyof T & string>): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, row[k]]));
}

/** The fields among `keys` whose value differs between `before` and `after` (compared whole; `audit()` summarises them). */
export function changes<T extends object>(before: T, after: T, keys: ReadonlyArray<keyof T & string>): { before: Record<string, unknown>; after: Record<string, unknown> } {
  const changed = keys.filter((k) => comparable(before[k]) !== comparable(after[k]));
  return { before: snapshot(before, changed), after: snapshot(after, changed) };
}

const summarizeFields = (fields: Record<string, unknown> | null | undefined) => (fields ? Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, summarize(v)])) : null);

/** An update whose `changes()` found nothing: both sides empty. */
const changesNothing = (e: AuditEntry) => !!e.before && !!e.after && Object.keys(e.before).length === 0 && Object.keys(e.after).length === 0;

/**
 * Appends audit rows in the caller's transaction: one entry or many (one INSERT). Throws when
 * the context is not inside `withTx`, so no audit row is ever written apart from its change.
 * An update that changed nothing (a PATCH of the values already stored) writes no row.
 */
export async function audit(ctx: ServiceContext, entries: AuditEntry | readonly AuditEntry[]): Promise<void> {
  if (!ctx.inTx) throw new Error('audit() runs inside withTx, in the transaction of the change it records');
  const list = (Array.isArray(entries) ? (entries as readonly AuditEntry[]) : [entries as AuditEntry]).filter((e) => !changesNothing(e));
  if (list.length === 0) return;
  const now = ctx.clock.now();
  await ctx.db.insert(auditLog).values(
    list.map((e) => ({
      institutionId: ctx.institutionId,
      id: newId(),
      actorId: ctx.actor.personId,
      actorRole: ctx.actor.role,
      action: e.action,
      targetType: e.targetType,
      targetId: e.targetId,
      before: summarizeFields(e.before),
      after: summarizeFields(e.after),
      requestId: ctx.requestId,
      createdAt: now,
    })),
  );
}

/** A created record: `<targetType>.create`, `after` the fields among `keys` that describe it. */
export function auditCreate<T extends object>(ctx: ServiceContext, targetType: string, targetId: string, row: T, keys: ReadonlyArray<keyof T & string>): Promise<void> {
  return audit(ctx, { action: `${targetType}.create`, targetType, targetId, before: null, after: snapshot(row, keys) });
}

/** A changed record: `<targetType>.<verb>` (default `update`), with the fields among `keys` that changed, before and after. */
export function auditUpdate<T extends object>(
  ctx: ServiceContext,
  targetType: string,
  targetId: string,
  before: T,
  after: T,
  keys: ReadonlyArray<keyof T & string>,
  verb = 'update',
): Promise<void> {
  return audit(ctx, { action: `${targetType}.${verb}`, targetType, targetId, ...changes(before, after, keys) });
}

/** A deleted record: `<targetType>.delete`, `before` the fields among `keys` that described it. */
export function auditDelete<T extends object>(ctx: ServiceContext, targetType: string, targetId: string, row: T, keys: ReadonlyArray<keyof T & string>): Promise<void> {
  return audit(ctx, { action: `${targetType}.delete`, targetType, targetId, before: snapshot(row, keys), after: null });
}
