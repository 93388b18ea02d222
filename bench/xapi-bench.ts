/**
 * xAPI LRS benchmark (issue 15):
 *
 *   npm run bench:xapi
 *   BENCH_DATABASE_URL=postgres://postgres:pw@127.0.0.1:5445/lms_xapi_bench npm run bench:xapi
 *
 * On PostgreSQL (the database of BENCH_DATABASE_URL, created when missing and migrated), fills
 * one institution's LRS with BENCH_XAPI_TOTAL (default 1,000,000) statements in SQL (set-based
 * INSERT … SELECT in chunks, with the same index rows and digest keys the LRS writes), over 90
 * days of `stored`: 10,000 actors, one of them (the "heavy" learner) the actor of every 100th
 * statement; 10 verbs; 1,000 activities. Then it starts the app (bench/server.ts app-pg) in a
 * child process and drives with autocannon, BENCH_ROUNDS rounds (default 3) of BENCH_DURATION
 * seconds (default 10) per scenario, interleaved, BENCH_CONNECTIONS (default 10) connections:
 *
 * - `about`: GET /api/xapi/about, the in-run reference (no database);
 * - `post-batch-50`: POST /statements with an array of 50 statements (new ids each time);
 * - `get-filtered`: GET /statements?agent=<heavy learner>&verb=…&since=<30 days before the end>
 *   &limit=100 (a full page, with `more`).
 *
 * Prints req/s and p50/p99 latency per scenario (medians of the rounds), the query plan of the
 * filtered GET, and writes everything to bench/results/xapi-<timestamp>.json.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { hashSecret } from '../src/modules/xapi/xapi.credentials.js';
import { READY_PREFIX } from './server.js';

const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres:pw@127.0.0.1:5445/lms_xapi_bench';
const TOTAL = Number(process.env.BENCH_XAPI_TOTAL ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const CHUNK = 100_000;
const INSTITUTION = 'inst_xapi_bench';
const KEY = 'xk_bench';
const SECRET = 'bench-secret';
const AUTH = `Basic ${Buffer.from(`${KEY}:${SECRET}`).toString('base64')}`;
const HEAVY = 'mailto:learner0@bench.example';
const DAY_MS = 86_400_000;
/** The filled statements' `stored` runs over the 90 days before this instant. */
const FILL_END = new Date('2026-11-01T00:00:00.000Z');
const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));
const SERVER_FILE = fileURLToPath(new URL('./server.ts', import.meta.url));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function ensureDatabase() {
  const url = new URL(DATABASE_URL);
  const name = url.pathname.slice(1);
  const admin = new pg.Client({ connectionString: Object.assign(new URL(DATABASE_URL), { pathname: '/postgres' }).toString() });
  await admin.connect();
  const exists = await admin.query('select 1 from pg_database where datname = $1', [name]);
  if (exists.rowCount === 0) await admin.query(`create database ${name}`);
  await admin.end();
}

/** The digest key as xapi.keys.ts computes it: 128 bits of SHA-256, as a UUID. */
const digest = (expr: string) => `substr(encode(sha256(convert_to(${expr}, 'UTF8')), 'hex'), 1, 32)::uuid`;

