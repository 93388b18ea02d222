/** SQLSTATEs the service answers for, on PostgreSQL and PGlite alike. */
const UNIQUE_VIOLATION = '23505';
const FOREIGN_KEY_VIOLATION = '23503';

/** The driver error inside `err` (Drizzle wraps it as `cause`) with this SQLSTATE, if any. */
function findPgError(err: unknown, code: string): { code: string; constraint?: unknown } | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if ((e as { code?: unknown }).code === code) return e as { code: string; constraint?: unknown };
  }
  return undefined;
}

/** Whether `err` is a unique violation; with `constraint`, only one of that constraint or unique index. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const found = findPgError(err, UNIQUE_VIOLATION);
  return !!found && (constraint === undefined || found.constraint === constraint);
}

/**
 * A write referring to a row that is gone: every service checks that what it refers to exists
 * first, so this only happens when that row was deleted concurrently (a lesson added to a
 * module being deleted, a note on a lesson being deleted).
 */
export const isForeignKeyViolation = (err: unknown): boolean => !!findPgError(err, FOREIGN_KEY_VIOLATION);
