/**
 * Bench data for `GET /api/notifications/unread-count` on PostgreSQL: the polled student has a
 * full inbox in a large notifications table, so the count is measured as production runs it,
 * not over an empty table.
 *
 * Export (for bench/run.ts):
 *
 *   prepareInboxScenario(opts: InboxScenarioOptions): Promise<InboxScenario>
 *
 *   - `opts.databaseUrl` (required): a PostgreSQL `postgres://…` URL, migrated first.
 *   - It (re)generates, set-based (`insert … select … from generate_series(…)`): for the timed
 *     student `studentNotifications` notifications (default 5,000), each with its IN_APP,
 *     e-mail and push row (15,000 rows), every third IN_APP row unread; and other people's
 *     rows up to `totalRows` in all (default 1,000,000), over `otherRecipients` (default
 *     20,000) recipients of the same institution, the same mix. Then ANALYZE. Every generated
 *     id starts with `bench-inbox-`; the previous run's rows are deleted first.
 *   - Returns the expected unread count of the student (their unread IN_APP rows among the
 *     generated ones) and a `check` for the scenario's response.
 *
 * Run alone: `DATABASE_URL=postgres://… npx tsx bench/inbox-scenario.ts [--explain]`
 * (BENCH_INBOX_TOTAL=… for another table size).
 */
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { DEMO_INSTITUTION, DEMO_STUDENT_ID } from '../src/dev/crm-sim/fixtures.js';
import { bulkLoad, connectScenario } from './scenario-db.js';

export interface InboxScenarioOptions {
  databaseUrl: string;
  /** Notification rows in the table in all (default 1,000,000). */
  totalRows?: number;
  /** Notifications of the timed student, three rows each (default 5,000). */
  studentNotifications?: number;
  otherRecipients?: number;
  institutionId?: string;
  studentId?: string;
  migrate?: boolean;
  log?: (line: string) => void;
}

export interface InboxScenario {
  rows: { total: number; student: number; studentUnread: number };
  generationSeconds: number;
  /** A message when an unread-count response is wrong (the student's generated unread rows, plus any the app made itself). */
  check: (body: any) => string | undefined;
  explain(): Promise<string>;
}

const P = 'bench-inbox-';
const CHANNELS = `(array['IN_APP', 'email', 'push'])`;

export async function prepareInboxScenario(opts: InboxScenarioOptions): Promise<InboxScenario> {
  const total = opts.totalRows ?? 1_000_000;
  const perStudent = opts.studentNotifications ?? 5_000;
  const others = opts.otherRecipients ?? 20_000;
  const inst = opts.institutionId ?? DEMO_INSTITUTION.id;
  const student = opts.studentId ?? DEMO_STUDENT_ID;
  const log = opts.log ?? ((line: string) => console.log(`[inbox-scenario] ${line}`));
  const studentRows = perStudent * 3;
  if (studentRows > total) throw new Error('the student’s rows must not exceed totalRows');
  const otherNotifications = Math.floor((total - studentRows) / 3);

  const { client, step } = await connectScenario(opts, log);
  const started = Date.now();
  // One generated notification: its three channel rows, IN_APP unread for every third, others read and SENT.
  const rowsOf = (recipient: string, count: number, prefix: string) => `
    insert into notifications (institution_id, id, recipient_id, key, category, channel, status, title, message, metadata,
      frequency, is_read, read_at, sent_at, attempts, created_at, updated_at)
    select $1, '${P}${prefix}-' || n || '-' || c, ${recipient}, 'ASSESS_GRADED', 'ASSESSMENT', ${CHANNELS}[c],
      case when c = 3 then 'SKIPPED' else 'SENT' end, 'Graded: Quiz ' || n, 'Your work was graded.', '{}'::jsonb,
      'IMMEDIATE', n % 3 <> 0, case when n % 3 <> 0 then now() end, now(), 1,
      now() - (n || ' minutes')::interval, now() - (n || ' minutes')::interval
    from generate_series(1, ${count}) n, generate_series(1, 3) c`;
  try {
    await bulkLoad(client, step, { table: 'notifications', institutionId: inst }, async () => {
      await step('delete previous rows', `delete from notifications where id like '${P}%'`);
      await step('student inbox', rowsOf('$2', perStudent, 'student'), [inst, student]);
      await step('other recipients', rowsOf(`'${P}person-' || (n % ${others})`, otherNotifications, 'other'), [inst]);
    });
  } catch (err) {
    await client.end();
    throw err;
  }
  // As autovacuum would have: statistics, and the visibility map that lets the count read the index only.
  await step('vacuum analyze', 'vacuum (analyze) notifications');
  const [{ n: rows }] = (await client.query<{ n: number }>(`select count(*)::int as n from notifications`)).rows as [{ n: number }];
  await client.end();
  const studentUnread = Math.floor(perStudent / 3);
  return {
    rows: { total: rows, student: studentRows, studentUnread },
    generationSeconds: Math.round((Date.now() - started) / 100) / 10,
    check: (body) =>
      typeof body?.data?.count === 'number' && body.data.count >= studentUnread ? undefined : `expected at least ${studentUnread} unread, got ${JSON.stringify(body?.data)}`,
    explain: async () => {
      const c = new pg.Client({ connectionString: opts.databaseUrl });
      await c.connect();
      try {
        const plan = await c.query(
          `explain (analyze, buffers) select count(*) from notifications
           where institution_id = $1 and recipient_id = $2 and channel = 'IN_APP' and is_read = false and status in ('PENDING', 'SENT')`,
          [inst, student],
        );
        return plan.rows.map((r) => r['QUERY PLAN']).join('\n');
      } finally {
        await c.end();
      }
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl?.startsWith('postgres')) throw new Error('set DATABASE_URL to a PostgreSQL database (postgres://…)');
  const scenario = await prepareInboxScenario({ databaseUrl, totalRows: process.env.BENCH_INBOX_TOTAL ? Number(process.env.BENCH_INBOX_TOTAL) : undefined });
  console.log(JSON.stringify({ rows: scenario.rows, generationSeconds: scenario.generationSeconds }));
  if (process.argv.includes('--explain')) console.log(await scenario.explain());
}
