/**
 * `?search=` of GET /api/me/notes and /api/me/bookmarks is `ILIKE '%…%' ESCAPE '\'` with the
 * wildcards of the search text escaped; migration 0019's trigram GIN indexes (pg_trgm with
 * btree_gin for the owner's keys) can serve it for 3 or more characters, on PGlite and
 * PostgreSQL alike. The plan is forced off the other paths (the test data is too small for the
 * planner to choose the index on its own), and the rows it finds keep the literal semantics.
 * (bench/notes-scenario.ts `--explain` shows the planner's own choice on 1,000,000 notes.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, createLesson, enroll } from '../helpers/factories.js';
import { expectOk } from '../helpers/expect.js';
import { rawRows } from '../../src/platform/db/client.js';
import { containsPattern } from '../../src/platform/db/like.js';

const INST = 'inst_demo';
const S = 'c_demo_stu_31';
let t: TestApp;
let token: string;

const NOTES = ['100% done', '100 done', '1000 done', 'a_b_c', 'axbxc', 'back\\slash', 'backslash', 'Mitochondria matter'];
const LABELS = ['50% off', '50 off', 'x_y_z', 'xqyqz'];

beforeAll(async () => {
  t = await createTestApp();
  const course = await createCourse(t, { institutionId: INST, ownerId: 'u_demo_teacher' });
  const lesson = await createLesson(t, { courseId: course.id, type: 'VIDEO' });
  await enroll(t, { courseId: course.id, studentId: S });
  token = await t.token({ role: 'STUDENT', id: S });
  for (const content of NOTES) expectOk(await t.request('POST', `/api/lessons/${lesson.id}/notes`, { token, body: { content } }), 201);
  for (const label of LABELS) expectOk(await t.request('POST', `/api/lessons/${lesson.id}/bookmarks`, { token, body: { timestampSeconds: 1, label } }), 201);
}, 60_000);
afterAll(() => t?.close());

/** Rolls a test transaction back once its results are taken. */
class Rollback extends Error {
  constructor(readonly value: { plan: string; found: string[] }) {
    super('rollback');
  }
}

/**
 * The plan and the rows of the search predicate the service uses, with the trigram index as the
 * only way in: sequential scans off, and the owner's btree indexes dropped inside a transaction
 * that is rolled back (with the keys that would let the planner in by the institution alone).
 */
async function searchWithIndexOnly(table: 'lesson_notes' | 'lesson_bookmarks', search: string) {
  const column = sql.raw(table === 'lesson_notes' ? 'content' : 'label');
  const from = sql.raw(table);
  const where = sql`institution_id = ${INST} and student_id = ${S} and ${column} ilike ${containsPattern(search)} escape '\\'`;
  try {
    await t.db.transaction(async (tx) => {
      await tx.execute(sql`set local enable_seqscan = off`);
      const others = await rawRows<{ name: string; constraint: boolean }>(
        tx,
        sql`select i.indexname as name, exists (select 1 from pg_constraint c where c.conname = i.indexname) as constraint
            from pg_indexes i where i.tablename = ${table} and i.indexname <> ${`${table}_search_idx`}`,
      );
      expect(others.length).toBeGreaterThanOrEqual(3);
      for (const { name, constraint } of others) {
        await tx.execute(constraint ? sql`alter table ${from} drop constraint ${sql.identifier(name)} cascade` : sql`drop index ${sql.identifier(name)}`);
      }
      const plan = (await rawRows<{ 'QUERY PLAN': string }>(tx, sql`explain select ${column} as v from ${from} where ${where}`)).map((r) => r['QUERY PLAN']).join('\n');
      const rows = await rawRows<{ v: string }>(tx, sql`select ${column} as v from ${from} where ${where} order by 1`);
      throw new Rollback({ plan, found: rows.map((r) => r.v) });
    });
  } catch (err) {
    if (err instanceof Rollback) return err.value;
    throw err;
  }
  throw new Error('unreachable');
}

describe('search by trigram index', () => {
  it('serves a note search of 3+ characters from lesson_notes_search_idx, wildcards taken literally', async () => {
    const cases: Array<[string, string[]]> = [
      ['100%', ['100% done']],
      ['0% d', ['100% done']],
      ['a_b', ['a_b_c']],
      ['b_c', ['a_b_c']],
      ['k\\s', ['back\\slash']],
      ['MITOCHONDRIA', ['Mitochondria matter']],
      ['done', ['100 done', '100% done', '1000 done']],
    ];
    for (const [search, expected] of cases) {
      const { plan, found } = await searchWithIndexOnly('lesson_notes', search);
      expect(plan, search).toContain('lesson_notes_search_idx');
      expect(found.sort(), search).toEqual([...expected].sort());
    }
  });

  it('serves a bookmark label search the same way', async () => {
    for (const [search, expected] of [
      ['50%', ['50% off']],
      ['x_y', ['x_y_z']],
    ] as const) {
      const { plan, found } = await searchWithIndexOnly('lesson_bookmarks', search);
      expect(plan, search).toContain('lesson_bookmarks_search_idx');
      expect(found, search).toEqual(expected);
    }
  });

  it('gives the API the same rows', async () => {
    const notes = await t.request('GET', '/api/me/notes', { token, query: { search: 'b_c' } });
    expect(notes.body.data.map((n: { content: string }) => n.content)).toEqual(['a_b_c']);
    expect(notes.body.meta.total).toBe(1);
    const bookmarks = await t.request('GET', '/api/me/bookmarks', { token, query: { search: '50%' } });
    expect(bookmarks.body.data.map((b: { label: string }) => b.label)).toEqual(['50% off']);
  });
});
