/**
 * Running compiled reports: one page (with its total) under a statement timeout, or every row in
 * batches for exports, scheduled files and alerts, without holding them all in memory.
 */
import { sql } from 'drizzle-orm';
import type { Database, DbOrTx } from '../../platform/db/client.js';
import { AppError } from '../../platform/http/errors.js';
import type { CompiledReport, KeysetPosition, ReportRow } from './analytics.compiler.js';

/** Rows fetched per batch of an export. */
export const EXPORT_BATCH_SIZE = 2_000;

const QUERY_CANCELED = '57014';

function isStatementTimeout(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if ((e as { code?: unknown }).code === QUERY_CANCELED) return true;
  }
  return false;
}

/** A report that ran past its statement timeout: 503 with the reason, so the client can narrow it. */
export const reportTimeoutError = (ms: number) =>
  new AppError('SERVICE_UNAVAILABLE', `The report ran longer than ${Math.round(ms / 100) / 10} s and was stopped; narrow its filters or date range`, {
    reason: 'statement_timeout',
    timeoutMs: ms,
  });

/**
 * Runs `fn` in a transaction whose statements stop after `ms` (`SET LOCAL statement_timeout`).
 * PostgreSQL enforces it; PGlite accepts the setting but, single-threaded in WebAssembly, has no
 * timer to interrupt a running statement.
 */
export async function withStatementTimeout<T>(db: DbOrTx, ms: number, fn: (tx: DbOrTx) => Promise<T>): Promise<T> {
  try {
    return await db.transaction(async (tx) => {
      await tx.execute(sql.raw(`set local statement_timeout = ${Math.max(1, Math.trunc(ms))}`));
      return fn(tx);
    });
  } catch (err) {
    if (isStatementTimeout(err)) throw reportTimeoutError(ms);
    throw err;
  }
}

/** One page of a report and how many rows it has. */
export async function runPage(db: DbOrTx, report: CompiledReport, page: { offset: number; limit: number }, timeoutMs: number): Promise<{ rows: ReportRow[]; total: number }> {
  return withStatementTimeout(db, timeoutMs, async (tx) => {
    if (report.definition.grouped) {
      // One aggregation: the page carries the number of groups (a page past the end needs a count).
      const raw = await report.page(tx, { ...page, withTotal: true });
      const total = raw.length > 0 ? Math.min(Number(raw[0]!.total), report.cap) : page.offset > 0 ? await report.count(tx) : 0;
      return { rows: raw.map((r) => report.toRow(r)), total };
    }
    const total = await report.count(tx);
    const raw = page.offset < total ? await report.page(tx, page) : [];
    return { rows: raw.map((r) => report.toRow(r)), total };
  });
}

/**
 * Every row of a report (up to its cap), in batches: on PostgreSQL through a server-side cursor;
 * on PGlite in short queries, keyset pages on (sort keys, id) for listed rows and offset pages
 * for grouped ones (a grouped report is aggregated in full for every page anyway).
 */
export async function* reportBatches(database: Database, report: CompiledReport, timeoutMs: number, batchSize = EXPORT_BATCH_SIZE): AsyncGenerator<ReportRow[]> {
  if (database.cursor) {
    const query = report.page(database.db, { limit: report.cap }).toSQL();
    try {
      for await (const batch of database.cursor(query, { batchSize, statementTimeoutMs: timeoutMs })) yield batch.map((r) => report.toRow(r));
    } catch (err) {
      if (isStatementTimeout(err)) throw reportTimeoutError(timeoutMs);
      throw err;
    }
    return;
  }
  let sent = 0;
  let after: KeysetPosition | null = null;
  while (sent < report.cap) {
    const limit = Math.min(batchSize, report.cap - sent);
    const raw = await withStatementTimeout(database.db, timeoutMs, async (tx) =>
      report.definition.grouped ? report.page(tx, { offset: sent, limit }) : report.page(tx, { limit, after }),
    );
    if (raw.length === 0) return;
    sent += raw.length;
    if (!report.definition.grouped) after = report.positionOf(raw[raw.length - 1]!);
    yield raw.map((r) => report.toRow(r));
    if (raw.length < limit) return;
  }
}
