import type { FastifyBaseLogger } from 'fastify';
import type { FastifySerializerCompiler } from 'fastify/types/schema.js';
import type { ZodType } from 'zod';

/** What a response that does not match its schema does (config RESPONSE_VALIDATION). */
export type ResponseValidation = 'strict' | 'log';

/** Thrown by the serializer in strict mode; the error handler answers 500 and logs it. */
export class ResponseValidationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ResponseValidationError';
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && [Object.prototype, null].includes(Object.getPrototypeOf(v));

/** Paths of the fields of `sent` that parsing dropped (undeclared by the schema), at most `max`. */
export function undeclaredFields(sent: unknown, parsed: unknown, path = '', out: string[] = [], max = 10): string[] {
  if (out.length >= max) return out;
  if (Array.isArray(sent) && Array.isArray(parsed)) {
    sent.forEach((item, i) => undeclaredFields(item, parsed[i], `${path}${path ? '.' : ''}${i}`, out, max));
  } else if (isPlainObject(sent) && isPlainObject(parsed)) {
    for (const [key, value] of Object.entries(sent)) {
      const at = `${path}${path ? '.' : ''}${key}`;
      if (!(key in parsed)) {
        if (value !== undefined && out.length < max) out.push(at);
      } else undeclaredFields(value, parsed[key], at, out, max);
    }
  }
  return out;
}

const isZod = (schema: unknown): schema is ZodType => typeof (schema as ZodType | undefined)?.safeParse === 'function';

/**
 * Response serializer: the route's zod schema strips undeclared fields (nothing leaks that the
 * contract does not name). A payload that does not match is a bug:
 * - `strict` (tests): the request fails with 500 INTERNAL_ERROR and the mismatch is logged; a
 *   field the schema does not name fails it too (a DTO leaking data);
 * - `log` (default, production): the mismatch is logged and the payload is sent as is;
 *   undeclared fields are stripped silently.
 */
export function zodResponseSerializer(mode: ResponseValidation, log: FastifyBaseLogger): FastifySerializerCompiler<ZodType> {
  return ({ schema, method, url, httpStatus }) => {
    // A documentation-only response (e.g. raw bytes) has no zod schema.
    if (!isZod(schema)) return (data) => JSON.stringify(data);
    return (data) => {
      const result = schema.safeParse(data);
      let issues: Array<{ path: string; code: string; message: string }>;
      if (result.success) {
        if (mode !== 'strict') return JSON.stringify(result.data);
        // Strict: a field the schema does not name is a DTO leaking data; log mode just strips it.
        const undeclared = undeclaredFields(data, result.data);
        if (undeclared.length === 0) return JSON.stringify(result.data);
        issues = undeclared.map((path) => ({ path, code: 'undeclared_field', message: 'not in the response schema' }));
      } else {
        issues = result.error.issues.slice(0, 10).map((i) => ({ path: i.path.join('.'), code: i.code, message: i.message }));
      }
      const message = `response of ${method} ${url} (${httpStatus}) does not match its schema`;
      if (mode === 'strict') {
        // Also on stderr: test apps usually run with the logger off.
        console.error(`[lms] ${message}: ${JSON.stringify(issues)}`);
        throw Object.assign(new ResponseValidationError(message), { issues });
      }
      log.error({ method, url, httpStatus, issues }, message);
      return JSON.stringify(data);
    };
  };
}
