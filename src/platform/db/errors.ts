/** SQLSTATE of a unique (or primary key) violation, on PostgreSQL and PGlite alike. */
const UNIQUE_VIOLATION = '23505';

/**
 * Whether `err` (or an error it wraps through `cause`, as Drizzle's query errors do) is a
 * unique violation; with `constraint`, only one of that constraint or unique index.
 */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, constraint: name } = e as { code?: unknown; constraint?: unknown };
    if (code === UNIQUE_VIOLATION) return constraint === undefined || name === constraint;
  }
  return false;
}
