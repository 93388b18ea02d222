/**
 * Cross-tenant sweep (DESIGN.md §3): every documented route that takes an id in its path is
 * called with the ids of institution A's records and the tokens of institution B's users (each
 * role), and the routes that declare an owner (`x-record-scope` `owner` or `owner-edit`) also
 * with a second student of A. Nothing may succeed, nothing may change, and no answer may tell a
 * record of A from one that does not exist. The checker is test/helpers/tenancy-sweep.ts (its
 * rules are there; its own test is tenancy-sweep-checker.test.ts).
 *
 * New routes are covered without a new test: routes come from /openapi.json, bodies from their
 * JSON schema, ids from one fixture through `resolvePathParams` (test/helpers/routes.ts). A route
 * whose path parameters have no mapping, or that does not declare its record scope
 * (`config.recordScope` where the route is defined), fails the sweep, listed by name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { buildFixture, documentedRoutes, fillPath, resolvePathParams, sampleFromSchema, type Fixture, type RouteInfo } from '../helpers/routes.js';
import { createTenancySweep, undeclaredScopes, type SweepAllowances, type TenancySweep } from '../helpers/tenancy-sweep.js';

/**
 * Routes where an intruder's answer is something other than 404 by design, with the reason.
 * (A role gate, a 403 the caller gets whatever the id and that A's own user of the same role
 * gets too, is accepted everywhere: it says nothing about A's record.)
 */
const ALLOW: SweepAllowances = {
  'PUT /api/upload/{tenant}/{kind}/{object}': {
    statuses: [403],
    reason: 'public signed-URL route: the signature is the credential and tokens are ignored; without a valid signature it is 403 FORBIDDEN for everyone',
  },
  'GET /api/files/raw/{tenant}/{kind}/{object}': {
    statuses: [403],
    reason: 'public signed-URL route: the signature is the credential and tokens are ignored; without a valid signature it is 403 FORBIDDEN for everyone',
  },
  'GET /api/parent/children/{childId}/overview': {
    statuses: [403],
    reason: "spec 4.6 rules 1 and 7: a child the CRM does not list among the parent's children is 403 FORBIDDEN (also for a child id that exists nowhere)",
  },
};

let t: TestApp;
let fixture: Fixture;
let routes: RouteInfo[];
let idRoutes: RouteInfo[];
let sweep: TenancySweep;

beforeAll(async () => {
  t = await createTestApp();
  fixture = await buildFixture(t);
  routes = await documentedRoutes(t);
  idRoutes = routes.filter((r) => r.pathParams.length > 0);
  sweep = await createTenancySweep(t, fixture, ALLOW);
});

afterAll(async () => {
  await t?.close();
});

