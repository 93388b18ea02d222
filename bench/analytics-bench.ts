/**
 * Analytics benchmark, on PostgreSQL:
 *
 *   DATABASE_URL=postgres://…/lms_bench_analytics npm run bench:analytics
 *
 * Data (generated once, set-based, and reused while its row count matches): one institution,
 * 40 courses × 25 lessons, 40,000 enrollments (1,000 students in every course) and 1,000,000
 * lesson-progress rows (BENCH_PROGRESS_ROWS is fixed by those numbers).
 *
 * 1. Grouped report: `POST /api/analytics/reports/run` of lessonProgress grouped by
 *    `course.title` (count, average progress, distinct students, completed count) over all
 *    1,000,000 rows, and grouped by `updatedAt` month with a filter; BENCH_ROUNDS rounds
 *    (default 5), the median. Ratio against the same aggregate written by hand in SQL and run
 *    with node-postgres in the same process, same run.
 * 2. CSV exports of 20,000 and 100,000 rows through HTTP (the app listening on loopback, the
 *    client reading the stream and dropping it): time, bytes and peak RSS (sampled every 10 ms)
 *    above the RSS before the export; streamed, the peak should not grow with the rows.
 *    Baseline: the same rows read with one query into memory and turned into CSV with
 *    csv-stringify/sync, the way an export built in memory would.
 *
 * Results are printed and written to bench/results/analytics-<timestamp>.json.
 */
import { writeFile, mkdir } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { request } from 'undici';
import { stringify } from 'csv-stringify/sync';
import { loadConfig } from '../src/config.js';
import { createDeps } from '../src/platform/bootstrap.js';
import { rawRows } from '../src/platform/db/client.js';
import { mintToken } from '../src/platform/auth/tokens.js';
import { buildApp } from '../src/app.js';

const INSTITUTION = 'inst_bench_analytics';
const COURSES = 40;
const LESSONS = 25;
const STUDENTS = 1_000;
const PROGRESS_ROWS = COURSES * LESSONS * STUDENTS;
const EXPORT_ROWS = 100_000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const gc = () => (globalThis as { gc?: () => void }).gc?.();
const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

/**
 * Peak RSS while `fn` runs, sampled every 10 ms, above the RSS just before it; also the peak of
 * Buffer memory (`external` + `arrayBuffers`), which shows bytes queued in streams.
 */
async function withPeakRss<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number; peakRssDeltaMb: number; peakBuffersDeltaMb: number; rssBeforeMb: number }> {
  gc();
  await new Promise((r) => setTimeout(r, 50));
  const buffers = () => {
    const m = process.memoryUsage();
    return m.external + m.arrayBuffers;
  };
  const before = process.memoryUsage().rss;
  const buffersBefore = buffers();
  let peak = before;
  let peakBuffers = buffersBefore;
  const sample = () => {
    peak = Math.max(peak, process.memoryUsage().rss);
    peakBuffers = Math.max(peakBuffers, buffers());
  };
  const timer = setInterval(sample, 10);
  const started = performance.now();
  try {
    const value = await fn();
    sample();
    return { value, ms: Math.round(performance.now() - started), peakRssDeltaMb: mb(peak - before), peakBuffersDeltaMb: mb(peakBuffers - buffersBefore), rssBeforeMb: mb(before) };
  } finally {
    clearInterval(timer);
  }
}

