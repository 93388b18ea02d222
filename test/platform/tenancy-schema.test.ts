/**
 * Tenancy enforced by the database: every foreign key between tenant tables is
 * (institution_id, x_id) -> (institution_id, id), so raw SQL that bypasses the services still
 * cannot make a row of one institution point at a row of another.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, createLesson, enroll } from '../helpers/factories.js';
import { rawRows } from '../../src/platform/db/client.js';

const A = 'inst_demo';
const B = 'inst_north';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

/** The error a raw statement fails with (drizzle wraps the driver's error as `cause`). */
async function failure(run: () => Promise<unknown>): Promise<{ code?: string; constraint?: string }> {
  try {
    await run();
  } catch (err) {
    const e = err as { code?: string; constraint?: string; cause?: { code?: string; constraint?: string } };
    return { code: e.cause?.code ?? e.code, constraint: e.cause?.constraint ?? e.constraint };
  }
  throw new Error('the statement succeeded');
}

describe('composite tenant foreign keys', () => {
  it('refuses a lesson of institution B in a course of institution A', async () => {
    const course = await createCourse(t, { institutionId: A });
    const err = await failure(() =>
      t.db.execute(sql`insert into lessons (id, institution_id, course_id, title, type, "order", created_at, updated_at)
        values ('les_x', ${B}, ${course.id}, 'x', 'TEXT', 0, now(), now())`),
    );
    expect(err.code).toBe('23503');
    expect(err.constraint).toBe('lessons_course_fk');
  });

  it("refuses a note of institution A on a lesson of institution B, and a note under another tenant's enrollment", async () => {
    const courseA = await createCourse(t, { institutionId: A });
    const lessonA = await createLesson(t, { courseId: courseA.id });
    const enrollmentA = await enroll(t, { courseId: courseA.id, studentId: 'c_demo_stu_01' });
    const courseB = await createCourse(t, { institutionId: B, ownerId: 'u_northside_teacher' });
    const lessonB = await createLesson(t, { courseId: courseB.id });

    const crossLesson = await failure(() =>
      t.db.execute(sql`insert into lesson_notes (institution_id, id, lesson_id, student_id, enrollment_id, content, created_at, updated_at)
        values (${A}, 'note_x', ${lessonB.id}, 'c_demo_stu_01', ${enrollmentA.id}, 'x', now(), now())`),
    );
    expect(crossLesson).toEqual({ code: '23503', constraint: 'lesson_notes_lesson_fk' });

    const crossEnrollment = await failure(() =>
      t.db.execute(sql`insert into lesson_notes (institution_id, id, lesson_id, student_id, enrollment_id, content, created_at, updated_at)
        values (${B}, 'note_y', ${lessonB.id}, 'c_demo_stu_01', ${enrollmentA.id}, 'x', now(), now())`),
    );
    expect(crossEnrollment).toEqual({ code: '23503', constraint: 'lesson_notes_enrollment_fk' });

    // The same row within one institution is accepted: the keys refuse only the cross-tenant link.
    await t.db.execute(sql`insert into lesson_notes (institution_id, id, lesson_id, student_id, enrollment_id, content, created_at, updated_at)
      values (${A}, 'note_ok', ${lessonA.id}, 'c_demo_stu_01', ${enrollmentA.id}, 'x', now(), now())`);
  });

  it('refuses moving a row to another institution while its children point at it', async () => {
    const course = await createCourse(t, { institutionId: A });
    await createLesson(t, { courseId: course.id });
    const err = await failure(() => t.db.execute(sql`update courses set institution_id = ${B} where id = ${course.id}`));
    expect(err.code).toBe('23503');
  });

  it('every tenant table has a unique (institution_id, id) and every tenant foreign key leads with institution_id', async () => {
    const tenantTables = await rawRows<{ table_name: string }>(
      t.db,
      sql`select table_name from information_schema.columns
          where table_schema = 'public' and column_name = 'institution_id' and table_name <> 'jobs'
          group by table_name order by table_name`,
    );
    expect(tenantTables.length).toBeGreaterThan(10);
    const uniques = await rawRows<{ table_name: string; cols: string }>(
      t.db,
      sql`select rel.relname as table_name, string_agg(att.attname, ',' order by k.ord) as cols
          from pg_constraint c
          join pg_class rel on rel.oid = c.conrelid
          join lateral unnest(c.conkey) with ordinality as k(attnum, ord) on true
          join pg_attribute att on att.attrelid = rel.oid and att.attnum = k.attnum
          where c.contype in ('u', 'p') group by c.oid, rel.relname`,
    );
    for (const { table_name } of tenantTables) {
      expect(
        uniques.some((u) => u.table_name === table_name && u.cols === 'institution_id,id'),
        `${table_name} lacks unique (institution_id, id)`,
      ).toBe(true);
    }
    const fks = await rawRows<{ name: string; first: string; ref_table: string }>(
      t.db,
      sql`select c.conname as name, att.attname as first, ref.relname as ref_table
          from pg_constraint c
          join pg_class ref on ref.oid = c.confrelid
          join pg_attribute att on att.attrelid = c.conrelid and att.attnum = c.conkey[1]
          where c.contype = 'f'`,
    );
    const tenantNames = new Set(tenantTables.map((r) => r.table_name));
    for (const fk of fks.filter((f) => tenantNames.has(f.ref_table))) {
      expect(fk.first, `${fk.name} must lead with institution_id`).toBe('institution_id');
    }
  });

  it('deleting a module keeps its lessons (SET NULL on module_id only)', async () => {
    const course = await createCourse(t, { institutionId: A });
    await t.db.execute(sql`insert into course_modules (id, institution_id, course_id, title, "order", created_at, updated_at)
      values ('mod_del', ${A}, ${course.id}, 'm', 0, now(), now())`);
    const lesson = await createLesson(t, { courseId: course.id, moduleId: 'mod_del' });
    await t.db.execute(sql`delete from course_modules where id = 'mod_del'`);
    const [row] = await rawRows<{ module_id: string | null; institution_id: string }>(t.db, sql`select module_id, institution_id from lessons where id = ${lesson.id}`);
    expect(row).toEqual({ module_id: null, institution_id: A });
  });
});