describe('cross-tenant sweep over every id-taking route', () => {
  it('every id-taking route maps its path parameters to fixture ids and declares whose record it names', () => {
    const unmapped = idRoutes
      .map((r) => ({ r, u: resolvePathParams(r.path, fixture).unmapped }))
      .filter((x) => x.u.length > 0)
      .map((x) => `${x.r.method} ${x.r.path}: ${x.u.join(', ')}`);
    expect(
      unmapped,
      `Routes with path parameters the sweep cannot fill; add a record to buildFixture and a mapping in resolvePathParams (test/helpers/routes.ts):\n${unmapped.join('\n')}`,
    ).toEqual([]);
    const undeclared = undeclaredScopes(idRoutes);
    expect(
      undeclared,
      `Routes with an id in the path must declare config.recordScope ('institution', 'owner' or 'owner-edit'; src/platform/http/types.ts) where they are defined:\n${undeclared.join('\n')}`,
    ).toEqual([]);
    // Sanity: the sweep really sees the routes (the count only grows), and the owner-only ones.
    expect(idRoutes.length).toBeGreaterThanOrEqual(80);
    expect(idRoutes.filter((r) => r.recordScope === 'owner').length).toBeGreaterThanOrEqual(10);
    expect(idRoutes.filter((r) => r.recordScope === 'owner-edit').length).toBeGreaterThanOrEqual(10);
  });

  // Reads first: the write sweep below would, when broken, delete what a leak check looks for.
  it('a second student of A reads only their own data on every id-taking GET route', async () => {
    const failures: string[] = [];
    for (const route of idRoutes.filter((r) => r.method === 'GET')) {
      const { values, unmapped } = resolvePathParams(route.path, fixture);
      if (unmapped.length > 0) continue;
      const res = await sweep.call(route, values, sweep.otherStudent.token);
      const leaked = fixture.secrets.filter((s) => res.raw.includes(s));
      if (res.status >= 500 || leaked.length > 0) failures.push(`GET ${route.path}: ${res.status} leaked [${leaked.join(', ')}] ${res.raw.slice(0, 300)}`);
    }
    expect(failures, failures.join('\n')).toEqual([]);
  });

  it("institution B's users (every role), and a second student of A on owner routes, neither reach nor change A's records", async () => {
    const failures: string[] = [];
    let calls = 0;
    let ownerRoutes = 0;
    for (const route of idRoutes) {
      if (resolvePathParams(route.path, fixture).unmapped.length > 0) continue; // reported by the test above
      const result = await sweep.checkRoute(route);
      failures.push(...result.failures);
      calls += result.calls;
      if (route.recordScope !== 'institution') ownerRoutes++;
    }
    expect(failures, failures.join('\n')).toEqual([]);
    expect(calls).toBeGreaterThan(idRoutes.length * 8);
    expect(ownerRoutes).toBeGreaterThan(0);
    // Each id-taking route is called by every intruder with a table snapshot around it: time grows with the API.
  }, 120_000);

  it("query parameters naming A's records show B's users nothing of A", async () => {
    const idQueryNames = new Set(['courseId', 'lessonId', 'moduleId', 'studentId', 'enrollmentId', 'fileId', 'captionId', 'noteId', 'bookmarkId']);
    const failures: string[] = [];
    let checked = 0;
    for (const route of routes.filter((r) => r.method === 'GET' && r.query.some((q) => idQueryNames.has(q.name)))) {
      const { values, unmapped } = resolvePathParams(route.path, fixture);
      if (unmapped.length > 0) continue;
      const query: Record<string, string> = {};
      for (const q of route.query) {
        if (idQueryNames.has(q.name)) query[q.name] = String(fixture[q.name as keyof Fixture]);
        else if (q.required) query[q.name] = String(sampleFromSchema(q.schema, fixture, q.name));
      }
      const given = new Set(Object.values(query));
      const aIds = [
        fixture.courseId,
        fixture.moduleId,
        fixture.lessonId,
        fixture.quizLessonId,
        fixture.captionId,
        fixture.noteId,
        fixture.bookmarkId,
        fixture.enrollmentId,
        fixture.fileId,
        fixture.fileKey,
        fixture.assignmentId,
        fixture.submissionId,
        fixture.peerReviewId,
        fixture.learningPathId,
        fixture.liveSessionId,
      ].filter((id) => !given.has(id));
      for (const who of sweep.intruders) {
        const res = await t.app.inject({ method: 'GET', url: fillPath(route.path, values), query, headers: { authorization: `Bearer ${who.token}` } });
        checked++;
        const leaked = [...fixture.secrets, ...aIds].filter((x) => res.body.includes(x));
        if (res.statusCode >= 500 || leaked.length > 0)
          failures.push(`GET ${route.path}?${new URLSearchParams(query)} as ${who.label}: ${res.statusCode} leaked [${leaked.join(', ')}]`);
      }
    }
    expect(failures, failures.join('\n')).toEqual([]);
    expect(checked).toBeGreaterThan(0);
  });

  it("the xAPI LRS shows B's callers (sessions of every role, and B's own credential) and a second student of A nothing of A's learner", async () => {
    const admin = sweep.intruders.find((i) => i.role === 'ADMIN')!;
    const created = await t.request('POST', '/api/xapi/credentials', { token: admin.token, body: { name: 'Intruder tool' } });
    expect(created.status, created.raw).toBe(201);
    const callers = [
      ...sweep.intruders.map((i) => ({ label: i.label, authorization: `Bearer ${i.token}` })),
      { label: `${admin.label.split(' ')[0]} credential`, authorization: `Basic ${Buffer.from(`${created.body.data.key}:${created.body.data.secret}`).toString('base64')}` },
      { label: sweep.otherStudent.label, authorization: `Bearer ${sweep.otherStudent.token}` },
    ];
    const lrsGets = routes.filter((r) => r.method === 'GET' && r.path.startsWith('/api/xapi/') && !r.path.startsWith('/api/xapi/credentials'));
    expect(lrsGets.length).toBeGreaterThanOrEqual(6);
    const failures: string[] = [];
    let checked = 0;
    for (const route of lrsGets) {
      const names = route.query.map((q) => q.name);
      // Each query names A's records: the statement by id, or A's activity and agent (and a document id).
      const filled: Record<string, string> = {};
      for (const q of route.query) {
        if (q.name === 'statementId' || q.name === 'voidedStatementId' || q.name === 'more') continue;
        const sample = sampleFromSchema(q.schema, fixture, q.name);
        if (['agent', 'activityId', 'activity'].includes(q.name) || q.required) filled[q.name] = String(sample);
        if (q.name === 'stateId' || q.name === 'profileId') filled[q.name] = 'sweep';
      }
      const queries = [filled, ...(names.includes('statementId') ? [{ statementId: fixture.xapiStatementId }, { voidedStatementId: fixture.xapiStatementId }] : [])];
      for (const query of queries) {
        for (const who of callers) {
          const res = await t.app.inject({ method: 'GET', url: route.path, query, headers: { authorization: who.authorization, 'x-experience-api-version': '1.0.3' } });
          checked++;
          const leaked = [...fixture.secrets, fixture.xapiStatementId].filter((x) => res.body.includes(x));
          if (res.statusCode >= 500 || leaked.length > 0)
            failures.push(`GET ${route.path}?${new URLSearchParams(query)} as ${who.label}: ${res.statusCode} leaked [${leaked.join(', ')}]`);
        }
      }
    }
    expect(failures, failures.join('\n')).toEqual([]);
    expect(checked).toBeGreaterThan(30);
    // and the owner does see them (the queries were the right ones)
    const owner = await t.app.inject({
      method: 'GET',
      url: '/api/xapi/statements',
      query: { statementId: fixture.xapiStatementId },
      headers: { authorization: fixture.xapiAuthorization, 'x-experience-api-version': '1.0.3' },
    });
    expect(owner.body).toContain(fixture.secrets[9]);
  });

  it('the fixture is intact and visible to its owner (the sweep ran against live records)', async () => {
    const student = await t.token({ role: 'STUDENT', id: fixture.studentId });
    const notes = await t.request('GET', `/api/lessons/${fixture.lessonId}/notes`, { token: student });
    expect(notes.status).toBe(200);
    expect(notes.raw).toContain(fixture.secrets[0]);
    const answer = await t.request('GET', `/api/lessons/${fixture.lessonId}/blocks/${fixture.blockId}/answer`, { token: student });
    expect(answer.raw).toContain(fixture.secrets[2]);
    const attempts = await t.request('GET', `/api/quiz/${fixture.quizLessonId}/attempts`, { token: student });
    expect(attempts.raw).toContain(fixture.secrets[5]);
    const quiz = await t.request('GET', `/api/quiz/${fixture.quizLessonId}`, { token: await t.token({ role: 'ADMIN', id: 'u_demo_admin' }) });
    expect(quiz.raw).toContain(fixture.secrets[3]);
    const scorm = await t.request('GET', `/api/scorm/${fixture.scormLessonId}/launch`, { token: student });
    expect(scorm.body.data.state).toMatchObject({ entry: 'resume', suspendData: fixture.secrets[8] });
  });
});
