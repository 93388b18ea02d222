/**
 * Logs carry neither signed-URL signatures nor the parameters of failed queries.
 */
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { institutions } from '../../src/modules/institutions/institutions.tables.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const SECRET_VALUE = 'private-note-text-c_secret_student_77';
let t: TestApp;
let app: FastifyInstance;
let lines: string[] = [];

beforeAll(async () => {
  t = await createTestApp();
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  app = await buildApp(t.deps, { logger: { level: 'info', stream } });
  app.get('/api/test/failing-query', { config: { auth: 'public' } }, async () => {
    const now = new Date();
    // A duplicate primary key: the failed insert carries the row's values as parameters.
    await t.db.insert(institutions).values({ id: 'inst_dup', settings: { note: SECRET_VALUE }, createdAt: now, updatedAt: now });
    await t.db.insert(institutions).values({ id: 'inst_dup', settings: { note: SECRET_VALUE }, createdAt: now, updatedAt: now });
    return { data: null, error: null };
  });
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
