import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from './errors.js';
import { FIRST_INSTANT, LAST_INSTANT } from './time-range.js';

/**
 * Input rules that hold for every route, checked once at the boundary instead of in each schema
 * (PostgreSQL refuses these values in text and jsonb, so without the guard they became 500s):
 *
 * - no string (value or object key) in the body, query or path contains U+0000 (in headers
 *   Node's HTTP parser already refuses it: 400 from clientErrorHandler, before any route);
 * - no string contains a lone UTF-16 surrogate (`"\ud800"` is valid JSON but not valid text);
 * - a string shaped like an ISO 8601 date or timestamp is a real one, in years 0001 to 9999
 *   (year 0000, month 13, February 30, `+275760-…`, offsets past ±23:59 are refused);
 * - JSON bodies nest at most MAX_JSON_DEPTH arrays/objects deep (checked on the raw text,
 *   before parsing, in `jsonDepthExceeds`).
 *
 * Violations are 400 VALIDATION_ERROR with the offending field in `details.fields`.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * The JSON body parser of every route (a Fastify content-type parser, `parseAs: 'buffer'`): keeps
 * the raw bytes in `req.rawBody` (signatures are computed over them), refuses nesting deeper than
 * MAX_JSON_DEPTH and malformed JSON with 400 VALIDATION_ERROR; an empty body is undefined.
 */
export function parseJsonBody(req: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) {
  const raw = Buffer.isBuffer(body) ? body : Buffer.from(body);
  req.rawBody = raw;
  if (raw.length === 0) return done(null, undefined);
  const text = raw.toString('utf8');
  if (jsonDepthExceeds(text)) {
    return done(new AppError('VALIDATION_ERROR', `JSON body nested deeper than ${MAX_JSON_DEPTH} levels`), undefined);
  }
  try {
    done(null, JSON.parse(text));
  } catch {
    done(new AppError('VALIDATION_ERROR', 'Malformed JSON body'), undefined);
  }
}

/** True when the JSON text nests arrays/objects deeper than `max`; a linear scan, no parsing. */
export function jsonDepthExceeds(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > max) return true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
    }
  }
  return false;
}

const LONE_SURROGATE = /\p{Cs}/u;
/** Looks like an ISO 8601 date or timestamp (possibly a broken one). */
const DATE_SHAPED = /^([+-]?\d{4,6})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?\s*(Z|[+-](\d{2}):?(\d{2}))?)?$/i;

const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

/** Why a date-shaped string is not a real date, or null when it is one (or is not date-shaped). */
export function badDateReason(s: string): string | null {
  if (s.length > 40) return null;
  const m = DATE_SHAPED.exec(s);
  if (!m) return null;
  const [, y, mo, d, h, mi, sec, , oh, om] = m;
  if (!/^\d{4}$/.test(y!)) return 'the year must have four digits';
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (year < 1 || year > 9999) return 'the year must be between 0001 and 9999';
  if (month < 1 || month > 12) return 'the month must be 01 to 12';
  if (day < 1 || day > daysIn(year, month)) return 'the day does not exist in that month';
  if (h !== undefined && (Number(h) > 23 || Number(mi) > 59 || (sec !== undefined && Number(sec) > 59))) return 'the time is not valid';
  if (oh !== undefined && (Number(oh) > 23 || Number(om) > 59)) return 'the UTC offset is not valid';
  // The instant, in UTC, must be within those years too (9999-12-31T23:00-05:00 is in year 10000).
  if (oh !== undefined) {
    const sign = m[7]!.startsWith('-') ? -1 : 1;
    const utc = new Date(0);
    utc.setUTCFullYear(year, month - 1, day);
    utc.setUTCHours(Number(h), Number(mi), Number(sec ?? 0), 0);
    const instant = utc.getTime() - sign * (Number(oh) * 60 + Number(om)) * 60_000;
    if (instant < FIRST_INSTANT || instant > LAST_INSTANT) return 'the time in UTC falls outside the years 0001 to 9999';
  }
  return null;
}

/** Why this string may not enter the service, or null. */
export function badStringReason(s: string): string | null {
  if (s.includes('\u0000')) return 'must not contain NUL (U+0000) characters';
  if (LONE_SURROGATE.test(s)) return 'must not contain unpaired UTF-16 surrogates';
  const date = badDateReason(s);
  return date ? `is not a valid date: ${date}` : null;
}

/** The first offending string in `value` (keys included), as a dotted field path and reason. */
export function findBadInput(value: unknown, path: string): { field: string; message: string } | null {
  // Iterative, so even a value that escaped the depth check cannot overflow the stack.
  const stack: Array<{ v: unknown; p: string }> = [{ v: value, p: path }];
  while (stack.length > 0) {
    const { v, p } = stack.pop()!;
    if (typeof v === 'string') {
      const why = badStringReason(v);
      if (why) return { field: p, message: why };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], p: `${p}.${i}` });
    } else if (v !== null && typeof v === 'object' && !Buffer.isBuffer(v)) {
      for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
        const keyWhy = k.includes('\u0000') || LONE_SURROGATE.test(k) ? 'field names must not contain NUL or unpaired surrogates' : null;
        if (keyWhy) return { field: p, message: keyWhy };
        stack.push({ v: item, p: `${p}.${k}` });
      }
    }
  }
  return null;
}

/** Throws 400 VALIDATION_ERROR when `value` holds a string the service refuses. */
export function assertCleanInput(value: unknown, path: string): void {
  const bad = findBadInput(value, path);
  if (bad) throw new AppError('VALIDATION_ERROR', `Invalid ${bad.field}: ${bad.message}`, { fields: [bad] });
}

/** True for a value with nothing to check: undefined, null, or an object with no keys (an empty query). */
function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value !== 'object') return false;
  for (const _ in value) return false;
  return true;
}

function checkRequest(req: FastifyRequest) {
  if (!isEmpty(req.params)) assertCleanInput(req.params, 'params');
  if (!isEmpty(req.query)) assertCleanInput(req.query, 'querystring');
  if (!isEmpty(req.body)) assertCleanInput(req.body, 'body');
}

/** Checks every request's params, query and parsed body before schema validation. */
export function registerInputGuard(app: FastifyInstance) {
  // A callback hook, not an async one: no promise per request for a check that is synchronous.
  app.addHook('preValidation', function inputGuard(req, _reply, done) {
    try {
      checkRequest(req);
    } catch (err) {
      return done(err as Error);
    }
    done();
  });
}
