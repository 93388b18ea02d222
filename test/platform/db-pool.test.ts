/**
 * The PostgreSQL pool when connections die (a PostgreSQL restart or a terminated backend):
 * a client lost in the middle of a transaction fails that transaction, not the process, and
 * the pool serves the next caller on a fresh connection. Needs PostgreSQL (CI's second pass).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { rawRows, type Database } from '../../src/platform/db/client.js';
import { freshDatabase, usingPostgres } from '../helpers/database.js';

describe.skipIf(!usingPostgres())('PostgreSQL pool after a lost connection', () => {
  let database: Database;
  let killer: pg.Client;
  beforeAll(async () => {
    database = await freshDatabase();
    killer = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await killer.connect();
  });
  afterAll(async () => {
    await killer?.end();
    await database?.close();
  });

  it('a connection terminated between two statements of a transaction fails the transaction; the pool recovers', async () => {
    const pids: number[] = [];
    const tx = database.db.transaction(async (t) => {
      const [{ pid }] = await rawRows<{ pid: number }>(t, sql`select pg_backend_pid() as pid`);
      pids.push(pid);
      await killer.query('select pg_terminate_backend($1)', [pid]);
      // The termination arrives while the client is checked out and idle in the transaction.
      await new Promise((r) => setTimeout(r, 300));
      await t.execute(sql`select 1`);
    });
    await expect(tx).rejects.toThrow();
    // Still alive, and the pool answers on a new connection.
    const [{ pid, one }] = await rawRows<{ pid: number; one: number }>(database.db, sql`select pg_backend_pid() as pid, 1 as one`);
    expect(one).toBe(1);
    expect(pid).not.toBe(pids[0]);
    await database.ping();
  });

  it('every pooled connection terminated at once (a fast shutdown): the next queries reconnect', async () => {
    await Promise.all(Array.from({ length: 4 }, () => rawRows(database.db, sql`select pg_sleep(0.05)`)));
    const dbName = (await rawRows<{ db: string }>(database.db, sql`select current_database() as db`))[0].db;
    await killer.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [dbName]);
    await new Promise((r) => setTimeout(r, 200));
    const rows = await Promise.all(Array.from({ length: 4 }, () => rawRows<{ one: number }>(database.db, sql`select 1 as one`)));
    expect(rows.map((r) => r[0].one)).toEqual([1, 1, 1, 1]);
  });
});
