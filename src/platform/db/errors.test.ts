import { describe, expect, it } from 'vitest';
import { freePort } from '../../../test/helpers/ports.js';
import { isDatabaseUnavailable, retryWhileUnavailable } from './errors.js';

/** node-postgres errors as they arrive, wrapped by Drizzle (`cause`). */
const pgError = (code: string, message = 'x') => Object.assign(new Error(message), { code });
const wrapped = (cause: unknown) => Object.assign(new Error('Failed query: select 1'), { cause });

describe('isDatabaseUnavailable', () => {
  it('recognises a server going away or not there, through Drizzle wrapping', () => {
    expect(isDatabaseUnavailable(wrapped(pgError('57P01', 'terminating connection due to administrator command')))).toBe(true);
    expect(isDatabaseUnavailable(wrapped(pgError('57P03', 'the database system is shutting down')))).toBe(true);
    expect(isDatabaseUnavailable(pgError('08006'))).toBe(true);
    expect(isDatabaseUnavailable(wrapped(pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')))).toBe(true);
    expect(isDatabaseUnavailable(wrapped(new Error('Connection terminated unexpectedly')))).toBe(true);
    expect(isDatabaseUnavailable(new Error('Client was closed and is not queryable'))).toBe(true);
  });

  it('leaves alone errors of the query itself', () => {
    expect(isDatabaseUnavailable(wrapped(pgError('23505', 'duplicate key value')))).toBe(false);
    expect(isDatabaseUnavailable(wrapped(pgError('57014', 'canceling statement due to statement timeout')))).toBe(false);
    expect(isDatabaseUnavailable(new Error('boom'))).toBe(false);
    expect(isDatabaseUnavailable(undefined)).toBe(false);
  });

  it('leaves alone the socket errors of other upstreams: fetch (recorder, push) and the AWS SDK (storage)', async () => {
    const refused = await fetch(`http://127.0.0.1:${await freePort()}/`).catch((err: unknown) => err);
    expect((refused as Error).message).toBe('fetch failed');
    expect(((refused as Error).cause as { code?: string }).code).toBe('ECONNREFUSED');
    expect(isDatabaseUnavailable(refused)).toBe(false);
    const s3 = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9000'), { code: 'ECONNREFUSED', $metadata: { attempts: 3 } });
    expect(isDatabaseUnavailable(s3)).toBe(false);
    // The same socket error from the database's own client still counts.
    expect(isDatabaseUnavailable(pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'))).toBe(true);
  });
});

describe('retryWhileUnavailable', () => {
  it('retries while the database is unavailable, then returns', async () => {
    let calls = 0;
    const retries: number[] = [];
    const result = await retryWhileUnavailable(
      async () => {
        if (++calls < 3) throw wrapped(pgError('57P03'));
        return 'done';
      },
      { onRetry: (_err, attempt) => retries.push(attempt) },
    );
    expect(result).toBe('done');
    expect(calls).toBe(3);
    expect(retries).toEqual([1, 2]);
  });

  it('throws any other error at once', async () => {
    let calls = 0;
    await expect(
      retryWhileUnavailable(async () => {
        calls++;
        throw wrapped(pgError('23505'));
      }),
    ).rejects.toThrow('Failed query');
    expect(calls).toBe(1);
  });

  it('gives up with the last error when the budget runs out', async () => {
    let calls = 0;
    await expect(
      retryWhileUnavailable(
        async () => {
          calls++;
          throw pgError('ECONNREFUSED', `refused ${calls}`);
        },
        { budgetMs: 600 },
      ),
    ).rejects.toThrow(/refused [23]/);
    expect(calls).toBeGreaterThanOrEqual(2);
  });
});
