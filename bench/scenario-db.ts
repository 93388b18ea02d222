import pg from 'pg';
import { openDatabase } from '../src/platform/db/client.js';

/**
 * A bench scenario's connection to its PostgreSQL database: migrated first (unless told not to),
 * then one client for the bulk statements, and `step`, which runs one and logs its row count and
 * time. The caller ends the client.
 */
export async function connectScenario(opts: { databaseUrl: string; migrate?: boolean }, log: (line: string) => void) {
  if (opts.migrate ?? true) {
    const database = await openDatabase({ databaseUrl: opts.databaseUrl, poolSize: 1 });
    try {
      await database.migrate();
    } finally {
      await database.close();
    }
  }
  const client = new pg.Client({ connectionString: opts.databaseUrl });
  await client.connect();
  const step = async (label: string, text: string, values: unknown[] = []) => {
    const t0 = Date.now();
    const res = await client.query(text, values);
    log(`${label}: ${res.rowCount ?? 0} rows in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  };
  return { client, step };
}
