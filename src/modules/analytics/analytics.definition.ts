/**
 * Report definitions: the JSON shape (zod, structural only) and its validation against the entity
 * registry. The shape is kept loose on purpose (operators and aggregate functions are plain
 * strings): the service checks access first, then `validateDefinition` names every offending
 * part (`body.definition.filters.0.op: unknown operator "like" …`) in one 400 VALIDATION_ERROR.
 */
import { z } from 'zod';
import { validationError } from '../../platform/http/errors.js';
import { fitsReal } from '../../platform/http/numbers.js';
import { entityOf, type EntityDef, type FieldDef, type FieldType, type JoinDef } from './analytics.registry.js';

export const OPERATORS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'between', 'in', 'notIn', 'contains', 'startsWith', 'isNull', 'isNotNull'] as const;
export type Operator = (typeof OPERATORS)[number];

/** Operators each field type takes. */
export const OPERATORS_BY_TYPE: Record<FieldType, readonly Operator[]> = {
  string: ['eq', 'neq', 'in', 'notIn', 'contains', 'startsWith', 'isNull', 'isNotNull'],
  enum: ['eq', 'neq', 'in', 'notIn', 'isNull', 'isNotNull'],
  integer: ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'between', 'in', 'notIn', 'isNull', 'isNotNull'],
  number: ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'between', 'isNull', 'isNotNull'],
  boolean: ['eq', 'neq', 'isNull', 'isNotNull'],
  timestamp: ['gt', 'gte', 'lt', 'lte', 'between', 'isNull', 'isNotNull'],
};

export const AGGREGATES = ['count', 'countDistinct', 'sum', 'avg', 'min', 'max'] as const;
export type AggregateFn = (typeof AGGREGATES)[number];

export const GRANULARITIES = ['day', 'week', 'month', 'year'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

/** Most values an `in`/`notIn` filter takes. */
export const MAX_IN_VALUES = 500;
/** Most rows a report yields (and an export writes). */
export const MAX_REPORT_ROWS = 100_000;

const fieldRef = z.string().min(1).max(100).describe('a field of the entity (`status`) or of one of its joins (`course.title`)');
const alias = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_]{0,39}$/, 'must be a letter then up to 39 letters, digits or _')
  .describe('the output name of the aggregate');

export const reportDefinitionSchema = z
  .strictObject({
    entity: z.string().min(1).max(60).describe('an entity of GET /api/analytics/entities'),
    columns: z.array(fieldRef).max(50).optional().describe('fields to list (ungrouped reports; default: every field of the entity)'),
    filters: z
      .array(
        z.strictObject({
          field: fieldRef,
          op: z
            .string()
            .min(1)
            .max(20)
            .describe(`one of ${OPERATORS.join(', ')} (which ones depends on the field type)`),
          value: z.unknown().optional().describe('a value of the field type; an array for in/notIn (≤ 500) and between ([from, to]); absent for isNull/isNotNull'),
        }),
      )
      .max(50)
      .optional(),
    groupBy: z
      .array(
        z.union([
          fieldRef,
          z.strictObject({
            field: fieldRef,
            granularity: z.enum(GRANULARITIES).describe('timestamps: bucket by day, week (Monday), month or year in the institution time zone'),
          }),
        ]),
      )
      .max(10)
      .optional(),
    aggregates: z
      .array(
        z.strictObject({
          fn: z
            .string()
            .min(1)
            .max(20)
            .describe(`one of ${AGGREGATES.join(', ')}`),
          field: fieldRef.optional().describe('count: optional (rows); the others: required'),
          as: alias,
          label: z.string().trim().min(1).max(100).optional(),
        }),
      )
      .max(20)
      .optional(),
    sort: z
      .array(z.strictObject({ field: z.string().min(1).max(100).describe('a field, a group key or an aggregate name'), direction: z.enum(['asc', 'desc']).optional() }))
      .max(10)
      .optional(),
    dateRange: z
      .strictObject({
        field: fieldRef.optional().describe("a timestamp field; default: the entity's dateField"),
        from: z.iso.datetime({ offset: true }).optional().describe('inclusive'),
        to: z.iso.datetime({ offset: true }).optional().describe('exclusive'),
        lastDays: z.number().int().min(1).max(3660).optional().describe('instead of from/to: the last N days up to now'),
      })
      .optional(),
    limit: z.number().int().min(1).max(MAX_REPORT_ROWS).optional().describe('at most this many rows (top N with sort)'),
  })
  .describe('A report definition, validated against the entity registry');

