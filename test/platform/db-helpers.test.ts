import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { PLAN_CACHE_MODE, rawRows, type Database } from '../../src/platform/db/client.js';
import { byIdForJob, inTenantAs } from '../../src/platform/db/tenancy.js';
import { lessonNotes } from '../../src/modules/notes/notes.tables.js';
import { isUniqueViolation } from '../../src/platform/db/errors.js';
import { containsPattern, escapeLike } from '../../src/platform/db/like.js';
import { iso } from '../../src/platform/dto.js';
import { freshDatabase } from '../helpers/database.js';

let database: Database;
beforeAll(async () => {
  database = await freshDatabase();
  await database.db.execute(sql`create table conv_t (a text constraint conv_t_a_key unique, b text constraint conv_t_b_key unique)`);
});
afterAll(() => database.close());

describe('database sessions', () => {
  it("plan named statements with each call's values (force_custom_plan), on every connection", async () => {
    // Several at once, so a PostgreSQL pool answers from more than one connection.
    const answers = await Promise.all(Array.from({ length: 6 }, () => rawRows<{ plan_cache_mode: string }>(database.db, sql`show plan_cache_mode`)));
    expect(answers.map((rows) => rows[0]?.plan_cache_mode)).toEqual(Array(6).fill(PLAN_CACHE_MODE));
    expect(PLAN_CACHE_MODE).toBe('force_custom_plan');
  });
});

describe('isUniqueViolation', () => {
  it("recognises a real unique violation, through Drizzle's wrapping, and by constraint name", async () => {
    await database.db.execute(sql`insert into conv_t (a, b) values ('x', 'y')`);
    const err = await database.db.execute(sql`insert into conv_t (a, b) values ('x', 'z')`).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).not.toBeNull();
    expect(isUniqueViolation(err)).toBe(true);
    expect(isUniqueViolation(err, 'conv_t_a_key')).toBe(true);
    expect(isUniqueViolation(err, 'conv_t_b_key')).toBe(false);
  });

  it('is false for other errors', async () => {
    const err = await database.db.execute(sql`select * from conv_missing`).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isUniqueViolation(err)).toBe(false);
    expect(isUniqueViolation(new Error('x'))).toBe(false);
    expect(isUniqueViolation(undefined)).toBe(false);
  });
});

describe('LIKE and date helpers', () => {
  it('escapes wildcards so text matches literally', async () => {
    expect(escapeLike('50%_off\\')).toBe('50\\%\\_off\\\\');
    expect(containsPattern('a%b')).toBe('%a\\%b%');
    await database.db.execute(sql`insert into conv_t (a, b) values ('100% sure', '1'), ('100x sure', '2')`);
    const res = await database.db.execute(sql`select a from conv_t where a like ${containsPattern('100%')} escape '\\'`);
    const rows = (res as unknown as { rows: Array<{ a: string }> }).rows;
    expect(rows.map((r) => r.a)).toEqual(['100% sure']);
  });

  it('maps dates to ISO 8601 and keeps null', () => {
    expect(iso(new Date('2026-03-02T09:00:00Z'))).toBe('2026-03-02T09:00:00.000Z');
    expect(iso(null)).toBeNull();
    expect(iso(undefined)).toBeNull();
  });

  it('maps a timestamp read through SQL text, whichever form the driver gives it', async () => {
    const [row] = await rawRows<{ at: Date | string }>(database.db, sql`select '2026-03-02 10:00:00+01'::timestamptz as at`);
    expect(iso(row!.at)).toBe('2026-03-02T09:00:00.000Z');
    expect(iso('2026-03-02 10:00:00+01')).toBe('2026-03-02T09:00:00.000Z');
  });
});

describe('tenancy predicates', () => {
  it('inTenantAs filters SQL text by a table alias or name, the institution bound as a parameter', async () => {
    await database.db.execute(sql`create table ten_t (institution_id text not null, id text not null)`);
    await database.db.execute(sql`insert into ten_t values ('inst_a', '1'), ('inst_b', '2'), ('inst_a''; --', '3')`);
    const ids = async (q: ReturnType<typeof sql>) => (await rawRows<{ id: string }>(database.db, q)).map((r) => r.id).sort();
    expect(await ids(sql`select x.id from ten_t x where ${inTenantAs({ institutionId: 'inst_a' }, 'x')}`)).toEqual(['1']);
    expect(await ids(sql`select id from ten_t where ${inTenantAs({ institutionId: 'inst_b' }, 'ten_t')}`)).toEqual(['2']);
    expect(await ids(sql`select x.id from ten_t x where ${inTenantAs({ institutionId: "inst_a'; --" }, 'x')}`)).toEqual(['3']);
  });

  it('byIdForJob finds a row within the named institution, and by id alone only when none is named', async () => {
    const table = { institutionId: lessonNotes.institutionId, id: lessonNotes.id };
    const render = (q: SQL) => new PgDialect().sqlToQuery(q);
    expect(render(byIdForJob('inst_a', table, 'n1'))).toMatchObject({ sql: '("lesson_notes"."institution_id" = $1 and "lesson_notes"."id" = $2)', params: ['inst_a', 'n1'] });
    expect(render(byIdForJob(null, table, 'n1'))).toMatchObject({ sql: '"lesson_notes"."id" = $1', params: ['n1'] });
  });
});
