/**
 * The checker of the cross-tenant sweep (test/platform/tenancy-sweep.test.ts), kept apart so
 * its own test (test/platform/tenancy-sweep-checker.test.ts) can run it on deliberately broken
 * routes and see it fail.
 *
 * For one id-taking route it calls the route with the ids of institution A's fixture as every
 * role of institution B, and, where the route declares `x-record-scope` `owner` or
 * `owner-edit`, as a second student of A; each call also with ids that do not exist. A table
 * snapshot before and after shows any write. What passes:
 * - 404, and nothing of A's fixture in the body;
 * - the statuses `allow` lists for the route (with the reason, e.g. a spec'd 403);
 * - for the second student of A on an `owner-edit` route: 403 FORBIDDEN (the record is readable
 *   to them, only its owner changes it);
 * - a role gate: a 403 the caller also gets for a missing id, and that A's own user of the
 *   same role gets for A's record too (for the second student of A: B's student got the same),
 *   so the answer depends on who the caller is, never on A's record.
 * Anything else (a 2xx, a 403 only A's record earns, a changed table) is a failure.
 */
import { sql } from 'drizzle-orm';
import { rawRows } from '../../src/platform/db/client.js';
import { RECORD_SCOPES } from '../../src/platform/http/types.js';
import type { Role } from '../../src/platform/auth/tokens.js';
import {
  DEMO_ADMIN_ID,
  DEMO_PARENT_ID,
  DEMO_TEACHER_ID,
  NORTH_ADMIN_ID,
  NORTH_PARENT_ID,
  NORTH_STUDENT_ID,
  NORTH_TEACHER_ID,
  SECOND_INSTITUTION,
} from '../../src/dev/crm-sim/fixtures.js';
import type { TestApp } from './app.js';
import { captionForm, fillPath, resolvePathParams, sampleFromSchema, type Fixture, type RouteInfo } from './routes.js';

export interface SweepCaller {
  label: string;
  role: Role;
  token: string;
}

/** Statuses a route answers an intruder by design, with the reason (keyed `METHOD /path`). */
export type SweepAllowances = Record<string, { statuses: number[]; reason: string }>;

export interface TenancySweep {
  /** B's users, one per role. */
  intruders: SweepCaller[];
  /** A second student of A, enrolled in the fixture's course: not the owner of its records. */
  otherStudent: SweepCaller;
  /** One call of `route` with these path values as the holder of `token` (a valid body, the required query). */
  call(route: RouteInfo, values: Record<string, string>, token: string): Promise<SweepAnswer>;
  /** Calls `route` as every caller its scope calls for; returns the failures (empty: passed) and the number of calls. */
  checkRoute(route: RouteInfo): Promise<{ failures: string[]; calls: number }>;
}

/** Id-taking routes whose `x-record-scope` is missing or not one of `RecordScope`. */
export function undeclaredScopes(idRoutes: RouteInfo[]): string[] {
  return idRoutes
    .filter((r) => !RECORD_SCOPES.includes(r.recordScope as never))
    .map((r) => `${r.method} ${r.path}: x-record-scope ${r.recordScope === undefined ? 'missing' : JSON.stringify(r.recordScope)}`);
}

