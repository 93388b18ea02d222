/**
 * Cross-tenant sweep (DESIGN.md §3): every documented route that takes an id in its path is
 * called with the ids of institution A's records and the tokens of institution B's users (each
 * role), and the owner-only ones also with a second student of A. Nothing may succeed, nothing
 * may change, and no answer may tell a record of A from one that does not exist.
 *
 * New routes are covered without a new test: routes come from /openapi.json, bodies from their
 * JSON schema, ids from one fixture through `resolvePathParams` (test/helpers/routes.ts). A route
 * whose path parameters have no mapping fails the sweep, listed by name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { rawRows } from '../../src/platform/db/client.js';
import { NORTH_ADMIN_ID, NORTH_PARENT_ID, NORTH_STUDENT_ID, NORTH_TEACHER_ID, SECOND_INSTITUTION } from '../../src/dev/crm-sim/fixtures.js';
import { buildFixture, captionForm, documentedRoutes, fillPath, resolvePathParams, sampleFromSchema, type Fixture, type RouteInfo } from '../helpers/routes.js';

/**
 * Routes where an intruder's answer is something other than 404 by design, with the reason.
 * (A 403 that the same caller also gets for an id that does not exist is accepted everywhere:
 * it depends on the caller's role only, so it reveals nothing about A's record.)
 */
const ALLOW: Record<string, { statuses: number[]; reason: string }> = {
  'PUT /api/upload/{tenant}/{kind}/{object}': {
    statuses: [403],
    reason: 'public signed-URL route: the signature is the credential and tokens are ignored; without a valid signature it is 403 FORBIDDEN for everyone',
  },
  'GET /api/files/raw/{tenant}/{kind}/{object}': {
    statuses: [403],
    reason: 'public signed-URL route: the signature is the credential and tokens are ignored; without a valid signature it is 403 FORBIDDEN for everyone',
  },
};

/** Path parameters that name an owner-scoped record: a second student of A must not reach it. */
const OWNER_SCOPED_PARAMS = new Set(['noteId', 'bookmarkId', 'studentId', 'token']);

let t: TestApp;
let fixture: Fixture;
let routes: RouteInfo[];
let idRoutes: RouteInfo[];
const intruders: Array<{ label: string; token: string }> = [];
let otherStudent: { label: string; token: string };

beforeAll(async () => {
  t = await createTestApp();
  fixture = await buildFixture(t);
  routes = await documentedRoutes(t);
  idRoutes = routes.filter((r) => r.pathParams.length > 0);
  const inst = SECOND_INSTITUTION.id;
  for (const [role, id] of [
    ['STUDENT', NORTH_STUDENT_ID],
    ['TEACHER', NORTH_TEACHER_ID],
    ['ADMIN', NORTH_ADMIN_ID],
    ['PARENT', NORTH_PARENT_ID],
  ] as const) {
    intruders.push({ label: `${inst} ${role} ${id}`, token: await t.token({ role, id, institutionId: inst }) });
  }
  otherStudent = { label: `inst_demo STUDENT ${fixture.otherStudentId}`, token: await t.token({ role: 'STUDENT', id: fixture.otherStudentId }) };
  // First requests of B's users create B's institution row; do them before any snapshot.
  for (const who of intruders) await t.request('GET', '/api/catalogue', { token: who.token });
});

afterAll(async () => {
  await t?.close();
});

/**
 * Count and hash of every table's rows: any write anywhere shows. B's own `institutions` row is
 * left out (the platform keeps it current, e.g. the slug and name it learns from the CRM).
 */
async function snapshot(): Promise<Record<string, string>> {
  const tables = await rawRows<{ name: string }>(
    t.db,
    sql`select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' and table_name not like '%migrations%' order by 1`,
  );
  // One statement for every table (the sweep takes two snapshots per route).
  const rows = await rawRows<{ name: string; n: number; h: string }>(
    t.db,
    sql.raw(
      tables
        .map(
          ({ name }) =>
            `select '${name}' as name, count(*)::int as n, md5(coalesce(string_agg(x::text, '|' order by x::text), '')) as h from "${name}" x` +
            (name === 'institutions' ? ` where x.id <> '${SECOND_INSTITUTION.id}'` : ''),
        )
        .join(' union all '),
    ),
  );
  return Object.fromEntries(rows.map((r) => [r.name, `${r.n}:${r.h}`]));
}

const changedTables = (a: Record<string, string>, b: Record<string, string>) => [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => a[k] !== b[k]);

