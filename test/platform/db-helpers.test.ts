import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import type { Database } from '../../src/platform/db/client.js';
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
});