async function seed(db: Parameters<typeof rawRows>[0]) {
  const [{ n }] = await rawRows<{ n: number }>(db, sql`select count(*)::int as n from lesson_progress where institution_id = ${INSTITUTION}`);
  if (n === PROGRESS_ROWS) return false;
  console.log(`[bench] generating ${PROGRESS_ROWS.toLocaleString()} lesson-progress rows…`);
  await db.execute(sql`delete from courses where institution_id = ${INSTITUTION}`);
  await db.execute(sql`insert into institutions (id, slug, name, settings) values (${INSTITUTION}, 'benchanalytics', 'Bench', '{}') on conflict (id) do nothing`);
  await db.execute(sql`insert into courses (id, institution_id, title, owner_id, status, created_at, updated_at)
    select 'bc_' || c, ${INSTITUTION}, 'Course ' || lpad(c::text, 2, '0'), 'u_bench', 'PUBLISHED', now(), now() from generate_series(1, ${COURSES}) c`);
  await db.execute(sql`insert into lessons (id, institution_id, course_id, title, type, "order", created_at, updated_at)
    select 'bl_' || c || '_' || l, ${INSTITUTION}, 'bc_' || c, 'Lesson ' || l, 'TEXT', l, now(), now()
    from generate_series(1, ${COURSES}) c, generate_series(1, ${LESSONS}) l`);
  await db.execute(sql`insert into enrollments (id, institution_id, course_id, student_id, status, progress, enrolled_at, updated_at)
    select 'be_' || c || '_' || s, ${INSTITUTION}, 'bc_' || c, 'c_bench_' || s, case when s % 5 = 0 then 'COMPLETED' else 'ACTIVE' end, (s * 7) % 101,
      now() - make_interval(hours => s), now()
    from generate_series(1, ${COURSES}) c, generate_series(1, ${STUDENTS}) s`);
  // One statement per course (25,000 rows each).
  for (let c = 1; c <= COURSES; c++) {
    await db.execute(sql`insert into lesson_progress (id, institution_id, enrollment_id, lesson_id, student_id, completed, completed_at, progress_percent, score, updated_at)
      select 'bp_' || ${c} || '_' || s || '_' || l, ${INSTITUTION}, 'be_' || ${c} || '_' || s, 'bl_' || ${c} || '_' || l, 'c_bench_' || s,
        (s + l) % 3 = 0, case when (s + l) % 3 = 0 then now() - make_interval(days => (s * l) % 365) end,
        (s * l) % 101, case when l % 5 = 0 then ((s * l) % 100)::real end, now() - make_interval(days => (s * l) % 365)
      from generate_series(1, ${STUDENTS}) s, generate_series(1, ${LESSONS}) l`);
  }
  await db.execute(sql`analyze lesson_progress`);
  await db.execute(sql`analyze enrollments`);
  return true;
}