async function fill(db: pg.Client) {
  const [{ n }] = (await db.query('select count(*)::int as n from xapi_statements where institution_id = $1', [INSTITUTION])).rows as Array<{ n: number }>;
  if (n >= TOTAL) {
    console.log(`[bench] ${n.toLocaleString()} statements already there`);
    return;
  }
  console.log(`[bench] filling ${TOTAL.toLocaleString()} statements…`);
  // Index rows first: their foreign keys have no index of their own (the LRS never deletes statements).
  for (const table of ['xapi_statement_agents', 'xapi_statement_activities', 'xapi_statements']) await db.query(`delete from ${table} where institution_id = $1`, [INSTITUTION]);
  await db.query('delete from xapi_activities where institution_id = $1', [INSTITUTION]);
  const started = Date.now();
  const step = (90 * DAY_MS) / TOTAL;
  for (let lo = 0; lo < TOTAL; lo += CHUNK) {
    const hi = Math.min(TOTAL, lo + CHUNK);
    await db.query(
      `with src as (
         select i,
                gen_random_uuid() as id,
                ($2::timestamptz - make_interval(secs => ($4::int - i) * $5::float8 / 1000.0)) as stored,
                'mailto:learner' || (case when i % 100 = 0 then 0 else 1 + (i::bigint * 7919) % 9999 end) || '@bench.example' as mbox,
                'http://adlnet.gov/expapi/verbs/v' || (i % 10) as verb_id,
                'http://bench.example/activities/a' || ((i * 31) % 1000) as activity_id
         from generate_series($6::int, $7::int - 1) as i
       ), ins as (
         insert into xapi_statements (institution_id, id, stored, verb_key, voided, statement)
         select $1, id, stored, ${digest(`'verb:' || verb_id`)}, false,
                jsonb_build_object(
                  'id', id,
                  'actor', jsonb_build_object('objectType', 'Agent', 'mbox', mbox),
                  'verb', jsonb_build_object('id', verb_id, 'display', jsonb_build_object('en-US', 'verb ' || (i % 10))),
                  'object', jsonb_build_object('objectType', 'Activity', 'id', activity_id),
                  'result', jsonb_build_object('score', jsonb_build_object('scaled', (i % 100) / 100.0), 'completion', true),
                  'timestamp', to_char(stored at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                  'stored', to_char(stored at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                  'authority', jsonb_build_object('objectType', 'Agent', 'name', 'Bench', 'account', jsonb_build_object('homePage', 'http://lms.bench/xapi/credentials', 'name', $3::text)),
                  'version', '1.0.0')
         from src order by i
         returning seq, statement
       ), agents as (
         insert into xapi_statement_agents (institution_id, statement_seq, agent_key, as_actor, direct)
         select $1, seq, ${digest(`'agent:["Agent","mbox","' || (statement->'actor'->>'mbox') || '"]'`)}, true, true from ins
       )
       insert into xapi_statement_activities (institution_id, statement_seq, activity_key, direct)
       select $1, seq, ${digest(`'activity:' || (statement->'object'->>'id')`)}, true from ins`,
      [INSTITUTION, FILL_END.toISOString(), KEY, TOTAL, step, lo, hi],
    );
    process.stdout.write(`[bench]   ${hi.toLocaleString()} (${Math.round((Date.now() - started) / 1000)} s)\n`);
  }
  await db.query(
    `insert into xapi_activities (id, institution_id, activity_key, activity_id, definition, updated_at)
     select gen_random_uuid()::text, $1, ${digest(`'activity:http://bench.example/activities/a' || a`)}, 'http://bench.example/activities/a' || a,
            jsonb_build_object('name', jsonb_build_object('en-US', 'Activity ' || a)), now()
     from generate_series(0, 999) as a`,
    [INSTITUTION],
  );
  await db.query('analyze xapi_statements; analyze xapi_statement_agents; analyze xapi_statement_activities; analyze xapi_activities');
  console.log(`[bench] filled in ${Math.round((Date.now() - started) / 1000)} s`);
}

async function startServer(): Promise<{ url: string; child: ChildProcess }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'lms-bench-xapi-'));
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER_FILE, 'app-pg'], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, BENCH_DATABASE_URL: DATABASE_URL, BENCH_DATA_DIR: dataDir, BENCH_AUTH_SECRET: 'bench-auth-secret-0123456789abcdef' },
  });
  child.once('exit', () => void rm(dataDir, { recursive: true, force: true }));
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the app did not start within 120 s')), 120_000);
    child.once('exit', (code) => reject(new Error(`the app exited with code ${code}`)));
    lines.on('line', (line) => {
      if (line.startsWith(READY_PREFIX)) {
        clearTimeout(timer);
        resolve((JSON.parse(line.slice(READY_PREFIX.length)) as { url: string }).url);
      }
    });
  });
  return { url, child };
}

