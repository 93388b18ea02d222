/**
 * Learning paths: create with ordered courses, add at a position, refuse other institutions'
 * courses, visibility, enrollment into the path and its courses (a full course reported, not
 * fatal; idempotent), progress and the order lock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, createLesson, enroll } from '../helpers/factories.js';
import { eq } from 'drizzle-orm';
import { expectError, expectOk } from '../helpers/expect.js';
import { auditLog } from '../../src/modules/audit/audit.tables.js';
import { enrollments } from '../../src/modules/enrollments/enrollments.tables.js';
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

const SECOND_LEARNER_ID = 'c_demo_stu_04';
const THIRD_LEARNER_ID = 'c_demo_stu_05';
const FOURTH_LEARNER_ID = 'c_demo_stu_06';
const FIFTH_LEARNER_ID = 'c_demo_stu_07';
const SIXTH_LEARNER_ID = 'c_demo_stu_08';

const create = (body: object, token = teacher) => t.request('POST', '/api/learning-paths', { token, body });

describe('learning paths', () => {
  it('creates with ordered courses, adds at a position, refuses another institution’s course (404) and duplicates (409)', async () => {
    const [a, b, c] = [await createCourse(t, { title: 'A' }), await createCourse(t, { title: 'B' }), await createCourse(t, { title: 'C' })];
    const north = await createCourse(t, { institutionId: 'inst_north', ownerId: 'u_northside_teacher', title: 'North' });
    const res = await create({ title: 'Biology track', courseIds: [a.id, c.id] });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ title: 'Biology track', status: 'PUBLISHED', createdBy: DEMO_TEACHER_ID, courseCount: 2, enrolled: false });
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
    expectError(await create({ title: 'Twice', courseIds: [a.id, a.id] }), 400, 'VALIDATION_ERROR');
  });

  it('learners see published paths only (a draft is 404); staff see all', async () => {
    const draft = (await create({ title: 'Draft path', status: 'DRAFT' })).body.data;
    const published = (await create({ title: 'Open path' })).body.data;
    expect([draft.status, published.status]).toEqual(['DRAFT', 'PUBLISHED']);
    expectError(await t.request('GET', `/api/learning-paths/${draft.id}`, { token: student }), 404, 'NOT_FOUND');
    expect((await t.request('GET', `/api/learning-paths/${published.id}`, { token: student })).status).toBe(200);
    const mine = await t.request('GET', '/api/learning-paths', { token: student, query: { perPage: 100 } });
    const ids = mine.body.data.map((p: any) => p.id);
    expect(ids).toContain(published.id);
    expect(ids).not.toContain(draft.id);
    const staff = await t.request('GET', '/api/learning-paths', { token: teacher, query: { status: 'DRAFT', perPage: 100 } });
    expect(staff.body.data.map((p: any) => p.id)).toContain(draft.id);
    // A path the learner is on stays theirs, in the list too, when it goes back to DRAFT.
    const taken = (await create({ title: 'Taken path' })).body.data;
    expect((await t.request('POST', `/api/learning-paths/${taken.id}/enroll`, { token: student })).status).toBeLessThan(300);
    expectOk(await t.request('PATCH', `/api/learning-paths/${taken.id}`, { token: teacher, body: { status: 'DRAFT' } }));
    expect((await t.request('GET', `/api/learning-paths/${taken.id}`, { token: student })).status).toBe(200);
    const after = (await t.request('GET', '/api/learning-paths', { token: student, query: { perPage: 100 } })).body.data.map((p: any) => p.id);
    expect(after).toContain(taken.id);
    expect(after).not.toContain(draft.id);
    // The status filter narrows what a learner may see: their DRAFT paths only.
    const drafts = (await t.request('GET', '/api/learning-paths', { token: student, query: { status: 'DRAFT', perPage: 100 } })).body.data;
    expect(drafts.map((p: any) => [p.id, p.status])).toEqual([[taken.id, 'DRAFT']]);
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
    // 'Not yet' (DRAFT, not enrolled) is not a course the learner can take: it is not counted.
    expect(view.progress).toEqual({ completedCourses: 0, totalCourses: 3, percent: 0, nextCourseId: first.id });

    // Completing the first course unlocks the next.
    expect((await t.request('POST', `/api/lessons/${lesson.id}/progress`, { token: student, body: { completed: true } })).body.data.courseCompleted).toBe(true);
    view = (await t.request('GET', `/api/learning-paths/${path.id}`, { token: student })).body.data;
    expect(view.courses.map((c: any) => c.locked)).toEqual([false, false, true, true]);
    expect(view.progress).toEqual({ completedCourses: 1, totalCourses: 3, percent: 33, nextCourseId: full.id });

    // Staff may enroll others; a draft path takes no enrollments.
    const staff = await t.request('POST', `/api/learning-paths/${path.id}/enroll`, { token: teacher, body: { studentIds: [DEMO_SIBLING_ID] } });
    expect(staff.body.data.students[0].courses.map((c: any) => c.result)).toEqual(['ENROLLED', 'ALREADY_ENROLLED', 'ENROLLED', 'NOT_AVAILABLE']);
    const draftPath = (await create({ title: 'Closed', status: 'DRAFT', courseIds: [first.id] })).body.data;
    expectError(await t.request('POST', `/api/learning-paths/${draftPath.id}/enroll`, { token: teacher, body: { studentIds: [DEMO_SIBLING_ID] } }), 409, 'CONFLICT');
  });

  it('a course the learner can no longer take (archived, never enrolled) does not lock the rest of the path', async () => {
    const gone = await createCourse(t, { title: 'Retired', ownerId: DEMO_TEACHER_ID });
    const next = await createCourse(t, { title: 'Still here' });
    const lesson = await createLesson(t, { courseId: next.id });
    const path = (await create({ title: 'Half retired', courseIds: [gone.id, next.id] })).body.data;
    expectOk(await t.request('DELETE', `/api/courses/${gone.id}`, { token: teacher }));
    const learner = await t.token({ role: 'STUDENT', id: FIFTH_LEARNER_ID });
    const res = expectOk(await t.request('POST', `/api/learning-paths/${path.id}/enroll`, { token: learner }));
    expect(res.students[0].courses.map((c: any) => c.result)).toEqual(['NOT_AVAILABLE', 'ENROLLED']);
    expect((await t.request('GET', `/api/lessons/${lesson.id}`, { token: learner })).status).toBe(200);
    const view = expectOk(await t.request('GET', `/api/learning-paths/${path.id}`, { token: learner }));
    expect(view.courses.map((c: any) => [c.title, c.locked])).toEqual([
      ['Retired', false],
      ['Still here', false],
    ]);
  });

  it('progress counts the courses that count as prerequisites: one the learner cannot take is left out, so the path reaches 100 % and nextCourseId skips it', async () => {
    const learner = await t.token({ role: 'STUDENT', id: SIXTH_LEARNER_ID });
    const unpublished = await createCourse(t, { title: 'Unpublished', status: 'DRAFT' });
    const doneBefore = await createCourse(t, { title: 'Done, since retired', status: 'ARCHIVED' });
    const stuck = await createCourse(t, { title: 'Retired while taking it', status: 'ARCHIVED' });
    const open = await createCourse(t, { title: 'Open' });
    const lesson = await createLesson(t, { courseId: open.id });
    await enroll(t, { courseId: doneBefore.id, studentId: SIXTH_LEARNER_ID, status: 'COMPLETED' });
    await enroll(t, { courseId: stuck.id, studentId: SIXTH_LEARNER_ID });
    const path = expectOk(await create({ title: 'Counted', courseIds: [unpublished.id, doneBefore.id, open.id] }), 201);
    const res = expectOk(await t.request('POST', `/api/learning-paths/${path.id}/enroll`, { token: learner }));
    expect(res.students[0].courses.map((c: any) => c.result)).toEqual(['NOT_AVAILABLE', 'NOT_AVAILABLE', 'ENROLLED']);

    // The unpublished course is left out; the archived one the learner completed counts as done.
    let view = expectOk(await t.request('GET', `/api/learning-paths/${path.id}`, { token: learner }));
    expect(view.courseCount).toBe(3);
    expect(view.courses.map((c: any) => [c.title, c.enrollmentStatus, c.locked])).toEqual([
      ['Unpublished', null, false],
      ['Done, since retired', 'COMPLETED', false],
      ['Open', 'ACTIVE', false],
    ]);
    expect(view.progress).toEqual({ completedCourses: 1, totalCourses: 2, percent: 50, nextCourseId: open.id });
    expect(expectOk(await t.request('POST', `/api/lessons/${lesson.id}/progress`, { token: learner, body: { completed: true } })).courseCompleted).toBe(true);
    view = expectOk(await t.request('GET', `/api/learning-paths/${path.id}`, { token: learner }));
    expect(view.progress).toEqual({ completedCourses: 2, totalCourses: 2, percent: 100, nextCourseId: null });
    // In the list too.
    const listed = expectOk(await t.request('GET', '/api/learning-paths', { token: learner, query: { perPage: 100 } })).find((p: any) => p.id === path.id);
    expect(listed.progress).toEqual({ completedCourses: 2, totalCourses: 2, percent: 100, nextCourseId: null });

    // An archived course the learner is still ACTIVE in can be completed: it counts, is next, and locks what follows.
    const other = expectOk(await create({ title: 'Still taking', courseIds: [unpublished.id, stuck.id, open.id] }), 201);
    const otherView = expectOk(await t.request('GET', `/api/learning-paths/${other.id}`, { token: learner }));
    expect(otherView.courses.map((c: any) => c.locked)).toEqual([false, false, true]);
    expect(otherView.progress).toEqual({ completedCourses: 1, totalCourses: 2, percent: 50, nextCourseId: stuck.id });
  });

  it('the order is a prerequisite: a later course’s lessons are refused (403 LESSON_LOCKED, naming the course) until the one before is completed', async () => {
    const first = await createCourse(t, { title: 'Basics' });
    const second = await createCourse(t, { title: 'Advanced' });
    const a = await createLesson(t, { courseId: first.id });
    const b = await createLesson(t, { courseId: second.id });
    const path = (await create({ title: 'Ordered', status: 'PUBLISHED', courseIds: [first.id, second.id] })).body.data;
    const learner = await t.token({ role: 'STUDENT', id: SECOND_LEARNER_ID });
    const enrolled = await t.request('POST', `/api/learning-paths/${path.id}/enroll`, { token: learner });
    expect(enrolled.body.data.students[0].courses.map((c: any) => c.result)).toEqual(['ENROLLED', 'ENROLLED']);

    const locked = await t.request('GET', `/api/lessons/${b.id}`, { token: learner });
    expectError(locked, 403, 'LESSON_LOCKED');
    expect(locked.body.error.details).toMatchObject({ reason: 'PREREQUISITE', prerequisiteCourseId: first.id, prerequisiteCourseTitle: 'Basics', learningPathId: path.id });
    expect(locked.body.error.message).toContain('Basics');
    expectError(await t.request('POST', `/api/lessons/${b.id}/progress`, { token: learner, body: { completed: true } }), 403, 'LESSON_LOCKED');
    const nav = expectOk(await t.request('GET', `/api/learn/${second.id}`, { token: learner }));
    expect(JSON.stringify(nav)).toContain('"lockReason":"PREREQUISITE"');
    expectOk(await t.request('GET', `/api/lessons/${a.id}`, { token: learner }));
    // Staff are not held by a learner's path.
    expectOk(await t.request('GET', `/api/lessons/${b.id}`, { token: teacher }));
    // Enrolling again changes nothing and keeps the lock.
    const again = await t.request('POST', `/api/learning-paths/${path.id}/enroll`, { token: learner });
    expect(again.body.data.students[0].courses.map((c: any) => c.result)).toEqual(['ALREADY_ENROLLED', 'ALREADY_ENROLLED']);
    expectError(await t.request('GET', `/api/lessons/${b.id}`, { token: learner }), 403, 'LESSON_LOCKED');

    expect(expectOk(await t.request('POST', `/api/lessons/${a.id}/progress`, { token: learner, body: { completed: true } })).courseCompleted).toBe(true);
    expectOk(await t.request('GET', `/api/lessons/${b.id}`, { token: learner }));
    expect(expectOk(await t.request('POST', `/api/lessons/${b.id}/progress`, { token: learner, body: { completed: true } })).courseCompleted).toBe(true);
  });

  it('a course the learner was already enrolled in directly keeps its own access rules', async () => {
    const first = await createCourse(t, { title: 'One' });
    const second = await createCourse(t, { title: 'Two' });
    await createLesson(t, { courseId: first.id });
    const b = await createLesson(t, { courseId: second.id });
    await enroll(t, { courseId: second.id, studentId: THIRD_LEARNER_ID });
    const path = (await create({ title: 'Joined late', status: 'PUBLISHED', courseIds: [first.id, second.id] })).body.data;
    const learner = await t.token({ role: 'STUDENT', id: THIRD_LEARNER_ID });
    const res = await t.request('POST', `/api/learning-paths/${path.id}/enroll`, { token: learner });
    expect(res.body.data.students[0].courses.map((c: any) => c.result)).toEqual(['ENROLLED', 'ALREADY_ENROLLED']);
    expectOk(await t.request('GET', `/api/lessons/${b.id}`, { token: learner }));
  });

  it('staff writes are audited: create, change, add courses, enroll others; a refused write leaves no row', async () => {
    const [x, y] = [await createCourse(t, { title: 'X' }), await createCourse(t, { title: 'Y' })];
    const headers = (id: string) => ({ 'x-request-id': id });
    const path = expectOk(
      await t.request('POST', '/api/learning-paths', { token: teacher, body: { title: 'Audited', status: 'DRAFT', courseIds: [x.id] }, headers: headers('req-lp-1') }),
      201,
    );
    expectOk(await t.request('PATCH', `/api/learning-paths/${path.id}`, { token: teacher, body: { status: 'PUBLISHED' }, headers: headers('req-lp-2') }));
    expectOk(await t.request('POST', `/api/learning-paths/${path.id}/courses`, { token: teacher, body: { courseId: y.id }, headers: headers('req-lp-3') }));
    const enrolled = expectOk(
      await t.request('POST', `/api/learning-paths/${path.id}/enroll`, { token: teacher, body: { studentIds: [FOURTH_LEARNER_ID] }, headers: headers('req-lp-4') }),
    );
    expect(enrolled.students[0].courses.map((c: any) => c.result)).toEqual(['ENROLLED', 'ENROLLED']);
    const rows = async (requestId: string) => t.db.select().from(auditLog).where(eq(auditLog.requestId, requestId));
    expect(await rows('req-lp-1')).toEqual([
      expect.objectContaining({
        actorId: DEMO_TEACHER_ID,
        action: 'learning_path.create',
        targetType: 'learning_path',
        targetId: path.id,
        before: null,
        after: { title: 'Audited', status: 'DRAFT', courseIds: [x.id] },
      }),
    ]);
    expect(await rows('req-lp-2')).toEqual([expect.objectContaining({ action: 'learning_path.update', before: { status: 'DRAFT' }, after: { status: 'PUBLISHED' } })]);
    expect(await rows('req-lp-3')).toEqual([expect.objectContaining({ action: 'learning_path.add_courses', before: { courseIds: [x.id] }, after: { courseIds: [x.id, y.id] } })]);
    const enrollRows = await rows('req-lp-4');
    expect(enrollRows.map((r) => r.action).sort()).toEqual(['enrollment.create', 'enrollment.create', 'learning_path.enroll']);
    const made = await t.db.select().from(enrollments).where(eq(enrollments.studentId, FOURTH_LEARNER_ID));
    expect(
      enrollRows
        .filter((r) => r.action === 'enrollment.create')
        .map((r) => r.targetId)
        .sort(),
    ).toEqual(made.map((e) => e.id).sort());
    expect(enrollRows.find((r) => r.action === 'enrollment.create')!.after).toMatchObject({ studentId: FOURTH_LEARNER_ID, learningPathId: path.id, status: 'ACTIVE' });
    expect(made.every((e) => e.learningPathId === path.id)).toBe(true);

    // Refused writes: a duplicate course (409, inside the transaction), another teacher's change (403).
    expectError(await t.request('POST', `/api/learning-paths/${path.id}/courses`, { token: teacher, body: { courseId: y.id }, headers: headers('req-lp-5') }), 409, 'CONFLICT');
    expectError(await t.request('PATCH', `/api/learning-paths/${path.id}`, { token: teacher2, body: { title: 'Mine' }, headers: headers('req-lp-6') }), 403, 'FORBIDDEN');
    expect(await rows('req-lp-5')).toEqual([]);
    expect(await rows('req-lp-6')).toEqual([]);
    // A learner enrolling themself is not a staff write.
    await t.request('POST', `/api/learning-paths/${path.id}/enroll`, { token: await t.token({ role: 'STUDENT', id: FIFTH_LEARNER_ID }), headers: headers('req-lp-7') });
    expect(await rows('req-lp-7')).toEqual([]);
  });
});