/** Count and hash of every table's rows: any write anywhere shows. B's own `institutions` row is left out (the platform keeps it current). */
async function snapshot(t: TestApp): Promise<Record<string, string>> {
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

/** Ids that exist nowhere, one per path parameter. */
const fakeValues = (values: Record<string, string>) => Object.fromEntries(Object.keys(values).map((k) => [k, `00000000-0000-7000-8000-${k.length.toString().padStart(12, '0')}`]));

export interface SweepAnswer {
  status: number;
  code: string | undefined;
  raw: string;
}

const same = (a: SweepAnswer, b: SweepAnswer) => a.status === b.status && a.code === b.code;
const show = (a: SweepAnswer) => `${a.status} ${a.code ?? ''}`.trim();

export async function createTenancySweep(t: TestApp, fixture: Fixture, allow: SweepAllowances = {}): Promise<TenancySweep> {
  const inst = SECOND_INSTITUTION.id;
  const intruders: SweepCaller[] = [];
  for (const [role, id] of [
    ['STUDENT', NORTH_STUDENT_ID],
    ['TEACHER', NORTH_TEACHER_ID],
    ['ADMIN', NORTH_ADMIN_ID],
    ['PARENT', NORTH_PARENT_ID],
  ] as const) {
    intruders.push({ label: `${inst} ${role} ${id}`, role, token: await t.token({ role, id, institutionId: inst }) });
  }
  const otherStudent: SweepCaller = {
    label: `${fixture.institutionId} second STUDENT ${fixture.otherStudentId}`,
    role: 'STUDENT',
    token: await t.token({ role: 'STUDENT', id: fixture.otherStudentId, institutionId: fixture.institutionId }),
  };
  // A's own users, one per role, for telling a role gate from a refusal A's record earns. None
  // owns the fixture's personal records (the first student does), so a role that A lets in
  // changes nothing personal; the fixture's course is the admin's.
  const insiders: Record<Role, string> = {
    STUDENT: otherStudent.token,
    TEACHER: await t.token({ role: 'TEACHER', id: DEMO_TEACHER_ID, institutionId: fixture.institutionId }),
    ADMIN: await t.token({ role: 'ADMIN', id: DEMO_ADMIN_ID, institutionId: fixture.institutionId }),
    PARENT: await t.token({ role: 'PARENT', id: DEMO_PARENT_ID, institutionId: fixture.institutionId }),
  };
  // First requests of B's users create B's institution row; do them before any snapshot.
  for (const who of intruders) await t.request('GET', '/api/catalogue', { token: who.token });

  /** Call `route` with these path values as `token`; a valid body so validation passes. */
  async function call(route: RouteInfo, values: Record<string, string>, token: string): Promise<SweepAnswer> {
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
    const res = await t.app.inject({ method: route.method as never, url: fillPath(route.path, values), query, headers, ...(payload !== undefined ? { payload } : {}) });
    let code: string | undefined;
    try {
      code = res.json()?.error?.code;
    } catch {
      code = undefined;
    }
    return { status: res.statusCode, code, raw: res.body };
  }

  async function checkRoute(route: RouteInfo) {
    const key = `${route.method} ${route.path}`;
    const { values, unmapped } = resolvePathParams(route.path, fixture);
    if (unmapped.length > 0) return { failures: [`${key}: unmapped path parameters ${unmapped.join(', ')}`], calls: 0 };
    const allowed = allow[key]?.statuses ?? [];
    const personal = route.recordScope === 'owner' || route.recordScope === 'owner-edit';
    const callers = personal ? [...intruders, otherStudent] : intruders;
    const failures: string[] = [];
    const roleGates: Array<{ who: SweepCaller; real: SweepAnswer }> = [];
    const byRole = new Map<Role, SweepAnswer>();
    let calls = 0;

    const before = await snapshot(t);
    for (const who of callers) {
      const real = await call(route, values, who.token);
      const fake = await call(route, fakeValues(values), who.token);
      calls += 2;
      if (who !== otherStudent) byRole.set(who.role, real);
      const leaked = fixture.secrets.filter((s) => real.raw.includes(s));
      const fail = (why: string) => failures.push(`${key} as ${who.label}: ${show(real)} (for a missing id: ${show(fake)}) ${why} — ${real.raw.slice(0, 300)}`);
      if (leaked.length > 0) fail(`LEAKED ${leaked.join(', ')}`);
      else if (real.status === 404 || allowed.includes(real.status)) continue;
      else if (who === otherStudent && route.recordScope === 'owner-edit' && real.status === 403 && real.code === 'FORBIDDEN') continue;
      else if (real.status === 403 && same(real, fake)) {
        if (who !== otherStudent) roleGates.push({ who, real });
        else {
          const outsider = byRole.get('STUDENT');
          if (!outsider || !same(outsider, real))
            fail(`is not the answer of any student (B's student got ${outsider ? show(outsider) : 'nothing'}): an owner-only record is 404 to others`);
        }
      } else fail(route.recordScope === 'owner' && who === otherStudent ? 'where an owner-only record must be 404' : 'where 404 was expected');
    }
    const changed = changedTables(before, await snapshot(t));
    if (changed.length > 0) failures.push(`${key}: tables changed by intruders: ${changed.join(', ')}`);

    // A 403 the caller gets whatever the id is a role gate only if A's own user of that role
    // is refused the same way: otherwise it is a refusal that A's record earns, where the
    // spec wants 404 (after the snapshot: a passing gate changes nothing, a failing one is reported).
    for (const { who, real } of roleGates) {
      const insider = await call(route, values, insiders[who.role]);
      calls++;
      if (!same(insider, real)) {
        failures.push(
          `${key} as ${who.label}: ${show(real)} for any id, but A's own ${who.role} gets ${show(insider)}: not a role gate, so A's record must be 404 to another institution`,
        );
      }
    }
    return { failures, calls };
  }

  return { intruders, otherStudent, call, checkRoute };
}
