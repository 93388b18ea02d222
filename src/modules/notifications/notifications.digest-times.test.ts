import { describe, expect, it } from 'vitest';
import { isTimeZone } from '../../platform/time-zone.js';
import { nextDigestAt, type DigestTimes } from './notifications.digest-times.js';

const times = (over: Partial<DigestTimes> = {}): DigestTimes => ({ dailyTime: '08:00', weeklyDay: 'MONDAY', weeklyTime: '08:00', timezone: 'UTC', ...over });
const at = (iso: string) => new Date(iso);

describe('nextDigestAt', () => {
  it('daily: the next dailyTime in the zone, strictly after now', () => {
    expect(nextDigestAt(at('2026-03-02T07:59:00Z'), times(), 'DAILY').toISOString()).toBe('2026-03-02T08:00:00.000Z');
    expect(nextDigestAt(at('2026-03-02T08:00:00Z'), times(), 'DAILY').toISOString()).toBe('2026-03-03T08:00:00.000Z');
    // 18:00 in Berlin (UTC+1 in March before the change) is 17:00Z.
    expect(nextDigestAt(at('2026-03-02T09:00:00Z'), times({ dailyTime: '18:00', timezone: 'Europe/Berlin' }), 'DAILY').toISOString()).toBe('2026-03-02T17:00:00.000Z');
    // Past 18:00 in New York (UTC-5): tomorrow.
    expect(nextDigestAt(at('2026-03-02T23:30:00Z'), times({ dailyTime: '18:00', timezone: 'America/New_York' }), 'DAILY').toISOString()).toBe('2026-03-03T23:00:00.000Z');
  });

  it('daily across a DST change keeps the wall-clock time', () => {
    // Berlin moves to UTC+2 on 2026-03-29: 08:00 local is 06:00Z that day.
    expect(nextDigestAt(at('2026-03-28T12:00:00Z'), times({ timezone: 'Europe/Berlin' }), 'DAILY').toISOString()).toBe('2026-03-29T06:00:00.000Z');
  });

  it('weekly: the next weeklyDay at weeklyTime in the zone', () => {
    // 2026-03-02 is a Monday.
    expect(nextDigestAt(at('2026-03-02T07:00:00Z'), times(), 'WEEKLY').toISOString()).toBe('2026-03-02T08:00:00.000Z');
    expect(nextDigestAt(at('2026-03-02T09:00:00Z'), times(), 'WEEKLY').toISOString()).toBe('2026-03-09T08:00:00.000Z');
    expect(nextDigestAt(at('2026-03-02T09:00:00Z'), times({ weeklyDay: 'SUNDAY', weeklyTime: '19:30' }), 'WEEKLY').toISOString()).toBe('2026-03-08T19:30:00.000Z');
    expect(nextDigestAt(at('2026-03-02T09:00:00Z'), times({ weeklyDay: 'FRIDAY', weeklyTime: '17:00', timezone: 'Asia/Tokyo' }), 'WEEKLY').toISOString()).toBe(
      '2026-03-06T08:00:00.000Z',
    );
  });

  it('knows IANA zones', () => {
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
  });
});
