/**
 * Learning paths: create with ordered courses, add at a position, refuse other institutions'
 * courses, visibility, enrollment into the path and its courses (a full course reported, not
 * fatal; idempotent), progress and the order lock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, createLesson, enroll } from '../helpers/factories.js';
import { expectError } from '../helpers/expect.js';
import { DEMO_SIBLING_ID, DEMO_STUDENT_ID, DEMO_TEACHER2_ID, DEMO_TEACHER_ID } from '../../src/dev/crm-sim/fixtures.js';

let t: TestApp;
let teacher: string;
let teacher2: string;
let student: string;

beforeAll(async () => {
  t = await createTestApp();
  teacher = await t.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
  teacher2 = await t.token({ role: 'TEACHER', id: DEMO_TEACHER2_ID });
  student = await t.token({ role: 'STUDENT', id: DEMO_STUDENT_ID });
});
afterAll(async () => t.close());

const create = (body: object, token = teacher) => t.request('POST', '/api/learning-paths', { token, body });

describe('learning paths', () => {
  it('creates with ordered courses, adds at a position, refuses another institution’s course (404) and duplicates (409)', async () => {
    const [a, b, c] = [await createCourse(t, { title: 'A' }), await createCourse(t, { title: 'B' }), await createCourse(t, { title: 'C' })];
    const north = await createCourse(t, { institutionId: 'inst_north', ownerId: 'u_northside_teacher', title: 'North' });
    const res = await create({ title: 'Biology track', courseIds: [a.id, c.id] });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ title: 'Biology track', status: 'DRAFT', createdBy: DEMO_TEACHER_ID, courseCount: 2, enrolled: false });
    expect(res.body.data.courses.map((x: any) => [x.title, x.position])).toEqual([
      ['A', 0],
      ['C', 1],
    ]);
    const id = res.body.data.id;
    const added = await t.request('POST', `/api/learning-paths/${id}/courses`, { token: teacher, body: { courseId: b.id, position: 1 } });
    expect(added.status).toBe(200);
    expect(added.body.data.courses.map((x: any) => x.title)).toEqual(['A', 'B', 'C']);
    expectError(await t.request('POST', `/api/learning-paths/${id}/courses`, { token: teacher, body: { courseId: north.id } }), 404, 'NOT_FOUND');
    expectError(await create({ title: 'x', courseIds: [north.id] }), 404, 'NOT_FOUND');
    expectError(await t.request('POST', `/api/learning-paths/${id}/courses`, { token: teacher, body: { courseId: a.id } }), 409, 'CONFLICT');
    expectError(await t.request('POST', `/api/learning-paths/${id}/courses`, { token: teacher2, body: { courseId: a.id } }), 403, 'FORBIDDEN');
    expectError(await t.request('PATCH', `/api/learning-paths/${id}`, { token: teacher2, body: { title: 'mine' } }), 403, 'FORBIDDEN');
    expectError(await create({ title: 'x' }, student), 403, 'FORBIDDEN');
    expectError(await create({ title: '' }), 400, 'VALIDATION_ERROR');
  });

  it('learners see published paths only (a draft is 404); staff see all', async () => {
    const draft = (await create({ title: 'Draft path' })).body.data;
    const published = (await create({ title: 'Open path', status: 'PUBLISHED' })).body.data;
    expectError(await t.request('GET', `/api/learning-paths/${draft.id}`, { token: student }), 404, 'NOT_FOUND');
    expect((await t.request('GET', `/api/learning-paths/${published.id}`, { token: student })).status).toBe(200);
    const mine = await t.request('GET', '/api/learning-paths', { token: student, query: { perPage: 100 } });
    const ids = mine.body.data.map((p: any) => p.id);
    expect(ids).toContain(published.id);
    expect(ids).not.toContain(draft.id);
    const staff = await t.request('GET', '/api/learning-paths', { token: teacher, query: { status: 'DRAFT', perPage: 100 } });
    expect(staff.body.data.map((p: any) => p.id)).toContain(draft.id);
    const north = await t.token({ role: 'TEACHER', id: 'u_northside_teacher', institutionId: 'inst_north' });
    expectError(await t.request('GET', `/api/learning-paths/${published.id}`, { token: north }), 404, 'NOT_FOUND');
  });

  it('enrolls into the path and each course in order: a full course is reported, the rest go on; idempotent; progress and the order lock', async () => {
    const first = await createCourse(t, { title: 'First' });
    const full = await createCourse(t, { title: 'Full', maxEnrollments: 1 });
    const third = await createCourse(t, { title: 'Third' });
    const draftCourse = await createCourse(t, { title: 'Not yet', status: 'DRAFT' });
    await enroll(t, { courseId: full.id, studentId: DEMO_SIBLING_ID });
    const lesson = await createLesson(t, { courseId: first.id });
    const path = (await create({ title: 'Track', status: 'PUBLISHED', courseIds: [first.id, full.id, third.id, draftCourse.id] })).body.data;

    const res = await t.request('POST', `/api/learning-paths/${path.id}/enroll`, { token: student });
    expect(res.status, res.raw).toBe(200);
    expect(res.body.data).toEqual({
      pathId: path.id,
      students: [
        {
          studentId: DEMO_STUDENT_ID,
          courses: [
            { courseId: first.id, position: 0, result: 'ENROLLED' },
            { courseId: full.id, position: 1, result: 'COURSE_FULL' },
            { courseId: third.id, position: 2, result: 'ENROLLED' },
            { courseId: draftCourse.id, position: 3, result: 'NOT_AVAILABLE' },
          ],
        },
      ],
    });
    const again = await t.request('POST', `/api/learning-paths/${path.id}/enroll`, { token: student });
    expect(again.body.data.students[0].courses.map((c: any) => c.result)).toEqual(['ALREADY_ENROLLED', 'COURSE_FULL', 'ALREADY_ENROLLED', 'NOT_AVAILABLE']);

    let view = (await t.request('GET', `/api/learning-paths/${path.id}`, { token: student })).body.data;
    expect(view.enrolled).toBe(true);
    expect(view.courses.map((c: any) => [c.title, c.enrollmentStatus, c.locked])).toEqual([
      ['First', 'ACTIVE', false],
      ['Full', null, true],
      ['Third', 'ACTIVE', true],
      ['Not yet', null, true],
    ]);
    expect(view.progress).toEqual({ completedCourses: 0, totalCourses: 4, percent: 0, nextCourseId: first.id });

    // Completing the first course unlocks the next.
    expect((await t.request('POST', `/api/lessons/${lesson.id}/progress`, { token: student, body: { completed: true } })).body.data.courseCompleted).toBe(true);
    view = (await t.request('GET', `/api/learning-paths/${path.id}`, { token: student })).body.data;
    expect(view.courses.map((c: any) => c.locked)).toEqual([false, false, true, true]);
    expect(view.progress).toEqual({ completedCourses: 1, totalCourses: 4, percent: 25, nextCourseId: full.id });

    // Staff may enroll others; a draft path takes no enrollments.
    const staff = await t.request('POST', `/api/learning-paths/${path.id}/enroll`, { token: teacher, body: { studentIds: [DEMO_SIBLING_ID] } });
    expect(staff.body.data.students[0].courses.map((c: any) => c.result)).toEqual(['ENROLLED', 'ALREADY_ENROLLED', 'ENROLLED', 'NOT_AVAILABLE']);
    const draftPath = (await create({ title: 'Closed', courseIds: [first.id] })).body.data;
    expectError(await t.request('POST', `/api/learning-paths/${draftPath.id}/enroll`, { token: teacher, body: { studentIds: [DEMO_SIBLING_ID] } }), 409, 'CONFLICT');
  });
});