/** Call `route` with these path values as `token`; a valid body so validation passes. */
async function call(route: RouteInfo, values: Record<string, string>, token: string) {
  const url = fillPath(route.path, values);
  const query: Record<string, string> = {};
  for (const q of route.query) if (q.required) query[q.name] = String(sampleFromSchema(q.schema, fixture, q.name));
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  let payload: string | Buffer | undefined;
  if (route.body?.contentType === 'multipart/form-data') {
    const form = captionForm();
    Object.assign(headers, form.headers);
    payload = form.payload;
  } else if (route.body) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(sampleFromSchema(route.body.schema, fixture));
  }
  const res = await t.app.inject({ method: route.method as never, url, query, headers, ...(payload !== undefined ? { payload } : {}) });
  let body: any;
  try {
    body = res.json();
  } catch {
    body = undefined;
  }
  return { status: res.statusCode, code: body?.error?.code as string | undefined, raw: res.body, url };
}

const fakeValues = (values: Record<string, string>) => Object.fromEntries(Object.keys(values).map((k) => [k, `00000000-0000-7000-8000-${k.length.toString().padStart(12, '0')}`]));

describe('cross-tenant sweep over every id-taking route', () => {
  it('every path parameter of every documented route maps to a fixture id', () => {
    const unmapped = idRoutes
      .map((r) => ({ r, u: resolvePathParams(r.path, fixture).unmapped }))
      .filter((x) => x.u.length > 0)
      .map((x) => `${x.r.method} ${x.r.path}: ${x.u.join(', ')}`);
    expect(
      unmapped,
      `Routes with path parameters the sweep cannot fill; add a record to buildFixture and a mapping in resolvePathParams (test/helpers/routes.ts):\n${unmapped.join('\n')}`,
    ).toEqual([]);
    // Sanity: the sweep really sees the routes (the count only grows).
    expect(idRoutes.length).toBeGreaterThanOrEqual(30);
  });

  // Reads first: the write sweep below would, when broken, delete what a leak check looks for.
  it('a second student of A reads only their own data on every id-taking GET route', async () => {
    const failures: string[] = [];
    for (const route of idRoutes.filter((r) => r.method === 'GET')) {
      const { values, unmapped } = resolvePathParams(route.path, fixture);
      if (unmapped.length > 0) continue;
      const res = await call(route, values, otherStudent.token);
      const leaked = fixture.secrets.filter((s) => res.raw.includes(s));
      if (res.status >= 500 || leaked.length > 0) failures.push(`GET ${route.path}: ${res.status} leaked [${leaked.join(', ')}] ${res.raw.slice(0, 300)}`);
    }
    expect(failures, failures.join('\n')).toEqual([]);
  });

  it("institution B's users (every role) and a second student of A neither reach nor change A's records", async () => {
    const failures: string[] = [];
    let calls = 0;
    for (const route of idRoutes) {
      const key = `${route.method} ${route.path}`;
      const { values, unmapped } = resolvePathParams(route.path, fixture);
      if (unmapped.length > 0) continue; // reported by the test above
      const allowed = ALLOW[key];
      const callers = [...intruders];
      if (route.pathParams.some((p) => OWNER_SCOPED_PARAMS.has(p))) callers.push(otherStudent);

      const before = await snapshot();
      for (const who of callers) {
        const real = await call(route, values, who.token);
        const fake = await call(route, fakeValues(values), who.token);
        calls += 2;
        const leaked = fixture.secrets.filter((s) => real.raw.includes(s));
        const sameAsMissing = real.status === fake.status && real.code === fake.code;
        const ok = leaked.length === 0 && (real.status === 404 || (allowed?.statuses.includes(real.status) ?? false) || (real.status === 403 && sameAsMissing));
        if (!ok) {
          failures.push(
            `${key} as ${who.label}: ${real.status} ${real.code ?? ''} (for a missing id: ${fake.status} ${fake.code ?? ''})` +
              `${leaked.length ? ` LEAKED ${leaked.join(', ')}` : ''} — ${real.raw.slice(0, 300)}`,
          );
        }
      }
      const changed = changedTables(before, await snapshot());
      if (changed.length > 0) failures.push(`${key}: tables changed by intruders: ${changed.join(', ')}`);
    }
    expect(failures, failures.join('\n')).toEqual([]);
    expect(calls).toBeGreaterThan(0);
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
      for (const who of intruders) {
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
    const admin = intruders.find((i) => i.label.includes('ADMIN'))!;
    const created = await t.request('POST', '/api/xapi/credentials', { token: admin.token, body: { name: 'Intruder tool' } });
    expect(created.status, created.raw).toBe(201);
    const callers = [
      ...intruders.map((i) => ({ label: i.label, authorization: `Bearer ${i.token}` })),
      { label: `${SECOND_INSTITUTION.id} credential`, authorization: `Basic ${Buffer.from(`${created.body.data.key}:${created.body.data.secret}`).toString('base64')}` },
      { label: otherStudent.label, authorization: `Bearer ${otherStudent.token}` },
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
