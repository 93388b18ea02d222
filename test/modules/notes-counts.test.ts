/**
 * The unfiltered totals of GET /api/me/notes and /api/me/bookmarks come from a per-student
 * counter row (student_annotation_counts) that triggers keep in the transaction of every insert
 * and delete: through the API, through cascades (lesson, course, enrollment deleted), truncation,
 * a row moved by raw SQL, and (on PostgreSQL) concurrent transactions, some rolled back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, createLesson, enroll } from '../helpers/factories.js';
import { addBookmark as postBookmark, addNote as postNote, twoCoursesWithStudents } from '../helpers/annotations.js';
import { expectOk } from '../helpers/expect.js';
import { usingPostgres } from '../helpers/database.js';
import { rawRows } from '../../src/platform/db/client.js';
import type { Course, Lesson } from '../../src/modules/courses/courses.tables.js';

const INST = 'inst_demo';
const S1 = 'c_demo_stu_01';
const S2 = 'c_demo_stu_02';
const S3 = 'c_demo_stu_03';

let t: TestApp;
let course: Course;
let lessons: Lesson[];
let otherLesson: Lesson;
let tokens: Record<string, string>;

beforeAll(async () => {
  t = await createTestApp();
  ({ course, lessons, otherLesson, tokens } = await twoCoursesWithStudents(t, [S1, S2, S3], 3));
}, 120_000);
afterAll(() => t?.close());

const addNote = (student: string, lesson: Lesson, content?: string) => postNote(t, tokens[student], lesson, content);
const addBookmark = (student: string, lesson: Lesson, label?: string) => postBookmark(t, tokens[student], lesson, label);

/** What the API says, what the counter row holds, and what counting the rows gives. */
async function totals(student: string) {
  const notes = await t.request('GET', '/api/me/notes', { token: tokens[student] });
  const bookmarks = await t.request('GET', '/api/me/bookmarks', { token: tokens[student] });
  const [counter] = await rawRows<{ notes: number; bookmarks: number }>(
    t.db,
    sql`select notes, bookmarks from student_annotation_counts where institution_id = ${INST} and id = ${student}`,
  );
  const [rows] = await rawRows<{ notes: number; bookmarks: number }>(
    t.db,
    sql`select (select count(*)::int from lesson_notes where institution_id = ${INST} and student_id = ${student}) as notes,
               (select count(*)::int from lesson_bookmarks where institution_id = ${INST} and student_id = ${student}) as bookmarks`,
  );
  return {
    api: { notes: notes.body.meta.total as number, bookmarks: bookmarks.body.meta.total as number },
    counter: counter ? { notes: counter.notes, bookmarks: counter.bookmarks } : { notes: 0, bookmarks: 0 },
    rows: rows!,
  };
}

async function expectExact(student: string, expected: { notes: number; bookmarks: number }) {
  const got = await totals(student);
  expect(got.rows, `${student}: rows`).toEqual(expected);
  expect(got.counter, `${student}: counter row`).toEqual(expected);
  expect(got.api, `${student}: meta.total`).toEqual(expected);
}

