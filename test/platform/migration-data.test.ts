/**
 * Migration 0001 (tenant composite keys) keeps the data it finds, as do the ones after it: a
 * fresh PGlite gets 0000_init only, rows in every table of two institutions (each row pointing
 * at rows of its own institution, as the services wrote them), then every later migration in
 * the journal's order. Every row is still there with the values it had, and the new composite
 * keys are in force on it.
 *
 * The SQL files are run here statement by statement (drizzle's migrator applies all or
 * nothing), split where drizzle-kit marks the breakpoints.
 */
import { readFileSync } from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';
import { createPglite } from '../../src/platform/db/client.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DRIZZLE = new URL('../../drizzle/', import.meta.url);
const journal = JSON.parse(readFileSync(new URL('meta/_journal.json', DRIZZLE), 'utf8')) as { entries: Array<{ idx: number; tag: string }> };
const tags = [...journal.entries].sort((a, b) => a.idx - b.idx).map((e) => e.tag);

async function apply(db: PGlite, tag: string) {
  const text = readFileSync(new URL(`${tag}.sql`, DRIZZLE), 'utf8');
  for (const statement of text.split('--> statement-breakpoint')) {
    if (statement.trim()) await db.exec(statement);
  }
}

/** Rows of both institutions in every table 0000 creates; ids carry the institution, so they stay unique. */
function seedSql(inst: string): string {
  const t = "'2026-01-05T10:00:00Z'";
  const id = (x: string) => `'${inst}_${x}'`;
  return `
    insert into institutions (id, slug, name, settings) values ('${inst}', '${inst}-slug', 'Institution ${inst}', '{"feeGatingEnabled": true}');
    insert into categories (id, institution_id, name, description, created_at) values (${id('cat')}, '${inst}', 'Maths', 'Numbers', ${t});
    insert into courses (id, institution_id, title, description, category_id, owner_id, status, max_enrollments, drip_mode, certificate_enabled, certificate_validity_months, thumbnail_url, estimated_duration, passing_score, published_at, created_at, updated_at)
      values (${id('course')}, '${inst}', 'Algebra ${inst}', 'Intro', ${id('cat')}, 'u_owner', 'PUBLISHED', 30, 'SEQUENTIAL', true, 12, 'https://img.example/a.png', 90, 70, ${t}, ${t}, ${t});
    insert into course_modules (id, institution_id, course_id, title, "order", created_at, updated_at) values (${id('mod')}, '${inst}', ${id('course')}, 'Module 1', 1, ${t}, ${t});
    insert into lessons (id, institution_id, course_id, module_id, title, type, "order", content, video_url, duration_seconds, blocks, created_at, updated_at) values
      (${id('les1')}, '${inst}', ${id('course')}, ${id('mod')}, 'Video', 'VIDEO', 1, null, 'https://video.example/1.mp4', 600, '[{"id":"b1","type":"quiz","correctAnswer":"a"}]', ${t}, ${t}),
      (${id('les2')}, '${inst}', ${id('course')}, null, 'Reading', 'TEXT', 2, 'Read this', null, null, '[]', ${t}, ${t});
    insert into enrollments (id, institution_id, course_id, student_id, status, progress, final_score, enrolled_by, enrolled_at, completed_at, updated_at)
      values (${id('enr')}, '${inst}', ${id('course')}, 'stu_1', 'COMPLETED', 100, 88.5, 'u_owner', ${t}, ${t}, ${t});
    insert into lesson_progress (id, institution_id, enrollment_id, lesson_id, student_id, completed, completed_at, progress_percent, position_seconds, updated_at)
      values (${id('prog')}, '${inst}', ${id('enr')}, ${id('les1')}, 'stu_1', true, ${t}, 100, 598, ${t});
    insert into lesson_notes (institution_id, id, lesson_id, student_id, enrollment_id, content, timestamp_seconds, created_at, updated_at)
      values ('${inst}', ${id('note')}, ${id('les1')}, 'stu_1', ${id('enr')}, 'A note of ${inst}', 42, ${t}, ${t});
    insert into lesson_bookmarks (institution_id, id, lesson_id, student_id, timestamp_seconds, label, created_at) values ('${inst}', ${id('bm')}, ${id('les1')}, 'stu_1', 7, 'Here', ${t});
    insert into block_answers (id, institution_id, lesson_id, block_id, student_id, answer, is_correct, created_at, updated_at) values (${id('ans')}, '${inst}', ${id('les1')}, 'b1', 'stu_1', '"a"', true, ${t}, ${t});
    insert into learner_events (id, institution_id, lesson_id, student_id, type, position_seconds, data, occurred_at, created_at) values (${id('evt')}, '${inst}', ${id('les1')}, 'stu_1', 'play', 1.5, '{"rate":1}', ${t}, ${t});
    insert into lesson_interactions (id, institution_id, lesson_id, student_id, kind, target_id, data, created_at) values (${id('int')}, '${inst}', ${id('les1')}, 'stu_1', 'click', 'b1', '{}', ${t});
    insert into certificates (id, institution_id, course_id, enrollment_id, student_id, course_title, certificate_number, verification_code, final_score, pdf_key, issued_at, expires_at)
      values (${id('cert')}, '${inst}', ${id('course')}, ${id('enr')}, 'stu_1', 'Algebra ${inst}', 'CERT-2026-${inst}', 'CODE${inst.toUpperCase()}', 88.5, '${inst}/certificates/x.pdf', ${t}, null);
    insert into crm_completions (id, institution_id, enrollment_id, payload, status, attempts, created_at, updated_at) values (${id('crm')}, '${inst}', ${id('enr')}, '{"courseId":"${inst}_course"${inst === 'inst_a' ? ',"completedAt":"2026-01-04T09:00:00.000Z"' : ''}}', 'FAILED', 2, ${t}, ${t});
    insert into caption_tracks (id, institution_id, lesson_id, block_id, language, label, storage_key, is_default, created_at, created_by) values (${id('cap')}, '${inst}', ${id('les1')}, null, 'en', 'English', '${inst}/captions/a.vtt', true, ${t}, 'u_owner');
    insert into files (id, institution_id, key, name, content_type, size, course_id, lesson_id, uploaded_by, created_at) values (${id('file')}, '${inst}', '${inst}/files/a.txt', 'a.txt', 'text/plain', 10, ${id('course')}, ${id('les2')}, 'u_owner', ${t});
    insert into jobs (id, institution_id, name, payload, status, attempts, max_attempts, run_at, created_at, updated_at) values (${id('job')}, '${inst}', 'certificates.renderPdf', '{"certificateId":"${inst}_cert"}', 'queued', 0, 5, ${t}, ${t}, ${t});
  `;
}

