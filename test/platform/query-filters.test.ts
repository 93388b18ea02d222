/**
 * An empty optional query value (`?status=`, the "All" choice of a filter form, or a field left
 * blank) answers exactly as if the parameter were absent, on every documented GET route. The
 * exceptions are parameters whose empty value the spec or a standard gives a meaning.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DEMO_ADMIN_ID } from '../../src/dev/crm-sim/fixtures.js';
import { buildFixture, documentedRoutes, fillPath, resolvePathParams, sampleFromSchema, type Fixture, type RouteInfo } from '../helpers/routes.js';

/** Parameters where empty is not "absent". */
const EMPTY_HAS_A_MEANING = new Set([
  // Spec 4.3: a search is 1 to 200 characters; the other lists' search boxes follow it.
  'search',
]);

let t: TestApp;
let fixture: Fixture;
let routes: RouteInfo[];
let admin: string;

beforeAll(async () => {
  t = await createTestApp();
  fixture = await buildFixture(t);
  routes = (await documentedRoutes(t)).filter((r) => r.method === 'GET' && !r.path.startsWith('/api/xapi/') && r.query.some((q) => !q.required));
  admin = await t.token({ role: 'ADMIN', id: DEMO_ADMIN_ID });
});

afterAll(async () => {
  await t?.close();
});

describe('empty query values', () => {
  it('answer as if absent, on every list and filter', async () => {
    const checked: string[] = [];
    const differing: string[] = [];
    for (const route of routes) {
      const { values, unmapped } = resolvePathParams(route.path, fixture);
      if (unmapped.length > 0) continue;
      const required = route.query.filter((q) => q.required).map((q) => `${q.name}=${encodeURIComponent(String(sampleFromSchema(q.schema, fixture, q.name)))}`);
      const base = fillPath(route.path, values);
      const get = (extra: string[]) => t.request('GET', `${base}${[...required, ...extra].length ? '?' : ''}${[...required, ...extra].join('&')}`, { token: admin });
      const absent = await get([]);
      if (absent.status !== 200) continue;
      for (const q of route.query.filter((p) => !p.required && !EMPTY_HAS_A_MEANING.has(p.name))) {
        const empty = await get([`${q.name}=`]);
        checked.push(`${route.path} ${q.name}`);
        if (empty.status !== 200 || JSON.stringify(empty.body) !== JSON.stringify(absent.body)) {
          differing.push(`${route.path} ?${q.name}= → ${empty.status} ${empty.status === 200 ? '(another answer)' : empty.body?.error?.message}`);
        }
      }
    }
    expect(differing).toEqual([]);
    // The sweep reached the lists with filters (a guard against it silently skipping them).
    for (const seen of ['/api/courses status', '/api/audit-log action', '/api/live-sessions from', '/api/gamification/leaderboard period', '/api/analytics/reports visibility']) {
      expect(checked).toContain(seen);
    }
  });
});
