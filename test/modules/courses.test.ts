/**
 * Course authoring through HTTP: courses, modules, lessons, categories, publish, archive,
 * duplicate; who may author; another institution sees nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { enroll } from '../helpers/factories.js';
import { expectError, expectOk, failingFields } from '../helpers/expect.js';
import { courseModules, courses, lessons } from '../../src/modules/courses/courses.tables.js';
import { enrollments } from '../../src/modules/enrollments/enrollments.tables.js';
import { LESSON_TYPES } from '../../src/modules/courses/courses.tables.js';

let t: TestApp;
let teacher: string;
let teacher2: string;
let admin: string;
let student: string;
let northTeacher: string;
let plainTeacherWithPermission: string;

beforeAll(async () => {
  t = await createTestApp();
  teacher = await t.token({ role: 'TEACHER', id: 'u_demo_teacher' });
  teacher2 = await t.token({ role: 'TEACHER', id: 'u_demo_teacher2' });
  admin = await t.token({ role: 'ADMIN', id: 'u_demo_admin' });
  student = await t.token({ role: 'STUDENT', id: 'c_demo_stu_01' });
  northTeacher = await t.token({ role: 'TEACHER', id: 'u_northside_teacher', institutionId: 'inst_north' });
  plainTeacherWithPermission = await t.token({ role: 'STUDENT', id: 'c_demo_stu_09', permissions: ['canManageCourses'] });
}, 180_000);
afterAll(() => t?.close());

async function newCourse(token = teacher, body: Record<string, unknown> = {}) {
  return expectOk(await t.request('POST', '/api/courses', { token, body: { title: 'Course', ...body } }), 201);
}

describe('POST /api/courses', () => {
  it('creates a DRAFT course owned by the caller', async () => {
    const res = await t.request('POST', '/api/courses', {
      token: teacher,
      body: { title: '  Algebra I ', description: 'Numbers', maxEnrollments: 25, dripMode: 'SEQUENTIAL', certificateEnabled: true },
    });
    const course = expectOk(res, 201);
    expect(course).toMatchObject({
      id: expect.any(String),
      institutionId: 'inst_demo',
      title: 'Algebra I',
      description: 'Numbers',
      status: 'DRAFT',
      ownerId: 'u_demo_teacher',
      maxEnrollments: 25,
      dripMode: 'SEQUENTIAL',
      certificateEnabled: true,
      publishedAt: null,
      archivedAt: null,
      createdAt: t.clock.now().toISOString(),
    });
    const [row] = await t.db.select().from(courses).where(eq(courses.id, course.id));
    expect(row).toMatchObject({ institutionId: 'inst_demo', ownerId: 'u_demo_teacher', status: 'DRAFT' });
  });

  it('uses defaults for the optional fields', async () => {
    const course = await newCourse(teacher, { title: 'Plain' });
    expect(course).toMatchObject({ description: null, categoryId: null, maxEnrollments: null, dripMode: 'NONE', certificateEnabled: false });
  });

  it('lets a holder of the canManageCourses permission author', async () => {
    const course = await newCourse(plainTeacherWithPermission, { title: 'By permission' });
    expect(course.ownerId).toBe('c_demo_stu_09');
  });

  it('refuses a student with 403 FORBIDDEN and writes nothing', async () => {
    const before = await t.db.select().from(courses);
    expectError(await t.request('POST', '/api/courses', { token: student, body: { title: 'Nope' } }), 403, 'FORBIDDEN');
    expect(await t.db.select().from(courses)).toHaveLength(before.length);
  });

  it('refuses an anonymous caller with 401 AUTH_REQUIRED', async () => {
    expectError(await t.request('POST', '/api/courses', { body: { title: 'Nope' } }), 401, 'AUTH_REQUIRED');
  });

  it('lists every invalid field with 400 VALIDATION_ERROR', async () => {
    const res = await t.request('POST', '/api/courses', {
      token: teacher,
      body: { title: '   ', maxEnrollments: 0, dripMode: 'RANDOM', certificateEnabled: 'yes' },
    });
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(failingFields(res).sort()).toEqual(['body.certificateEnabled', 'body.dripMode', 'body.maxEnrollments', 'body.title']);
  });

  it('refuses a categoryId of another institution', async () => {
    const north = expectOk(await t.request('POST', '/api/categories', { token: northTeacher, body: { name: 'North only' } }), 201);
    const res = await t.request('POST', '/api/courses', { token: teacher, body: { title: 'X', categoryId: north.id } });
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(failingFields(res)).toEqual(['body.categoryId']);
  });

  it('refuses an institutionId in the body that is not the session one (403 TENANT_MISMATCH)', async () => {
    expectError(await t.request('POST', '/api/courses', { token: teacher, body: { title: 'X', institutionId: 'inst_north' } }), 403, 'TENANT_MISMATCH');
  });
});

describe('GET /api/courses and /api/courses/:id', () => {
  let draft: any;
  let published: any;
  let archived: any;
  let category: any;

  beforeAll(async () => {
    category = expectOk(await t.request('POST', '/api/categories', { token: teacher, body: { name: 'Listing science' } }), 201);
    draft = await newCourse(teacher2, { title: 'Listing draft 100% pure', categoryId: category.id });
    published = await newCourse(teacher, { title: 'Listing published', description: 'about 100 things' });
    expectOk(await t.request('POST', `/api/courses/${published.id}/publish`, { token: teacher, body: { status: 'PUBLISHED' } }));
    archived = await newCourse(teacher, { title: 'Listing archived' });
    expectOk(await t.request('DELETE', `/api/courses/${archived.id}`, { token: teacher }));
  });

  const ids = (res: any) => res.body.data.map((c: any) => c.id);

  it('shows managers drafts and published courses, not archived, with meta', async () => {
    const res = await t.request('GET', '/api/courses', { token: teacher, query: { search: 'Listing' } });
    expectOk(res);
    expect(ids(res).sort()).toEqual([draft.id, published.id].sort());
    expect(res.body.meta).toEqual({ total: 2, page: 1, perPage: 20, totalPages: 1 });
  });

  it('filters by status, category, owner and search', async () => {
    expect(ids(await t.request('GET', '/api/courses', { token: teacher, query: { status: 'ARCHIVED' } }))).toEqual([archived.id]);
    expect(ids(await t.request('GET', '/api/courses', { token: teacher, query: { categoryId: category.id } }))).toEqual([draft.id]);
    const byOwner = ids(await t.request('GET', '/api/courses', { token: teacher, query: { ownerId: 'u_demo_teacher2', search: 'Listing' } }));
    expect(byOwner).toEqual([draft.id]);
    // Issue 4 names the filters category and owner: both spellings work.
    expect(ids(await t.request('GET', '/api/courses', { token: teacher, query: { category: category.id } }))).toEqual([draft.id]);
    expect(ids(await t.request('GET', '/api/courses', { token: teacher, query: { owner: 'u_demo_teacher2', search: 'Listing' } }))).toEqual([draft.id]);
    // LIKE wildcards in the search text are literal: "100%" matches only the draft title.
    expect(ids(await t.request('GET', '/api/courses', { token: teacher, query: { search: '100%' } }))).toEqual([draft.id]);
  });

  it('filters the catalogue by category, also spelled category', async () => {
    const cat = expectOk(await t.request('POST', '/api/categories', { token: teacher, body: { name: 'Catalogue filter' } }), 201);
    const course = await newCourse(teacher, { title: 'Catalogue filtered', categoryId: cat.id });
    expectOk(await t.request('POST', `/api/courses/${course.id}/publish`, { token: teacher, body: { status: 'PUBLISHED' } }));
    for (const query of [{ categoryId: cat.id }, { category: cat.id }] as Record<string, string>[]) {
      expect(ids(await t.request('GET', '/api/catalogue', { token: student, query }))).toEqual([course.id]);
    }
  });

  it('shows students only published courses', async () => {
    const res = await t.request('GET', '/api/courses', { token: student, query: { search: 'Listing' } });
    expect(ids(res)).toEqual([published.id]);
    expect(ids(await t.request('GET', '/api/courses', { token: student, query: { status: 'DRAFT' } }))).toEqual([]);
  });

  it('paginates with page and perPage or limit, at most 100', async () => {
    const res = await t.request('GET', '/api/courses', { token: teacher, query: { search: 'Listing', perPage: 1, page: 2 } });
    expect(res.body.data).toHaveLength(1);
    expect(res.body.meta).toEqual({ total: 2, page: 2, perPage: 1, totalPages: 2 });
    const viaLimit = await t.request('GET', '/api/courses', { token: teacher, query: { search: 'Listing', limit: 1 } });
    expect(viaLimit.body.meta.perPage).toBe(1);
    expectError(await t.request('GET', '/api/courses', { token: teacher, query: { perPage: 101 } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('GET', '/api/courses', { token: teacher, query: { page: 0 } }), 400, 'VALIDATION_ERROR');
  });

  it('returns the detail to managers and hides drafts from students (404)', async () => {
    expect(expectOk(await t.request('GET', `/api/courses/${draft.id}`, { token: teacher })).title).toBe('Listing draft 100% pure');
    expectError(await t.request('GET', `/api/courses/${draft.id}`, { token: student }), 404, 'NOT_FOUND');
    expect(expectOk(await t.request('GET', `/api/courses/${published.id}`, { token: student })).id).toBe(published.id);
  });

  it('shows another institution nothing: 404 on detail, absent from lists', async () => {
    expectError(await t.request('GET', `/api/courses/${published.id}`, { token: northTeacher }), 404, 'NOT_FOUND');
    const res = await t.request('GET', '/api/courses', { token: northTeacher, query: { search: 'Listing' } });
    expect(res.body.data).toEqual([]);
    expectError(await t.request('GET', '/api/courses/does-not-exist', { token: teacher }), 404, 'NOT_FOUND');
  });

  it('refuses a query institutionId of another tenant (403 TENANT_MISMATCH)', async () => {
    expectError(await t.request('GET', '/api/courses', { token: teacher, query: { institutionId: 'inst_north' } }), 403, 'TENANT_MISMATCH');
  });
});

describe('PATCH, publish, archive, duplicate', () => {
  it('lets the owner and an ADMIN update; another teacher gets 403; another institution 404', async () => {
    const course = await newCourse(teacher, { title: 'Editable' });
    const updated = expectOk(await t.request('PATCH', `/api/courses/${course.id}`, { token: teacher, body: { title: 'Edited', maxEnrollments: 3 } }));
    expect(updated).toMatchObject({ title: 'Edited', maxEnrollments: 3, ownerId: 'u_demo_teacher' });
    expectOk(await t.request('PATCH', `/api/courses/${course.id}`, { token: admin, body: { description: 'by admin' } }));
    expectError(await t.request('PATCH', `/api/courses/${course.id}`, { token: teacher2, body: { title: 'Hijack' } }), 403, 'FORBIDDEN');
    expectError(await t.request('PATCH', `/api/courses/${course.id}`, { token: student, body: { title: 'Hijack' } }), 403, 'FORBIDDEN');
    expectError(await t.request('PATCH', `/api/courses/${course.id}`, { token: northTeacher, body: { title: 'Hijack' } }), 404, 'NOT_FOUND');
    expectError(await t.request('PATCH', `/api/courses/${course.id}`, { token: teacher, body: { maxEnrollments: -1 } }), 400, 'VALIDATION_ERROR');
    const [row] = await t.db.select().from(courses).where(eq(courses.id, course.id));
    expect(row).toMatchObject({ title: 'Edited', description: 'by admin', maxEnrollments: 3 });
  });

  it('publishes and unpublishes; a bad status is 400', async () => {
    const course = await newCourse();
    const pub = expectOk(await t.request('POST', `/api/courses/${course.id}/publish`, { token: teacher, body: { status: 'PUBLISHED' } }));
    expect(pub).toMatchObject({ status: 'PUBLISHED', publishedAt: t.clock.now().toISOString() });
    const back = expectOk(await t.request('POST', `/api/courses/${course.id}/publish`, { token: teacher, body: { status: 'DRAFT' } }));
    expect(back.status).toBe('DRAFT');
    expectError(await t.request('POST', `/api/courses/${course.id}/publish`, { token: teacher, body: { status: 'ARCHIVED' } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('POST', `/api/courses/${course.id}/publish`, { token: teacher2, body: { status: 'PUBLISHED' } }), 403, 'FORBIDDEN');
  });

  it('archives on DELETE and keeps the enrollments', async () => {
    const course = await newCourse();
    await t.request('POST', `/api/courses/${course.id}/publish`, { token: teacher, body: { status: 'PUBLISHED' } });
    const e = await enroll(t, { courseId: course.id, studentId: 'c_demo_stu_05' });
    const archived = expectOk(await t.request('DELETE', `/api/courses/${course.id}`, { token: teacher }));
    expect(archived).toMatchObject({ id: course.id, deleted: true, status: 'ARCHIVED', archivedAt: t.clock.now().toISOString() });
    const [courseRow] = await t.db.select().from(courses).where(eq(courses.id, course.id));
    expect(courseRow.status).toBe('ARCHIVED');
    const [enrollmentRow] = await t.db.select().from(enrollments).where(eq(enrollments.id, e.id));
    expect(enrollmentRow.status).toBe('ACTIVE');
    const catalogue = await t.request('GET', '/api/catalogue', { token: student });
    expect(catalogue.body.data.map((c: any) => c.id)).not.toContain(course.id);
    expectError(await t.request('DELETE', `/api/courses/${course.id}`, { token: northTeacher }), 404, 'NOT_FOUND');
  });

  it('duplicates modules and lessons deeply into a new DRAFT owned by the caller', async () => {
    const source = await newCourse(teacher, { title: 'Source', certificateEnabled: true });
    const mod = expectOk(await t.request('POST', `/api/courses/${source.id}/modules`, { token: teacher, body: { title: 'M1' } }), 201);
    await t.request('POST', `/api/courses/${source.id}/lessons`, { token: teacher, body: { title: 'L1', type: 'TEXT', moduleId: mod.id, content: 'hello' } });
    await t.request('POST', `/api/courses/${source.id}/lessons`, { token: teacher, body: { title: 'Loose', type: 'VIDEO', videoUrl: 'https://video.example/1.mp4' } });
    await t.request('POST', `/api/courses/${source.id}/publish`, { token: teacher, body: { status: 'PUBLISHED' } });

    const copy = expectOk(await t.request('POST', `/api/courses/${source.id}/duplicate`, { token: teacher2 }), 201);
    expect(copy).toMatchObject({ title: 'Source (copy)', status: 'DRAFT', ownerId: 'u_demo_teacher2', certificateEnabled: true, publishedAt: null });
    expect(copy.id).not.toBe(source.id);
    const copiedModules = await t.db.select().from(courseModules).where(eq(courseModules.courseId, copy.id));
    expect(copiedModules.map((m) => m.title)).toEqual(['M1']);
    expect(copiedModules[0].id).not.toBe(mod.id);
    const copiedLessons = await t.db.select().from(lessons).where(eq(lessons.courseId, copy.id));
    expect(copiedLessons.map((l) => [l.title, l.moduleId]).sort()).toEqual([
      ['L1', copiedModules[0].id],
      ['Loose', null],
    ]);
    // The source is untouched.
    expect(await t.db.select().from(lessons).where(eq(lessons.courseId, source.id))).toHaveLength(2);
    expectError(await t.request('POST', `/api/courses/${source.id}/duplicate`, { token: student }), 403, 'FORBIDDEN');
    expectError(await t.request('POST', `/api/courses/${source.id}/duplicate`, { token: northTeacher }), 404, 'NOT_FOUND');
  });
});

describe('modules', () => {
  it('creates modules at the end by default, lists them with lessons in order, renames and reorders', async () => {
    const course = await newCourse();
    const m1 = expectOk(await t.request('POST', `/api/courses/${course.id}/modules`, { token: teacher, body: { title: 'First' } }), 201);
    const m2 = expectOk(await t.request('POST', `/api/courses/${course.id}/modules`, { token: teacher, body: { title: 'Second' } }), 201);
    expect(m1).toEqual({ id: expect.any(String), courseId: course.id, title: 'First', order: 0, createdAt: expect.any(String), updatedAt: expect.any(String) });
    expect(m2.order).toBe(1);
    await t.request('POST', `/api/courses/${course.id}/lessons`, { token: teacher, body: { title: 'B', type: 'TEXT', moduleId: m1.id, order: 2 } });
    await t.request('POST', `/api/courses/${course.id}/lessons`, { token: teacher, body: { title: 'A', type: 'TEXT', moduleId: m1.id, order: 1 } });

    let list = expectOk(await t.request('GET', `/api/courses/${course.id}/modules`, { token: teacher }));
    expect(list.map((m: any) => m.title)).toEqual(['First', 'Second']);
    expect(list[0].lessons.map((l: any) => l.title)).toEqual(['A', 'B']);

    const moved = expectOk(await t.request('PATCH', `/api/modules/${m2.id}`, { token: teacher, body: { order: 0, title: 'Now first' } }));
    expect(moved).toMatchObject({ title: 'Now first', order: 0 });
    expectOk(await t.request('PATCH', `/api/modules/${m1.id}`, { token: teacher, body: { order: 5 } }));
    list = expectOk(await t.request('GET', `/api/courses/${course.id}/modules`, { token: teacher }));
    expect(list.map((m: any) => m.title)).toEqual(['Now first', 'First']);
  });

  it('deletes a module and keeps its lessons in the course', async () => {
    const course = await newCourse();
    const mod = expectOk(await t.request('POST', `/api/courses/${course.id}/modules`, { token: teacher, body: { title: 'Doomed' } }), 201);
    const lesson = expectOk(await t.request('POST', `/api/courses/${course.id}/lessons`, { token: teacher, body: { title: 'Kept', type: 'TEXT', moduleId: mod.id } }), 201);
    expect(expectOk(await t.request('DELETE', `/api/modules/${mod.id}`, { token: teacher }))).toEqual({ id: mod.id, deleted: true });
    expect(await t.db.select().from(courseModules).where(eq(courseModules.id, mod.id))).toHaveLength(0);
    const [row] = await t.db.select().from(lessons).where(eq(lessons.id, lesson.id));
    expect(row.moduleId).toBeNull();
  });

  it('allows only the owner or ADMIN, and hides modules from another institution', async () => {
    const course = await newCourse();
    const mod = expectOk(await t.request('POST', `/api/courses/${course.id}/modules`, { token: teacher, body: { title: 'Mine' } }), 201);
    expectError(await t.request('POST', `/api/courses/${course.id}/modules`, { token: teacher2, body: { title: 'Theirs' } }), 403, 'FORBIDDEN');
    expectError(await t.request('POST', `/api/courses/${course.id}/modules`, { token: student, body: { title: 'Theirs' } }), 403, 'FORBIDDEN');
    expectError(await t.request('PATCH', `/api/modules/${mod.id}`, { token: teacher2, body: { title: 'X' } }), 403, 'FORBIDDEN');
    expectError(await t.request('PATCH', `/api/modules/${mod.id}`, { token: northTeacher, body: { title: 'X' } }), 404, 'NOT_FOUND');
    expectError(await t.request('DELETE', `/api/modules/${mod.id}`, { token: northTeacher }), 404, 'NOT_FOUND');
    expectError(await t.request('GET', `/api/courses/${course.id}/modules`, { token: northTeacher }), 404, 'NOT_FOUND');
    expectOk(await t.request('PATCH', `/api/modules/${mod.id}`, { token: admin, body: { title: 'Admin renamed' } }));
    expectError(await t.request('POST', `/api/courses/${course.id}/modules`, { token: teacher, body: { title: '' } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('POST', `/api/courses/${course.id}/modules`, { token: teacher, body: { title: 'x', order: -1 } }), 400, 'VALIDATION_ERROR');
  });
});

describe('lessons', () => {
  it('creates a lesson of every type with the pinned shape', async () => {
    const course = await newCourse();
    for (const type of LESSON_TYPES) {
      const lesson = expectOk(await t.request('POST', `/api/courses/${course.id}/lessons`, { token: teacher, body: { title: `A ${type}`, type } }), 201);
      expect(lesson).toMatchObject({ id: expect.any(String), courseId: course.id, moduleId: null, title: `A ${type}`, type, isRequired: true });
    }
    const rows = await t.db.select().from(lessons).where(eq(lessons.courseId, course.id));
    expect(rows.map((l) => l.type).sort()).toEqual([...LESSON_TYPES].sort());
    expect(rows.map((l) => l.order).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('stores every field and answers GET, PATCH and DELETE', async () => {
    const course = await newCourse();
    const mod = expectOk(await t.request('POST', `/api/courses/${course.id}/modules`, { token: teacher, body: { title: 'M' } }), 201);
    const lesson = expectOk(
      await t.request('POST', `/api/courses/${course.id}/lessons`, {
        token: teacher,
        body: {
          title: 'Watch',
          type: 'VIDEO',
          moduleId: mod.id,
          order: 4,
          content: 'notes',
          videoUrl: 'https://video.example/v.mp4',
          durationSeconds: 600,
          isRequired: false,
          unlockAfterDays: 2,
          unlockAt: '2026-04-01T00:00:00.000Z',
        },
      }),
      201,
    );
    expect(lesson).toMatchObject({
      moduleId: mod.id,
      order: 4,
      content: 'notes',
      videoUrl: 'https://video.example/v.mp4',
      durationSeconds: 600,
      isRequired: false,
      unlockAfterDays: 2,
      unlockAt: '2026-04-01T00:00:00.000Z',
    });
    expect(expectOk(await t.request('GET', `/api/lessons/${lesson.id}`, { token: teacher })).title).toBe('Watch');
    const patched = expectOk(await t.request('PATCH', `/api/lessons/${lesson.id}`, { token: teacher, body: { title: 'Watched', unlockAt: null, isRequired: true } }));
    expect(patched).toMatchObject({ title: 'Watched', unlockAt: null, isRequired: true, type: 'VIDEO' });
    expectError(await t.request('PATCH', `/api/lessons/${lesson.id}`, { token: teacher2, body: { title: 'X' } }), 403, 'FORBIDDEN');
    expectError(await t.request('GET', `/api/lessons/${lesson.id}`, { token: northTeacher }), 404, 'NOT_FOUND');
    expectError(await t.request('DELETE', `/api/lessons/${lesson.id}`, { token: northTeacher }), 404, 'NOT_FOUND');
    expect(expectOk(await t.request('DELETE', `/api/lessons/${lesson.id}`, { token: teacher }))).toEqual({ id: lesson.id, deleted: true });
    expect(await t.db.select().from(lessons).where(eq(lessons.id, lesson.id))).toHaveLength(0);
    expectError(await t.request('GET', `/api/lessons/${lesson.id}`, { token: teacher }), 404, 'NOT_FOUND');
  });

  it('validates type, urls, bounds and the module', async () => {
    const course = await newCourse();
    const other = await newCourse();
    const otherModule = expectOk(await t.request('POST', `/api/courses/${other.id}/modules`, { token: teacher, body: { title: 'Other' } }), 201);
    const url = `/api/courses/${course.id}/lessons`;
    let res = await t.request('POST', url, { token: teacher, body: { title: 'X', type: 'PODCAST' } });
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(failingFields(res)).toEqual(['body.type']);
    res = await t.request('POST', url, { token: teacher, body: { type: 'TEXT' } });
    expect(failingFields(res)).toEqual(['body.title']);
    res = await t.request('POST', url, { token: teacher, body: { title: 'X', type: 'VIDEO', videoUrl: 'not a url', durationSeconds: -1, unlockAt: 'tomorrow' } });
    expect(failingFields(res).sort()).toEqual(['body.durationSeconds', 'body.unlockAt', 'body.videoUrl']);
    res = await t.request('POST', url, { token: teacher, body: { title: 'X', type: 'TEXT', moduleId: otherModule.id } });
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(failingFields(res)).toEqual(['body.moduleId']);
    expectError(await t.request('POST', url, { token: student, body: { title: 'X', type: 'TEXT' } }), 403, 'FORBIDDEN');
    expectError(await t.request('POST', url, { token: northTeacher, body: { title: 'X', type: 'TEXT' } }), 404, 'NOT_FOUND');
    expect(await t.db.select().from(lessons).where(eq(lessons.courseId, course.id))).toHaveLength(0);
  });

  it('refuses duplicate block ids in a lesson', async () => {
    const course = await newCourse();
    const res = await t.request('POST', `/api/courses/${course.id}/lessons`, {
      token: teacher,
      body: {
        title: 'Blocks',
        type: 'INTERACTIVE',
        blocks: [
          { id: 'b1', type: 'choice' },
          { id: 'b1', type: 'text' },
        ],
      },
    });
    expectError(res, 400, 'VALIDATION_ERROR');
  });
});

describe('categories', () => {
  it('creates, lists by name and refuses a duplicate name with 409', async () => {
    expectOk(await t.request('POST', '/api/categories', { token: teacher, body: { name: 'Zoology' } }), 201);
    const created = expectOk(await t.request('POST', '/api/categories', { token: admin, body: { name: 'Art', description: 'Drawing' } }), 201);
    expect(created).toEqual({ id: expect.any(String), name: 'Art', description: 'Drawing', createdAt: expect.any(String) });
    expectError(await t.request('POST', '/api/categories', { token: teacher, body: { name: 'Art' } }), 409, 'CONFLICT');
    expectError(await t.request('POST', '/api/categories', { token: student, body: { name: 'Music' } }), 403, 'FORBIDDEN');
    expectError(await t.request('POST', '/api/categories', { token: teacher, body: { name: '' } }), 400, 'VALIDATION_ERROR');
    const list = await t.request('GET', '/api/categories', { token: student });
    const names = expectOk(list).map((c: any) => c.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(['Art', 'Zoology']));
    // Paginated like every list (spec 4.1), 100 a page by default.
    expect(list.body.meta).toEqual({ total: names.length, page: 1, perPage: 100, totalPages: 1 });
    const second = await t.request('GET', '/api/categories', { token: student, query: { page: 2, limit: 1 } });
    expect(second.body.data.map((c: any) => c.name)).toEqual([names[1]]);
    expect(second.body.meta).toEqual({ total: names.length, page: 2, perPage: 1, totalPages: names.length });
    expectError(await t.request('GET', '/api/categories', { token: student, query: { perPage: 101 } }), 400, 'VALIDATION_ERROR');
    // The other institution may use the same name, and sees none of ours.
    expectOk(await t.request('POST', '/api/categories', { token: northTeacher, body: { name: 'Art' } }), 201);
    const northNames = expectOk(await t.request('GET', '/api/categories', { token: northTeacher })).map((c: any) => c.name);
    expect(northNames).not.toContain('Zoology');
  });
});

describe('/api/v1', () => {
  it('serves the course routes under /api/v1 with the same payloads', async () => {
    const course = await newCourse(teacher, { title: 'Versioned' });
    const v0 = await t.request('GET', `/api/courses/${course.id}`, { token: teacher });
    const v1 = await t.request('GET', `/api/v1/courses/${course.id}`, { token: teacher });
    expect(v1.status).toBe(200);
    expect(v1.body).toEqual(v0.body);
  });
});