describe('note and bookmark totals', () => {
  it('follow creates and deletes through the API; a student with none has 0 and 0', async () => {
    await expectExact(S3, { notes: 0, bookmarks: 0 });
    const n1 = await addNote(S1, lessons[0]!);
    await addNote(S1, lessons[1]!);
    await addNote(S1, otherLesson);
    const b1 = await addBookmark(S1, lessons[0]!);
    await addBookmark(S1, otherLesson);
    await addNote(S2, lessons[0]!);
    await expectExact(S1, { notes: 3, bookmarks: 2 });
    await expectExact(S2, { notes: 1, bookmarks: 0 });
    expectOk(await t.request('DELETE', `/api/lessons/${lessons[0]!.id}/notes/${n1.id}`, { token: tokens[S1] }));
    expectOk(await t.request('DELETE', `/api/lessons/${lessons[0]!.id}/bookmarks/${b1.id}`, { token: tokens[S1] }));
    // Someone else's note is 404 and changes nothing.
    const s2Note = (await t.request('GET', `/api/lessons/${lessons[0]!.id}/notes`, { token: tokens[S2] })).body.data[0];
    expect((await t.request('DELETE', `/api/lessons/${lessons[0]!.id}/notes/${s2Note.id}`, { token: tokens[S1] })).status).toBe(404);
    await expectExact(S1, { notes: 2, bookmarks: 1 });
    await expectExact(S2, { notes: 1, bookmarks: 0 });
  });

  it('the unfiltered total is the counter row; filtered totals are counted', async () => {
    await t.db.execute(sql`update student_annotation_counts set notes = notes + 1000 where institution_id = ${INST} and id = ${S1}`);
    try {
      const all = await t.request('GET', '/api/me/notes', { token: tokens[S1] });
      expect(all.body.meta.total).toBe(1002);
      const inCourse = await t.request('GET', '/api/me/notes', { token: tokens[S1], query: { courseId: course.id } });
      expect(inCourse.body.meta.total).toBe(1);
      const searched = await t.request('GET', '/api/me/notes', { token: tokens[S1], query: { search: 'note' } });
      expect(searched.body.meta.total).toBe(2);
      // Past the last page the page query has no row to carry the total: the counter is read alone.
      const past = await t.request('GET', '/api/me/notes', { token: tokens[S1], query: { page: 9 } });
      expect(past.body).toMatchObject({ data: [], meta: { total: 1002, page: 9 } });
    } finally {
      await t.db.execute(sql`update student_annotation_counts set notes = notes - 1000 where institution_id = ${INST} and id = ${S1}`);
    }
    await expectExact(S1, { notes: 2, bookmarks: 1 });
  });

  it('stay exact when deleting a lesson cascades to several students’ notes and bookmarks', async () => {
    const lesson = lessons[2]!;
    for (const s of [S1, S2, S3]) {
      await addNote(s, lesson);
      await addNote(s, lesson);
      await addBookmark(s, lesson);
    }
    await expectExact(S3, { notes: 2, bookmarks: 1 });
    expectOk(await t.request('DELETE', `/api/lessons/${lesson.id}`, { token: tokens.teacher }));
    await expectExact(S1, { notes: 2, bookmarks: 1 });
    await expectExact(S2, { notes: 1, bookmarks: 0 });
    await expectExact(S3, { notes: 0, bookmarks: 0 });
  });

  it('stay exact when a course or an enrollment is deleted (cascades in the schema; no route deletes them)', async () => {
    const extra = await createCourse(t, { institutionId: INST, ownerId: 'u_demo_teacher' });
    const l1 = await createLesson(t, { courseId: extra.id, type: 'VIDEO' });
    const l2 = await createLesson(t, { courseId: extra.id, type: 'TEXT' });
    const e3 = await enroll(t, { courseId: extra.id, studentId: S3 });
    await enroll(t, { courseId: extra.id, studentId: S2 });
    await addNote(S3, l1);
    await addNote(S3, l2);
    await addBookmark(S3, l2);
    await addNote(S2, l1);
    await expectExact(S3, { notes: 2, bookmarks: 1 });
    // The enrollment's notes cascade (bookmarks do not hang on the enrollment).
    await t.db.execute(sql`delete from enrollments where institution_id = ${INST} and id = ${e3.id}`);
    await expectExact(S3, { notes: 0, bookmarks: 1 });
    await t.db.execute(sql`delete from courses where institution_id = ${INST} and id = ${extra.id}`);
    await expectExact(S3, { notes: 0, bookmarks: 0 });
    await expectExact(S2, { notes: 1, bookmarks: 0 });
  });

  it('follow a row moved to another student by raw SQL, and a truncation', async () => {
    const note = await addNote(S2, otherLesson);
    await expectExact(S2, { notes: 2, bookmarks: 0 });
    await t.db.execute(sql`update lesson_notes set student_id = ${S3} where institution_id = ${INST} and id = ${note.id}`);
    await expectExact(S2, { notes: 1, bookmarks: 0 });
    await expectExact(S3, { notes: 1, bookmarks: 0 });
    // A content edit does not touch the counters.
    expectOk(
      await t.request('PATCH', `/api/lessons/${lessons[1]!.id}/notes/${(await t.request('GET', `/api/lessons/${lessons[1]!.id}/notes`, { token: tokens[S1] })).body.data[0].id}`, {
        token: tokens[S1],
        body: { content: 'edited' },
      }),
    );
    await expectExact(S1, { notes: 2, bookmarks: 1 });
    await t.db.execute(sql`truncate lesson_bookmarks`);
    await expectExact(S1, { notes: 2, bookmarks: 0 });
    await t.db.execute(sql`truncate lesson_notes`);
    for (const s of [S1, S2, S3]) await expectExact(s, { notes: 0, bookmarks: 0 });
  });
});