interface Scenario {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  expect: number;
}

function scenarios(): Scenario[] {
  const batch = Array.from({ length: 50 }, (_, i) => ({
    actor: { objectType: 'Agent', mbox: `mailto:learner${1 + ((i * 7919) % 9999)}@bench.example`, name: `Learner ${i}` },
    verb: { id: `http://adlnet.gov/expapi/verbs/v${i % 10}`, display: { 'en-US': `verb ${i % 10}` } },
    object: { objectType: 'Activity', id: `http://bench.example/activities/a${(i * 31) % 1000}`, definition: { name: { 'en-US': `Activity ${(i * 31) % 1000}` } } },
    result: { score: { scaled: 0.5 }, completion: true, duration: 'PT4M30S' },
    context: { registration: '6fbd0e2c-6b87-4b8c-9b43-0f3c9e0c7a11', contextActivities: { parent: [{ id: 'http://bench.example/courses/c1' }] } },
  }));
  const since = new Date(FILL_END.getTime() - 30 * DAY_MS).toISOString();
  const query = new URLSearchParams({ agent: JSON.stringify({ mbox: HEAVY }), verb: 'http://adlnet.gov/expapi/verbs/v0', since, limit: '100' });
  return [
    { name: 'about', method: 'GET', path: '/api/xapi/about', expect: 200 },
    { name: 'post-batch-50', method: 'POST', path: '/api/xapi/statements', body: JSON.stringify(batch), expect: 200 },
    { name: 'get-filtered', method: 'GET', path: `/api/xapi/statements?${query}`, expect: 200 },
  ];
}

const headersOf = (s: Scenario) => ({ authorization: AUTH, 'x-experience-api-version': '1.0.3', ...(s.body ? { 'content-type': 'application/json' } : {}) });

async function probe(base: string, s: Scenario) {
  const res = await fetch(base + s.path, { method: s.method, headers: headersOf(s), body: s.body });
  const text = await res.text();
  if (res.status !== s.expect) throw new Error(`${s.name}: expected ${s.expect}, got ${res.status}: ${text.slice(0, 300)}`);
  if (s.name === 'get-filtered') {
    const page = JSON.parse(text) as { statements: unknown[]; more: string };
    if (page.statements.length !== 100 || !page.more) throw new Error(`get-filtered: expected a full page of 100 with more, got ${page.statements.length}`);
  }
  if (s.name === 'post-batch-50' && (JSON.parse(text) as string[]).length !== 50) throw new Error('post-batch-50: expected 50 ids');
}

async function run(base: string, s: Scenario) {
  const r = await autocannon({
    url: base + s.path,
    method: s.method,
    headers: headersOf(s),
    body: s.body,
    connections: CONNECTIONS,
    pipelining: 1,
    duration: DURATION,
    timeout: 30,
  });
  const wrong = Object.entries(r.statusCodeStats).filter(([code]) => Number(code) !== s.expect);
  return {
    requestsPerSec: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    total: r.requests.total,
    errors: r.errors,
    timeouts: r.timeouts,
    wrongStatus: Object.fromEntries(wrong.map(([c, v]) => [c, v.count])),
  };
}

