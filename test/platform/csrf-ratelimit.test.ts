/**
 * CSRF guard of cookie-authenticated writes; refused requests count against the IP's
 * anonymous rate-limit budget; X-Forwarded-For is ignored unless TRUST_PROXY says otherwise.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectError, expectOk } from '../helpers/expect.js';

const COOKIE = '__Secure-authjs.session-token';

describe('CSRF', () => {
  let t: TestApp;
  let cookie: string;
  let bearer: string;
  beforeAll(async () => {
    t = await createTestApp({
      env: { CORS_ORIGINS: 'https://app.example.edu' },
      extraRoutes: (app) => {
        const typed = app.withTypeProvider<ZodTypeProvider>();
        for (const method of ['post', 'put', 'patch', 'delete', 'get'] as const) {
          typed[method]('/api/test/write', async () => ({ data: { ok: true }, error: null }));
        }
      },
    });
    const token = await t.token({ role: 'TEACHER', id: 'u_demo_teacher' });
    cookie = `${COOKIE}=${token}`;
    bearer = token;
  });
  afterAll(() => t.close());

  const send = (method: string, headers: Record<string, string>) => t.request(method, '/api/test/write', { headers: { cookie, ...headers } });

  it('refuses cookie writes from a foreign Origin with 403 FORBIDDEN', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      expectError(await send(method, { origin: 'https://evil.example' }), 403, 'FORBIDDEN');
    }
    expectError(await send('POST', { origin: 'null' }), 403, 'FORBIDDEN');
  });

  it('refuses a cookie write without Origin whose Sec-Fetch-Site is cross-site or same-site', async () => {
    expectError(await send('POST', { 'sec-fetch-site': 'cross-site' }), 403, 'FORBIDDEN');
    expectError(await send('POST', { 'sec-fetch-site': 'same-site' }), 403, 'FORBIDDEN');
  });

  it('accepts the service origin, CORS_ORIGINS, same-origin fetches and non-browser clients', async () => {
    expectOk(await send('POST', { origin: 'http://lms.test' }));
    expectOk(await send('POST', { origin: 'https://app.example.edu' }));
    expectOk(await send('POST', { 'sec-fetch-site': 'same-origin' }));
    expectOk(await send('POST', {}));
    // Reads are not guarded.
    expectOk(await send('GET', { origin: 'https://evil.example' }));
  });

  it('leaves bearer requests alone', async () => {
    expectOk(await t.request('POST', '/api/test/write', { token: bearer, headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' } }));
  });
});

describe('rate limits count refused requests', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      env: { RATE_LIMIT_READ: '3', RATE_LIMIT_WRITE: '3' },
      extraRoutes: (app) => {
        const typed = app.withTypeProvider<ZodTypeProvider>();
        typed.get('/api/test/read', async () => ({ data: 1, error: null }));
        typed.post('/api/test/body', { config: { auth: 'public' }, schema: { body: z.object({ n: z.number() }) } }, async () => ({ data: 1, error: null }));
      },
    });
  });
  afterAll(() => t.close());

  it('bad tokens (401) count against the anonymous budget of the IP', async () => {
    for (let i = 0; i < 3; i++) {
      expectError(await t.request('GET', '/api/test/read', { headers: { authorization: `Bearer bad.token.${i}`, 'x-forwarded-for': `203.0.113.${i}` } }), 401, 'AUTH_REQUIRED');
    }
    // TRUST_PROXY is unset: a rotated X-Forwarded-For is no fresh budget.
    const res = await t.request('GET', '/api/test/read', { headers: { authorization: 'Bearer bad.token.x', 'x-forwarded-for': '198.51.100.7' } });
    expectError(res, 429, 'RATE_LIMITED');
  });

  it('malformed and invalid bodies (400) of anonymous callers count too', async () => {
    const headers = { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.99' };
    for (const payload of ['{"n": ', '{"n": "x"}', '{"n": ']) {
      const res = await t.app.inject({ method: 'POST', url: '/api/test/body', headers, payload });
      expect(res.statusCode).toBe(400);
    }
    const res = await t.app.inject({ method: 'POST', url: '/api/test/body', headers, payload: '{"n": ' });
    expect(res.statusCode).toBe(429);
    expect(res.json().error.code).toBe('RATE_LIMITED');
  });
});

describe('TRUST_PROXY', () => {
  it('with the proxy listed, X-Forwarded-For names the client (each client its own budget)', async () => {
    const t = await createTestApp({
      env: { RATE_LIMIT_READ: '2', TRUST_PROXY: '127.0.0.1' },
      extraRoutes: (app) => void app.get('/api/test/read', async () => ({ data: 1, error: null })),
    });
    try {
      const from = (ip: string) => t.request('GET', '/api/test/read', { headers: { authorization: 'Bearer bad', 'x-forwarded-for': ip } });
      for (let i = 0; i < 2; i++) expect((await from('203.0.113.1')).status).toBe(401);
      expect((await from('203.0.113.1')).status).toBe(429);
      expect((await from('203.0.113.2')).status).toBe(401);
    } finally {
      await t.close();
    }
  });
});
