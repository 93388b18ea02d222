import { mkdir, writeFile } from 'node:fs/promises';
import pg from 'pg';
import { createPglite, openDatabase } from '../src/platform/db/client.js';
import { PG_TEMPLATE_DB, TEMPLATE_DUMP, withDatabase } from './helpers/database.js';

/** Migrate once per run; every test app then starts from a copy of the migrated database. */
export default async function setup() {
  const url = process.env.DATABASE_URL;
  if (!url) {
    const pglite = await createPglite();
    const database = await openDatabase({ pglite });
    await database.migrate();
    const dump = await pglite.dumpDataDir('gzip');
    await mkdir('.test-data', { recursive: true });
    await writeFile(TEMPLATE_DUMP, Buffer.from(await dump.arrayBuffer()));
    await database.close();
    return;
  }
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  // Leftover test databases from an interrupted run.
  const { rows } = await admin.query(`select datname from pg_database where datname like 'lms_test_%'`);
  for (const r of rows) await admin.query(`drop database if exists ${r.datname} with (force)`);
  await admin.query(`create database ${PG_TEMPLATE_DB}`);
  await admin.end();
  const database = await openDatabase({ databaseUrl: withDatabase(url, PG_TEMPLATE_DB), poolSize: 1 });
  await database.migrate();
  await database.close();
}
