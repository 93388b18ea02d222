/**
 * The cross-tenant sweep's checker (test/helpers/tenancy-sweep.ts) catches a broken route. This
 * test app gets extra routes, registered here and documented like any other, that read or
 * change a lesson note: some deliberately broken (no institution predicate, no owner filter, a
 * 403 that only another institution's record earns, no declared scope), and two correct ones
 * the checker must pass. Nothing in src/ knows about them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { and, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { buildFixture, documentedRoutes, type Fixture, type RouteInfo } from '../helpers/routes.js';
import { createTenancySweep, undeclaredScopes, type TenancySweep } from '../helpers/tenancy-sweep.js';
import { lessonNotes } from '../../src/modules/notes/notes.tables.js';
import { byId } from '../../src/platform/db/tenancy.js';
import { forbidden, notFound } from '../../src/platform/http/errors.js';
import { actorOf } from '../../src/platform/auth/auth-plugin.js';
import type { Db } from '../../src/platform/db/client.js';

const params = z.object({ id: z.string().min(1) });
const schema = (operationId: string) => ({ tags: ['test'], operationId, params });
let db: Db;

function testRoutes(app: FastifyInstance) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const note = (row: typeof lessonNotes.$inferSelect | undefined) => {
    if (!row) throw notFound('Note');
    return { data: row, error: null };
  };
  // Broken: no institution predicate and no owner filter (anyone anywhere reads any note).
  r.get('/api/test/no-tenant/notes/:id', { config: { recordScope: 'owner' }, schema: schema('testNoTenantGet') }, async (req) =>
    note((await db.select().from(lessonNotes).where(eq(lessonNotes.id, req.params.id)))[0]),
  );
  // Broken: a write without the institution predicate (anyone anywhere changes any note).
  r.patch('/api/test/no-tenant/notes/:id', { config: { recordScope: 'owner' }, schema: schema('testNoTenantPatch') }, async (req) =>
    note(
      (
        await db
          .update(lessonNotes)
          .set({ timestampSeconds: sql`coalesce(${lessonNotes.timestampSeconds}, 0) + 1` })
          .where(eq(lessonNotes.id, req.params.id))
          .returning()
      )[0],
    ),
  );
  // Broken: the institution predicate but no owner filter on an owner-only record.
  r.get('/api/test/no-owner/notes/:id', { config: { recordScope: 'owner' }, schema: schema('testNoOwnerGet') }, async (req) =>
    note(
      (
        await db
          .select()
          .from(lessonNotes)
          .where(byId(actorOf(req), lessonNotes, req.params.id))
      )[0],
    ),
  );
  // Broken: 403 for a missing id and for another institution's note alike, yet not a role
  // gate (the note's own institution gets it): the spec wants 404 for another institution.
  r.get('/api/test/tenant-403/notes/:id', { config: { recordScope: 'institution' }, schema: schema('testTenant403Get') }, async (req) => {
    const [row] = await db.select().from(lessonNotes).where(eq(lessonNotes.id, req.params.id));
    if (!row || row.institutionId !== actorOf(req).institutionId) throw forbidden('Not yours');
    return { data: { id: row.id }, error: null };
  });
  // Broken: no declared record scope.
  r.get('/api/test/undeclared/notes/:id', { schema: schema('testUndeclaredGet') }, async (req) =>
    note(
      (
        await db
          .select()
          .from(lessonNotes)
          .where(and(byId(actorOf(req), lessonNotes, req.params.id), eq(lessonNotes.studentId, actorOf(req).personId)))
      )[0],
    ),
  );
  // Correct: the institution and the owner.
  r.get('/api/test/correct/notes/:id', { config: { recordScope: 'owner' }, schema: schema('testCorrectGet') }, async (req) =>
    note(
      (
        await db
          .select()
          .from(lessonNotes)
          .where(and(byId(actorOf(req), lessonNotes, req.params.id), eq(lessonNotes.studentId, actorOf(req).personId)))
      )[0],
    ),
  );
  // Correct: a role gate before the lookup (students and parents are refused whatever the id).
  r.get('/api/test/role-gate/notes/:id', { config: { recordScope: 'institution' }, schema: schema('testRoleGateGet') }, async (req) => {
    const actor = actorOf(req);
    if (actor.role === 'STUDENT' || actor.role === 'PARENT') throw forbidden('Staff only');
    const [row] = await db
      .select({ id: lessonNotes.id })
      .from(lessonNotes)
      .where(byId(actor, lessonNotes, req.params.id));
    if (!row) throw notFound('Note');
    return { data: row, error: null };
  });
}

let t: TestApp;
let fixture: Fixture;
let sweep: TenancySweep;
let testRoutesDoc: RouteInfo[];
const route = (method: string, path: string) => {
  const found = testRoutesDoc.find((r) => r.method === method && r.path === path);
  if (!found) throw new Error(`${method} ${path} is not in /openapi.json`);
  return found;
};

beforeAll(async () => {
  t = await createTestApp({ extraRoutes: testRoutes });
  db = t.db;
  fixture = await buildFixture(t);
  testRoutesDoc = (await documentedRoutes(t)).filter((r) => r.path.startsWith('/api/test/'));
  sweep = await createTenancySweep(t, fixture);
});

afterAll(async () => {
  await t?.close();
});

describe('the tenancy sweep checker', () => {
  it("flags a route without the institution predicate: every intruder reads the owner's note", async () => {
    const { failures } = await sweep.checkRoute(route('GET', '/api/test/no-tenant/notes/{id}'));
    for (const who of [...sweep.intruders, sweep.otherStudent]) {
      expect(
        failures.some((f) => f.includes(`as ${who.label}: 200`) && f.includes(`LEAKED ${fixture.secrets[0]}`)),
        failures.join('\n'),
      ).toBe(true);
    }
  });

  it('flags a write without the institution predicate by the table it changed', async () => {
    const { failures } = await sweep.checkRoute(route('PATCH', '/api/test/no-tenant/notes/{id}'));
    // The note and, through the triggers that keep the owner's counter row, that row's version.
    expect(failures).toContain('PATCH /api/test/no-tenant/notes/{id}: tables changed by intruders: lesson_notes, student_annotation_counts');
    expect(failures.filter((f) => f.includes(': 200 ')).length).toBe(5);
  });

  it('flags an owner-only route without the owner filter through the second student of A only', async () => {
    const { failures } = await sweep.checkRoute(route('GET', '/api/test/no-owner/notes/{id}'));
    expect(failures).toHaveLength(1);
    expect(failures[0]).toContain(`as ${sweep.otherStudent.label}: 200`);
    expect(failures[0]).toContain(`LEAKED ${fixture.secrets[0]}`);
  });

  it("flags a 403 for any id that is not a role gate (A's own users get in)", async () => {
    const { failures } = await sweep.checkRoute(route('GET', '/api/test/tenant-403/notes/{id}'));
    expect(failures).toHaveLength(4);
    for (const f of failures) expect(f).toMatch(/403 FORBIDDEN for any id, but A's own \w+ gets 200: not a role gate/);
  });

  it('flags a route that does not declare its record scope', () => {
    expect(undeclaredScopes(testRoutesDoc)).toEqual(['GET /api/test/undeclared/notes/{id}: x-record-scope missing']);
  });

  it('passes the correct routes: an institution and owner filter, and a role gate', async () => {
    for (const path of ['/api/test/correct/notes/{id}', '/api/test/role-gate/notes/{id}']) {
      const { failures, calls } = await sweep.checkRoute(route('GET', path));
      expect(failures, failures.join('\n')).toEqual([]);
      expect(calls).toBeGreaterThanOrEqual(8);
    }
  });
});
