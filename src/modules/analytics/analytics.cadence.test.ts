import { describe, expect, it } from 'vitest';
import { nextRunAfter, type Cadence } from './analytics.cadence.js';

const at = (iso: string) => new Date(iso);
const next = (c: Partial<Cadence>, after: string) =>
  nextRunAfter({ cadence: 'DAILY', timeOfDay: '08:00', dayOfWeek: null, dayOfMonth: null, timezone: 'UTC', ...c }, at(after)).toISOString();

describe('nextRunAfter', () => {
  it('daily: today at the time when still ahead, else tomorrow, in the zone', () => {
    expect(next({}, '2026-03-02T07:59:00Z')).toBe('2026-03-02T08:00:00.000Z');
    expect(next({}, '2026-03-02T08:00:00Z')).toBe('2026-03-03T08:00:00.000Z');
    // 08:00 in Berlin is 07:00 UTC in winter.
    expect(next({ timezone: 'Europe/Berlin' }, '2026-03-02T06:00:00Z')).toBe('2026-03-02T07:00:00.000Z');
    // Across the spring DST change (29 March 2026): 08:00 Berlin becomes 06:00 UTC.
    expect(next({ timezone: 'Europe/Berlin' }, '2026-03-28T07:00:00Z')).toBe('2026-03-29T06:00:00.000Z');
  });

  it('weekly: the given weekday of this ISO week, else of the next one', () => {
    // 2026-03-02 is a Monday.
    expect(next({ cadence: 'WEEKLY', dayOfWeek: 3 }, '2026-03-02T09:00:00Z')).toBe('2026-03-04T08:00:00.000Z');
    expect(next({ cadence: 'WEEKLY', dayOfWeek: 1 }, '2026-03-02T09:00:00Z')).toBe('2026-03-09T08:00:00.000Z');
    expect(next({ cadence: 'WEEKLY', dayOfWeek: 7, timeOfDay: '23:30' }, '2026-03-08T23:30:00Z')).toBe('2026-03-15T23:30:00.000Z');
  });

  it('monthly: the day of this month, else next month, a short month on its last day', () => {
    expect(next({ cadence: 'MONTHLY', dayOfMonth: 15 }, '2026-03-02T09:00:00Z')).toBe('2026-03-15T08:00:00.000Z');
    expect(next({ cadence: 'MONTHLY', dayOfMonth: 1 }, '2026-03-02T09:00:00Z')).toBe('2026-04-01T08:00:00.000Z');
    expect(next({ cadence: 'MONTHLY', dayOfMonth: 31 }, '2026-02-01T00:00:00Z')).toBe('2026-02-28T08:00:00.000Z');
    expect(next({ cadence: 'MONTHLY', dayOfMonth: 31 }, '2026-02-28T08:00:00Z')).toBe('2026-03-31T08:00:00.000Z');
  });

  it('is always strictly after the given time', () => {
    for (const cadence of ['DAILY', 'WEEKLY', 'MONTHLY'] as const) {
      let t = at('2026-01-01T00:00:00Z');
      for (let i = 0; i < 30; i++) {
        const n = nextRunAfter({ cadence, timeOfDay: '02:30', dayOfWeek: 7, dayOfMonth: 31, timezone: 'America/New_York' }, t);
        expect(n.getTime()).toBeGreaterThan(t.getTime());
        t = n;
      }
    }
  });
});
