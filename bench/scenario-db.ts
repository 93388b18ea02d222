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

type Step = Awaited<ReturnType<typeof connectScenario>>['step'];

/**
 * One transaction of bulk inserts into `table`, for the institution `institutionId` (its row
 * made if missing): the table's secondary indexes (and, with `foreignKeys`, its foreign keys)
 * are dropped before `load` and rebuilt after it, one sort per index and one join per key
 * instead of row-by-row upkeep. Their definitions are read from the catalog, so this follows the
 * migrations. A failure rolls everything back and is thrown.
 */
export async function bulkLoad(client: pg.Client, step: Step, opts: { table: string; institutionId: string; foreignKeys?: boolean }, load: () => Promise<void>): Promise<void> {
  const { table } = opts;
  try {
    await client.query('begin');
    await client.query(`set local maintenance_work_mem = '256MB'`);
    await client.query(`set local synchronous_commit = off`);
    await client.query(`insert into institutions (id, settings, created_at, updated_at) values ($1, '{}'::jsonb, now(), now()) on conflict (id) do nothing`, [opts.institutionId]);
    const { rows: indexDefs } = await client.query<{ indexdef: string; indexname: string }>(
      `select indexname, indexdef from pg_indexes i
       where schemaname = current_schema() and tablename = $1
         and not exists (select 1 from pg_constraint c where c.conname = i.indexname and c.conrelid = $1::regclass)`,
      [table],
    );
    const { rows: fkDefs } = opts.foreignKeys
      ? await client.query<{ conname: string; def: string }>(
          `select conname, pg_get_constraintdef(oid) as def from pg_constraint where conrelid = $1::regclass and contype = 'f'`,
          [table],
        )
      : { rows: [] };
    for (const fk of fkDefs) await client.query(`alter table ${table} drop constraint "${fk.conname}"`);
    for (const ix of indexDefs) await client.query(`drop index "${ix.indexname}"`);
    await load();
    for (const ix of indexDefs) await step(`rebuild ${ix.indexname}`, ix.indexdef);
    for (const fk of fkDefs) await step(`re-add ${fk.conname}`, `alter table ${table} add constraint "${fk.conname}" ${fk.def}`);
    await client.query('commit');
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    throw err;
  }
}
