import { DateTime } from 'luxon';
import type { ScheduleCadence } from './analytics.tables.js';

export const WEEKDAY_NAMES = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'] as const;
export type WeekdayName = (typeof WEEKDAY_NAMES)[number];

export interface Cadence {
  cadence: ScheduleCadence;
  /** HH:MM, local time in `timezone`. */
  timeOfDay: string;
  /** WEEKLY: ISO weekday, 1 (Monday) … 7 (Sunday). */
  dayOfWeek: number | null;
  /** MONTHLY: 1 … 31; a shorter month runs on its last day. */
  dayOfMonth: number | null;
  timezone: string;
}

/** The occurrence of `c` in the period (day, ISO week or month) that contains `local`. */
function occurrenceIn(c: Cadence, local: DateTime): DateTime {
  const [hour, minute] = c.timeOfDay.split(':').map(Number) as [number, number];
  let day = local;
  if (c.cadence === 'WEEKLY') day = local.set({ weekday: (c.dayOfWeek ?? 1) as 1 | 2 | 3 | 4 | 5 | 6 | 7 });
  if (c.cadence === 'MONTHLY') day = local.set({ day: Math.min(c.dayOfMonth ?? 1, local.daysInMonth ?? 28) });
  // A wall-clock time skipped by a DST change moves forward (luxon's rule).
  return DateTime.fromObject({ year: day.year, month: day.month, day: day.day, hour, minute }, { zone: c.timezone });
}

/**
 * The first due time of a schedule strictly after `after`: the next day, week or month at its
 * local time in its zone. The cron runs a schedule once for its latest missed due time, then
 * moves it here, so a stopped cron does not send a backlog of the same report.
 */
export function nextRunAfter(c: Cadence, after: Date): Date {
  let local = DateTime.fromJSDate(after, { zone: c.timezone }).startOf(c.cadence === 'DAILY' ? 'day' : c.cadence === 'WEEKLY' ? 'week' : 'month');
  const step = c.cadence === 'DAILY' ? { days: 1 } : c.cadence === 'WEEKLY' ? { weeks: 1 } : { months: 1 };
  for (let i = 0; i < 3; i++) {
    const at = occurrenceIn(c, local);
    if (at.toMillis() > after.getTime()) return at.toJSDate();
    local = local.plus(step);
  }
  return occurrenceIn(c, local).toJSDate();
}
