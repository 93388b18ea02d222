import { DateTime } from 'luxon';
import { WEEKDAYS, type Weekday } from './notifications.tables.js';

export type DigestKind = 'DAILY' | 'WEEKLY';

export interface DigestTimes {
  dailyTime: string;
  weeklyDay: Weekday;
  weeklyTime: string;
  /** The effective IANA zone: the user's override, else the institution's. */
  timezone: string;
}

export const DEFAULT_DAILY_TIME = '08:00';
export const DEFAULT_WEEKLY_DAY: Weekday = 'MONDAY';
export const DEFAULT_WEEKLY_TIME = '08:00';

export const HH_MM = /^([01]\d|2[0-3]):[0-5]\d$/;

export const digestKindOf = (frequency: string): DigestKind | null => (frequency === 'DAILY_DIGEST' ? 'DAILY' : frequency === 'WEEKLY_DIGEST' ? 'WEEKLY' : null);

/**
 * The next time a digest of `kind` is due after `now`: the next `dailyTime` in the user's zone,
 * or the next `weeklyDay` at `weeklyTime`. Wall-clock times that do not exist on a DST change
 * move forward with luxon's rules.
 */
export function nextDigestAt(now: Date, times: DigestTimes, kind: DigestKind): Date {
  const [hour, minute] = (kind === 'DAILY' ? times.dailyTime : times.weeklyTime).split(':').map(Number);
  const local = DateTime.fromJSDate(now, { zone: times.timezone });
  let at = local.set({ hour, minute, second: 0, millisecond: 0 });
  if (kind === 'DAILY') {
    if (at <= local) at = at.plus({ days: 1 });
    return at.toJSDate();
  }
  // luxon weekdays: Monday 1 … Sunday 7; ours: SUNDAY 0 … SATURDAY 6.
  const target = WEEKDAYS.indexOf(times.weeklyDay) || 7;
  at = at.plus({ days: (target - at.weekday + 7) % 7 });
  if (at <= local) at = at.plus({ weeks: 1 });
  return at.toJSDate();
}
