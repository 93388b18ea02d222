import { CronExpressionParser } from 'cron-parser';
import type { JobSchedule } from './jobs.schemas.js';

/** The singleton key of a recurring job's pending occurrence. */
export const scheduleKey = (name: string) => `schedule:${name}`;

/**
 * The next occurrence strictly after `after`. `everyMs` slots are aligned to the epoch, so every
 * replica computes the same time; cron expressions (five or six fields) run in UTC unless `tz`.
 */
export function nextRunAt(schedule: JobSchedule, after: Date): Date {
  if ('everyMs' in schedule) {
    const every = schedule.everyMs;
    return new Date((Math.floor(after.getTime() / every) + 1) * every);
  }
  return CronExpressionParser.parse(schedule.cron, { currentDate: after, tz: schedule.tz ?? 'UTC' })
    .next()
    .toDate();
}

/** Throws a message naming the job when its schedule cannot be used. */
export function assertSchedule(name: string, schedule: JobSchedule): void {
  if ('everyMs' in schedule) {
    if (!Number.isInteger(schedule.everyMs) || schedule.everyMs < 1000) {
      throw new Error(`job ${name}: schedule.everyMs must be an integer of at least 1000`);
    }
    return;
  }
  try {
    CronExpressionParser.parse(schedule.cron, { tz: schedule.tz ?? 'UTC' });
  } catch (err) {
    throw new Error(`job ${name}: invalid cron expression "${schedule.cron}": ${(err as Error).message}`, { cause: err });
  }
}