describe.skipIf(!usingPostgres())('note and bookmark totals under concurrent transactions (PostgreSQL)', () => {
  it('stay exact with 8 connections writing for the same students, some transactions rolled back, while multi-student deletes and lesson deletions cascade', async () => {
    const url = (t.deps.database.db as unknown as { $client: pg.Pool }).$client.options.connectionString!;
    const doomed: Lesson[] = [];
    for (let i = 0; i < 4; i++) doomed.push(await createLesson(t, { courseId: course.id, type: 'VIDEO' }));
    const targets = [lessons[0]!, lessons[1]!, ...doomed];
    const enrollmentOf = new Map(
      (await rawRows<{ id: string; student_id: string }>(t.db, sql`select id, student_id from enrollments where institution_id = ${INST} and course_id = ${course.id}`)).map(
        (r) => [r.student_id, r.id],
      ),
    );
    const students = [S1, S2, S3];
    const outcome = { committed: 0, rolledBack: 0, refusedByForeignKey: 0, deadlocks: 0 };
    /**
     * Two statements that each delete rows of several students (the sweeper's and a lesson's
     * cascade) lock those rows in their own orders, so PostgreSQL may find them deadlocked and
     * abort one: that statement then changed nothing, which the counters must show as well.
     */
    const unlessDeadlocked = async (statement: Promise<unknown>) => {
      try {
        await statement;
      } catch (err) {
        if ((err as { code?: string }).code !== '40P01') throw err;
        outcome.deadlocks++;
      }
    };
    let seq = 0;
    const withClient = async (fn: (c: pg.Client) => Promise<void>) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await fn(client);
      } finally {
        await client.end();
      }
    };
    /**
     * Like the API's: each transaction changes one student's rows on one lesson, either
     * inserting (notes and a bookmark) or deleting in one statement; one in five is rolled back.
     * (A transaction that took a student's counter and then a lock a cascade holds could
     * deadlock with it; the services never do that.)
     */
    const writer = (w: number) =>
      withClient(async (client) => {
        for (let round = 0; round < 30; round++) {
          const s = students[(w + round) % students.length]!;
          try {
            await client.query('begin');
            if (round % 3 === 2) {
              const table = round % 2 ? 'lesson_notes' : 'lesson_bookmarks';
              await client.query(`delete from ${table} where id in (select id from ${table} where student_id = $1 and id like 'c%' order by random() limit 2)`, [s]);
            } else {
              const lesson = targets[(w * 7 + round) % targets.length]!.id;
              for (let i = 0; i < 3; i++) {
                await client.query(
                  `insert into lesson_notes (institution_id, id, lesson_id, student_id, enrollment_id, content, created_at, updated_at) values ($1, $2, $3, $4, $5, 'c', now(), now())`,
                  [INST, `cc-${w}-${seq++}`, lesson, s, enrollmentOf.get(s)],
                );
              }
              await client.query(`insert into lesson_bookmarks (institution_id, id, lesson_id, student_id, timestamp_seconds, created_at) values ($1, $2, $3, $4, 1, now())`, [
                INST,
                `cb-${w}-${seq++}`,
                lesson,
                s,
              ]);
            }
            if (round % 5 === 4) {
              await client.query('rollback');
              outcome.rolledBack++;
            } else {
              await client.query('commit');
              outcome.committed++;
            }
          } catch (err) {
            await client.query('rollback');
            const code = (err as { code?: string }).code;
            // A lesson deleted under the writer refuses it; and a writer that holds a student's
            // counter (its notes) when it meets the lesson a cascade is deleting (its bookmark)
            // may deadlock with that cascade, which waits for the counter: either is rolled back.
            if (code === '40P01') outcome.deadlocks++;
            else if (code === '23503') outcome.refusedByForeignKey++;
            else throw err;
          }
        }
      });
    /** One statement deleting rows of several students at once (as a cascade does). */
    const sweeper = () =>
      withClient(async (client) => {
        for (let i = 0; i < 15; i++) {
          await unlessDeadlocked(client.query(`delete from lesson_notes where id in (select id from lesson_notes where id like 'cc-%' order by random() limit 3)`));
          await unlessDeadlocked(client.query(`delete from lesson_bookmarks where id in (select id from lesson_bookmarks where id like 'cb-%' order by random() limit 2)`));
        }
      });
    const deleter = () =>
      withClient(async (client) => {
        for (const l of doomed) {
          await new Promise((r) => setTimeout(r, 30));
          await unlessDeadlocked(client.query('delete from lessons where institution_id = $1 and id = $2', [INST, l.id]));
        }
      });
    /** Filtered totals read through the API all along: each is cached at whatever version its statement saw. */
    let writing = true;
    const filtered = (s: string) =>
      Promise.all([
        t.request('GET', '/api/me/notes', { token: tokens[s], query: { search: 'c', perPage: 1, page: 2 } }),
        t.request('GET', '/api/me/bookmarks', { token: tokens[s], query: { courseId: course.id, perPage: 1, page: 2 } }),
      ]).then(([notes, bookmarks]) => ({ notes: notes.body.meta.total as number, bookmarks: bookmarks.body.meta.total as number }));
    const reader = async () => {
      while (writing) for (const s of students) await filtered(s);
    };
    const reading = reader();
    await Promise.all([...Array.from({ length: 6 }, (_, w) => writer(w)), sweeper(), deleter()]);
    writing = false;
    await reading;
    expect(outcome.committed).toBeGreaterThan(50);
    expect(outcome.rolledBack).toBeGreaterThan(10);
    let left = 0;
    for (const s of students) {
      const got = await totals(s);
      expect(got.counter, s).toEqual(got.rows);
      expect(got.api, s).toEqual(got.rows);
      const [want] = await rawRows<{ notes: number; bookmarks: number }>(
        t.db,
        sql`select (select count(*)::int from lesson_notes where institution_id = ${INST} and student_id = ${s} and content ilike '%c%') as notes,
                   (select count(*)::int from lesson_bookmarks b join lessons l on l.id = b.lesson_id where b.institution_id = ${INST} and b.student_id = ${s} and l.course_id = ${course.id}) as bookmarks`,
      );
      expect(await filtered(s), `${s}: filtered totals`).toEqual(want);
      left += got.rows.notes;
    }
    expect(left).toBeGreaterThan(0);
  }, 120_000);
});