let db: PGlite;
/** The tables 0000 creates, each with the columns it had then. */
let before: Map<string, string[]>;

async function rowsOf(table: string, columns: string[]) {
  const list = columns.map((c) => `"${c}"`).join(', ');
  return (await db.query<Record<string, unknown>>(`select ${list} from "${table}" order by "id"`)).rows;
}

beforeAll(async () => {
  db = await createPglite();
  expect(tags[0]).toBe('0000_init');
  expect(tags[1]).toBe('0001_tenant_composite_keys');
  await apply(db, tags[0]!);
  const cols = await db.query<{ table_name: string; column_name: string }>(
    `select table_name, column_name from information_schema.columns where table_schema = 'public' order by table_name, ordinal_position`,
  );
  before = new Map();
  for (const c of cols.rows) before.set(c.table_name, [...(before.get(c.table_name) ?? []), c.column_name]);
  await db.exec(seedSql('inst_a'));
  await db.exec(seedSql('inst_b'));
}, 60_000);

afterAll(async () => {
  await db?.close();
});

describe('migrations after 0000 keep existing rows', () => {
  it('every row of every table is still there, with its values, after 0001 and after all the rest', async () => {
    expect(before.size).toBe(17);
    const snapshot = new Map<string, unknown[]>();
    for (const [table, columns] of before) {
      const rows = await rowsOf(table, columns);
      expect(rows.length, table).toBeGreaterThanOrEqual(2);
      snapshot.set(table, rows);
    }
    await apply(db, tags[1]!);
    for (const [table, columns] of before) expect(await rowsOf(table, columns), `${table} after 0001`).toEqual(snapshot.get(table));
    for (const tag of tags.slice(2)) await apply(db, tag);
    for (const [table, columns] of before) expect(await rowsOf(table, columns), `${table} after ${tags.at(-1)}`).toEqual(snapshot.get(table));
    // 0022 gave each completion push its completion time: the payload's, else when it was written.
    const pushes = await db.query<{ institution_id: string; completed_at: Date }>(`select institution_id, completed_at from crm_completions order by institution_id`);
    expect(pushes.rows.map((r) => [r.institution_id, new Date(r.completed_at).toISOString()])).toEqual([
      ['inst_a', '2026-01-04T09:00:00.000Z'],
      ['inst_b', '2026-01-05T10:00:00.000Z'],
    ]);
    // 0018 counted the notes and bookmarks it found into each student's counter row.
    const counts = await db.query(`select institution_id, id, notes, bookmarks from student_annotation_counts order by institution_id, id`);
    expect(counts.rows).toEqual([
      { institution_id: 'inst_a', id: 'stu_1', notes: 1, bookmarks: 1 },
      { institution_id: 'inst_b', id: 'stu_1', notes: 1, bookmarks: 1 },
    ]);
  });

  it('the composite keys hold on the kept rows: a cross-tenant reference is refused, deletes still cascade', async () => {
    const refused = await db
      .query(
        `insert into lesson_notes (institution_id, id, lesson_id, student_id, enrollment_id, content, created_at, updated_at) values ('inst_b', 'x_note', 'inst_a_les1', 'stu_1', 'inst_b_enr', 'x', now(), now())`,
      )
      .then(
        () => null,
        (err: { code?: string }) => err.code,
      );
    expect(refused).toBe('23503');
    await db.query(`delete from lessons where id = 'inst_a_les1'`);
    const left = await db.query<{ n: number }>(`select count(*)::int as n from lesson_notes where lesson_id = 'inst_a_les1'`);
    expect(left.rows[0]!.n).toBe(0);
    const counter = await db.query(`select notes, bookmarks from student_annotation_counts where institution_id = 'inst_a' and id = 'stu_1'`);
    expect(counter.rows).toEqual([{ notes: 0, bookmarks: 0 }]);
    // ON DELETE SET NULL keeps the row and clears only the reference (the institution stays).
    await db.query(`delete from lessons where id = 'inst_a_les2'`);
    const file = await db.query<{ institution_id: string; lesson_id: string | null; course_id: string | null }>(
      `select institution_id, lesson_id, course_id from files where id = 'inst_a_file'`,
    );
    expect(file.rows).toEqual([{ institution_id: 'inst_a', lesson_id: null, course_id: 'inst_a_course' }]);
    // Institution B's rows were not touched.
    const b = await db.query<{ n: number }>(`select count(*)::int as n from lessons where institution_id = 'inst_b'`);
    expect(b.rows[0]!.n).toBe(2);
  });
});
