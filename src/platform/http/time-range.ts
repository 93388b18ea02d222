import { z } from 'zod';

/** A `from`/`to` query value: a timestamp, or a whole day (`YYYY-MM-DD`, UTC). */
export const timeOrDay = z.union([z.string().datetime({ offset: true }), z.string().date()]).describe('ISO 8601 timestamp, or a date for a whole day (UTC)');

const DAY_MS = 24 * 3600 * 1000;

/**
 * The instants the service stores: years 0001 to 9999 in UTC. A later one would be sent to
 * PostgreSQL as a six-digit year it cannot read.
 */
export const FIRST_INSTANT = Date.parse('0001-01-01T00:00:00.000Z');
export const LAST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

/** The exclusive end of a `to` filter: the time itself, or for a bare date the next day's start (UTC). */
export const endOf = (to: string) => new Date(Math.min(Date.parse(to) + (/^\d{4}-\d{2}-\d{2}$/.test(to) ? DAY_MS : 0), LAST_INSTANT));

/** `from` is not after `to` (a bare `to` date reaches to that day's end: a time within that day is before it). */
export const rangeInOrder = (from: string | undefined, to: string | undefined) => !from || !to || Date.parse(from) <= Date.parse(to) || Date.parse(from) < endOf(to).getTime();