async function main() {
  await ensureDatabase();
  const db = new pg.Client({ connectionString: DATABASE_URL });
  await db.connect();
  const { url, child } = await startServer(); // migrates the database
  try {
    await db.query(`insert into institutions (id, settings, created_at, updated_at) values ($1, '{}'::jsonb, now(), now()) on conflict (id) do nothing`, [INSTITUTION]);
    await fill(db);
    await db.query('delete from xapi_credentials where key = $1', [KEY]);
    await db.query(`insert into xapi_credentials (id, institution_id, key, secret_hash, name, created_by, created_at) values ('cred_bench', $1, $2, $3, 'Bench', 'bench', now())`, [
      INSTITUTION,
      KEY,
      await hashSecret(SECRET),
    ]);
    const list = scenarios();
    for (const s of list) await probe(url, s);
    const load = loadavg();
    console.log(`[bench] load average ${load.map((x) => x.toFixed(2)).join(' ')}; ${ROUNDS} rounds × ${DURATION} s, ${CONNECTIONS} connections`);
    const results: Record<string, Array<Awaited<ReturnType<typeof run>>>> = {};
    for (let round = 1; round <= ROUNDS; round++) {
      for (const s of list) {
        const r = await run(url, s);
        (results[s.name] ??= []).push(r);
        console.log(
          `[bench] round ${round} ${s.name}: ${r.requestsPerSec.toFixed(1)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms${Object.keys(r.wrongStatus).length ? ` WRONG ${JSON.stringify(r.wrongStatus)}` : ''}`,
        );
      }
    }
    const heavyKey = (await db.query(`select ${digest(`$1::text`)} as k`, [`agent:["Agent","mbox","${HEAVY}"]`])).rows[0].k as string;
    const verbKey = (await db.query(`select ${digest(`$1::text`)} as k`, ['verb:http://adlnet.gov/expapi/verbs/v0'])).rows[0].k as string;
    const plan = await db.query(
      `explain (analyze, buffers, costs off)
       select x.seq, x.statement from xapi_statements x where x.institution_id = $1 and x.seq in (
         select s.seq from xapi_statements s where s.institution_id = $1 and not s.voided and s.stored > $2::timestamptz
           and s.verb_key = $3 and exists (select 1 from xapi_statement_agents ma where ma.institution_id = s.institution_id and ma.statement_seq = s.seq and ma.agent_key = $4 and ma.direct)
         order by s.seq desc limit 101) order by x.seq desc limit 101`,
      [INSTITUTION, new Date(FILL_END.getTime() - 30 * DAY_MS).toISOString(), verbKey, heavyKey],
    );
    const [{ n }] = (await db.query('select count(*)::int as n from xapi_statements where institution_id = $1', [INSTITUTION])).rows as Array<{ n: number }>;
    const summary = Object.fromEntries(
      Object.entries(results).map(([name, rs]) => [
        name,
        {
          requestsPerSec: median(rs.map((r) => r.requestsPerSec)),
          p50: median(rs.map((r) => r.p50)),
          p99: median(rs.map((r) => r.p99)),
          statementsPerSec: name === 'post-batch-50' ? median(rs.map((r) => r.requestsPerSec)) * 50 : undefined,
        },
      ]),
    );
    console.log('\nscenario          req/s   p50 ms   p99 ms');
    for (const [name, s] of Object.entries(summary))
      console.log(`${name.padEnd(16)} ${s.requestsPerSec.toFixed(1).padStart(7)} ${String(s.p50).padStart(8)} ${String(s.p99).padStart(8)}`);
    console.log('\nplan of the filtered query:\n' + plan.rows.map((r) => r['QUERY PLAN']).join('\n'));
    await mkdir(RESULTS_DIR, { recursive: true });
    const file = join(RESULTS_DIR, `xapi-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    await writeFile(
      file,
      JSON.stringify(
        {
          startedLoadAverage: load,
          statementsInStore: n,
          rounds: ROUNDS,
          durationSec: DURATION,
          connections: CONNECTIONS,
          summary,
          results,
          plan: plan.rows.map((r) => r['QUERY PLAN']),
        },
        null,
        2,
      ),
    );
    console.log(`\n[bench] ${n.toLocaleString()} statements in the store at the end; results in ${file}`);
  } finally {
    child.kill('SIGTERM');
    await db.end();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
