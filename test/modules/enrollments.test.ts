/**
 * Enrollment through HTTP: self-enroll, the last-seat race, bulk enroll, list with CRM names,
 * detail, unenroll, catalogue and my-courses; other students and institutions see nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, createLesson, enroll } from '../helpers/factories.js';
import { expectError, expectOk, failingFields } from '../helpers/expect.js';
import { enrollments } from '../../src/modules/enrollments/enrollments.tables.js';

const INST = 'inst_demo';
let t: TestApp;
let teacher: string;
let admin: string;
let northTeacher: string;
let northStudent: string;
const students: Record<string, string> = {};
const stu = (n: number) => `c_demo_stu_${String(n).padStart(2, '0')}`;

beforeAll(async () => {
  t = await createTestApp();
  teacher = await t.token({ role: 'TEACHER', id: 'u_demo_teacher' });
  admin = await t.token({ role: 'ADMIN', id: 'u_demo_admin' });
  northTeacher = await t.token({ role: 'TEACHER', id: 'u_northside_teacher', institutionId: 'inst_north' });
  northStudent = await t.token({ role: 'STUDENT', id: 'c_northside_stu_01', institutionId: 'inst_north' });
  for (let n = 1; n <= 30; n++) students[stu(n)] = await t.token({ role: 'STUDENT', id: stu(n) });
}, 180_000);
afterAll(() => t?.close());

const rowsOf = (courseId: string) => t.db.select().from(enrollments).where(eq(enrollments.courseId, courseId));

describe('POST /api/courses/:id/enroll', () => {
  it('enrolls the student with the pinned shape and stores the row', async () => {
    const course = await createCourse(t, { title: 'Self enroll' });
    const res = await t.request('POST', `/api/courses/${course.id}/enroll`, { token: students[stu(1)] });
    const data = expectOk(res, 201);
    expect(data).toMatchObject({ id: expect.any(String), courseId: course.id, studentId: stu(1), status: 'ACTIVE', enrolledAt: t.clock.now().toISOString(), progress: 0 });
    const rows = await rowsOf(course.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: data.id, institutionId: INST, studentId: stu(1), status: 'ACTIVE', enrolledBy: stu(1) });
  });

  it('answers 409 ALREADY_ENROLLED the second time and keeps one row', async () => {
    const course = await createCourse(t);
    expectOk(await t.request('POST', `/api/courses/${course.id}/enroll`, { token: students[stu(1)] }), 201);
    expectError(await t.request('POST', `/api/courses/${course.id}/enroll`, { token: students[stu(1)] }), 409, 'ALREADY_ENROLLED');
    expect(await rowsOf(course.id)).toHaveLength(1);
  });

  it('an enrolled student is told ALREADY_ENROLLED before fee gating (402) or self-enrollment turned off (403) would refuse a newcomer', async () => {
    const course = await createCourse(t);
    // Student 03's fees are OVERDUE in the CRM.
    await enroll(t, { courseId: course.id, studentId: stu(3) });
    await enroll(t, { courseId: course.id, studentId: stu(5), status: 'COMPLETED' });
    expectOk(await t.request('PATCH', '/api/settings', { token: admin, body: { feeGatingEnabled: true, allowSelfEnrollment: false } }));
    try {
      expectError(await t.request('POST', `/api/courses/${course.id}/enroll`, { token: students[stu(3)] }), 409, 'ALREADY_ENROLLED');
      expectError(await t.request('POST', `/api/courses/${course.id}/enroll`, { token: students[stu(5)] }), 409, 'ALREADY_ENROLLED');
      expectError(await t.request('POST', `/api/courses/${course.id}/enroll`, { token: students[stu(6)] }), 403, 'FORBIDDEN');
      expectOk(await t.request('PATCH', '/api/settings', { token: admin, body: { allowSelfEnrollment: true } }));
      expectError(await t.request('POST', `/api/courses/${course.id}/enroll`, { token: students[stu(3)] }), 409, 'ALREADY_ENROLLED');
    } finally {
      expectOk(await t.request('PATCH', '/api/settings', { token: admin, body: { feeGatingEnabled: false, allowSelfEnrollment: true } }));
    }
    expect((await rowsOf(course.id)).map((r) => [r.studentId, r.status]).sort()).toEqual([
      [stu(3), 'ACTIVE'],
      [stu(5), 'COMPLETED'],
    ]);
  });

  it('answers 409 COURSE_FULL when the seats are taken (DROPPED enrollments free their seat)', async () => {
    const course = await createCourse(t, { maxEnrollments: 2 });
    await enroll(t, { courseId: course.id, studentId: stu(20) });
    await enroll(t, { courseId: course.id, studentId: stu(21), status: 'DROPPED' });
    expectOk(await t.request('POST', `/api/courses/${course.id}/enroll`, { token: students[stu(1)] }), 201);
    expectError(await t.request('POST', `/api/courses/${course.id}/enroll`, { token: students[stu(4)] }), 409, 'COURSE_FULL');
    expect((await rowsOf(course.id)).map((r) => r.studentId).sort()).toEqual([stu(1), stu(20), stu(21)]);
  });

  it('lets exactly one of two concurrent enrolls take the last seat', async () => {
    const course = await createCourse(t, { maxEnrollments: 1 });
    const results = await Promise.all([
      t.request('POST', `/api/courses/${course.id}/enroll`, { token: students[stu(5)] }),
      t.request('POST', `/api/courses/${course.id}/enroll`, { token: students[stu(6)] }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    expect(results.find((r) => r.status === 409)!.body.error.code).toBe('COURSE_FULL');
    expect(await rowsOf(course.id)).toHaveLength(1);
  });

  it('lets ten students race for three seats: exactly three win', async () => {
    const course = await createCourse(t, { maxEnrollments: 3 });
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => t.request('POST', `/api/courses/${course.id}/enroll`, { token: students[stu(i + 7)] })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(3);
    expect(results.filter((r) => r.status === 409 && r.body.error.code === 'COURSE_FULL')).toHaveLength(7);
    expect(await rowsOf(course.id)).toHaveLength(3);
  });

  it('keeps one row when the same student enrolls twice at once', async () => {
    const course = await createCourse(t);
    const results = await Promise.all([1, 2].map(() => t.request('POST', `/api/courses/${course.id}/enroll`, { token: students[stu(2)] })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    expect(await rowsOf(course.id)).toHaveLength(1);
  });

  it('reactivates a DROPPED enrollment instead of adding a row', async () => {
    const course = await createCourse(t);
    const dropped = await enroll(t, { courseId: course.id, studentId: stu(1), status: 'DROPPED' });
    const data = expectOk(await t.request('POST', `/api/courses/${course.id}/enroll`, { token: students[stu(1)] }), 201);
    expect(data).toMatchObject({ id: dropped.id, status: 'ACTIVE', droppedAt: null });
  });

  it('refuses drafts and archived courses (404), other institutions (404) and non-students (403)', async () => {
    const draft = await createCourse(t, { status: 'DRAFT', publishedAt: null });
    const archived = await createCourse(t, { status: 'ARCHIVED' });
    const north = await createCourse(t, { institutionId: 'inst_north', ownerId: 'u_northside_teacher' });
    expectError(await t.request('POST', `/api/courses/${draft.id}/enroll`, { token: students[stu(1)] }), 404, 'NOT_FOUND');
    expectError(await t.request('POST', `/api/courses/${archived.id}/enroll`, { token: students[stu(1)] }), 404, 'NOT_FOUND');
    expectError(await t.request('POST', `/api/courses/${north.id}/enroll`, { token: students[stu(1)] }), 404, 'NOT_FOUND');
    const open = await createCourse(t);
    expectError(await t.request('POST', `/api/courses/${open.id}/enroll`, { token: teacher }), 403, 'FORBIDDEN');
    expectError(await t.request('POST', `/api/courses/${open.id}/enroll`), 401, 'AUTH_REQUIRED');
    expect(await rowsOf(open.id)).toHaveLength(0);
  });
});

describe('POST /api/courses/:id/enrollments (bulk)', () => {
  it('reports enrolled, already enrolled and failed per id', async () => {
    const course = await createCourse(t, { maxEnrollments: 3 });
    await enroll(t, { courseId: course.id, studentId: stu(1) });
    const res = await t.request('POST', `/api/courses/${course.id}/enrollments`, {
      token: teacher,
      body: { studentIds: [stu(1), stu(2), stu(3), stu(4), stu(2)] },
    });
    const data = expectOk(res);
    expect(data.enrolled.map((e: any) => e.studentId)).toEqual([stu(2), stu(3)]);
    expect(data.enrolled[0]).toMatchObject({ courseId: course.id, status: 'ACTIVE' });
    expect(data.alreadyEnrolled.map((e: any) => e.studentId)).toEqual([stu(1)]);
    expect(data.failed).toEqual([{ studentId: stu(4), code: 'COURSE_FULL', message: expect.any(String) }]);
    const rows = await rowsOf(course.id);
    expect(rows.map((r) => r.studentId).sort()).toEqual([stu(1), stu(2), stu(3)]);
    expect(rows.find((r) => r.studentId === stu(2))!.enrolledBy).toBe('u_demo_teacher');
  });

  it('enrolls into a draft course (staff prepare a class before publishing)', async () => {
    const course = await createCourse(t, { status: 'DRAFT', publishedAt: null });
    const data = expectOk(await t.request('POST', `/api/courses/${course.id}/enrollments`, { token: admin, body: { studentIds: [stu(9)] } }));
    expect(data.enrolled).toHaveLength(1);
  });

  it('refuses students (403), other institutions (404) and bad bodies (400)', async () => {
    const course = await createCourse(t);
    expectError(await t.request('POST', `/api/courses/${course.id}/enrollments`, { token: students[stu(1)], body: { studentIds: [stu(1)] } }), 403, 'FORBIDDEN');
    expectError(await t.request('POST', `/api/courses/${course.id}/enrollments`, { token: northTeacher, body: { studentIds: [stu(1)] } }), 404, 'NOT_FOUND');
    let res = await t.request('POST', `/api/courses/${course.id}/enrollments`, { token: teacher, body: { studentIds: [] } });
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(failingFields(res)).toEqual(['body.studentIds']);
    res = await t.request('POST', `/api/courses/${course.id}/enrollments`, { token: teacher, body: { studentIds: [''] } });
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(await rowsOf(course.id)).toHaveLength(0);
  });
});

describe('GET /api/courses/:id/enrollments and /:studentId', () => {
  it('lists enrollments with names from the CRM, paginated and filtered by status', async () => {
    const course = await createCourse(t);
    await enroll(t, { courseId: course.id, studentId: stu(11) });
    t.clock.advance(1000);
    await enroll(t, { courseId: course.id, studentId: stu(12), status: 'DROPPED' });
    t.clock.advance(1000);
    await enroll(t, { courseId: course.id, studentId: stu(13) });
    const res = await t.request('GET', `/api/courses/${course.id}/enrollments`, { token: teacher, query: { perPage: 2 } });
    const data = expectOk(res);
    expect(res.body.meta).toEqual({ total: 3, page: 1, perPage: 2, totalPages: 2 });
    const contact = t.crmSim.data[INST].students.find((s) => s.contact.id === stu(11))!.contact;
    expect(data[0]).toMatchObject({ studentId: stu(11), studentName: `${contact.firstName} ${contact.lastName}` });
    expect(data.map((e: any) => e.studentId)).toEqual([stu(11), stu(12)]);
    const dropped = await t.request('GET', `/api/courses/${course.id}/enrollments`, { token: teacher, query: { status: 'DROPPED' } });
    expect(dropped.body.data.map((e: any) => e.studentId)).toEqual([stu(12)]);
  });

  it('degrades to a generic label when the CRM fails', async () => {
    const course = await createCourse(t);
    await enroll(t, { courseId: course.id, studentId: stu(29) });
    t.crmSim.setFault('error500', { pathPrefix: '/api/lms/' });
    try {
      const res = await t.request('GET', `/api/courses/${course.id}/enrollments`, { token: teacher });
      expect(expectOk(res)[0].studentName).toBe(`Student ${stu(29)}`);
    } finally {
      t.crmSim.setFault(null);
    }
  });

  it('refuses students the list; shows a student their own enrollment only', async () => {
    const course = await createCourse(t);
    await enroll(t, { courseId: course.id, studentId: stu(1) });
    await enroll(t, { courseId: course.id, studentId: stu(2) });
    expectError(await t.request('GET', `/api/courses/${course.id}/enrollments`, { token: students[stu(1)] }), 403, 'FORBIDDEN');
    const own = expectOk(await t.request('GET', `/api/courses/${course.id}/enrollments/${stu(1)}`, { token: students[stu(1)] }));
    expect(own).toMatchObject({ courseId: course.id, studentId: stu(1), status: 'ACTIVE' });
    expectError(await t.request('GET', `/api/courses/${course.id}/enrollments/${stu(2)}`, { token: students[stu(1)] }), 404, 'NOT_FOUND');
    expect(expectOk(await t.request('GET', `/api/courses/${course.id}/enrollments/${stu(2)}`, { token: teacher })).studentId).toBe(stu(2));
    expectError(await t.request('GET', `/api/courses/${course.id}/enrollments/${stu(3)}`, { token: teacher }), 404, 'NOT_FOUND');
  });

  it('shows another institution nothing', async () => {
    const course = await createCourse(t);
    await enroll(t, { courseId: course.id, studentId: stu(1) });
    expectError(await t.request('GET', `/api/courses/${course.id}/enrollments`, { token: northTeacher }), 404, 'NOT_FOUND');
    expectError(await t.request('GET', `/api/courses/${course.id}/enrollments/${stu(1)}`, { token: northTeacher }), 404, 'NOT_FOUND');
    expectError(await t.request('DELETE', `/api/courses/${course.id}/enrollments/${stu(1)}`, { token: northTeacher }), 404, 'NOT_FOUND');
    const [row] = await t.db
      .select()
      .from(enrollments)
      .where(and(eq(enrollments.courseId, course.id), eq(enrollments.studentId, stu(1))));
    expect(row.status).toBe('ACTIVE');
  });
});

describe('DELETE /api/courses/:id/enrollments/:studentId', () => {
  it('drops the enrollment and keeps the row; a second call changes nothing', async () => {
    const course = await createCourse(t);
    const e = await enroll(t, { courseId: course.id, studentId: stu(1) });
    t.clock.advance(60_000);
    const data = expectOk(await t.request('DELETE', `/api/courses/${course.id}/enrollments/${stu(1)}`, { token: teacher }));
    expect(data).toMatchObject({ id: e.id, deleted: true, status: 'DROPPED', droppedAt: t.clock.now().toISOString() });
    const [row] = await t.db.select().from(enrollments).where(eq(enrollments.id, e.id));
    expect(row.status).toBe('DROPPED');
    expect(expectOk(await t.request('DELETE', `/api/courses/${course.id}/enrollments/${stu(1)}`, { token: teacher })).status).toBe('DROPPED');
  });

  it('lets a student drop themself but nobody else; a COMPLETED enrollment is 409', async () => {
    const course = await createCourse(t);
    await enroll(t, { courseId: course.id, studentId: stu(1) });
    await enroll(t, { courseId: course.id, studentId: stu(2) });
    await enroll(t, { courseId: course.id, studentId: stu(3), status: 'COMPLETED' });
    // Someone else's enrollment is 404 to a student, as when reading it.
    expectError(await t.request('DELETE', `/api/courses/${course.id}/enrollments/${stu(2)}`, { token: students[stu(1)] }), 404, 'NOT_FOUND');
    expectError(await t.request('GET', `/api/courses/${course.id}/enrollments/${stu(2)}`, { token: students[stu(1)] }), 404, 'NOT_FOUND');
    expect(expectOk(await t.request('DELETE', `/api/courses/${course.id}/enrollments/${stu(1)}`, { token: students[stu(1)] })).status).toBe('DROPPED');
    expectError(await t.request('DELETE', `/api/courses/${course.id}/enrollments/${stu(3)}`, { token: teacher }), 409, 'CONFLICT');
    expectError(await t.request('DELETE', `/api/courses/${course.id}/enrollments/${stu(9)}`, { token: teacher }), 404, 'NOT_FOUND');
    const rows = await rowsOf(course.id);
    expect(Object.fromEntries(rows.map((r) => [r.studentId, r.status]))).toEqual({ [stu(1)]: 'DROPPED', [stu(2)]: 'ACTIVE', [stu(3)]: 'COMPLETED' });
  });
});

describe('GET /api/catalogue and /api/my-courses', () => {
  let tenant: { catalogueCourse: any; draft: any; mine: any; done: any; dropped: any };

  beforeAll(async () => {
    const catalogueCourse = await createCourse(t, { title: 'Catalogue Chemistry', maxEnrollments: 10, publishedAt: new Date('2026-03-01T00:00:00Z') });
    await createLesson(t, { courseId: catalogueCourse.id });
    await createLesson(t, { courseId: catalogueCourse.id, order: 2 });
    await enroll(t, { courseId: catalogueCourse.id, studentId: stu(15) });
    const draft = await createCourse(t, { title: 'Catalogue draft', status: 'DRAFT', publishedAt: null });
    const mine = await createCourse(t, { title: 'Mine active' });
    const done = await createCourse(t, { title: 'Mine done' });
    const dropped = await createCourse(t, { title: 'Mine dropped' });
    await enroll(t, { courseId: mine.id, studentId: stu(30), progress: 40 });
    t.clock.advance(1000);
    await enroll(t, { courseId: done.id, studentId: stu(30), status: 'COMPLETED' });
    await enroll(t, { courseId: dropped.id, studentId: stu(30), status: 'DROPPED' });
    tenant = { catalogueCourse, draft, mine, done, dropped };
    await createCourse(t, { institutionId: 'inst_north', ownerId: 'u_northside_teacher', title: 'Catalogue North' });
  });

  it('lists published courses of the institution with counts and the caller status', async () => {
    const res = await t.request('GET', '/api/catalogue', { token: students[stu(15)], query: { search: 'catalogue' } });
    const data = expectOk(res);
    expect(data).toHaveLength(1);
    expect(data[0]).toMatchObject({
      id: tenant.catalogueCourse.id,
      title: 'Catalogue Chemistry',
      status: 'PUBLISHED',
      lessonCount: 2,
      enrollmentCount: 1,
      seatsLeft: 9,
      enrollmentStatus: 'ACTIVE',
    });
    expect(res.body.meta).toEqual({ total: 1, page: 1, perPage: 20, totalPages: 1 });
    const other = expectOk(await t.request('GET', '/api/catalogue', { token: students[stu(16)], query: { search: 'Chemistry' } }));
    expect(other[0].enrollmentStatus).toBeNull();
    const north = expectOk(await t.request('GET', '/api/catalogue', { token: northStudent, query: { search: 'Catalogue' } }));
    expect(north.map((c: any) => c.title)).toEqual(['Catalogue North']);
    expectError(await t.request('GET', '/api/catalogue', { token: students[stu(15)], query: { limit: 101 } }), 400, 'VALIDATION_ERROR');
  });

  it("lists the caller's active and completed courses with progress; DROPPED only on request", async () => {
    const res = await t.request('GET', '/api/my-courses', { token: students[stu(30)] });
    const data = expectOk(res);
    expect(data.map((r: any) => r.course.title).sort()).toEqual(['Mine active', 'Mine done']);
    const active = data.find((r: any) => r.courseId === tenant.mine.id);
    expect(active).toMatchObject({ status: 'ACTIVE', progress: 40, studentId: stu(30), course: { id: tenant.mine.id, lessonCount: 0 } });
    expect(res.body.meta.total).toBe(2);
    const dropped = expectOk(await t.request('GET', '/api/my-courses', { token: students[stu(30)], query: { status: 'DROPPED' } }));
    expect(dropped.map((r: any) => r.courseId)).toEqual([tenant.dropped.id]);
    expect(expectOk(await t.request('GET', '/api/my-courses', { token: students[stu(27)] }))).toEqual([]);
    // The same person id in another institution's session sees nothing of this one.
    const elsewhere = await t.token({ role: 'STUDENT', id: stu(30), institutionId: 'inst_north' });
    expect(expectOk(await t.request('GET', '/api/my-courses', { token: elsewhere }))).toEqual([]);
  });
});
