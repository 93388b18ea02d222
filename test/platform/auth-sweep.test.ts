/**
 * Authentication sweep: every documented route (from /openapi.json) that its security says needs
 * a session or the cron secret refuses a caller without one, and one with a forged token, with
 * 401 AUTH_REQUIRED in the envelope, at /api and at /api/v1, before it reads the body or the
 * database. The auth hooks are added to each route as it is registered (auth-plugin.ts), so a
 * route registered out of their reach would show up here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { documentedRoutes, type RouteInfo } from '../helpers/routes.js';

let t: TestApp;
let routes: RouteInfo[];

beforeAll(async () => {
  // With CRON_SECRET set, as in production (unset, the cron routes are open: development only).
  t = await createTestApp({ env: { CRON_SECRET: 'sweep-cron-secret' } });
  routes = await documentedRoutes(t);
});
afterAll(async () => {
  await t?.close();
});

const schemesOf = (r: RouteInfo) => (Array.isArray(r.security) ? (r.security as Array<Record<string, unknown>>) : []);
/** Session required: a cookie or a bearer token, and no empty alternative (that is `optional`). */
const needsSession = (r: RouteInfo) => !isLrs(r) && schemesOf(r).some((s) => 'bearerAuth' in s) && !schemesOf(r).some((s) => Object.keys(s).length === 0);
/** The xAPI LRS answers in xAPI's own terms (plain-text errors, version header first): its authentication is tested in xapi.test.ts. */
const isLrs = (r: RouteInfo) => r.path.startsWith('/api/xapi/');
const needsCronSecret = (r: RouteInfo) => schemesOf(r).some((s) => 'cronSecret' in s);
/** A path with every parameter filled by an id that names nothing. */
const concrete = (r: RouteInfo) => r.path.replace(/\{\w+\}/g, 'no-such-id');
// A token signed with another secret: well-formed, refused.
const FORGED =
  'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1X2RlbW9fYWRtaW4iLCJyb2xlIjoiQURNSU4iLCJpbnN0aXR1dGlvbklkIjoiaW5zdF9kZW1vIiwiZXhwIjo0MTAyNDQ0ODAwfQ.c2lnbmVkLXdpdGgtYW5vdGhlci1zZWNyZXQ';

async function expectRefused(method: string, url: string, headers: Record<string, string>) {
  const hasBody = method !== 'GET' && method !== 'DELETE';
  const res = await t.app.inject({
    method: method as 'GET',
    url,
    headers: hasBody ? { ...headers, 'content-type': 'application/json' } : headers,
    payload: hasBody ? '{}' : undefined,
  });
  expect({ route: `${method} ${url}`, status: res.statusCode, body: res.json() }).toEqual({
    route: `${method} ${url}`,
    status: 401,
    body: { data: null, error: expect.objectContaining({ code: 'AUTH_REQUIRED' }) },
  });
}

describe('authentication sweep', () => {
  it('every session route answers 401 AUTH_REQUIRED without a token and with a forged one, at /api and /api/v1', async () => {
    const sessionRoutes = routes.filter(needsSession);
    // Most of the API needs a session: the sweep must not pass by finding nothing.
    expect(sessionRoutes.length).toBeGreaterThan(100);
    for (const r of sessionRoutes) {
      const url = concrete(r);
      await expectRefused(r.method, url, {});
      await expectRefused(r.method, url, { authorization: `Bearer ${FORGED}` });
      await expectRefused(r.method, url.replace(/^\/api\//, '/api/v1/'), {});
    }
  });

  it('every cron route answers 401 AUTH_REQUIRED without the cron secret, with a wrong one, or with a session token instead', async () => {
    const cronRoutes = routes.filter(needsCronSecret);
    expect(cronRoutes.length).toBeGreaterThanOrEqual(3);
    const admin = await t.token({ role: 'ADMIN', id: 'u_demo_admin' });
    for (const r of cronRoutes) {
      await expectRefused(r.method, concrete(r), {});
      await expectRefused(r.method, concrete(r), { authorization: 'Bearer sweep-cron-secreT' });
      await expectRefused(r.method, concrete(r), { authorization: `Bearer ${admin}` });
    }
  });
});
