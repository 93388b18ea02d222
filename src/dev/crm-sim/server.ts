import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { DEV_CRM_API_KEY } from '../../config.js';
import type { CompletionPush } from '../../platform/crm/types.js';
import { addStudents, attendanceFor, crmFixtures, findContact, findStudent, parentChildren, sectionRoster, type InstitutionFixtures } from './fixtures.js';

/**
 * CRM simulator (DESIGN.md §5): the spec 4.10 surface over real HTTP, with host-based tenant
 * routing, the bearer check, the envelope, fixture data, a record of what it received and
 * fault switches for tests.
 */

/**
 * - `down`: destroy the socket without answering (the client sees a connection reset);
 * - `slow`: answer after `delayMs` (default 3000);
 * - `error500`: answer 500 in the envelope;
 * - `malformed`: answer 200 with a body that is not JSON;
 * - `badshape`: answer 200 with a valid envelope whose data has the wrong shape.
 */
export type CrmSimFault = 'down' | 'slow' | 'error500' | 'malformed' | 'badshape';

export interface CrmSimFaultOptions {
  /** Delay of the `slow` fault, in milliseconds. */
  delayMs?: number;
  /** Only requests whose path starts with this prefix are faulted (default: all). */
  pathPrefix?: string;
}

export interface CrmSimRequest {
  method: string;
  host: string;
  /** Path with query string, exactly as received (still percent-encoded). */
  path: string;
  headers: IncomingHttpHeaders;
}

export interface CrmSimCompletion {
  slug: string;
  body: CompletionPush;
  receivedAt: string;
}

export interface CrmSim {
  port: number;
  /** Parent domain of the tenants, with the port, e.g. `crm.localhost:4010`. */
  baseDomain: string;
  protocol: 'http';
  apiKey: string;
  /** Working copy of the fixtures by institution id; tests may change it (e.g. a fee status). */
  data: Record<string, InstitutionFixtures>;
  setFault(fault: CrmSimFault | null, opts?: CrmSimFaultOptions): void;
  completions: CrmSimCompletion[];
  requests: CrmSimRequest[];
  /** Clears `completions` and `requests` (not the fault, not `data`). */
  resetRecords(): void;
  close(): Promise<void>;
}

export interface CrmSimOptions {
  port?: number;
  host?: string;
  apiKey?: string;
  /** Host name of the parent domain; the port is appended unless given. Default `crm.localhost`. */
  baseDomain?: string;
  /** Students per institution (at least the fixed 30; the extra ones come from `addStudents`). */
  students?: number;
}

const DEFAULT_SLOW_MS = 3000;
/**
 * The control path: `PUT /_sim/fault` with the API key and `{fault, delayMs?, pathPrefix?}`
 * (`fault: null` clears it) sets the fault switch from outside the process, `GET` reads it. It
 * is never faulted itself and is not recorded.
 */
export const CRM_SIM_CONTROL_PATH = '/_sim/fault';
const faultBody = z.object({
  fault: z.enum(['down', 'slow', 'error500', 'malformed', 'badshape']).nullable(),
  delayMs: z.number().int().min(0).max(600_000).optional(),
  pathPrefix: z.string().max(200).optional(),
});
const MAX_BODY_BYTES = 1_048_576;

const completionSchema = z.object({
  studentContactId: z.string().min(1),
  courseId: z.string().min(1),
  courseTitle: z.string(),
  completedAt: z.string().datetime({ offset: true }),
  finalScore: z.number().nullable(),
  certificateNumber: z.string(),
});
const isoDate = /^\d{4}-\d{2}-\d{2}$/;

class HttpFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export async function startCrmSim(opts: CrmSimOptions = {}): Promise<CrmSim> {
  const apiKey = opts.apiKey ?? DEV_CRM_API_KEY;
  const host = opts.host ?? '127.0.0.1';
  const data: Record<string, InstitutionFixtures> = structuredClone(crmFixtures);
  if (opts.students) for (const f of Object.values(data)) addStudents(f, opts.students);
  const requests: CrmSimRequest[] = [];
  const completions: CrmSimCompletion[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let fault: { kind: CrmSimFault; delayMs: number; pathPrefix: string } | null = null;
  let baseDomain = '';

  const bySlug = (slug: string) => Object.values(data).find((f) => f.institution.slug === slug);

  const setFault: CrmSim['setFault'] = (kind, o = {}) => {
    fault = kind ? { kind, delayMs: o.delayMs ?? DEFAULT_SLOW_MS, pathPrefix: o.pathPrefix ?? '' } : null;
  };

  async function control(req: IncomingMessage, res: ServerResponse) {
    if (!bearerMatches(req.headers.authorization, apiKey)) throw new HttpFailure(401, 'AUTH_REQUIRED', 'Invalid API key');
    if (req.method === 'PUT') {
      const body = faultBody.safeParse(await readJson(req));
      if (!body.success) throw new HttpFailure(400, 'VALIDATION_ERROR', body.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
      setFault(body.data.fault, body.data);
    } else if (req.method !== 'GET') throw new HttpFailure(404, 'NOT_FOUND', 'Route not found');
    sendEnvelope(res, 200, { fault: fault?.kind ?? null, delayMs: fault?.delayMs ?? null, pathPrefix: fault?.pathPrefix ?? null }, null);
  }

  const server = createServer((req, res) => {
    const hostHeader = String(req.headers.host ?? '').toLowerCase();
    const path = req.url ?? '/';
    if (path === CRM_SIM_CONTROL_PATH) {
      control(req, res).catch((err: unknown) => {
        if (err instanceof HttpFailure) return sendEnvelope(res, err.status, null, { code: err.code, message: err.message });
        sendEnvelope(res, 500, null, { code: 'INTERNAL_ERROR', message: String(err) });
      });
      return;
    }
    requests.push({ method: req.method ?? 'GET', host: hostHeader, path, headers: { ...req.headers } });

    const active = fault && path.startsWith(fault.pathPrefix) ? fault : null;
    if (active?.kind === 'down') {
      req.socket.destroy();
      return;
    }
    const answer = () => {
      if (res.destroyed || res.writableEnded) return;
      if (active?.kind === 'error500') return sendEnvelope(res, 500, null, { code: 'INTERNAL_ERROR', message: 'Simulated failure' });
      if (active?.kind === 'malformed') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('<html>this is not json');
        return;
      }
      if (active?.kind === 'badshape') return sendEnvelope(res, 200, { unexpected: true, id: 42 }, null);
      handle(req, res, hostHeader).catch((err: unknown) => {
        if (err instanceof HttpFailure) return sendEnvelope(res, err.status, null, { code: err.code, message: err.message });
        sendEnvelope(res, 500, null, { code: 'INTERNAL_ERROR', message: String(err) });
      });
    };
    if (active?.kind === 'slow') {
      const timer = setTimeout(() => {
        timers.delete(timer);
        answer();
      }, active.delayMs);
      timers.add(timer);
    } else {
      answer();
    }
  });

  async function handle(req: IncomingMessage, res: ServerResponse, hostHeader: string): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sim.invalid');
    const segments = url.pathname.split('/').slice(1).map(decodeSegment);
    const reqHost = stripPort(hostHeader);
    const baseHost = stripPort(baseDomain);

    // The bare parent domain only answers the unauthenticated institution lookup, without envelope.
    if (reqHost === baseHost) {
      if (req.method === 'GET' && segments.length === 4 && segments[0] === 'api' && segments[1] === 'portal' && segments[2] === 'institutions') {
        const inst = data[segments[3]]?.institution;
        if (inst) return sendJson(res, 200, { id: inst.id, slug: inst.slug, name: inst.name });
      }
      return sendJson(res, 404, { message: 'Not found' });
    }

    const slug = reqHost.endsWith(`.${baseHost}`) ? reqHost.slice(0, -(baseHost.length + 1)) : null;
    const tenant = slug && !slug.includes('.') ? bySlug(slug) : undefined;
    if (!slug || !tenant) throw new HttpFailure(404, 'NOT_FOUND', 'Unknown institution');
    if (segments[0] !== 'api' || segments[1] !== 'lms') throw new HttpFailure(404, 'NOT_FOUND', 'Not found');
    if (!bearerMatches(req.headers.authorization, apiKey)) throw new HttpFailure(401, 'AUTH_REQUIRED', 'Invalid API key');
    // Redundant with the host (spec 5.3), but a mismatch means the caller is confused.
    const slugHeader = req.headers['x-institution-slug'];
    if (slugHeader !== undefined && slugHeader !== slug) {
      throw new HttpFailure(400, 'VALIDATION_ERROR', 'x-institution-slug does not match the host');
    }

    const [, , resource, id, sub, ...rest] = segments;
    const method = req.method ?? 'GET';
    const notFound = (what: string) => new HttpFailure(404, 'NOT_FOUND', `${what} not found`);
    const ok = (payload: unknown) => sendEnvelope(res, 200, payload, null);
    if (rest.length > 0) throw notFound('Route');

    if (method === 'POST' && resource === 'completion' && id === undefined) {
      const body = completionSchema.safeParse(await readJson(req));
      if (!body.success) throw new HttpFailure(400, 'VALIDATION_ERROR', body.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
      completions.push({ slug, body: body.data, receivedAt: new Date().toISOString() });
      return ok({ received: true });
    }
    if (method !== 'GET') throw notFound('Route');

    switch (resource) {
      case 'contact': {
        const contact = id !== undefined && sub === undefined ? findContact(tenant, id) : undefined;
        if (!contact) throw notFound('Contact');
        return ok(contact);
      }
      case 'student': {
        // Keyed by Contact id (spec 4.10).
        const student = id !== undefined ? tenant.students.find((s) => s.contact.id === id) : undefined;
        if (!student) throw notFound('Student');
        if (sub === undefined) return ok(student.student);
        if (sub === 'parents') return ok(student.parents);
        throw notFound('Route');
      }
      case 'user': {
        const user = id !== undefined && sub === undefined ? tenant.staff.find((u) => u.id === id) : undefined;
        if (!user) throw notFound('User');
        return ok(user);
      }
      case 'classes': {
        if (id !== undefined) throw notFound('Route');
        const yearId = url.searchParams.get('yearId');
        return ok(yearId ? tenant.classes.filter((c) => String(c.year) === yearId) : tenant.classes);
      }
      case 'sections': {
        const roster = id !== undefined && sub === 'students' ? sectionRoster(tenant, id) : undefined;
        if (!roster) throw notFound('Section');
        return ok(roster);
      }
      case 'students': {
        // The service stores Contact ids; the student record id is accepted as well.
        const student = id !== undefined ? findStudent(tenant, id) : undefined;
        if (!student) throw notFound('Student');
        if (sub === 'fee-status') return ok(student.feeStatus);
        if (sub === 'attendance') {
          const from = url.searchParams.get('from') ?? '';
          const to = url.searchParams.get('to') ?? '';
          if (!isoDate.test(from) || !isoDate.test(to) || from > to) {
            throw new HttpFailure(400, 'VALIDATION_ERROR', 'from and to must be YYYY-MM-DD dates, from <= to');
          }
          return ok(attendanceFor(student, from, to));
        }
        throw notFound('Route');
      }
      case 'parent': {
        const children = id !== undefined && sub === 'children' ? parentChildren(tenant, id) : undefined;
        if (!children) throw notFound('Parent');
        return ok(children);
      }
      default:
        throw notFound('Route');
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const domainName = (opts.baseDomain ?? 'crm.localhost').toLowerCase();
  baseDomain = domainName.includes(':') ? domainName : `${domainName}:${port}`;

  return {
    port,
    baseDomain,
    protocol: 'http',
    apiKey,
    data,
    completions,
    requests,
    setFault,
    resetRecords() {
      requests.length = 0;
      completions.length = 0;
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      // Keep-alive sockets of clients would otherwise hold close() open.
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function stripPort(host: string): string {
  return host.replace(/:\d+$/, '');
}

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function bearerMatches(header: string | undefined, apiKey: string): boolean {
  const match = /^Bearer (.+)$/.exec(header ?? '');
  if (!match) return false;
  const given = Buffer.from(match[1]);
  const expected = Buffer.from(apiKey);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function sendJson(res: ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendEnvelope(res: ServerResponse, status: number, data: unknown, error: { code: string; message: string } | null) {
  if (res.destroyed || res.writableEnded) return;
  sendJson(res, status, { data, error });
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpFailure(413, 'PAYLOAD_TOO_LARGE', 'Body too large');
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpFailure(400, 'VALIDATION_ERROR', 'Body is not JSON');
  }
}
