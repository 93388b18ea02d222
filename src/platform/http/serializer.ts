import { isDeepStrictEqual } from 'node:util';
import fastJson from 'fast-json-stringify';
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

// ── zod → the JSON Schema fast-json-stringify compiles ─────────────────────────────────────
//
// The schema a serializer needs is not the one the docs show (fastify-type-provider-zod's
// jsonSchemaTransform): it must describe what zod's parse *outputs*, field for field, with the
// same dropping of undeclared fields. So it is derived here from the zod definition, for the
// subset whose output zod does not change: objects (unknown keys stripped), arrays, records,
// strings, numbers, booleans, null, enums and literals, optional and nullable. Anything whose
// parse rewrites the value (transforms, pipes, defaults, catch, coercion, trim/lowercase),
// or that JSON Schema cannot express for fast-json-stringify (dates, unions of objects,
// intersections, lazy, tuples…), makes the route fall back to zod + JSON.stringify.

type JsonSchema = Record<string, unknown>;

/** A zod construct the compiled serializer does not take; the message says which and where. */
class Unsupported extends Error {}

interface ZodDef {
  type: string;
  checks?: Array<{ _zod: { def: { check: string } } }>;
  coerce?: boolean;
  shape?: Record<string, ZodType>;
  catchall?: ZodType;
  element?: ZodType;
  keyType?: ZodType;
  valueType?: ZodType;
  innerType?: ZodType;
  options?: ZodType[];
  entries?: Record<string, unknown>;
  values?: unknown[];
}
const defOf = (s: ZodType) => (s as unknown as { _zod: { def: ZodDef } })._zod.def;

/** JSON types of primitive values (enum entries, literals), or undefined when they are not all primitives. */
function primitiveTypes(values: unknown[]): string[] | undefined {
  const types = new Set<string>();
  for (const v of values) {
    if (v === null) types.add('null');
    else if (typeof v === 'string') types.add('string');
    else if (typeof v === 'number' && Number.isFinite(v)) types.add('number');
    else if (typeof v === 'boolean') types.add('boolean');
    else return undefined;
  }
  return [...types];
}

const typed = (types: string[]): JsonSchema => (types.length === 1 ? { type: types[0] } : { type: types });

/** JSON types a union of primitives (strings, numbers, booleans, null, literals, enums) may take, or undefined for any other union. */
function unionOfPrimitives(options: ZodType[]): string[] | undefined {
  const types = new Set<string>();
  for (const option of options) {
    const d = defOf(option);
    if (d.checks?.some((c) => c._zod.def.check === 'overwrite') || d.coerce) return undefined;
    let optionTypes: string[] | undefined;
    if (d.type === 'literal') optionTypes = primitiveTypes(d.values ?? []);
    else if (d.type === 'enum') optionTypes = primitiveTypes(Object.values(d.entries ?? {}));
    else if (d.type === 'string' || d.type === 'number' || d.type === 'boolean' || d.type === 'null') optionTypes = [d.type];
    if (!optionTypes) return undefined;
    for (const t of optionTypes) types.add(t);
  }
  return [...types];
}

function withNull(schema: JsonSchema): JsonSchema {
  if (schema.type === undefined) return schema; // any value already
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
  return types.includes('null') ? schema : { ...schema, type: [...types, 'null'] };
}

function toSerializerSchema(schema: ZodType, path: string): JsonSchema {
  const d = defOf(schema);
  const at = path || '(root)';
  if (d.checks?.some((c) => c._zod.def.check === 'overwrite')) throw new Unsupported(`${at}: a check that rewrites the value (trim, toLowerCase…)`);
  if (d.coerce) throw new Unsupported(`${at}: coercion`);
  switch (d.type) {
    case 'string':
    case 'template_literal':
      return { type: 'string' };
    // `number` rather than `integer`: fast-json-stringify would truncate a fraction silently.
    case 'number':
      return { type: 'number' };
    case 'boolean':
      return { type: 'boolean' };
    case 'null':
      return { type: 'null' };
    case 'any':
    case 'unknown':
      return {};
    case 'enum':
    case 'literal': {
      const values = d.type === 'enum' ? Object.values(d.entries ?? {}) : (d.values ?? []);
      const types = primitiveTypes(values);
      if (!types) throw new Unsupported(`${at}: a ${d.type} with non-JSON values`);
      // No `enum`/`const` keyword: fast-json-stringify writes a `const` whatever the value is.
      return typed(types);
    }
    case 'union': {
      const types = unionOfPrimitives(d.options ?? []);
      if (!types) throw new Unsupported(`${at}: a union of other than strings, numbers, booleans and null`);
      return typed(types);
    }
    case 'nullable':
      return withNull(toSerializerSchema(d.innerType!, path));
    case 'readonly':
      return toSerializerSchema(d.innerType!, path);
    case 'array':
      return { type: 'array', items: toSerializerSchema(d.element!, `${path}[]`) };
    case 'record': {
      const key = defOf(d.keyType!).type;
      if (key !== 'string' && key !== 'enum') throw new Unsupported(`${at}: a record keyed by ${key}`);
      return { type: 'object', additionalProperties: toSerializerSchema(d.valueType!, `${path}{}`) };
    }
    case 'object': {
      const properties: Record<string, JsonSchema> = {};
      const required: string[] = [];
      for (const [key, field] of Object.entries(d.shape ?? {})) {
        const fieldDef = defOf(field);
        const fieldPath = path ? `${path}.${key}` : key;
        if (fieldDef.type === 'optional') {
          properties[key] = toSerializerSchema(fieldDef.innerType!, fieldPath);
        } else {
          properties[key] = toSerializerSchema(field, fieldPath);
          required.push(key);
        }
      }
      // Unknown keys: zod strips them (the default, and `strict`, which fails on them in the
      // strict-mode check); `loose`/`passthrough` keeps them as they are.
      const catchall = d.catchall ? defOf(d.catchall).type : 'never';
      let additionalProperties: boolean | JsonSchema = false;
      if (catchall === 'unknown' || catchall === 'any') additionalProperties = {};
      else if (catchall !== 'never') additionalProperties = toSerializerSchema(d.catchall!, `${path}{}`);
      return { type: 'object', properties, required, additionalProperties };
    }
    default:
      throw new Unsupported(`${at}: ${d.type}`);
  }
}

