import { parseArgs } from 'node:util';
import type { Clock } from '../clock.js';
import type { Db } from '../db/client.js';
import { listJobs, retryJob } from './maintenance.js';
import type { JobStatus } from './queue.tables.js';

export const JOBS_USAGE = `usage: lms jobs [--status dead|queued|running|done|all] [--name <job>] [--limit N]
       lms jobs retry <id>`;

const STATUSES = ['queued', 'running', 'done', 'dead'] as const;

/** Thrown for a bad `lms jobs` invocation; main prints it with the usage. */
export class JobsCliError extends Error {}

const oneLine = (s: string | null, max: number) => {
  if (!s) return '';
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/**
 * `lms jobs`: list jobs (dead ones by default, newest first) with their attempts and last error;
 * `lms jobs retry <id>`: queue a dead job again. Returns the text to print and the exit code.
 */
export async function jobsCommand(db: Db, clock: Clock, args: string[]): Promise<{ output: string; exitCode: number }> {
  if (args[0] === 'retry') {
    const id = args[1];
    if (!id || args.length > 2) throw new JobsCliError(`lms jobs retry takes one job id\n${JOBS_USAGE}`);
    const outcome = await retryJob(db, clock, id);
    const messages = {
      queued: [`job ${id} queued again`, 0],
      not_found: [`no job ${id}`, 1],
      not_dead: [`job ${id} is not dead; only dead jobs are retried`, 1],
      pending_exists: [`job ${id} is recurring and its next occurrence is already pending; nothing to do`, 1],
    } as const;
    const [output, exitCode] = messages[outcome];
    return { output, exitCode };
  }
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        status: { type: 'string', default: 'dead' },
        name: { type: 'string' },
        limit: { type: 'string', default: '20' },
      },
    }));
  } catch (err) {
    throw new JobsCliError(`${(err as Error).message}\n${JOBS_USAGE}`);
  }
  const status = values.status as string;
  if (status !== 'all' && !(STATUSES as readonly string[]).includes(status)) {
    throw new JobsCliError(`--status must be one of ${STATUSES.join(', ')}, all\n${JOBS_USAGE}`);
  }
  const limit = Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new JobsCliError(`--limit must be an integer from 1 to 10000`);
  const rows = await listJobs(db, { status: status === 'all' ? undefined : (status as JobStatus), name: values.name, limit });
  if (rows.length === 0) return { output: `no ${status === 'all' ? '' : `${status} `}jobs`, exitCode: 0 };
  const table = [
    ['id', 'name', 'status', 'attempts', 'updated', 'last error'],
    ...rows.map((j) => [j.id, j.name, j.status, `${j.attempts}/${j.maxAttempts}`, j.updatedAt.toISOString(), oneLine(j.lastError, 120)]),
  ];
  const widths = table[0].map((_, c) => Math.max(...table.map((r) => r[c].length)));
  const output = table
    .map((r) =>
      r
        .map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c])))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
  return { output, exitCode: 0 };
}
