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

/** deadlock_detected, serialization_failure: PostgreSQL ended this transaction to let another finish. */
const TRANSACTION_CONFLICTS = ['40P01', '40001'];

/**
 * A transaction PostgreSQL rolled back because it collided with another (a deadlock, or a
 * serialization failure). The services lock in a fixed order so this should not happen; when it
 * does the request changed nothing and may simply be sent again.
 */
export const isTransactionConflict = (err: unknown): boolean => TRANSACTION_CONFLICTS.some((code) => !!findPgError(err, code));

/** SQLSTATEs of a server that is going away or not there yet: admin_shutdown, crash_shutdown, cannot_connect_now. */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03']);
/** Socket errors of a database that cannot be reached. */
const UNAVAILABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);
/** node-postgres' own messages for a connection that died or could not be made. */
const UNAVAILABLE_MESSAGES = /Connection terminated|Client was closed and is not queryable|Client has encountered a connection error|timeout exceeded when trying to connect/;

const isOtherUpstream = (err: unknown) => (err instanceof TypeError && err.message === 'fetch failed') || (typeof err === 'object' && err !== null && '$metadata' in err);

/**
 * Whether `err` says the database cannot be reached right now (restarting, shutting down, a
 * connection lost or refused), as opposed to refusing the query: worth retrying shortly.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  // Socket errors of other upstreams are not the database's: HTTP calls through fetch (the
  // recorder, push services: `TypeError: fetch failed` with the socket error as its cause) and
  // the AWS SDK's (storage; they carry `$metadata`).
  if (isOtherUpstream(err)) return false;
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (UNAVAILABLE_SQLSTATES.has(code) || code.startsWith('08') || UNAVAILABLE_ERRNOS.has(code))) return true;
    if (e instanceof Error && UNAVAILABLE_MESSAGES.test(e.message)) return true;
  }
  return false;
}

/**
 * Runs `fn`, and again while it fails because the database is unavailable (see
 * `isDatabaseUnavailable`), 250 ms, 500 ms, 1 s, then every 2 s, for at most `budgetMs`. For
 * writes that record something that already happened outside the database (an e-mail accepted
 * by the SMTP server, a job's outcome): losing them to a PostgreSQL restart would make that
 * happen again. Any other error is thrown at once; the last one when the budget runs out.
 */
export async function retryWhileUnavailable<T>(fn: () => Promise<T>, opts: { budgetMs?: number; onRetry?: (err: unknown, attempt: number) => void } = {}): Promise<T> {
  const deadline = Date.now() + (opts.budgetMs ?? 30_000);
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      const wait = Math.min(250 * 2 ** (attempt - 1), 2000);
      if (!isDatabaseUnavailable(err) || Date.now() + wait > deadline) throw err;
      opts.onRetry?.(err, attempt);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}
