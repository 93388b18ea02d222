import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { Agent, request, type Dispatcher } from 'undici';
import { z } from 'zod';
import type { CrmAddressing } from '../../config.js';
import type { Clock } from '../clock.js';
import { AppError } from '../http/errors.js';
import type { CrmCache } from './cache.js';
import {
  attendanceSchema,
  childSchema,
  classSchema,
  contactSchema,
  feeStatusSchema,
  institutionLookupSchema,
  parentLinkSchema,
  rosterEntrySchema,
  staffUserSchema,
  studentSchema,
  type CompletionPush,
  type CrmClient,
  type CrmInstitution,
} from './types.js';

/**
 * HTTP client of the CRM surface (spec 4.10, 5.3): tenant addressing, bearer key, envelope
 * and schema validation, the cache windows of the spec table, and single-flight of misses.
 */

export type CrmErrorReason =
  | 'not_configured' // no API key or no CRM address
  | 'invalid_slug' // slug would not make a safe host label
  | 'invalid_id' // id that cannot be a path segment
  | 'timeout'
  | 'unreachable' // DNS, refused, reset
  | 'not_found' // CRM answered 404
  | 'http_error' // any other non-2xx
  | 'bad_response'; // not JSON, not the envelope, or data of the wrong shape

/**
 * A failed CRM call. It is an AppError so an unhandled one renders once as 502 BAD_GATEWAY
 * (503 SERVICE_UNAVAILABLE when the CRM is not configured); `reason` and `upstreamStatus`
 * say what happened upstream.
 */
export class CrmError extends AppError {
  constructor(
    readonly reason: CrmErrorReason,
    message: string,
    readonly upstreamStatus: number | null = null,
  ) {
    super(reason === 'not_configured' ? 'SERVICE_UNAVAILABLE' : 'BAD_GATEWAY', message, { upstream: 'crm', reason });
    this.name = 'CrmError';
  }
}

export const isCrmError = (err: unknown): err is CrmError => err instanceof CrmError;

/** RFC 1123 label; keeps `evil.com/x`, `a..b`, empty and uppercase slugs out of the host. */
const SLUG = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** Cache windows of the spec 4.10 table, in seconds. Absent = never cached. */
export const CRM_CACHE_TTL = {
  contact: 300,
  student: 300,
  user: 300,
  attendance: 300,
  classes: 600,
  /** Not in the spec table; an institution's slug changes rarely. */
  institution: 300,
} as const;

/**
 * An id the CRM does not know is remembered this long (seconds), so a list that names an
 * unknown person does not ask the CRM again on every request.
 */
export const CRM_NOT_FOUND_TTL = 60;
const NOT_FOUND_MARK = { crmNotFound: true } as const;
const isNotFoundMark = (v: unknown) => typeof v === 'object' && v !== null && (v as { crmNotFound?: unknown }).crmNotFound === true;

const MAX_RESPONSE_BYTES = 5 * 1024 * 1024;

type Log = Pick<Console, 'warn' | 'error' | 'info'>;

export interface CrmClientOptions {
  addressing: CrmAddressing | undefined;
  apiKey: string | undefined;
  timeoutMs: number;
  connectTimeoutMs: number;
  /** Owned by the client from now on: `close()` closes it too. */
  cache: CrmCache;
  clock: Clock;
  log?: Log;
}

/**
 * Names under `.localhost` are loopback (RFC 6761), so `demo.crm.localhost:4010` reaches the
 * simulator without /etc/hosts entries. Everything else goes through the system resolver.
 */
export function loopbackAwareLookup(
  hostname: string,
  options: LookupOptions,
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
): void {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) {
    // net.connect asks for `all` when it races address families (autoSelectFamily).
    if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
    else callback(null, '127.0.0.1', 4);
    return;
  }
  dnsLookup(hostname, options, callback as never);
}

