import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { createPglite, openDatabase, type Database } from '../../src/platform/db/client.js';
import { newId } from '../../src/platform/ids.js';

export const TEMPLATE_DUMP = '.test-data/pglite-template.tar.gz';
export const PG_TEMPLATE_DB = 'lms_test_template';

/** With DATABASE_URL set the suite runs on PostgreSQL, otherwise on PGlite. */
export const usingPostgres = () => Boolean(process.env.DATABASE_URL);

export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * A fresh, migrated database for one test app: a PGlite restored from the migrated template
 * dump, or a PostgreSQL database created from the migrated template database.
 */
export async function freshDatabase(): Promise<Database> {
  const url = process.env.DATABASE_URL;
  if (!url) {
    const dump = await readFile(TEMPLATE_DUMP);
    const pglite = await createPglite({ loadDataDir: new Blob([dump]) });
    return openDatabase({ pglite });
  }
  const name = `lms_test_${newId().replace(/-/g, '')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`create database ${name} template ${PG_TEMPLATE_DB}`);
  } finally {
    await admin.end();
  }
  const database = await openDatabase({ databaseUrl: withDatabase(url, name), poolSize: 5 });
  const close = database.close;
  return {
    ...database,
    close: async () => {
      await close();
      const dropper = new pg.Client({ connectionString: url });
      await dropper.connect();
      await dropper.query(`drop database if exists ${name} with (force)`).catch(() => undefined);
      await dropper.end();
    },
  };
}
