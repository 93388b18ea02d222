/** Retry delays of failed jobs, kept apart from `queue.ts` so the job registry can use them. */

export const DEFAULT_MAX_RETRY_DELAY_MS = 3_600_000;

/** Delay before retry n (1-based): 2^n seconds, capped at `maxDelayMs` (default one hour). */
export const retryDelayMs = (attempt: number, maxDelayMs = DEFAULT_MAX_RETRY_DELAY_MS) => Math.min(2 ** attempt * 1000, maxDelayMs);

/**
 * A retry policy that outlasts a dependency's outage: enough attempts that the retries span at
 * least `windowMs` from the first attempt, 2^n s apart and at most `maxDelayMs` apart, so the
 * job runs again at most `maxDelayMs` after the dependency is back. Spread it into a definition.
 */
export function retryFor(windowMs: number, maxDelayMs: number): { maxAttempts: number; maxRetryDelayMs: number } {
  let attempts = 1;
  for (let waited = 0; waited < windowMs; attempts++) waited += retryDelayMs(attempts, maxDelayMs);
  return { maxAttempts: attempts, maxRetryDelayMs: maxDelayMs };
}