export function createCrmClient(opts: CrmClientOptions): CrmClient & { close(): Promise<void> } {
  const log: Log = opts.log ?? console;
  const agent = new Agent({
    keepAliveTimeout: 10_000,
    connections: 64,
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
    connect: { timeout: opts.connectTimeoutMs, lookup: loopbackAwareLookup },
  });
  const inflight = new Map<string, Promise<unknown>>();
  // Cache keys carry the CRM address, so two CRMs (or two simulators) never share entries.
  const keyPrefix = `crm:${opts.addressing?.baseDomain ?? 'none'}:`;

  function requireConfigured(): { addressing: CrmAddressing; apiKey: string } {
    if (!opts.addressing) throw new CrmError('not_configured', 'CRM address is not configured (CRM_BASE_DOMAIN or CRM_URL)');
    if (!opts.apiKey) throw new CrmError('not_configured', 'CRM_API_KEY is not configured');
    return { addressing: opts.addressing, apiKey: opts.apiKey };
  }

  function checkSlug(slug: string) {
    if (typeof slug !== 'string' || !SLUG.test(slug)) {
      throw new CrmError('invalid_slug', `Invalid institution slug ${JSON.stringify(slug)}`);
    }
  }

  /** Percent-encodes a path id; `.` and `..` would still be resolved as path steps, so refuse them. */
  function seg(id: string): string {
    if (typeof id !== 'string' || id === '' || /^\.+$/.test(id)) {
      throw new CrmError('invalid_id', `Invalid CRM id ${JSON.stringify(id)}`);
    }
    return encodeURIComponent(id);
  }

  /** One HTTP exchange; returns status and the parsed JSON body (or `undefined` if not JSON). */
  async function exchange(method: 'GET' | 'POST', url: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; json: unknown; isJson: boolean }> {
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        dispatcher: agent,
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(opts.timeoutMs),
      });
    } catch (err) {
      throw networkError(err, method, url);
    }
    let text: string;
    try {
      text = await readCapped(res.body);
    } catch (err) {
      throw err instanceof CrmError ? err : networkError(err, method, url);
    }
    try {
      return { status: res.statusCode, json: JSON.parse(text), isJson: true };
    } catch {
      return { status: res.statusCode, json: undefined, isJson: false };
    }
  }

  /**
   * Calls a tenant `/api/lms/*` endpoint and returns `data` validated by `schema`. With
   * `acceptNoContent`, a 204 (no body to carry the envelope) answers `undefined`.
   */
  async function callTenant<T>(slug: string, method: 'GET' | 'POST', path: string, schema: z.ZodType<T>, body?: unknown, acceptNoContent = false): Promise<T> {
    const { addressing, apiKey } = requireConfigured();
    checkSlug(slug);
    const url = `${addressing.protocol}://${slug}.${addressing.baseDomain}${path}`;
    const res = await exchange(method, url, { authorization: `Bearer ${apiKey}`, 'x-institution-slug': slug, 'content-type': 'application/json' }, body);
    const what = `${method} ${path} (${slug})`;
    const envelope = res.json as { data?: unknown; error?: { code?: unknown; message?: unknown } | null } | undefined;
    if (res.status < 200 || res.status > 299) {
      const upstream = typeof envelope?.error?.message === 'string' ? `: ${envelope.error.message}` : '';
      throw new CrmError(res.status === 404 ? 'not_found' : 'http_error', `CRM ${what} answered ${res.status}${upstream}`, res.status);
    }
    if (res.status === 204 && acceptNoContent) return schema.parse(undefined);
    if (!res.isJson || typeof envelope !== 'object' || envelope === null || !('data' in envelope)) {
      throw new CrmError('bad_response', `CRM ${what} answered ${res.status} without a JSON envelope`, res.status);
    }
    if (envelope.error) {
      throw new CrmError('http_error', `CRM ${what} answered an error: ${String(envelope.error.message ?? envelope.error.code)}`, res.status);
    }
    const parsed = schema.safeParse(envelope.data);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      throw new CrmError('bad_response', `CRM ${what} data has an unexpected shape (${first?.path.join('.') || '(root)'}: ${first?.message})`, res.status);
    }
    return parsed.data;
  }

  /**
   * Cache-aside with single-flight: a hit is re-validated (a Redis entry may predate a schema
   * change); concurrent misses of one key wait on the same upstream call.
   */
  async function cached<T>(key: string, ttlSeconds: number, schema: z.ZodType<T>, load: () => Promise<T>): Promise<T> {
    const fullKey = keyPrefix + key;
    const pending = inflight.get(fullKey);
    if (pending) return pending as Promise<T>;
    const stored = await opts.cache.get(fullKey);
    if (isNotFoundMark(stored)) throw new CrmError('not_found', 'CRM record not found (remembered)', 404);
    const hit = schema.safeParse(stored);
    if (hit.success) return hit.data;
    // Re-check: another caller may have started the load while we read the cache.
    const started = inflight.get(fullKey);
    if (started) return started as Promise<T>;
    const promise = (async () => {
      let value: T;
      try {
        value = await load();
      } catch (err) {
        if (err instanceof CrmError && err.reason === 'not_found') await opts.cache.set(fullKey, NOT_FOUND_MARK, Math.min(ttlSeconds, CRM_NOT_FOUND_TTL));
        throw err;
      }
      await opts.cache.set(fullKey, value, ttlSeconds);
      return value;
    })().finally(() => inflight.delete(fullKey));
    inflight.set(fullKey, promise);
    return promise;
  }

  /** Strict: logs with the `[lms]` prefix and rethrows as CrmError. */
  async function strict<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      const crmErr = err instanceof CrmError ? err : new CrmError('bad_response', `CRM ${what} failed: ${(err as Error)?.message ?? err}`);
      const level = crmErr.reason === 'not_found' ? 'warn' : 'error';
      log[level](`[lms] CRM ${what} failed (${crmErr.reason}): ${crmErr.message}`);
      throw crmErr;
    }
  }

  /** Optional: null on any failure, so a screen can degrade. */
  async function orNull<T>(what: string, run: () => Promise<T>): Promise<T | null> {
    try {
      return await run();
    } catch (err) {
      const reason = err instanceof CrmError ? err.reason : 'error';
      // An unknown id is an expected answer; anything else is worth a warning.
      if (reason !== 'not_found') log.warn(`[lms] CRM ${what} unavailable (${reason}): ${(err as Error)?.message ?? err}`);
      return null;
    }
  }

  /** Cache key from slug and arguments; each part encoded so `:` inside an id cannot collide. */
  const key = (...parts: string[]) => parts.map(encodeURIComponent).join(':');

  // Loads shared by the strict and optional variants (same cache key, same in-flight call).
  const loadContact = (slug: string, id: string) => {
    checkSlug(slug);
    const path = `/api/lms/contact/${seg(id)}`;
    return cached(key(slug, 'contact', id), CRM_CACHE_TTL.contact, contactSchema, () => callTenant(slug, 'GET', path, contactSchema));
  };
  const loadStudent = (slug: string, contactId: string) => {
    checkSlug(slug);
    const path = `/api/lms/student/${seg(contactId)}`;
    return cached(key(slug, 'student', contactId), CRM_CACHE_TTL.student, studentSchema, () => callTenant(slug, 'GET', path, studentSchema));
  };
  const loadUser = (slug: string, id: string) => {
    checkSlug(slug);
    const path = `/api/lms/user/${seg(id)}`;
    return cached(key(slug, 'user', id), CRM_CACHE_TTL.user, staffUserSchema, () => callTenant(slug, 'GET', path, staffUserSchema));
  };

  const fullName = (p: { firstName: string | null; lastName: string | null } | null) =>
    p
      ? [p.firstName, p.lastName]
          .map((s) => s?.trim())
          .filter(Boolean)
          .join(' ') || null
      : null;

  return {
    getContact: (slug, id) => strict(`contact ${id}`, () => loadContact(slug, id)),
    getContactOrNull: (slug, id) => orNull(`contact ${id}`, () => loadContact(slug, id)),
    getStudent: (slug, contactId) => strict(`student ${contactId}`, () => loadStudent(slug, contactId)),
    getStudentOrNull: (slug, contactId) => orNull(`student ${contactId}`, () => loadStudent(slug, contactId)),
    getUser: (slug, id) => strict(`user ${id}`, () => loadUser(slug, id)),
    getUserOrNull: (slug, id) => orNull(`user ${id}`, () => loadUser(slug, id)),

    getStudentParents: (slug, contactId) =>
      strict(`parents of ${contactId}`, async () => callTenant(slug, 'GET', `/api/lms/student/${seg(contactId)}/parents`, z.array(parentLinkSchema))),

    getClasses: (slug, yearId) =>
      strict('classes', async () => {
        checkSlug(slug);
        const query = yearId !== undefined ? `?${new URLSearchParams({ yearId })}` : '';
        const schema = z.array(classSchema);
        return cached(key(slug, 'classes', yearId ?? ''), CRM_CACHE_TTL.classes, schema, () => callTenant(slug, 'GET', `/api/lms/classes${query}`, schema));
      }),

    getSectionRoster: (slug, sectionId) =>
      strict(`roster of ${sectionId}`, async () => callTenant(slug, 'GET', `/api/lms/sections/${seg(sectionId)}/students`, z.array(rosterEntrySchema))),

    getFeeStatus: (slug, studentId) => strict(`fee status of ${studentId}`, async () => callTenant(slug, 'GET', `/api/lms/students/${seg(studentId)}/fee-status`, feeStatusSchema)),

    getAttendance: (slug, studentId, from, to) =>
      strict(`attendance of ${studentId}`, async () => {
        checkSlug(slug);
        const path = `/api/lms/students/${seg(studentId)}/attendance?${new URLSearchParams({ from, to })}`;
        return cached(key(slug, 'attendance', studentId, from, to), CRM_CACHE_TTL.attendance, attendanceSchema, () => callTenant(slug, 'GET', path, attendanceSchema));
      }),

    getParentChildren: (slug, parentContactId) =>
      strict(`children of ${parentContactId}`, async () => callTenant(slug, 'GET', `/api/lms/parent/${seg(parentContactId)}/children`, z.array(childSchema))),

    pushCompletion: (slug, body: CompletionPush) =>
      strict(`completion push of ${body.studentContactId}/${body.courseId}`, async () => {
        const payload: CompletionPush = {
          studentContactId: body.studentContactId,
          courseId: body.courseId,
          courseTitle: body.courseTitle,
          completedAt: body.completedAt,
          finalScore: body.finalScore,
          certificateNumber: body.certificateNumber,
        };
        // Spec 4.10 leaves the answer's data open, not its envelope: any data with `error: null`
        // (or a bodiless 204) is an acceptance. A 2xx that is not the envelope (a proxy's or a
        // maintenance page) is a failure the outbox retries; pushing twice is safer than losing it.
        await callTenant(slug, 'POST', '/api/lms/completion', z.unknown(), payload, true);
      }),

    lookupInstitution: (institutionId) =>
      strict(`institution lookup ${institutionId}`, async (): Promise<CrmInstitution | null> => {
        if (!opts.addressing) throw new CrmError('not_configured', 'CRM address is not configured (CRM_BASE_DOMAIN or CRM_URL)');
        const { protocol, baseDomain } = opts.addressing;
        // The bare parent domain, unauthenticated, no envelope: the key never leaves for it.
        const url = `${protocol}://${baseDomain}/api/portal/institutions/${seg(institutionId)}`;
        try {
          return await cached(key('', 'institution', institutionId), CRM_CACHE_TTL.institution, institutionLookupSchema, async () => {
            const res = await exchange('GET', url, { accept: 'application/json' });
            if (res.status === 404) throw new CrmError('not_found', `CRM has no institution ${institutionId}`, 404);
            if (res.status < 200 || res.status > 299) {
              throw new CrmError('http_error', `CRM institution lookup answered ${res.status}`, res.status);
            }
            const parsed = institutionLookupSchema.safeParse(res.json);
            if (!parsed.success) throw new CrmError('bad_response', 'CRM institution lookup has an unexpected shape', res.status);
            return parsed.data;
          });
        } catch (err) {
          if (err instanceof CrmError && err.reason === 'not_found') return null;
          throw err;
        }
      }),

    displayNameOrNull: async (slug, personId) => {
      const contactName = fullName(await orNull(`contact ${personId}`, () => loadContact(slug, personId)));
      if (contactName) return contactName;
      return fullName(await orNull(`user ${personId}`, () => loadUser(slug, personId)));
    },

    close: async () => {
      await agent.close();
      await opts.cache.close?.();
    },
  };

  function networkError(err: unknown, method: string, url: string): CrmError {
    const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string } };
    const target = `${method} ${new URL(url).host}${new URL(url).pathname}`;
    const timeoutCodes = ['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'];
    if (e?.name === 'TimeoutError' || e?.name === 'AbortError' || timeoutCodes.includes(e?.code ?? '')) {
      return new CrmError('timeout', `CRM ${target} timed out`);
    }
    return new CrmError('unreachable', `CRM ${target} unreachable: ${e?.code ?? e?.cause?.code ?? e?.message ?? String(err)}`);
  }
}

/** Reads a response body as text, refusing more than MAX_RESPONSE_BYTES. */
async function readCapped(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_RESPONSE_BYTES) {
      body.destroy();
      throw new CrmError('bad_response', `CRM response larger than ${MAX_RESPONSE_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
