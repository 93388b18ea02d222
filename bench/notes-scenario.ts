/**
 * Bench scenario of the notes module: GET /api/me/notes for a heavy user in a big table.
 *
 * Export (for bench/run.ts):
 *
 *   prepareNotesScenario(opts: NotesScenarioOptions): Promise<NotesScenario>
 *
 *   - `opts.databaseUrl` (required): a PostgreSQL `postgres://…` URL. The schema is migrated
 *     first (the project's drizzle migrations; `migrate: false` skips that).
 *   - It (re)generates, set-based with `insert … select … from generate_series(…)` (a few
 *     statements, no row-by-row round trips): 20 courses × 10 lessons (odd lessons VIDEO),
 *     1 heavy student with `heavyStudentNotes` notes (default 10,000) over all 200 lessons, and
 *     `totalNotes - heavyStudentNotes` notes (default 990,000) spread over `otherStudents`
 *     other students (default 9,900, i.e. 100 each), all in `institutionId`; then VACUUM ANALYZE.
 *     Every generated id starts with `bench-notes-`, and the previous run's rows are deleted
 *     first, so it can run again on the same database. For speed, lesson_notes' secondary
 *     indexes and foreign keys are dropped during the load and rebuilt after it, in the same
 *     transaction (needs table ownership, not superuser); run it before the app takes traffic.
 *   - Returns `requests`: the two requests to time, each with `actor` (claims to mint a bearer
 *     token from, e.g. `mintToken(secret, actor)`), `method`, `path`, `expectStatus` and
 *     `check(body)` (a message when a response is wrong). The app under test must run on the
 *     same DATABASE_URL. Defaults: the demo institution and DEMO_STUDENT_ID, so the DEMO_STUDENT
 *     claims of bench/run.ts fit.
 *   - Also returns `explain()`, which prints EXPLAIN (ANALYZE, BUFFERS) of both page queries
 *     and their count queries, to check the plans use `lesson_notes_inst_student_updated_idx`.
 *
 * bench/run.ts adds these requests as scenarios `me-notes` and `me-notes-search` on the
 * `app-pg` target when BENCH_DATABASE_URL is set.
 *
 * Run alone: `DATABASE_URL=postgres://… npx tsx bench/notes-scenario.ts [--explain]`
 * (BENCH_NOTES_TOTAL=… for a smaller table).
 */
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import type { MintInput } from '../src/platform/auth/tokens.js';
import { DEMO_INSTITUTION, DEMO_STUDENT_ID } from '../src/dev/crm-sim/fixtures.js';
import { bulkLoad, connectScenario } from './scenario-db.js';
import { studentClaims } from './claims.js';

export interface NotesScenarioOptions {
  databaseUrl: string;
  /** Notes in the table in all (default 1,000,000). */
  totalNotes?: number;
  /** Notes of the timed student (default 10,000). */
  heavyStudentNotes?: number;
  /** Students sharing the other notes (default 9,900). */
  otherStudents?: number;
  institutionId?: string;
  /** The timed student's person id (default DEMO_STUDENT_ID). */
  studentId?: string;
  /** Run the drizzle migrations first (default true). */
  migrate?: boolean;
  log?: (line: string) => void;
}

export interface NotesBenchRequest {
  name: string;
  description: string;
  method: 'GET';
  path: string;
  /** Session claims of the caller; mint a bearer token from them. */
  actor: MintInput;
  expectStatus: number;
  check: (body: any) => string | undefined;
}

export interface NotesScenario {
  institutionId: string;
  studentId: string;
  searchWord: string;
  notes: { total: number; student: number; studentMatchingSearch: number };
  generationSeconds: number;
  requests: NotesBenchRequest[];
  explain(): Promise<string>;
}

const COURSES = 20;
const LESSONS_PER_COURSE = 10;
const LESSONS = COURSES * LESSONS_PER_COURSE;
/** Words the generated content is made of; SEARCH_WORD is in one note of WORDS.length. */
const WORDS = ['photosynthesis', 'derivative', 'Mitochondria', 'integral', 'sonnet', 'tectonics', 'vector', 'enzyme', 'allegory', 'isotope', 'parabola', 'monsoon'];
const SEARCH_WORD = 'mitochondria';
const P = 'bench-notes-';

