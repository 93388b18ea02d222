/**
 * Filtered totals of GET /api/me/notes and /api/me/bookmarks (`?search=`, `?courseId=`) are
 * counted once and reused while the student's version (student_annotation_counts.notes_version,
 * bookmarks_version: the id of the last transaction that changed one of their rows, set by
 * triggers) is unchanged. Every kind of change a total can depend on must move the version:
 * creates, edits, deletes through the API, cascades, raw SQL from another process, moves,
 * truncation. And the cache must really answer (else the tests above would pass without it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createLesson } from '../helpers/factories.js';
import { addBookmark as postBookmark, addNote as postNote, twoCoursesWithStudents } from '../helpers/annotations.js';
import { expectOk } from '../helpers/expect.js';
import { rawRows } from '../../src/platform/db/client.js';
import { orderedScanFor, pageWithTotal, totalsCacheOf } from '../../src/modules/notes/filtered-totals.js';
import type { Course, Lesson } from '../../src/modules/courses/courses.tables.js';

const INST = 'inst_demo';
const S1 = 'c_demo_stu_11';
const S2 = 'c_demo_stu_12';
const S3 = 'c_demo_stu_13';

let t: TestApp;
let course: Course;
let lesson: Lesson;
let otherLesson: Lesson;
let tokens: Record<string, string>;

beforeAll(async () => {
  t = await createTestApp();
  let lessons: Lesson[];
  ({ course, lessons, otherLesson, tokens } = await twoCoursesWithStudents(t, [S1, S2, S3], 1, ['Cells', 'Stars']));
  lesson = lessons[0]!;
}, 120_000);
afterAll(() => t?.close());

const addNote = (student: string, l: Lesson, content: string) => postNote(t, tokens[student], l, content);
const addBookmark = (student: string, l: Lesson, label: string) => postBookmark(t, tokens[student], l, label);

const apiTotal = async (student: string, list: 'notes' | 'bookmarks', query: Record<string, string | number>) => {
  const res = await t.request('GET', `/api/me/${list}`, { token: tokens[student], query: { perPage: 1, ...query } });
  expect(res.status).toBe(200);
  return res.body.meta.total as number;
};

/** The totals as counted by SQL, straight from the rows. */
async function counted(student: string) {
  const [row] = await rawRows<{ mito: number; inCourse: number; marked: number; marksInCourse: number }>(
    t.db,
    sql`select
      (select count(*)::int from lesson_notes where institution_id = ${INST} and student_id = ${student} and content ilike '%mito%') as "mito",
      (select count(*)::int from lesson_notes where institution_id = ${INST} and student_id = ${student} and lesson_id in (select id from lessons where course_id = ${course.id})) as "inCourse",
      (select count(*)::int from lesson_bookmarks where institution_id = ${INST} and student_id = ${student} and label ilike '%mark%') as "marked",
      (select count(*)::int from lesson_bookmarks where institution_id = ${INST} and student_id = ${student} and lesson_id in (select id from lessons where course_id = ${course.id})) as "marksInCourse"`,
  );
  return row!;
}

/** What the API answers for the four filtered lists, page 1 and page 2 (a cache hit reads its version from page 2's rows). */
async function expectExact(student: string) {
  const want = await counted(student);
  const got = {
    mito: await apiTotal(student, 'notes', { search: 'mito' }),
    inCourse: await apiTotal(student, 'notes', { courseId: course.id }),
    marked: await apiTotal(student, 'bookmarks', { search: 'mark' }),
    marksInCourse: await apiTotal(student, 'bookmarks', { courseId: course.id }),
  };
  expect(got, `${student}: page 1`).toEqual(want);
  const page2 = {
    mito: await apiTotal(student, 'notes', { search: 'mito', page: 2 }),
    inCourse: await apiTotal(student, 'notes', { courseId: course.id, page: 2 }),
    marked: await apiTotal(student, 'bookmarks', { search: 'mark', page: 2 }),
    marksInCourse: await apiTotal(student, 'bookmarks', { courseId: course.id, page: 2 }),
  };
  expect(page2, `${student}: page 2`).toEqual(want);
  return want;
}

const versionOf = async (student: string) =>
  (await rawRows<{ v: string }>(t.db, sql`select notes_version::text as v from student_annotation_counts where institution_id = ${INST} and id = ${student}`))[0]?.v;

