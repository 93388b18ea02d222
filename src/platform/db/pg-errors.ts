/** PostgreSQL error codes the service answers for (SQLSTATE, the same on PGlite and PostgreSQL). */
const FOREIGN_KEY_VIOLATION = '23503';

/** The SQLSTATE of a database error, looking through the wrappers (Drizzle puts the driver's error in `cause`). */
export function pgErrorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

/**
 * A write referring to a row that is gone: every service checks that what it refers to exists
 * first, so this only happens when that row was deleted concurrently (a lesson added to a
 * module being deleted, a note on a lesson being deleted).
 */
export const isForeignKeyViolation = (err: unknown) => pgErrorCode(err) === FOREIGN_KEY_VIOLATION;