type Serialize = (data: unknown) => string;

/** How a route's responses of one status are written: compiled, or through zod when the schema is beyond the subset. */
export type CompiledSerializer = { kind: 'compiled'; serialize: Serialize } | { kind: 'zod'; reason: string };

const compiledBySchema = new WeakMap<ZodType, CompiledSerializer>();

/**
 * The fast-json-stringify function of a zod response schema, or why there is none. Cached per
 * schema object: the shared error envelope is compiled once, not once per route.
 */
export function compileResponseSchema(schema: ZodType): CompiledSerializer {
  let compiled = compiledBySchema.get(schema);
  if (!compiled) {
    try {
      compiled = { kind: 'compiled', serialize: fastJson(toSerializerSchema(schema, '') as never) as Serialize };
    } catch (err) {
      if (!(err instanceof Unsupported)) throw err;
      compiled = { kind: 'zod', reason: err.message };
    }
    compiledBySchema.set(schema, compiled);
  }
  return compiled;
}

/** A route (and status) whose responses go through zod + JSON.stringify, and why. */
export interface ZodSerializedRoute {
  method: string;
  url: string;
  status: string;
  reason: string;
}

const issuesOf = (error: { issues: Array<{ path: PropertyKey[]; code: string; message: string }> }) =>
  error.issues.slice(0, 10).map((i) => ({ path: i.path.map(String).join('.'), code: i.code, message: i.message }));

/**
 * Response serializer. Every route's zod response schema is compiled once to a
 * fast-json-stringify function, which writes only the fields the schema declares (nothing leaks
 * that the contract does not name). Schemas beyond that subset (see `toSerializerSchema`) are
 * written as before: zod parse, then JSON.stringify. A payload that does not match is a bug:
 * - `strict` (tests): every response is also checked by zod first; a mismatch, a field the
 *   schema does not name, or compiled output that differs from zod's is a 500 INTERNAL_ERROR,
 *   logged;
 * - `log` (default, production): no zod pass on compiled routes; a payload the compiled
 *   serializer cannot write (a required field missing, a value of another type) is logged with
 *   zod's account of it and sent as is; undeclared fields are dropped silently.
 * Routes that fall back to zod are added to `zodSerialized` (the app exposes them).
 */
export function zodResponseSerializer(mode: ResponseValidation, log: FastifyBaseLogger, zodSerialized: ZodSerializedRoute[] = []): FastifySerializerCompiler<ZodType> {
  return ({ schema, method, url, httpStatus }) => {
    // A documentation-only response (e.g. raw bytes) has no zod schema.
    if (!isZod(schema)) return (data) => JSON.stringify(data);
    const compiled = compileResponseSchema(schema);
    if (compiled.kind === 'zod') zodSerialized.push({ method, url, status: String(httpStatus), reason: compiled.reason });
    const message = `response of ${method} ${url} (${httpStatus}) does not match its schema`;
    const fail = (issues: Array<{ path: string; code: string; message: string }>, what = message): never => {
      // Also on stderr: test apps usually run with the logger off.
      console.error(`[lms] ${what}: ${JSON.stringify(issues)}`);
      throw Object.assign(new ResponseValidationError(what), { issues });
    };

    if (mode === 'strict') {
      return (data) => {
        const result = schema.safeParse(data);
        if (!result.success) return fail(issuesOf(result.error));
        // A field the schema does not name is a DTO leaking data; log mode just drops it.
        const undeclared = undeclaredFields(data, result.data);
        if (undeclared.length > 0) return fail(undeclared.map((path) => ({ path, code: 'undeclared_field', message: 'not in the response schema' })));
        const expected = JSON.stringify(result.data);
        if (compiled.kind === 'zod') return expected;
        const written = compiled.serialize(data);
        if (!isDeepStrictEqual(JSON.parse(written), JSON.parse(expected))) {
          fail(
            [{ path: '', code: 'serializer_drift', message: `compiled: ${written.slice(0, 300)} zod: ${expected.slice(0, 300)}` }],
            `compiled serializer of ${method} ${url} (${httpStatus}) differs from its zod schema`,
          );
        }
        return written;
      };
    }

    const logMismatch = (data: unknown) => {
      const result = schema.safeParse(data);
      const issues = result.success ? [] : issuesOf(result.error);
      log.error({ method, url, httpStatus, issues }, message);
    };
    if (compiled.kind === 'zod') {
      return (data) => {
        const result = schema.safeParse(data);
        if (result.success) return JSON.stringify(result.data);
        logMismatch(data);
        return JSON.stringify(data);
      };
    }
    return (data) => {
      try {
        return compiled.serialize(data);
      } catch {
        logMismatch(data);
        return JSON.stringify(data);
      }
    };
  };
}