describe('filtered totals of my notes and my bookmarks', () => {
  it('are exact through creates, edits and deletes through the API, each read twice (counted, then from the cache)', async () => {
    await expectExact(S1);
    const n1 = await addNote(S1, lesson, 'Mitochondria make ATP');
    await addNote(S1, lesson, 'ribosomes');
    await addNote(S1, otherLesson, 'more mitochondria');
    const b1 = await addBookmark(S1, lesson, 'bookmark one');
    await addBookmark(S1, otherLesson, 'marked');
    await addNote(S2, lesson, 'mitosis');
    expect(await expectExact(S1)).toEqual({ mito: 2, inCourse: 2, marked: 2, marksInCourse: 1 });
    expect(await expectExact(S2)).toEqual({ mito: 1, inCourse: 1, marked: 0, marksInCourse: 0 });
    // An edit moves a note out of the search, another into it.
    expectOk(await t.request('PATCH', `/api/lessons/${lesson.id}/notes/${n1.id}`, { token: tokens[S1], body: { content: 'powerhouse' } }));
    expect((await expectExact(S1)).mito).toBe(1);
    expectOk(await t.request('PATCH', `/api/lessons/${lesson.id}/bookmarks/${b1.id}`, { token: tokens[S1], body: { label: 'plain' } }));
    expect((await expectExact(S1)).marked).toBe(1);
    expectOk(await t.request('DELETE', `/api/lessons/${lesson.id}/bookmarks/${b1.id}`, { token: tokens[S1] }));
    expect((await expectExact(S1)).marksInCourse).toBe(0);
    // Another student's writes leave S1's cached totals as they are, and right.
    await addNote(S2, lesson, 'mitochondria again');
    expect(await expectExact(S1)).toEqual({ mito: 1, inCourse: 2, marked: 1, marksInCourse: 0 });
    expect((await expectExact(S2)).mito).toBe(2);
  });

  it('are exact after writes no request of this process made (another replica, raw SQL): inserts, moves, cascades, truncation', async () => {
    const [enrollment] = await rawRows<{ id: string }>(t.db, sql`select id from enrollments where institution_id = ${INST} and course_id = ${course.id} and student_id = ${S1}`);
    await expectExact(S1);
    await t.db.execute(
      sql`insert into lesson_notes (institution_id, id, lesson_id, student_id, enrollment_id, content, created_at, updated_at)
          values (${INST}, 'raw-1', ${lesson.id}, ${S1}, ${enrollment!.id}, 'mitochondria by SQL', now(), now())`,
    );
    expect((await expectExact(S1)).mito).toBe(2);
    // Moved to another student: both students' totals change.
    const before2 = await expectExact(S2);
    await t.db.execute(sql`update lesson_notes set student_id = ${S2} where institution_id = ${INST} and id = 'raw-1'`);
    expect((await expectExact(S1)).mito).toBe(1);
    expect((await expectExact(S2)).mito).toBe(before2.mito + 1);
    // A lesson deleted by its teacher cascades to its notes and bookmarks.
    const doomed = await createLesson(t, { courseId: course.id, type: 'VIDEO' });
    await addNote(S1, doomed, 'mitochondria, soon gone');
    await addBookmark(S1, doomed, 'mark, soon gone');
    const withDoomed = await expectExact(S1);
    expectOk(await t.request('DELETE', `/api/lessons/${doomed.id}`, { token: tokens.teacher }));
    const after = await expectExact(S1);
    expect(after.mito).toBe(withDoomed.mito - 1);
    expect(after.marked).toBe(withDoomed.marked - 1);
    // Truncation, then as many rows again: a version never comes back, so no old total answers.
    const version = await versionOf(S1);
    await t.db.execute(sql`truncate lesson_notes`);
    expect((await expectExact(S1)).mito).toBe(0);
    await addNote(S1, lesson, 'mitochondria');
    expect(await versionOf(S1)).not.toBe(version);
    expect((await expectExact(S1)).mito).toBe(1);
  });

  it('come from the cache while the version stands: a total counted at the current version is not counted again', async () => {
    await addNote(S2, otherLesson, 'mitochondria, counted');
    await addNote(S2, otherLesson, 'mitochondria, kept');
    const want = (await counted(S2)).mito;
    expect(await apiTotal(S2, 'notes', { search: 'mito' })).toBe(want);
    expect(want).toBeGreaterThanOrEqual(2);
    // A row the triggers do not see (they are off for this transaction, as on a logical
    // replica): the rows change, the version does not, so the cached total answers.
    await t.db.transaction(async (tx) => {
      await tx.execute(sql`set local session_replication_role = replica`);
      await tx.execute(sql`update lesson_notes set content = 'no longer matching' where institution_id = ${INST} and student_id = ${S2} and content = 'mitochondria, counted'`);
    });
    expect((await counted(S2)).mito).toBe(want - 1);
    expect(await apiTotal(S2, 'notes', { search: 'mito' })).toBe(want);
    // Another filter of the same student is counted afresh and sees the rows as they are.
    const [mitoc] = await rawRows<{ n: number }>(t.db, sql`select count(*)::int as n from lesson_notes where student_id = ${S2} and content ilike '%mitoc%'`);
    expect(await apiTotal(S2, 'notes', { search: 'mitoc' })).toBe(mitoc!.n);
    // Any change through the triggers moves the version, and the total is counted again.
    await addNote(S2, otherLesson, 'unrelated');
    expect(await apiTotal(S2, 'notes', { search: 'mito' })).toBe(want - 1);
  });
});