export async function prepareNotesScenario(opts: NotesScenarioOptions): Promise<NotesScenario> {
  const total = opts.totalNotes ?? 1_000_000;
  const heavy = opts.heavyStudentNotes ?? 10_000;
  const others = opts.otherStudents ?? 9_900;
  const inst = opts.institutionId ?? DEMO_INSTITUTION.id;
  const student = opts.studentId ?? DEMO_STUDENT_ID;
  const log = opts.log ?? ((line: string) => console.log(`[notes-scenario] ${line}`));
  if (heavy > total) throw new Error('heavyStudentNotes must not exceed totalNotes');

  const { client, step } = await connectScenario(opts, log);
  const started = Date.now();
  try {
    // Bulk-load pattern (bulkLoad): lesson_notes' secondary indexes and foreign keys dropped,
    // the rows inserted, then rebuilt (one sort per index, one join per foreign key) instead of
    // 1,000,000 random b-tree inserts and 2,000,000 row-by-row FK checks. One transaction.
    await bulkLoad(client, step, { table: 'lesson_notes', institutionId: inst, foreignKeys: true }, async () => {
      // Previous run (no secondary index now: one sequential pass), then its courses (cascades).
      await step('delete previous notes', `delete from lesson_notes where id like '${P}%'`);
      await step('delete previous courses', `delete from courses where institution_id = $1 and id like '${P}%'`, [inst]);

      await step(
        'courses',
        `insert into courses (id, institution_id, title, owner_id, status, published_at, created_at, updated_at)
       select '${P}course-' || c, $1, 'Bench course ' || c, 'u_bench_teacher', 'PUBLISHED', now(), now(), now()
       from generate_series(1, ${COURSES}) c`,
        [inst],
      );
      // Lesson l (1..200) belongs to course (l - 1) / 10 + 1; odd lessons are VIDEO.
      await step(
        'lessons',
        `insert into lessons (id, institution_id, course_id, title, type, "order", created_at, updated_at)
       select '${P}lesson-' || l, $1, '${P}course-' || ((l - 1) / ${LESSONS_PER_COURSE} + 1), 'Bench lesson ' || l,
              case when l % 2 = 1 then 'VIDEO' else 'TEXT' end, (l - 1) % ${LESSONS_PER_COURSE} + 1, now(), now()
       from generate_series(1, ${LESSONS}) l`,
        [inst],
      );
      // The heavy student is enrolled in every course; other student s only in course s % 20 + 1.
      await step(
        'enrollments',
        `insert into enrollments (id, institution_id, course_id, student_id, status, enrolled_at, updated_at)
       select '${P}enr-h-' || c, $1, '${P}course-' || c, $2, 'ACTIVE', now(), now() from generate_series(1, ${COURSES}) c
       union all
       select '${P}enr-' || s, $1, '${P}course-' || (s % ${COURSES} + 1), 'bench_stu_' || s, 'ACTIVE', now(), now()
       from generate_series(1, ${others}) s`,
        [inst, student],
      );

      const content = (g: string) =>
        `'Note ' || ${g} || ' about ' || (array[${WORDS.map((w) => `'${w}'`).join(',')}])[${g} % ${WORDS.length} + 1] || ': ' || repeat('lorem ipsum dolor sit amet ', 1 + ${g} % 12)`;
      // Ids grow with g (like the app's time-ordered UUIDv7), so primary-key inserts append.
      // Heavy student: note g on lesson g % 200 + 1, one minute apart, newest g = 1.
      await step(
        'notes of the timed student',
        `insert into lesson_notes (institution_id, id, lesson_id, student_id, enrollment_id, content, timestamp_seconds, created_at, updated_at)
       select $1, '${P}h-' || lpad(g::text, 8, '0'), '${P}lesson-' || l, $2, '${P}enr-h-' || ((l - 1) / ${LESSONS_PER_COURSE} + 1),
              ${content('g')}, case when l % 2 = 1 then g % 3600 end,
              now() - g * interval '1 minute' - interval '1 day', now() - g * interval '1 minute'
       from generate_series(1, ${heavy}) g, lateral (select g % ${LESSONS} + 1 as l) x`,
        [inst, student],
      );
      // Others: note g belongs to student g % others + 1, on a lesson of that student's course.
      await step(
        'notes of the other students',
        `insert into lesson_notes (institution_id, id, lesson_id, student_id, enrollment_id, content, timestamp_seconds, created_at, updated_at)
       select $1, '${P}o-' || lpad(g::text, 8, '0'), '${P}lesson-' || l, 'bench_stu_' || s, '${P}enr-' || s,
              ${content('g')}, case when l % 2 = 1 then g % 3600 end,
              now() - g * interval '1 second' - interval '1 day', now() - g * interval '1 second'
       from generate_series(1, ${total - heavy}) g,
            lateral (select g % ${others} + 1 as s) a,
            lateral (select (a.s % ${COURSES}) * ${LESSONS_PER_COURSE} + g % ${LESSONS_PER_COURSE} + 1 as l) b`,
        [inst],
      );
    });
    // As autovacuum leaves a table in production (visibility map, hint bits), and as the inbox
    // scenario does: otherwise autovacuum works through the fresh million rows during the rounds.
    await step('vacuum analyze', 'vacuum (analyze) lesson_notes');
    await step('analyze', 'analyze lessons, courses, enrollments, student_annotation_counts');
  } finally {
    await client.end();
  }
  const generationSeconds = (Date.now() - started) / 1000;
  log(`generated in ${generationSeconds.toFixed(1)} s`);

  const studentMatchingSearch = heavy >= 2 ? Math.floor((heavy - 2) / WORDS.length) + 1 : 0; // g ≡ 2 (mod 12), g in 1..heavy
  const actor: MintInput = studentClaims(student, inst);
  const expectPage = (expectedTotal: number) => (body: any) => {
    if (body?.meta?.total !== expectedTotal) return `expected meta.total ${expectedTotal}, got ${body?.meta?.total}`;
    if (!Array.isArray(body?.data) || body.data.length !== Math.min(20, expectedTotal)) return 'expected a full first page';
    if (!body.data.every((r: any) => typeof r.courseTitle === 'string' && typeof r.lessonTitle === 'string')) return 'rows not enriched';
    return undefined;
  };

  return {
    institutionId: inst,
    studentId: student,
    searchWord: SEARCH_WORD,
    notes: { total, student: heavy, studentMatchingSearch },
    generationSeconds,
    requests: [
      {
        name: 'me-notes',
        description: `GET /api/me/notes, page 1 of 20, a student with ${heavy.toLocaleString('en')} of ${total.toLocaleString('en')} notes`,
        method: 'GET',
        path: '/api/me/notes',
        actor,
        expectStatus: 200,
        check: expectPage(heavy),
      },
      {
        name: 'me-notes-search',
        description: `GET /api/me/notes?search=${SEARCH_WORD} (case-insensitive substring, ${studentMatchingSearch} of the student's notes match)`,
        method: 'GET',
        path: `/api/me/notes?search=${SEARCH_WORD}`,
        actor,
        expectStatus: 200,
        check: expectPage(studentMatchingSearch),
      },
    ],
    explain: () => explainQueries(opts.databaseUrl, inst, student),
  };
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of the SQL GET /api/me/notes runs (see notes.service.ts,
 * listMyNotes): the page query and the count query, without and with a search.
 */
async function explainQueries(databaseUrl: string, inst: string, student: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const page = (search: boolean) => `
    select n.id, n.lesson_id, n.content, n.timestamp_seconds, n.created_at, n.updated_at,
           l.title, l.type, c.id, c.title
    from lesson_notes n
    inner join lessons l on l.id = n.lesson_id and l.institution_id = n.institution_id
    inner join courses c on c.id = l.course_id and c.institution_id = l.institution_id
    where n.institution_id = $1 and n.student_id = $2 ${search ? `and n.content ilike $3 escape '\\'` : ''}
    order by n.updated_at desc, n.id desc limit 20 offset 0`;
  const count = (search: boolean) => `select count(*) from lesson_notes n where n.institution_id = $1 and n.student_id = $2 ${search ? `and n.content ilike $3 escape '\\'` : ''}`;
  const out: string[] = [];
  try {
    for (const [label, text, values] of [
      ['page', page(false), [inst, student]],
      ['count', count(false), [inst, student]],
      ['page, search', page(true), [inst, student, `%${SEARCH_WORD}%`]],
      ['count, search', count(true), [inst, student, `%${SEARCH_WORD}%`]],
    ] as const) {
      const res = await client.query(`explain (analyze, buffers) ${text}`, [...values]);
      out.push(`── ${label}`, ...res.rows.map((r: Record<string, string>) => r['QUERY PLAN']!));
    }
  } finally {
    await client.end();
  }
  return out.join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    console.error('usage: DATABASE_URL=postgres://… npx tsx bench/notes-scenario.ts [--explain]');
    process.exit(2);
  }
  const total = process.env.BENCH_NOTES_TOTAL ? Number(process.env.BENCH_NOTES_TOTAL) : undefined;
  const scenario = await prepareNotesScenario({ databaseUrl, totalNotes: total });
  for (const r of scenario.requests) console.log(`${r.name}: ${r.method} ${r.path} — ${r.description}`);
  if (process.argv.includes('--explain')) console.log(await scenario.explain());
}
