import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';

/**
 * The tables are not known here (platform imports no module): queries name their tables, and
 * `openDatabase({ schema })` may pass the schema (src/modules/schema.ts) for relational queries.
 */
export type Schema = Record<string, never>;
/** One type for both drivers: the pg-core query builder. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;
/** Anything that can run queries: the database or an open transaction. */
export type DbOrTx = Db | Tx;

/**
 * The contrib extensions the migrations create (`CREATE EXTENSION`): PGlite must load them when
 * it opens a database, like PostgreSQL finds them installed. pg_trgm and btree_gin serve the
 * note and bookmark search (migration 0019).
 */
export const PGLITE_EXTENSIONS = { pg_trgm, btree_gin };

/** A PGlite with the extensions the migrations need; every PGlite of the service and its tests is made here. */
export const createPglite = (opts: Omit<PGliteOptions, 'extensions'> = {}) => PGlite.create({ ...opts, extensions: PGLITE_EXTENSIONS });

/**
 * Named statements (Drizzle's `.prepare()`, e.g. the page of GET /api/me/notes) keep their parse
 * but are planned with each call's values. PostgreSQL's default switches a statement to a
 * generic plan after 5 calls, and a generic plan only knows the average student: with 2 notes
 * each on average it read all 10,000 of a heavy student's notes and sorted them (0.08 ms → 21 ms
 * per page) instead of walking the (updated_at, id) index for 20 rows.
 */
export const PLAN_CACHE_MODE = 'force_custom_plan';

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../../drizzle', import.meta.url));

export interface Database {
  db: Db;
  driver: 'pglite' | 'pg';
  /**
   * PostgreSQL only: the rows of a query through a server-side cursor (`DECLARE … CURSOR`), in a
   * read-only transaction on a connection of its own, `batchSize` rows at a time, each FETCH
   * under `statementTimeoutMs`. Stopping the iteration early closes the cursor and frees the
   * connection. PGlite has one connection (a transaction would stop every other query), so
   * callers page there instead.
   */
  cursor?: (query: { sql: string; params: unknown[] }, opts: { batchSize: number; statementTimeoutMs: number }) => AsyncGenerator<Record<string, unknown>[]>;
  ping(): Promise<void>;
  migrate(): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string;
  dataDir?: string;
  poolSize?: number;
  statementTimeoutMs?: number;
  /** An already-open PGlite (tests clone a migrated one per file). */
  pglite?: PGlite;
  /** Tables (and relations) for Drizzle's relational query API; not needed for the query builder. */
  schema?: Record<string, unknown>;
}

export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  const schema = opts.schema ?? {};
  if (opts.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: opts.databaseUrl,
      max: opts.poolSize ?? 10,
      statement_timeout: opts.statementTimeoutMs ?? 30_000,
      options: `-c plan_cache_mode=${PLAN_CACHE_MODE}`,
    });
    // An idle client losing its connection must not crash the process.
    pool.on('error', (err) => console.error('[lms] idle database client error', err.message));
    // Nor a checked-out one: pg-pool listens for errors only on idle clients, and a transaction
    // holds its client between statements. When PostgreSQL restarts (or a backend is
    // terminated) such a client emits 'error' with no listener, which would crash the process;
    // with this one, the transaction's next statement fails, the client is discarded on
    // release, and the pool opens a fresh connection for the next caller.
    pool.on('connect', (client) => {
      client.on('error', (err) => console.error('[lms] database connection lost', err.message));
    });
    const db = drizzlePg(pool, { schema }) as unknown as Db;
    return {
      db,
      driver: 'pg',
      cursor: (query, cursorOpts) => pgCursor(pool, query, cursorOpts),
      ping: async () => void (await pool.query('select 1')),
      migrate: async () => migratePg(db as never, { migrationsFolder: MIGRATIONS_FOLDER }),
      close: async () => pool.end(),
    };
  }
  let client = opts.pglite;
  if (!client) {
    const dataDir = `${opts.dataDir ?? '.data'}/pglite`;
    mkdirSync(dataDir, { recursive: true });
    client = await createPglite({ dataDir });
  }
  const lite = client;
  await lite.exec(`set plan_cache_mode = ${PLAN_CACHE_MODE}`);
  const db = drizzlePglite(lite, { schema }) as unknown as Db;
  return {
    db,
    driver: 'pglite',
    ping: async () => void (await lite.query('select 1')),
    migrate: async () => migratePglite(db as never, { migrationsFolder: MIGRATIONS_FOLDER }),
    close: async () => {
      if (!lite.closed) await lite.close();
    },
  };
}

async function* pgCursor(pool: pg.Pool, query: { sql: string; params: unknown[] }, opts: { batchSize: number; statementTimeoutMs: number }) {
  const client = await pool.connect();
  let done = false;
  let broken: Error | undefined;
  try {
    await client.query('begin read only');
    await client.query(`set local statement_timeout = ${Math.max(1, Math.trunc(opts.statementTimeoutMs))}`);
    await client.query(`declare lms_cursor no scroll cursor for ${query.sql}`, query.params as unknown[]);
    const fetch = `fetch forward ${Math.max(1, Math.trunc(opts.batchSize))} from lms_cursor`;
    for (;;) {
      const res = await client.query<Record<string, unknown>>(fetch);
      if (res.rows.length > 0) yield res.rows;
      if (res.rows.length < opts.batchSize) break;
    }
    await client.query('commit');
    done = true;
  } finally {
    // Stopped early (the consumer returned) or failed: end the transaction before the connection goes back.
    if (!done) await client.query('rollback').catch((err: Error) => (broken = err));
    client.release(broken);
  }
}

/** Rows of a raw query, whichever driver ran it. */
export async function rawRows<T>(db: DbOrTx, query: ReturnType<typeof sql>): Promise<T[]> {
  const res = (await db.execute(query)) as unknown as { rows: T[] };
  return res.rows;
}