export type ReportDefinitionInput = z.infer<typeof reportDefinitionSchema>;

/** A field as a definition named it, resolved through the registry. */
export interface ResolvedField {
  /** The name in the definition: `status`, `course.title`. */
  ref: string;
  field: FieldDef;
  /** The join it comes from; null for the entity's own fields. */
  join: JoinDef | null;
}

export interface ValidFilter {
  target: ResolvedField;
  op: Operator;
  value: unknown;
}

export interface ValidGroup {
  /** Output key: `course.title`, or `enrolledAt:month` for a time bucket. */
  key: string;
  target: ResolvedField;
  granularity: Granularity | null;
}

export interface ValidAggregate {
  key: string;
  label: string;
  fn: AggregateFn;
  target: ResolvedField | null;
}

export interface ValidSort {
  /** A field (ungrouped) or an output key (grouped). */
  key: string;
  /** Ungrouped: the field sorted on. */
  target: ResolvedField | null;
  direction: 'asc' | 'desc';
}

/** A definition checked against the registry: every name resolved, every value typed. */
export interface ValidDefinition {
  entity: EntityDef;
  /** Ungrouped: the listed fields. */
  columns: ResolvedField[];
  groups: ValidGroup[];
  aggregates: ValidAggregate[];
  /** True when the report has groups or aggregates (rows are groups, or one total row). */
  grouped: boolean;
  filters: ValidFilter[];
  dateRange: { target: ResolvedField; from: Date | null; to: Date | null } | null;
  sort: ValidSort[];
  limit: number | null;
  /** Every join a name needs, in dependency order. */
  joins: JoinDef[];
}

type Issue = { field: string; message: string };

const ISO = z.iso.datetime({ offset: true });
const INT32_MAX = 2_147_483_647;

/**
 * A timestamp as UTC ISO text: ISO 8601 allows offsets to ±23:59, PostgreSQL reads them only to
 * ±15:59. Other values as given.
 */
const asSqlValue = (f: FieldDef, value: unknown) => (f.type === 'timestamp' && typeof value === 'string' ? new Date(value).toISOString() : value);

/** Checks one filter value against its field type: the message, or null when fine. */
function valueProblem(f: FieldDef, value: unknown): string | null {
  switch (f.type) {
    case 'string':
      return typeof value === 'string' && value.length <= 500 ? null : 'must be a string of at most 500 characters';
    case 'enum':
      return typeof value === 'string' && f.values!.includes(value) ? null : `must be one of ${f.values!.join(', ')}`;
    case 'integer':
      // The columns are 32-bit integers (sqlType integer).
      return Number.isSafeInteger(value) && Math.abs(value as number) <= INT32_MAX ? null : `must be an integer between -${INT32_MAX} and ${INT32_MAX}`;
    case 'number':
      // The columns are 4-byte floats (sqlType real).
      return typeof value === 'number' && fitsReal(value) ? null : 'must be a number within the range of a 4-byte float';
    case 'boolean':
      return typeof value === 'boolean' ? null : 'must be true or false';
    case 'timestamp':
      return typeof value === 'string' && ISO.safeParse(value).success ? null : 'must be an ISO 8601 timestamp with a time zone';
  }
}

