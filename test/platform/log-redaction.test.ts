/**
 * Logs carry neither signed-URL signatures nor the parameters of failed queries; LOG_LEVEL=silent
 * writes nothing and leaves request ids (x-request-id, audit rows) as they are.
 */
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { buildApp } from '../../src/app.js';
import { institutions } from '../../src/modules/institutions/institutions.tables.js';
import { auditLog } from '../../src/modules/audit/audit.tables.js';
import { DEMO_TEACHER_ID } from '../../src/dev/crm-sim/fixtures.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const SECRET_VALUE = 'private-note-text-c_secret_student_77';
let t: TestApp;
let app: FastifyInstance;
let lines: string[] = [];

const stream = new Writable({
  write(chunk, _enc, done) {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    done();
  },
});

/** A route whose failed insert carries a secret among its query parameters (a 500). */
function addFailingQuery(app: FastifyInstance) {
  app.get('/api/test/failing-query', { config: { auth: 'public' } }, async () => {
    const now = new Date();
    // A duplicate primary key: the failed insert carries the row's values as parameters.
    await t.db.insert(institutions).values({ id: 'inst_dup', settings: { note: SECRET_VALUE }, createdAt: now, updatedAt: now });
    await t.db.insert(institutions).values({ id: 'inst_dup', settings: { note: SECRET_VALUE }, createdAt: now, updatedAt: now });
    return { data: null, error: null };
  });
}

beforeAll(async () => {
  t = await createTestApp();
  app = await buildApp(t.deps, { logger: { level: 'info', stream } });
  addFailingQuery(app);
  await app.ready();
});
afterAll(async () => {
  await app.close();
  await t.close();
});

describe('log redaction', () => {
  it('replaces signed-URL signatures with [redacted] in request logs', async () => {
    lines = [];
    const key = 'inst_demo/files/00000000-logtest.txt';
    await t.deps.storage.put(key, Buffer.from('x'), 'text/plain');
    const url = new URL(await t.deps.storage.urlFor(key, 600));
    const sig = url.searchParams.get('sig')!;
    const res = await app.inject({ method: 'GET', url: `${url.pathname}${url.search}` });
    expect(res.statusCode).toBe(200);
    const log = lines.join('\n');
    expect(log).toContain('/api/files/raw/');
    expect(log).toContain('sig=[redacted]');
    expect(log).not.toContain(sig);
  });

  it('logs a failed query with its SQL but without its parameters', async () => {
    lines = [];
    const res = await app.inject({ method: 'GET', url: '/api/test/failing-query' });
    expect(res.statusCode).toBe(500);
    expect(res.json().error.code).toBe('INTERNAL_ERROR');
    const log = lines.join('\n');
    const entry = lines.map((l) => JSON.parse(l)).find((e) => e.err);
    expect(entry.err.query).toMatch(/insert into "institutions"/i);
    expect(entry.err.stack).toMatch(/\n\s+at /);
    expect(log).not.toContain(SECRET_VALUE);
    expect(log).not.toContain('inst_dup');
  });

  it('logs one line per request, when it ends: method, URL, status and time', async () => {
    lines = [];
    const res = await app.inject({ method: 'GET', url: '/healthz?probe=1', headers: { 'x-request-id': 'req-log-1' } });
    expect(res.statusCode).toBe(200);
    const entries = lines.map((l) => JSON.parse(l)).filter((e) => e.reqId === 'req-log-1');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ level: 30, msg: 'request completed', req: { method: 'GET', url: '/healthz?probe=1' }, res: { statusCode: 200 } });
    expect(entries[0].responseTime).toBeGreaterThanOrEqual(0);
  });
});

describe('LOG_LEVEL=silent', () => {
  let quiet: FastifyInstance;
  beforeAll(async () => {
    quiet = await buildApp(t.deps, { logger: { level: 'silent', stream } });
    addFailingQuery(quiet);
    await quiet.ready();
  });
  afterAll(async () => quiet.close());

  it('writes no line, not even for a 500, and still echoes and records request ids', async () => {
    lines = [];
    const failed = await quiet.inject({ method: 'GET', url: '/api/test/failing-query', headers: { 'x-request-id': 'req-quiet-1' } });
    expect(failed.statusCode).toBe(500);
    expect(failed.headers['x-request-id']).toBe('req-quiet-1');

    const token = await t.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
    const created = await quiet.inject({
      method: 'POST',
      url: '/api/courses',
      headers: { authorization: `Bearer ${token}`, 'x-request-id': 'req-quiet-2' },
      payload: { title: 'Quiet', dripMode: 'NONE' },
    });
    expect(created.statusCode).toBe(201);
    expect(created.headers['x-request-id']).toBe('req-quiet-2');
    const rows = await t.db.select().from(auditLog).where(eq(auditLog.targetId, created.json().data.id));
    expect(rows.map((r) => r.requestId)).toEqual(['req-quiet-2']);

    const generated = await quiet.inject({ method: 'GET', url: '/healthz' });
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(lines).toEqual([]);
  });
});
