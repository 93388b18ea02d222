import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/platform/clock.js';
import { MemoryCrmCache, RedisCrmCache } from '../../../src/platform/crm/cache.js';
import { createCrmClient, CrmError, type CrmClientOptions } from '../../../src/platform/crm/client.js';
import type { CompletionPush } from '../../../src/platform/crm/types.js';
import { startCrmSim, type CrmSim } from '../../../src/dev/crm-sim/server.js';
import {
  CRM_YEAR_ID,
  DEMO_ADMIN_ID,
  DEMO_INSTITUTION,
  DEMO_PARENT_ID,
  DEMO_SECTION_ID,
  DEMO_STUDENT_ID,
  DEMO_TEACHER_ID,
  NORTH_STUDENT_ID,
  OVERDUE_STUDENT_ID,
  SECOND_INSTITUTION,
  demoFixtures,
} from '../../../src/dev/crm-sim/fixtures.js';

let sim: CrmSim;
const clients: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  sim = await startCrmSim({ port: 0, apiKey: 'test-crm-key' });
});
afterAll(async () => {
  await sim.close();
});
beforeEach(() => {
  sim.setFault(null);
  sim.resetRecords();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

interface Harness {
  crm: ReturnType<typeof createCrmClient>;
  clock: ManualClock;
  logs: { level: string; line: string }[];
}

function makeClient(overrides: Partial<CrmClientOptions> = {}): Harness {
  const clock = (overrides.clock as ManualClock | undefined) ?? new ManualClock('2026-03-02T09:00:00.000Z');
  const logs: Harness['logs'] = [];
  const capture =
    (level: string) =>
    (...args: unknown[]) =>
      logs.push({ level, line: args.map(String).join(' ') });
  const crm = createCrmClient({
    addressing: { protocol: sim.protocol, baseDomain: sim.baseDomain },
    apiKey: sim.apiKey,
    // Generous: CI machines are small, and timeouts have their own test.
    timeoutMs: 5000,
    connectTimeoutMs: 2000,
    cache: new MemoryCrmCache(clock),
    clock,
    log: { info: capture('info'), warn: capture('warn'), error: capture('error') },
    ...overrides,
  });
  clients.push(crm);
  return { crm, clock, logs };
}

/** Requests the simulator received whose path starts with `prefix`. */
const seen = (prefix: string) => sim.requests.filter((r) => r.path.startsWith(prefix));

async function rejection(p: Promise<unknown>): Promise<CrmError> {
  const err = await p.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CrmError);
  return err as CrmError;
}

describe('tenant addressing and headers', () => {
  it('calls {protocol}://{slug}.{baseDomain}{path} with the key, slug and content type', async () => {
    const { crm } = makeClient();
    const contact = await crm.getContact('demo', DEMO_STUDENT_ID);
    expect(contact).toEqual(demoFixtures.students[0].contact);

    expect(sim.requests).toHaveLength(1);
    const [req] = sim.requests;
    expect(req.method).toBe('GET');
    expect(req.host).toBe(`demo.${sim.baseDomain}`);
    expect(req.path).toBe(`/api/lms/contact/${DEMO_STUDENT_ID}`);
    expect(req.headers.authorization).toBe('Bearer test-crm-key');
    expect(req.headers['x-institution-slug']).toBe('demo');
    expect(req.headers['content-type']).toBe('application/json');
  });

  it('routes by slug: each tenant sees only its own records', async () => {
    const { crm } = makeClient();
    expect((await crm.getContact('northside', NORTH_STUDENT_ID)).id).toBe(NORTH_STUDENT_ID);
    expect(sim.requests[0].host).toBe(`northside.${sim.baseDomain}`);
    const err = await rejection(crm.getContact('northside', DEMO_STUDENT_ID));
    expect(err.reason).toBe('not_found');
    expect(err.upstreamStatus).toBe(404);
  });

  it('an unknown slug reaches a tenant the CRM does not know: 404', async () => {
    const { crm } = makeClient();
    const err = await rejection(crm.getContact('nosuchschool', DEMO_STUDENT_ID));
    expect(err.reason).toBe('not_found');
    expect(sim.requests[0].host).toBe(`nosuchschool.${sim.baseDomain}`);
  });

  it('a wrong key is an error (401 from the CRM)', async () => {
    const { crm } = makeClient({ apiKey: 'not-the-key' });
    const err = await rejection(crm.getContact('demo', DEMO_STUDENT_ID));
    expect(err.reason).toBe('http_error');
    expect(err.upstreamStatus).toBe(401);
  });

  it('reads every spec 4.10 record from the fixtures', async () => {
    const { crm } = makeClient();
    const student = await crm.getStudent('demo', DEMO_STUDENT_ID);
    expect(student.contactId).toBe(DEMO_STUDENT_ID);
    expect(student.currentEnrolment?.sectionId).toBe(DEMO_SECTION_ID);
    expect((await crm.getUser('demo', DEMO_TEACHER_ID)).role).toBe('TEACHER');
    expect((await crm.getStudentParents('demo', DEMO_STUDENT_ID)).map((p) => p.parentContactId)).toContain(DEMO_PARENT_ID);
    expect((await crm.getClasses('demo', CRM_YEAR_ID)).length).toBe(3);
    expect((await crm.getSectionRoster('demo', DEMO_SECTION_ID)).map((r) => r.studentContactId)).toContain(DEMO_STUDENT_ID);
    expect((await crm.getFeeStatus('demo', OVERDUE_STUDENT_ID)).status).toBe('OVERDUE');
    const attendance = await crm.getAttendance('demo', DEMO_STUDENT_ID, '2026-02-02', '2026-02-06');
    expect(attendance.records.map((r) => r.date)).toEqual(['2026-02-02', '2026-02-03', '2026-02-04', '2026-02-05', '2026-02-06']);
    expect(seen('/api/lms/students/')[0].path).toBe(`/api/lms/students/${OVERDUE_STUDENT_ID}/fee-status`);
    expect(seen(`/api/lms/students/${DEMO_STUDENT_ID}/attendance`)[0].path).toBe(`/api/lms/students/${DEMO_STUDENT_ID}/attendance?from=2026-02-02&to=2026-02-06`);
    expect((await crm.getParentChildren('demo', DEMO_PARENT_ID)).length).toBe(2);
  });
});

describe('refusals before any network call', () => {
  it('refuses when the API key is not configured', async () => {
    const { crm } = makeClient({ apiKey: undefined });
    const err = await rejection(crm.getContact('demo', DEMO_STUDENT_ID));
    expect(err.reason).toBe('not_configured');
    expect(err.status).toBe(503);
    expect(await crm.getContactOrNull('demo', DEMO_STUDENT_ID)).toBeNull();
    await rejection(crm.pushCompletion('demo', completion()));
    expect(sim.requests).toHaveLength(0);
  });

  it('refuses when the CRM address is not configured', async () => {
    const { crm } = makeClient({ addressing: undefined });
    expect((await rejection(crm.getFeeStatus('demo', DEMO_STUDENT_ID))).reason).toBe('not_configured');
    expect((await rejection(crm.lookupInstitution(DEMO_INSTITUTION.id))).reason).toBe('not_configured');
    expect(sim.requests).toHaveLength(0);
  });

  it.each(['evil.com/x', 'a..b', 'Demo', 'DEMO', '', '-demo', 'demo-', 'demo.', 'de mo', 'demo@x', 'a'.repeat(64)])('refuses slug %j', async (slug) => {
    const { crm } = makeClient();
    const err = await rejection(crm.getContact(slug, DEMO_STUDENT_ID));
    expect(err.reason).toBe('invalid_slug');
    expect((await rejection(crm.getFeeStatus(slug, DEMO_STUDENT_ID))).reason).toBe('invalid_slug');
    expect((await rejection(crm.pushCompletion(slug, completion()))).reason).toBe('invalid_slug');
    expect(await crm.getStudentOrNull(slug, DEMO_STUDENT_ID)).toBeNull();
    expect(sim.requests).toHaveLength(0);
  });

  it('accepts a 63-character slug (the longest DNS label)', async () => {
    const { crm } = makeClient();
    // Valid label, unknown tenant: the request is made and the CRM answers 404.
    expect(await crm.getContactOrNull('a'.repeat(63), DEMO_STUDENT_ID)).toBeNull();
    expect(sim.requests).toHaveLength(1);
  });
});

describe('path ids are percent-encoded', () => {
  it('an id with a slash stays one segment', async () => {
    const { crm } = makeClient();
    // Unencoded, this would reach the parents list of student 01.
    expect(await crm.getStudentOrNull('demo', `${DEMO_STUDENT_ID}/parents`)).toBeNull();
    expect(sim.requests.map((r) => r.path)).toEqual([`/api/lms/student/${DEMO_STUDENT_ID}%2Fparents`]);
  });

  it('query and fragment characters are encoded, not interpreted', async () => {
    const { crm } = makeClient();
    expect(await crm.getContactOrNull('demo', 'a b?x=1#frag&y')).toBeNull();
    expect(sim.requests[0].path).toBe('/api/lms/contact/a%20b%3Fx%3D1%23frag%26y');
  });

  it('dot segments are refused without a request', async () => {
    const { crm } = makeClient();
    for (const id of ['..', '.', '']) {
      expect((await rejection(crm.getUser('demo', id))).reason).toBe('invalid_id');
    }
    expect(sim.requests).toHaveLength(0);
  });
});

describe('cache windows (spec 4.10 table)', () => {
  it('contact: served from cache for 300 s, then fetched again', async () => {
    const { crm, clock } = makeClient();
    await crm.getContact('demo', DEMO_STUDENT_ID);
    await crm.getContactOrNull('demo', DEMO_STUDENT_ID);
    expect(seen('/api/lms/contact/')).toHaveLength(1);
    clock.advance(299_000);
    await crm.getContact('demo', DEMO_STUDENT_ID);
    expect(seen('/api/lms/contact/')).toHaveLength(1);
    clock.advance(1_000);
    await crm.getContact('demo', DEMO_STUDENT_ID);
    expect(seen('/api/lms/contact/')).toHaveLength(2);
  });

  it('classes: 600 s, keyed by year', async () => {
    const { crm, clock } = makeClient();
    await crm.getClasses('demo', CRM_YEAR_ID);
    clock.advance(301_000);
    await crm.getClasses('demo', CRM_YEAR_ID);
    expect(seen('/api/lms/classes')).toHaveLength(1);
    expect(await crm.getClasses('demo', '1999-2000')).toEqual([]);
    expect(seen('/api/lms/classes')).toHaveLength(2);
    clock.advance(300_000);
    await crm.getClasses('demo', CRM_YEAR_ID);
    expect(seen('/api/lms/classes')).toHaveLength(3);
  });

  it.each([
    ['student', '/api/lms/student/', (h: Harness) => h.crm.getStudent('demo', DEMO_STUDENT_ID)],
    ['user', '/api/lms/user/', (h: Harness) => h.crm.getUser('demo', DEMO_ADMIN_ID)],
    ['attendance', '/api/lms/students/', (h: Harness) => h.crm.getAttendance('demo', DEMO_STUDENT_ID, '2026-02-01', '2026-02-28')],
  ])('%s: 300 s', async (_name, prefix, call) => {
    const h = makeClient();
    await call(h);
    h.clock.advance(299_999);
    await call(h);
    expect(seen(prefix)).toHaveLength(1);
    h.clock.advance(1);
    await call(h);
    expect(seen(prefix)).toHaveLength(2);
  });

  it('keys include the slug and every argument', async () => {
    const { crm } = makeClient();
    const demo = await crm.getClasses('demo');
    const north = await crm.getClasses('northside');
    expect(demo[0].id).not.toBe(north[0].id);
    await crm.getAttendance('demo', DEMO_STUDENT_ID, '2026-02-01', '2026-02-10');
    await crm.getAttendance('demo', DEMO_STUDENT_ID, '2026-02-01', '2026-02-11');
    expect(seen('/api/lms/classes')).toHaveLength(2);
    expect(seen('/api/lms/students/')).toHaveLength(2);
  });

  it.each([
    ['parents', (h: Harness) => h.crm.getStudentParents('demo', DEMO_STUDENT_ID)],
    ['roster', (h: Harness) => h.crm.getSectionRoster('demo', DEMO_SECTION_ID)],
    ['fee status', (h: Harness) => h.crm.getFeeStatus('demo', DEMO_STUDENT_ID)],
    ['children', (h: Harness) => h.crm.getParentChildren('demo', DEMO_PARENT_ID)],
  ])('%s: never cached', async (_name, call) => {
    const h = makeClient();
    await call(h);
    await call(h);
    await call(h);
    expect(sim.requests).toHaveLength(3);
  });

  it('the CRM sees a fee status change at once', async () => {
    const { crm } = makeClient();
    expect((await crm.getFeeStatus('demo', DEMO_STUDENT_ID)).status).toBe('PAID');
    sim.data[DEMO_INSTITUTION.id].students[0].feeStatus = { status: 'OVERDUE', outstanding: 10, dueDate: '2026-01-01' };
    try {
      expect((await crm.getFeeStatus('demo', DEMO_STUDENT_ID)).status).toBe('OVERDUE');
    } finally {
      sim.data[DEMO_INSTITUTION.id].students[0].feeStatus = { status: 'PAID', outstanding: 0, dueDate: null };
    }
  });

  it('failures are not cached', async () => {
    const { crm } = makeClient();
    sim.setFault('error500');
    expect(await crm.getContactOrNull('demo', DEMO_STUDENT_ID)).toBeNull();
    sim.setFault(null);
    expect((await crm.getContact('demo', DEMO_STUDENT_ID)).id).toBe(DEMO_STUDENT_ID);
    expect(sim.requests).toHaveLength(2);
  });

  it('a caller mutating a record does not change the cached copy', async () => {
    const { crm } = makeClient();
    const first = await crm.getContact('demo', DEMO_STUDENT_ID);
    first.firstName = 'Mallory';
    expect((await crm.getContact('demo', DEMO_STUDENT_ID)).firstName).toBe(demoFixtures.students[0].contact.firstName);
  });
});

describe('single-flight', () => {
  it('concurrent identical misses share one upstream request', async () => {
    const { crm } = makeClient();
    sim.setFault('slow', { delayMs: 150 });
    const results = await Promise.all([
      crm.getContact('demo', DEMO_STUDENT_ID),
      crm.getContact('demo', DEMO_STUDENT_ID),
      crm.getContactOrNull('demo', DEMO_STUDENT_ID),
      crm.getContact('demo', DEMO_STUDENT_ID),
      crm.getContact('demo', OVERDUE_STUDENT_ID),
    ]);
    expect(results.slice(0, 4).every((r) => r?.id === DEMO_STUDENT_ID)).toBe(true);
    expect(results[4]?.id).toBe(OVERDUE_STUDENT_ID);
    expect(seen(`/api/lms/contact/${DEMO_STUDENT_ID}`)).toHaveLength(1);
    expect(seen(`/api/lms/contact/${OVERDUE_STUDENT_ID}`)).toHaveLength(1);
  });

  it('a shared failure reaches every waiter, and the next call tries again', async () => {
    const { crm } = makeClient();
    sim.setFault('error500');
    const settled = await Promise.allSettled([crm.getUser('demo', DEMO_ADMIN_ID), crm.getUser('demo', DEMO_ADMIN_ID)]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    expect(sim.requests).toHaveLength(1);
    sim.setFault(null);
    expect((await crm.getUser('demo', DEMO_ADMIN_ID)).id).toBe(DEMO_ADMIN_ID);
    expect(sim.requests).toHaveLength(2);
  });
});

describe('failures: optional calls return null, strict calls throw CrmError with [lms] logs', () => {
  it.each([
    ['error500', 'http_error'],
    ['malformed', 'bad_response'],
    ['badshape', 'bad_response'],
    ['down', 'unreachable'],
  ] as const)('%s', async (fault, reason) => {
    const { crm, logs } = makeClient();
    sim.setFault(fault);
    expect(await crm.getContactOrNull('demo', DEMO_STUDENT_ID)).toBeNull();
    expect(await crm.getStudentOrNull('demo', DEMO_STUDENT_ID)).toBeNull();
    expect(await crm.getUserOrNull('demo', DEMO_TEACHER_ID)).toBeNull();
    expect(await crm.displayNameOrNull('demo', DEMO_STUDENT_ID)).toBeNull();
    const err = await rejection(crm.getFeeStatus('demo', DEMO_STUDENT_ID));
    expect(err.reason).toBe(reason);
    expect(err.code).toBe('BAD_GATEWAY');
    expect(err.status).toBe(502);
    expect(logs.some((l) => l.level === 'error' && l.line.startsWith('[lms] ') && l.line.includes('fee status'))).toBe(true);
    expect(logs.every((l) => l.line.startsWith('[lms] '))).toBe(true);
    // The key never appears in logs.
    expect(logs.some((l) => l.line.includes(sim.apiKey))).toBe(false);
  });

  it('timeout: a slow CRM is abandoned after timeoutMs', async () => {
    const { crm } = makeClient({ timeoutMs: 200 });
    // The simulator would answer correctly after 8 s; only a client timeout turns that into a failure.
    sim.setFault('slow', { delayMs: 8000 });
    expect(await crm.getContactOrNull('demo', DEMO_STUDENT_ID)).toBeNull();
    expect((await rejection(crm.getClasses('demo'))).reason).toBe('timeout');
    expect(seen('/api/lms/')).toHaveLength(2);
  });

  it('a fault on one endpoint leaves the others working', async () => {
    const { crm } = makeClient();
    sim.setFault('error500', { pathPrefix: '/api/lms/students/' });
    expect((await rejection(crm.getFeeStatus('demo', DEMO_STUDENT_ID))).upstreamStatus).toBe(500);
    expect((await crm.getContact('demo', DEMO_STUDENT_ID)).id).toBe(DEMO_STUDENT_ID);
  });

  it('connection refused is unreachable', async () => {
    const other = await startCrmSim({ port: 0 });
    const baseDomain = other.baseDomain;
    await other.close();
    const { crm } = makeClient({ addressing: { protocol: 'http', baseDomain } });
    expect((await rejection(crm.getContact('demo', DEMO_STUDENT_ID))).reason).toBe('unreachable');
  });
});

describe('pushCompletion', () => {
  it('POSTs the spec 4.10 body to the tenant, every time', async () => {
    const { crm } = makeClient();
    const body = completion();
    await crm.pushCompletion('demo', body);
    await crm.pushCompletion('demo', body);
    expect(sim.completions).toHaveLength(2);
    expect(sim.completions[0].slug).toBe('demo');
    expect(sim.completions[0].body).toEqual(body);
    const [req] = sim.requests;
    expect(req.method).toBe('POST');
    expect(req.host).toBe(`demo.${sim.baseDomain}`);
    expect(req.path).toBe('/api/lms/completion');
    expect(req.headers.authorization).toBe(`Bearer ${sim.apiKey}`);
  });

  it('sends only the spec fields', async () => {
    const { crm } = makeClient();
    await crm.pushCompletion('northside', { ...completion(), extra: 'leak' } as CompletionPush);
    expect(Object.keys(sim.completions[0].body).sort()).toEqual(['certificateNumber', 'completedAt', 'courseId', 'courseTitle', 'finalScore', 'studentContactId'].sort());
    expect(sim.completions[0].slug).toBe('northside');
  });

  it('throws on failure so the outbox can retry', async () => {
    const { crm } = makeClient();
    sim.setFault('error500');
    expect((await rejection(crm.pushCompletion('demo', completion()))).upstreamStatus).toBe(500);
    sim.setFault('down');
    expect((await rejection(crm.pushCompletion('demo', completion()))).reason).toBe('unreachable');
    expect(sim.completions).toHaveLength(0);
  });

  it('a 2xx is an acceptance only as the envelope with error null, or a bodiless 204', async () => {
    // A CRM (or what stands in front of it) answering the push with each status and body.
    let answer: { status: number; type?: string; body: string } = { status: 200, body: '' };
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(answer.status, answer.type ? { 'content-type': answer.type } : {});
        res.end(answer.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const { crm } = makeClient({ addressing: { protocol: 'http', baseDomain: `crm.localhost:${port}` } });
      const push = () => crm.pushCompletion('demo', completion());
      for (const refused of [
        { status: 200, type: 'text/html', body: '<html>Down for maintenance</html>' },
        { status: 200, type: 'application/json', body: '{"ok":true}' },
        { status: 200, type: 'application/json', body: '' },
        { status: 202, type: 'application/json', body: '[]' },
      ]) {
        answer = refused;
        const err = await rejection(push());
        expect([err.reason, err.upstreamStatus]).toEqual(['bad_response', refused.status]);
      }
      answer = { status: 200, type: 'application/json', body: '{"data":null,"error":{"code":"INTERNAL_ERROR","message":"no"}}' };
      expect((await rejection(push())).reason).toBe('http_error');
      for (const accepted of [
        { status: 200, type: 'application/json', body: '{"data":{"received":true},"error":null}' },
        { status: 201, type: 'application/json', body: '{"data":null,"error":null}' },
        { status: 204, body: '' },
      ]) {
        answer = accepted;
        await expect(push()).resolves.toBeUndefined();
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('an invalid body rejected by the CRM (400) is an error', async () => {
    const { crm } = makeClient();
    const err = await rejection(crm.pushCompletion('demo', { ...completion(), completedAt: 'yesterday' }));
    expect(err.upstreamStatus).toBe(400);
  });
});

describe('lookupInstitution', () => {
  it('asks the bare base domain, without the key, and reads the un-enveloped record', async () => {
    const { crm } = makeClient();
    expect(await crm.lookupInstitution(SECOND_INSTITUTION.id)).toEqual(SECOND_INSTITUTION);
    const [req] = sim.requests;
    expect(req.host).toBe(sim.baseDomain);
    expect(req.path).toBe(`/api/portal/institutions/${SECOND_INSTITUTION.id}`);
    expect(req.headers.authorization).toBeUndefined();
  });

  it('404 → null', async () => {
    const { crm } = makeClient();
    expect(await crm.lookupInstitution('inst_missing')).toBeNull();
    expect(await crm.lookupInstitution('inst/demo')).toBeNull();
    expect(sim.requests[1].path).toBe('/api/portal/institutions/inst%2Fdemo');
  });

  it('other failures throw', async () => {
    const { crm } = makeClient();
    sim.setFault('error500');
    expect((await rejection(crm.lookupInstitution(DEMO_INSTITUTION.id))).upstreamStatus).toBe(500);
  });
});

describe('displayNameOrNull', () => {
  it('uses the contact, then the staff user, else null', async () => {
    const { crm } = makeClient();
    const s = demoFixtures.students[0].contact;
    expect(await crm.displayNameOrNull('demo', DEMO_STUDENT_ID)).toBe(`${s.firstName} ${s.lastName}`);
    expect(await crm.displayNameOrNull('demo', DEMO_TEACHER_ID)).toBe(`${demoFixtures.teacher.firstName} ${demoFixtures.teacher.lastName}`);
    expect(await crm.displayNameOrNull('demo', 'c_nobody')).toBeNull();
    expect(await crm.displayNameOrNull('bad.slug', DEMO_STUDENT_ID)).toBeNull();
  });
});

describe('MemoryCrmCache', () => {
  it('expires by the injected clock', async () => {
    const clock = new ManualClock('2026-01-01T00:00:00Z');
    const cache = new MemoryCrmCache(clock);
    await cache.set('k', { a: 1 }, 10);
    clock.advance(9_999);
    expect(await cache.get('k')).toEqual({ a: 1 });
    clock.advance(1);
    expect(await cache.get('k')).toBeUndefined();
  });

  it('evicts the least recently used entry past max', async () => {
    const cache = new MemoryCrmCache(new ManualClock(), 2);
    await cache.set('a', 1, 60);
    await cache.set('b', 2, 60);
    await cache.get('a');
    await cache.set('c', 3, 60);
    expect(await cache.get('b')).toBeUndefined();
    expect(await cache.get('a')).toBe(1);
  });
});

describe.runIf(Boolean(process.env.REDIS_URL))('RedisCrmCache (REDIS_URL)', () => {
  const prefix = `lms-test:${randomUUID()}:`;
  let cache: RedisCrmCache;
  const clock = new ManualClock('2026-03-02T09:00:00.000Z');

  beforeAll(async () => {
    cache = new RedisCrmCache(process.env.REDIS_URL!, clock, { prefix });
    expect(await cache.ready()).toBe(true);
  });
  afterAll(async () => {
    await cache.close?.();
  });

  it('stores JSON values and expires them by the injected clock', async () => {
    await cache.set('k1', { id: 'x', list: [1, 2] }, 300);
    expect(await cache.get('k1')).toEqual({ id: 'x', list: [1, 2] });
    clock.advance(300_000);
    expect(await cache.get('k1')).toBeUndefined();
    expect(await cache.get('never-set')).toBeUndefined();
  });

  it('backs the client: one request within the window, shared by a second client (replica)', async () => {
    const caches = [0, 1].map(() => new RedisCrmCache(process.env.REDIS_URL!, clock, { prefix }));
    for (const c of caches) expect(await c.ready()).toBe(true);
    const a = makeClient({ clock, cache: caches[0] });
    const b = makeClient({ clock, cache: caches[1] });
    await a.crm.getContact('demo', DEMO_STUDENT_ID);
    expect((await b.crm.getContact('demo', DEMO_STUDENT_ID)).id).toBe(DEMO_STUDENT_ID);
    expect(seen('/api/lms/contact/')).toHaveLength(1);
    clock.advance(301_000);
    await b.crm.getContact('demo', DEMO_STUDENT_ID);
    expect(seen('/api/lms/contact/')).toHaveLength(2);
  });

  it('an unreachable Redis is a miss, not a failure', async () => {
    const logs: string[] = [];
    const dead = new RedisCrmCache('redis://127.0.0.1:1', clock, { prefix, log: { warn: (m: string) => logs.push(m) } });
    const { crm } = makeClient({ clock, cache: dead });
    expect((await crm.getContact('demo', DEMO_STUDENT_ID)).id).toBe(DEMO_STUDENT_ID);
    expect(logs.some((l) => l.startsWith('[lms]'))).toBe(true);
  });
});

function completion(): CompletionPush {
  return {
    studentContactId: DEMO_STUDENT_ID,
    courseId: 'course_1',
    courseTitle: 'Algebra I',
    completedAt: '2026-03-02T09:00:00.000Z',
    finalScore: 87.5,
    certificateNumber: 'CERT-2026-0001',
  };
}