/**
 * Resolves a definition against the registry, or throws 400 VALIDATION_ERROR listing every
 * problem with its path under `prefix` (`body.definition`): unknown entity, field, join,
 * operator or aggregate, a field that may not be filtered/grouped/aggregated, a value of the
 * wrong type, columns or sorts that do not fit the shape of the report.
 */
export function validateDefinition(def: ReportDefinitionInput, prefix: string, now: Date): ValidDefinition {
  const issues: Issue[] = [];
  const at = (path: string) => `${prefix}.${path}`;
  const entity = entityOf(def.entity);
  if (!entity) throw validationError('Invalid report definition', [{ field: at('entity'), message: `unknown entity "${def.entity}"; see GET /api/analytics/entities` }]);

  const usedJoins = new Set<string>();
  const resolve = (ref: string, path: string): ResolvedField | null => {
    const dot = ref.indexOf('.');
    if (dot < 0) {
      const field = entity.fields.find((f) => f.name === ref);
      if (!field) {
        issues.push({ field: at(path), message: `unknown field "${ref}" of ${entity.name}` });
        return null;
      }
      field.requires?.forEach((j) => usedJoins.add(j));
      return { ref, field, join: null };
    }
    const joinName = ref.slice(0, dot);
    const join = entity.joins.find((j) => j.name === joinName);
    if (!join) {
      issues.push({ field: at(path), message: `${entity.name} has no join "${joinName}"${entity.joins.length ? ` (joins: ${entity.joins.map((j) => j.name).join(', ')})` : ''}` });
      return null;
    }
    const field = join.fields.find((f) => f.name === ref.slice(dot + 1));
    if (!field) {
      issues.push({ field: at(path), message: `unknown field "${ref.slice(dot + 1)}" of join ${join.name}` });
      return null;
    }
    usedJoins.add(join.name);
    return { ref, field, join };
  };

  // Filters.
  const filters: ValidFilter[] = [];
  (def.filters ?? []).forEach((f, i) => {
    const target = resolve(f.field, `filters.${i}.field`);
    if (!target) return;
    if (!target.field.filterable) {
      issues.push({ field: at(`filters.${i}.field`), message: `"${f.field}" cannot be filtered on` });
      return;
    }
    const allowed = OPERATORS_BY_TYPE[target.field.type];
    if (!(OPERATORS as readonly string[]).includes(f.op)) {
      issues.push({ field: at(`filters.${i}.op`), message: `unknown operator "${f.op}"; operators: ${OPERATORS.join(', ')}` });
      return;
    }
    const op = f.op as Operator;
    if (!allowed.includes(op)) {
      issues.push({ field: at(`filters.${i}.op`), message: `operator "${op}" does not apply to ${target.field.type} field "${f.field}"; allowed: ${allowed.join(', ')}` });
      return;
    }
    const valuePath = at(`filters.${i}.value`);
    if (op === 'isNull' || op === 'isNotNull') {
      if (f.value !== undefined && f.value !== null) issues.push({ field: valuePath, message: `${op} takes no value` });
      filters.push({ target, op, value: null });
      return;
    }
    if (op === 'in' || op === 'notIn' || op === 'between') {
      const list = f.value;
      const size = op === 'between' ? 2 : null;
      if (!Array.isArray(list) || list.length === 0 || list.length > MAX_IN_VALUES || (size !== null && list.length !== size)) {
        issues.push({ field: valuePath, message: op === 'between' ? 'must be [from, to]' : `must be an array of 1 to ${MAX_IN_VALUES} values` });
        return;
      }
      const bad = list.map((v, j) => [j, valueProblem(target.field, v)] as const).filter(([, p]) => p);
      bad.forEach(([j, p]) => issues.push({ field: `${valuePath}.${j}`, message: p! }));
      if (bad.length === 0) filters.push({ target, op, value: list.map((v) => asSqlValue(target.field, v)) });
      return;
    }
    const problem = f.value === undefined || f.value === null ? 'a value is required' : valueProblem(target.field, f.value);
    if (problem) issues.push({ field: valuePath, message: problem });
    else if ((op === 'contains' || op === 'startsWith') && (f.value as string).length === 0) issues.push({ field: valuePath, message: 'must not be empty' });
    else filters.push({ target, op, value: asSqlValue(target.field, f.value) });
  });

  // Date range.
  let dateRange: ValidDefinition['dateRange'] = null;
  if (def.dateRange) {
    const r = def.dateRange;
    const target = resolve(r.field ?? entity.dateField, 'dateRange.field');
    if (target && target.field.type !== 'timestamp') issues.push({ field: at('dateRange.field'), message: `"${target.ref}" is not a timestamp field` });
    if (r.lastDays !== undefined && (r.from !== undefined || r.to !== undefined)) issues.push({ field: at('dateRange.lastDays'), message: 'give lastDays or from/to, not both' });
    const from = r.lastDays !== undefined ? new Date(now.getTime() - r.lastDays * 86_400_000) : r.from ? new Date(r.from) : null;
    const to = r.to ? new Date(r.to) : null;
    if (from && to && from.getTime() >= to.getTime()) issues.push({ field: at('dateRange.to'), message: 'must be after from' });
    if (target && target.field.type === 'timestamp') dateRange = { target, from, to };
  }

  // Groups.
  const groups: ValidGroup[] = [];
  (def.groupBy ?? []).forEach((g, i) => {
    const spec = typeof g === 'string' ? { field: g, granularity: undefined } : g;
    const path = typeof g === 'string' ? `groupBy.${i}` : `groupBy.${i}.field`;
    const target = resolve(spec.field, path);
    if (!target) return;
    if (!target.field.groupable) {
      issues.push({ field: at(path), message: `"${spec.field}" cannot be grouped by` });
      return;
    }
    if (spec.granularity && target.field.type !== 'timestamp') {
      issues.push({ field: at(`groupBy.${i}.granularity`), message: 'only timestamp fields take a granularity' });
      return;
    }
    const granularity = target.field.type === 'timestamp' ? (spec.granularity ?? 'day') : null;
    const key = granularity ? `${spec.field}:${granularity}` : spec.field;
    if (groups.some((x) => x.key === key)) issues.push({ field: at(path), message: `"${key}" is grouped twice` });
    else groups.push({ key, target, granularity });
  });

  // Aggregates.
  const aggregates: ValidAggregate[] = [];
  (def.aggregates ?? []).forEach((a, i) => {
    if (!(AGGREGATES as readonly string[]).includes(a.fn)) {
      issues.push({ field: at(`aggregates.${i}.fn`), message: `unknown aggregate "${a.fn}"; aggregates: ${AGGREGATES.join(', ')}` });
      return;
    }
    const fn = a.fn as AggregateFn;
    let target: ResolvedField | null = null;
    if (a.field !== undefined) {
      target = resolve(a.field, `aggregates.${i}.field`);
      if (!target) return;
    } else if (fn !== 'count') {
      issues.push({ field: at(`aggregates.${i}.field`), message: `${fn} needs a field` });
      return;
    }
    if (target) {
      const t = target.field.type;
      const numeric = t === 'integer' || t === 'number';
      const ok =
        fn === 'count' || fn === 'countDistinct'
          ? target.field.filterable
          : fn === 'sum' || fn === 'avg'
            ? numeric && target.field.aggregatable
            : (numeric || t === 'timestamp') && target.field.aggregatable;
      if (!ok) {
        issues.push({ field: at(`aggregates.${i}.field`), message: `${fn} does not apply to "${a.field}" (${t}${target.field.aggregatable ? '' : ', not aggregatable'})` });
        return;
      }
    }
    if (entity.aggregateOnly && fn !== 'count' && fn !== 'countDistinct') {
      issues.push({ field: at(`aggregates.${i}.fn`), message: `${entity.name} can only be counted` });
      return;
    }
    if (groups.some((g) => g.key === a.as) || aggregates.some((x) => x.key === a.as) || a.as.includes('.')) {
      issues.push({ field: at(`aggregates.${i}.as`), message: `"${a.as}" is already an output name` });
      return;
    }
    const label = a.label ?? (target ? `${fn === 'countDistinct' ? 'Distinct' : fn[0]!.toUpperCase() + fn.slice(1)} of ${target.field.label}` : 'Count');
    aggregates.push({ key: a.as, label, fn, target });
  });

  // The shape the definition asks for, even where a group or aggregate of it was refused above.
  const grouped = (def.groupBy?.length ?? 0) + (def.aggregates?.length ?? 0) > 0;
  if (grouped && aggregates.length === 0) aggregates.push({ key: 'count', label: 'Count', fn: 'count', target: null });
  if (entity.aggregateOnly && !grouped) issues.push({ field: at('aggregates'), message: `${entity.name} rows cannot be listed: group them or give aggregates (count)` });

  // Columns.
  const columns: ResolvedField[] = [];
  if (grouped) {
    (def.columns ?? []).forEach((c, i) => {
      if (!groups.some((g) => g.key === c || g.target.ref === c))
        issues.push({ field: at(`columns.${i}`), message: `"${c}" is not grouped by: a grouped report lists its groups and aggregates` });
    });
  } else if (def.columns && def.columns.length > 0) {
    def.columns.forEach((c, i) => {
      const target = resolve(c, `columns.${i}`);
      if (target && columns.some((x) => x.ref === c)) issues.push({ field: at(`columns.${i}`), message: `"${c}" is listed twice` });
      else if (target) columns.push(target);
    });
  } else if (!entity.aggregateOnly) {
    columns.push(...entity.fields.map((field) => ({ ref: field.name, field, join: null })));
    entity.fields.forEach((f) => f.requires?.forEach((j) => usedJoins.add(j)));
  }

  // Sort.
  const sort: ValidSort[] = [];
  (def.sort ?? []).forEach((s, i) => {
    const direction = s.direction ?? 'asc';
    if (grouped) {
      if ([...groups.map((g) => g.key), ...aggregates.map((a) => a.key)].includes(s.field)) sort.push({ key: s.field, target: null, direction });
      else issues.push({ field: at(`sort.${i}.field`), message: `"${s.field}" is not a group or an aggregate of this report` });
      return;
    }
    const target = resolve(s.field, `sort.${i}.field`);
    if (target) sort.push({ key: s.field, target, direction });
  });

  if (issues.length > 0) throw validationError('Invalid report definition', issues);

  // Joins in dependency order (the registry lists requirements first).
  const needed = new Set<string>();
  const add = (name: string) => {
    if (needed.has(name)) return;
    const join = entity.joins.find((j) => j.name === name)!;
    join.requires?.forEach(add);
    needed.add(name);
  };
  usedJoins.forEach(add);
  const joins = entity.joins.filter((j) => needed.has(j.name));

  return { entity, columns, groups, aggregates, grouped, filters, dateRange, sort, limit: def.limit ?? null, joins };
}

/** The output names of a definition's rows, in order, with their labels and types. */
export interface OutputColumn {
  key: string;
  label: string;
  type: FieldType | 'date';
}

export function outputColumns(d: ValidDefinition): OutputColumn[] {
  if (!d.grouped) return d.columns.map((c) => ({ key: c.ref, label: c.field.label, type: c.field.type }));
  return [
    ...d.groups.map((g) => ({
      key: g.key,
      label: g.granularity ? `${g.target.field.label} (${g.granularity})` : g.target.field.label,
      type: g.granularity ? ('date' as const) : g.target.field.type,
    })),
    ...d.aggregates.map((a) => ({
      key: a.key,
      label: a.label,
      type: a.fn === 'count' || a.fn === 'countDistinct' ? ('integer' as const) : a.fn === 'sum' || a.fn === 'avg' ? ('number' as const) : a.target!.field.type,
    })),
  ];
}