async function main() {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl?.startsWith('postgres')) throw new Error('set DATABASE_URL to a PostgreSQL database (postgres://…)');
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    AUTH_SECRET: 'bench-auth-secret-0123456789abcdef',
    CRM_API_KEY: 'bench',
    CRM_BASE_DOMAIN: 'crm.localhost',
    RATE_LIMIT_DISABLED: 'true',
    DB_STATEMENT_TIMEOUT_MS: '600000',
    REPORT_STATEMENT_TIMEOUT_MS: '120000',
  });
  const deps = await createDeps(config);
  await deps.database.migrate();
  const seedStarted = performance.now();
  const generated = await seed(deps.database.db);
  const seedMs = Math.round(performance.now() - seedStarted);
  const app = await buildApp(deps, { logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address() as { port: number };
  const token = await mintToken(config.AUTH_SECRET, { sub: 'u_bench_admin', institutionId: INSTITUTION, role: 'ADMIN' });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });

  const runReport = async (definition: unknown) => {
    const res = await app.inject({ method: 'POST', url: '/api/analytics/reports/run', headers, payload: JSON.stringify({ definition, perPage: 100 }) });
    if (res.statusCode !== 200) throw new Error(`run: ${res.statusCode} ${res.body}`);
    return res.json().data.rows as Record<string, unknown>[];
  };
  const timed = async (fn: () => Promise<unknown>) => {
    const times: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const started = performance.now();
      await fn();
      times.push(performance.now() - started);
    }
    return Math.round(median(times));
  };

  // 1. Grouped reports over 1,000,000 rows.
  const byCourse = {
    entity: 'lessonProgress',
    groupBy: ['course.title'],
    aggregates: [
      { fn: 'count', as: 'rows' },
      { fn: 'avg', field: 'progressPercent', as: 'avgProgress' },
      { fn: 'countDistinct', field: 'studentId', as: 'students' },
      { fn: 'max', field: 'updatedAt', as: 'lastUpdate' },
    ],
    sort: [{ field: 'course.title' }],
  };
  const rows = await runReport(byCourse);
  if (rows.length !== COURSES || rows.reduce((s, r) => s + Number(r.rows), 0) !== PROGRESS_ROWS) throw new Error('the grouped report does not add up');
  const groupedMs = await timed(() => runReport(byCourse));
  const handSql = `select c.title, count(*)::int, round(avg(lp.progress_percent)::numeric, 4)::float8, count(distinct lp.student_id)::int, max(lp.updated_at)
    from lesson_progress lp join lessons l on l.institution_id = lp.institution_id and l.id = lp.lesson_id
    join courses c on c.institution_id = l.institution_id and c.id = l.course_id
    where lp.institution_id = $1 group by c.title order by c.title`;
  const handMs = await timed(() => pool.query(handSql, [INSTITUTION]));
  const byMonth = {
    entity: 'lessonProgress',
    groupBy: [{ field: 'updatedAt', granularity: 'month' }],
    aggregates: [
      { fn: 'count', as: 'rows' },
      { fn: 'avg', field: 'score', as: 'avgScore' },
    ],
    filters: [{ field: 'completed', op: 'eq', value: true }],
  };
  const monthMs = await timed(() => runReport(byMonth));

  // 2. CSV exports streamed over HTTP (20,000 and 100,000 rows), then the in-memory baseline.
  const exportColumns = ['studentId', 'course.title', 'lesson.title', 'progressPercent', 'completed', 'score', 'updatedAt'];
  const streamExport = (rowsWanted: number) =>
    withPeakRss(async () => {
      const res = await request(`http://127.0.0.1:${address.port}/api/analytics/reports/export`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ definition: { entity: 'lessonProgress', columns: exportColumns, limit: rowsWanted }, format: 'CSV' }),
      });
      if (res.statusCode !== 200) throw new Error(`export: ${res.statusCode} ${await res.body.text()}`);
      let bytes = 0;
      let lines = 0;
      for await (const chunk of res.body) {
        bytes += (chunk as Buffer).length;
        for (const b of chunk as Buffer) if (b === 10) lines++;
      }
      if (lines !== rowsWanted + 1) throw new Error(`export wrote ${lines} lines`);
      return { bytes };
    });
  const inMemoryExport = (rowsWanted: number) =>
    withPeakRss(async () => {
      const res = await pool.query(
        `select lp.student_id, c.title as course, l.title as lesson, lp.progress_percent, lp.completed, lp.score, lp.updated_at
         from lesson_progress lp join lessons l on l.institution_id = lp.institution_id and l.id = lp.lesson_id
         join courses c on c.institution_id = l.institution_id and c.id = l.course_id
         where lp.institution_id = $1 order by lp.id limit ${rowsWanted}`,
        [INSTITUTION],
      );
      return { bytes: stringify(res.rows, { header: true }).length };
    });
  await streamExport(1_000); // warm-up: the CSV library loads, connections open
  const streamedSmall = await streamExport(EXPORT_ROWS / 5);
  const streamedMid = await streamExport(EXPORT_ROWS / 2);
  const streamed = await streamExport(EXPORT_ROWS);
  const inMemorySmall = await inMemoryExport(EXPORT_ROWS / 5);
  const inMemory = await inMemoryExport(EXPORT_ROWS);
  const exportSummary = (r: Awaited<ReturnType<typeof streamExport>>, rows: number) => ({
    rows,
    ms: r.ms,
    megabytes: mb(r.value.bytes),
    rowsPerSecond: Math.round(rows / (r.ms / 1000)),
    peakRssDeltaMb: r.peakRssDeltaMb,
    peakBuffersDeltaMb: r.peakBuffersDeltaMb,
    rssBeforeMb: r.rssBeforeMb,
  });

  const result = {
    at: new Date().toISOString(),
    loadAverage: loadavg().map((x) => Math.round(x * 100) / 100),
    postgres: (await rawRows<{ v: string }>(deps.database.db, sql`select current_setting('server_version') as v`))[0]!.v,
    data: { progressRows: PROGRESS_ROWS, courses: COURSES, lessons: COURSES * LESSONS, enrollments: COURSES * STUDENTS, generated, seedMs },
    groupedByCourse: { medianMs: groupedMs, handWrittenSqlMedianMs: handMs, ratio: Math.round((groupedMs / handMs) * 100) / 100 },
    groupedByMonthCompleted: { medianMs: monthMs },
    csvExport: [exportSummary(streamedSmall, EXPORT_ROWS / 5), exportSummary(streamedMid, EXPORT_ROWS / 2), exportSummary(streamed, EXPORT_ROWS)],
    inMemoryBaseline: [exportSummary(inMemorySmall, EXPORT_ROWS / 5), exportSummary(inMemory, EXPORT_ROWS)],
  };
  console.log(JSON.stringify(result, null, 2));
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(`${RESULTS_DIR}analytics-${result.at.replace(/[:.]/g, '-')}.json`, `${JSON.stringify(result, null, 2)}\n`);
  await pool.end();
  await app.close();
  await deps.cache.close?.();
  await deps.database.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
