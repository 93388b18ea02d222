/**
 * Compiles a validated report definition to SQL with Drizzle's query builder. Every name was
 * resolved through the registry, so the SQL is made of the registry's own expressions; every
 * value of the definition is a bound parameter. The entity's table is filtered by the caller's
 * institution (`inTenant`), and every join is on the institution too.
 *
 * Selected expressions are aliased `c0…` (values) and `k0…`, `kid` (keyset keys of ungrouped
 * reports), never names from the definition. Grouped reports group and order by output
 * position, so an expression with bound parameters (a time bucket in the institution's zone)
 * matches itself.
 */
import { and, sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../../platform/db/client.js';
import { inTenant } from '../../platform/db/tenancy.js';
import { containsPattern, escapeLike } from '../../platform/db/like.js';
import { MAX_REPORT_ROWS, outputColumns, type OutputColumn, type ResolvedField, type ValidDefinition, type ValidFilter } from './analytics.definition.js';
import type { ExprScope, FieldDef } from './analytics.registry.js';

/** Where and when a report runs: its institution (every query is filtered by it), now, and the zone of time buckets. */
export interface ReportScope extends ExprScope {
  institutionId: string;
  timezone: string;
}

/** A row as reports answer it: output key → value (numbers, booleans, ISO text, null). */
export type ReportRow = Record<string, string | number | boolean | null>;

/** The last row of an ungrouped page: its sort keys as text and its id, for the next keyset page. */
export interface KeysetPosition {
  keys: (string | null)[];
  id: string;
}

const ISO_FORMAT = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
const isoText = (x: SQL | unknown) => sql`to_char(${x} at time zone 'UTC', ${sql.raw(ISO_FORMAT)})`;

export interface CompiledReport {
  definition: ValidDefinition;
  columns: OutputColumn[];
  /**
   * The rows of one page or batch: `offset`/`limit` within the report's own limit; `after`
   * (ungrouped) for keyset batches; `withTotal` (grouped) adds each row's `total`, the number of
   * groups, from the same pass (`count(*) over ()`), so a page of a grouped report aggregates once.
   */
  page(db: DbOrTx, opts: { offset?: number; limit: number; after?: KeysetPosition | null; withTotal?: boolean }): SQLQuery;
  /** How many rows the report yields (at most its limit). */
  count(db: DbOrTx): Promise<number>;
  /** Output row from a result row (`c0…` aliases), whatever the driver's value types. */
  toRow(raw: Record<string, unknown>): ReportRow;
  /** The keyset position of a raw row (ungrouped reports). */
  positionOf(raw: Record<string, unknown>): KeysetPosition;
  /** The most rows it yields: its limit, at most MAX_REPORT_ROWS. */
  cap: number;
}

/** A built query: runs through Drizzle, or gives its SQL text and parameters (for a server-side cursor). */
export interface SQLQuery extends PromiseLike<Record<string, unknown>[]> {
  toSQL(): { sql: string; params: unknown[] };
}

function expr(rf: ResolvedField, scope: ReportScope): SQL {
  return sql`${rf.field.expr(scope)}`;
}

const cast = (f: FieldDef) => sql.raw(f.sqlType);

function filterSql(f: ValidFilter, scope: ReportScope): SQL {
  const x = expr(f.target, scope);
  const t = cast(f.target.field);
  const v = f.value;
  switch (f.op) {
    case 'eq':
      return sql`${x} = ${v}::${t}`;
    case 'neq':
      // Rows without a value are "not equal" too.
      return sql`${x} is distinct from ${v}::${t}`;
    case 'gt':
      return sql`${x} > ${v}::${t}`;
    case 'gte':
      return sql`${x} >= ${v}::${t}`;
    case 'lt':
      return sql`${x} < ${v}::${t}`;
    case 'lte':
      return sql`${x} <= ${v}::${t}`;
    case 'between': {
      const [a, b] = v as unknown[];
      return sql`(${x} >= ${a}::${t} and ${x} <= ${b}::${t})`;
    }
    case 'in':
      return sql`${x} = any(${sql.param(v)}::${t}[])`;
    case 'notIn':
      return sql`not coalesce(${x} = any(${sql.param(v)}::${t}[]), false)`;
    case 'contains':
      return sql`${x} ilike ${containsPattern(v as string)}`;
    case 'startsWith':
      return sql`${x} ilike ${`${escapeLike(v as string)}%`}`;
    case 'isNull':
      return sql`${x} is null`;
    case 'isNotNull':
      return sql`${x} is not null`;
  }
}

/** Output expression of a listed field: timestamps as ISO 8601 UTC text, the rest as stored. */
const listed = (rf: ResolvedField, scope: ReportScope) => (rf.field.type === 'timestamp' ? isoText(expr(rf, scope)) : expr(rf, scope));

function aggregateSql(a: ValidDefinition['aggregates'][number], scope: ReportScope): SQL {
  const x = a.target ? expr(a.target, scope) : null;
  switch (a.fn) {
    case 'count':
      return x ? sql`count(${x})::int` : sql`count(*)::int`;
    case 'countDistinct':
      return sql`count(distinct ${x})::int`;
    case 'sum':
      return sql`round(sum(${x})::numeric, 4)::float8`;
    case 'avg':
      return sql`round(avg(${x})::numeric, 4)::float8`;
    case 'min':
      return a.target!.field.type === 'timestamp' ? isoText(sql`min(${x})`) : sql`min(${x})`;
    case 'max':
      return a.target!.field.type === 'timestamp' ? isoText(sql`max(${x})`) : sql`max(${x})`;
  }
}

function normalize(type: OutputColumn['type'], v: unknown): string | number | boolean | null {
  if (v === null || v === undefined) return null;
  switch (type) {
    case 'integer':
    case 'number':
      return Number(v);
    case 'boolean':
      return v === true || v === 't' || v === 'true';
    default:
      return v instanceof Date ? v.toISOString() : String(v);
  }
}

/** "After this row" in the order `keys…, id`, NULL-aware (ascending: nulls last; descending: nulls first). */
function afterPosition(keys: { x: SQL; dir: 'asc' | 'desc'; t: SQL }[], idExpr: SQL, pos: KeysetPosition): SQL {
  const equal = (k: (typeof keys)[number], v: string | null) => (v === null ? sql`${k.x} is null` : sql`${k.x} = ${v}::${k.t}`);
  const after = (k: (typeof keys)[number], v: string | null): SQL | null => {
    if (k.dir === 'asc') return v === null ? null : sql`(${k.x} > ${v}::${k.t} or ${k.x} is null)`;
    return v === null ? sql`${k.x} is not null` : sql`${k.x} < ${v}::${k.t}`;
  };
  const branches: SQL[] = [];
  keys.forEach((k, i) => {
    const step = after(k, pos.keys[i] ?? null);
    if (step) branches.push(and(...keys.slice(0, i).map((p, j) => equal(p, pos.keys[j] ?? null)), step)!);
  });
  branches.push(and(...keys.map((k, j) => equal(k, pos.keys[j] ?? null)), sql`${idExpr} > ${pos.id}`)!);
  return sql`(${sql.join(branches, sql` or `)})`;
}

export function compileReport(d: ValidDefinition, scope: ReportScope): CompiledReport {
  const columns = outputColumns(d);
  const entity = d.entity;
  const idExpr = sql`${entity.table.id}`;

  const fields: Record<string, SQL.Aliased> = {};
  if (d.grouped) {
    d.groups.forEach((g, i) => {
      const x = expr(g.target, scope);
      fields[`c${i}`] = (g.granularity ? sql`to_char(date_trunc(${g.granularity}, ${x} at time zone ${scope.timezone}), 'YYYY-MM-DD')` : x).as(`c${i}`);
    });
    d.aggregates.forEach((a, i) => {
      fields[`c${d.groups.length + i}`] = aggregateSql(a, scope).as(`c${d.groups.length + i}`);
    });
  } else {
    d.columns.forEach((c, i) => {
      fields[`c${i}`] = listed(c, scope).as(`c${i}`);
    });
  }
  // Keyset keys of ungrouped reports: the sort values as text, and the row id.
  const sortKeys = d.grouped ? [] : d.sort.map((s) => ({ x: expr(s.target!, scope), dir: s.direction, t: cast(s.target!.field) }));
  if (!d.grouped) {
    sortKeys.forEach((k, i) => {
      fields[`k${i}`] = sql`(${k.x})::text`.as(`k${i}`);
    });
    fields.kid = sql`${idExpr}`.as('kid');
  }

  const conditions: SQL[] = [inTenant(scope, entity.table), ...d.filters.map((f) => filterSql(f, scope))];
  if (d.dateRange) {
    const x = expr(d.dateRange.target, scope);
    if (d.dateRange.from) conditions.push(sql`${x} >= ${d.dateRange.from.toISOString()}::timestamptz`);
    if (d.dateRange.to) conditions.push(sql`${x} < ${d.dateRange.to.toISOString()}::timestamptz`);
  }

  const base = (db: DbOrTx, extra: SQL | null, withTotal = false) => {
    let q = db
      .select(withTotal ? { ...fields, total: sql<number>`count(*) over ()`.as('total') } : fields)
      .from(entity.table)
      .$dynamic();
    for (const j of d.joins) q = j.kind === 'inner' ? q.innerJoin(j.table, j.on) : q.leftJoin(j.table, j.on);
    q = q.where(and(...conditions, ...(extra ? [extra] : [])));
    if (d.grouped && d.groups.length > 0) q = q.groupBy(...d.groups.map((_, i) => sql.raw(String(i + 1))));
    return q;
  };

  const orderBy = (): SQL[] => {
    if (d.grouped) {
      const keys = columns.map((c) => c.key);
      const order = d.sort.map((s) => sql.raw(`${keys.indexOf(s.key) + 1} ${s.direction} nulls ${s.direction === 'asc' ? 'last' : 'first'}`));
      // Then every group, so pages and batches cut the same total order.
      d.groups.forEach((_, i) => order.push(sql.raw(`${i + 1} asc nulls last`)));
      return order;
    }
    return [...sortKeys.map((k) => (k.dir === 'asc' ? sql`${k.x} asc nulls last` : sql`${k.x} desc nulls first`)), sql`${idExpr} asc`];
  };

  const cap = Math.min(d.limit ?? MAX_REPORT_ROWS, MAX_REPORT_ROWS);

  return {
    definition: d,
    columns,
    cap,
    page(db, opts) {
      const offset = opts.offset ?? 0;
      const limit = Math.max(0, Math.min(opts.limit, cap - offset));
      const extra = !d.grouped && opts.after ? afterPosition(sortKeys, idExpr, opts.after) : null;
      return base(db, extra, opts.withTotal === true && d.grouped)
        .orderBy(...orderBy())
        .limit(limit)
        .offset(offset) as unknown as SQLQuery;
    },
    async count(db) {
      const inner = base(db, null).as('q');
      const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(inner);
      return Math.min(Number(row?.n ?? 0), cap);
    },
    toRow(raw) {
      const out: ReportRow = {};
      columns.forEach((c, i) => {
        out[c.key] = normalize(c.type, raw[`c${i}`]);
      });
      return out;
    },
    positionOf(raw) {
      return { keys: sortKeys.map((_, i) => (raw[`k${i}`] === null || raw[`k${i}`] === undefined ? null : String(raw[`k${i}`]))), id: String(raw.kid) };
    },
  };
}