describe('search pages read in order (orderedScanFor) or through the trigram index', () => {
  it('give the same rows as the plain query on every page, also when the matches are all at the old end', async () => {
    // 600 notes of S3, note i updated i minutes ago: every third is about a yak (dense), the
    // oldest 30 about a zebra (clustered where an ordered read from the newest end finds none).
    const [enrollment] = await rawRows<{ id: string }>(t.db, sql`select id from enrollments where institution_id = ${INST} and course_id = ${course.id} and student_id = ${S3}`);
    await t.db.execute(
      sql`insert into lesson_notes (institution_id, id, lesson_id, student_id, enrollment_id, content, created_at, updated_at)
          select ${INST}, 'ordered-' || lpad(i::text, 4, '0'), ${lesson.id}, ${S3}, ${enrollment!.id},
                 case when i > 570 then 'a zebra ' || i when i % 3 = 0 then 'a yak ' || i else 'a cat ' || i end,
                 now() - i * interval '1 minute', now() - i * interval '1 minute'
          from generate_series(1, 600) i`,
    );
    for (const [search, matches] of [
      ['yak', 190],
      ['zebra', 30],
    ] as const) {
      const perPage = 7;
      const expected = (
        await rawRows<{ id: string }>(t.db, sql`select id from lesson_notes where student_id = ${S3} and content ilike ${`%${search}%`} order by updated_at desc, id desc`)
      ).map((r) => r.id);
      expect(expected).toHaveLength(matches);
      for (let page = 1; page <= Math.ceil(matches / perPage) + 1; page++) {
        // The first read of a search counts (the index); the ones after it have its density.
        for (let read = 0; read < 2; read++) {
          const res = await t.request('GET', '/api/me/notes', { token: tokens[S3], query: { search, perPage, page } });
          expect(res.status).toBe(200);
          expect(res.body.meta.total).toBe(matches);
          expect(
            res.body.data.map((n: { id: string }) => n.id),
            `${search}, page ${page}, read ${read}`,
          ).toEqual(expected.slice((page - 1) * perPage, page * perPage));
        }
      }
    }
    // Bookmarks the same way: 200, every other one labelled as a mark, newest first by creation.
    await t.db.execute(
      sql`insert into lesson_bookmarks (institution_id, id, lesson_id, student_id, timestamp_seconds, label, created_at)
          select ${INST}, 'ordered-b-' || lpad(i::text, 4, '0'), ${lesson.id}, ${S3}, i, case when i % 2 = 0 then 'mark ' || i else 'pin ' || i end,
                 now() - i * interval '1 minute'
          from generate_series(1, 200) i`,
    );
    const marks = (
      await rawRows<{ id: string }>(t.db, sql`select id from lesson_bookmarks where student_id = ${S3} and label ilike '%mark%' order by created_at desc, id desc`)
    ).map((r) => r.id);
    for (let page = 1; page <= 3; page++) {
      for (let read = 0; read < 2; read++) {
        const res = await t.request('GET', '/api/me/bookmarks', { token: tokens[S3], query: { search: 'mark', perPage: 9, page } });
        expect(res.body.meta.total).toBe(100);
        expect(res.body.data.map((b: { id: string }) => b.id)).toEqual(marks.slice((page - 1) * 9, page * 9));
      }
    }
    // Those searches took both ways: yak's first page reads 134 rows in order, zebra's the same
    // way finds none of its matches there and falls back to the index; far pages use the index.
    expect(orderedScanFor({ total: 190, all: 600, version: 1 }, 7)).toBe(134);
    expect(orderedScanFor({ total: 30, all: 600, version: 1 }, 7)).toBe(310);
    expect(orderedScanFor({ total: 190, all: 600, version: 1 }, 182)).toBe(963);
    expect(orderedScanFor({ total: 190, all: 600, version: 1 }, 196)).toBeUndefined();
    expect(orderedScanFor({ total: 30, all: 600, version: 1 }, 35)).toBeUndefined();
  });

  it('orderedScanFor: only with a cached density, and only when reading in order costs less than fetching every match', () => {
    expect(orderedScanFor(undefined, 20)).toBeUndefined();
    expect(orderedScanFor({ total: 0, all: 10_000, version: 1 }, 20)).toBeUndefined();
    // 834 of 10,000 (the bench): page 1 reads ~460 rows; page 40 would read ~14,500: the index.
    expect(orderedScanFor({ total: 834, all: 10_000, version: 1 }, 20)).toBe(460);
    expect(orderedScanFor({ total: 834, all: 10_000, version: 1 }, 800)).toBeUndefined();
    // 5 of 10,000: the index.
    expect(orderedScanFor({ total: 5, all: 10_000, version: 1 }, 20)).toBeUndefined();
    // A short read is cheap whatever the density; 2 matches of 100 are fetched through the index.
    expect(orderedScanFor({ total: 25, all: 100, version: 1 }, 20)).toBe(220);
    expect(orderedScanFor({ total: 2, all: 100, version: 1 }, 20)).toBeUndefined();
  });
});

describe('pageWithTotal', () => {
  const rows = (version: number) => async () => [{ version }];
  it('counts every time without a cache (FILTERED_TOTALS_CACHE_SIZE=0)', async () => {
    expect(totalsCacheOf({}, 0)).toBeUndefined();
    let counts = 0;
    const count = async () => ({ total: ++counts, version: 7, all: 100 });
    expect((await pageWithTotal(undefined, 'k', rows(7), count)).total).toBe(1);
    expect((await pageWithTotal(undefined, 'k', rows(7), count)).total).toBe(2);
  });
  it('reuses a total only at its version, recounts on an empty page, and keeps one cache per database handle', async () => {
    const db = {};
    const cache = totalsCacheOf(db, 10)!;
    expect(totalsCacheOf(db, 10)).toBe(cache);
    expect(totalsCacheOf({}, 10)).not.toBe(cache);
    let counts = 0;
    const count = (version: number) => async () => ({ total: 10 + ++counts, version, all: 100 });
    expect((await pageWithTotal(cache, 'k', rows(7), count(7))).total).toBe(11);
    expect((await pageWithTotal(cache, 'k', rows(7), count(7))).total).toBe(11);
    expect((await pageWithTotal(cache, 'other', rows(7), count(7))).total).toBe(12);
    expect((await pageWithTotal(cache, 'k', rows(8), count(8))).total).toBe(13);
    expect((await pageWithTotal(cache, 'k', rows(8), count(8))).total).toBe(13);
    expect((await pageWithTotal(cache, 'k', async () => [], count(8))).total).toBe(14);
  });
  it('bounds the cache by the length of its keys as well as their number', async () => {
    const cache = totalsCacheOf({}, 10)!;
    const count = async () => ({ total: 1, version: 1, all: 1 });
    for (let i = 0; i < 10; i++) await pageWithTotal(cache, `${i}`.padEnd(1000, 'x'), async () => [], count);
    expect(cache.calculatedSize).toBeLessThanOrEqual(10 * 256);
    expect(cache.size).toBe(2);
  });
});
