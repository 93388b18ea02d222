/**
 * Course reviews (issue 14.3; spec 4.9 `POST /api/reviews`): enrolled students only (ACTIVE or
 * COMPLETED), rating an integer 1–5, one review per student and course (a second POST updates
 * it), `averageRating` and `reviewCount` in the catalogue and the course detail, the paginated
 * list of a course's reviews, isolation from another institution.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, enroll } from '../helpers/factories.js';
import { expectError, expectOk } from '../helpers/expect.js';
import { courseReviews } from '../../src/modules/reviews/reviews.tables.js';
import { DEMO_ADMIN_ID, DEMO_TEACHER_ID, NORTH_ADMIN_ID, NORTH_STUDENT_ID } from '../../src/dev/crm-sim/fixtures.js';

const stu = (n: number) => `c_demo_stu_${String(n).padStart(2, '0')}`;

let t: TestApp;
let teacher: string;
let admin: string;
const tokens = new Map<string, string>();
const tok = async (id: string) => {
  if (!tokens.has(id)) tokens.set(id, await t.token({ role: 'STUDENT', id }));
  return tokens.get(id)!;
};

beforeAll(async () => {
  t = await createTestApp();
  teacher = await t.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
  admin = await t.token({ role: 'ADMIN', id: DEMO_ADMIN_ID });
});
afterAll(async () => t.close());

/** A published course: 01, 02 ACTIVE, 03 COMPLETED, 04 DROPPED. */
async function setup(title = 'Geography') {
  const course = await createCourse(t, { title, ownerId: DEMO_TEACHER_ID });
  for (const n of [1, 2]) await enroll(t, { courseId: course.id, studentId: stu(n) });
  await enroll(t, { courseId: course.id, studentId: stu(3), status: 'COMPLETED' });
  await enroll(t, { courseId: course.id, studentId: stu(4), status: 'DROPPED' });
  return course;
}

const review = async (id: string, body: object) => t.request('POST', '/api/reviews', { token: await tok(id), body });
const nameOf = (id: string) => {
  const c = t.crmSim.data.inst_demo.students.find((s) => s.contact.id === id)!.contact;
  return `${c.firstName} ${c.lastName}`;
};

describe('POST /api/reviews', () => {
  it('creates (201) and then updates (200) the one review of a student; an absent comment is kept, null removes it', async () => {
    const course = await setup();
    const first = expectOk(await review(stu(1), { courseId: course.id, rating: 3, comment: 'Good maps' }), 201);
    expect(first).toMatchObject({ courseId: course.id, studentId: stu(1), studentName: nameOf(stu(1)), rating: 3, comment: 'Good maps' });
    t.clock.advance(1000);
    const second = expectOk(await review(stu(1), { courseId: course.id, rating: 5 }), 200);
    expect(second).toMatchObject({ id: first.id, rating: 5, comment: 'Good maps', createdAt: first.createdAt, updatedAt: t.clock.now().toISOString() });
    const third = expectOk(await review(stu(1), { courseId: course.id, rating: 4, comment: null }), 200);
    expect(third).toMatchObject({ id: first.id, rating: 4, comment: null });
    expect(await t.db.select().from(courseReviews).where(eq(courseReviews.courseId, course.id))).toHaveLength(1);
  });

  it('two POSTs at once still leave one review', async () => {
    const course = await setup();
    const [a, b] = await Promise.all([review(stu(2), { courseId: course.id, rating: 2 }), review(stu(2), { courseId: course.id, rating: 4 })]);
    expect([a.status, b.status].sort()).toEqual([200, 201]);
    const rows = await t.db.select().from(courseReviews).where(eq(courseReviews.courseId, course.id));
    expect(rows).toHaveLength(1);
  });

  it('COMPLETED students review too; DROPPED, unenrolled students and staff get 403 ENROLLMENT_REQUIRED; a course they may not know is 404', async () => {
    const course = await setup();
    expectOk(await review(stu(3), { courseId: course.id, rating: 5, comment: 'Finished it' }), 201);
    for (const id of [stu(4), stu(5)]) expectError(await review(id, { courseId: course.id, rating: 5 }), 403, 'ENROLLMENT_REQUIRED');
    expectError(await t.request('POST', '/api/reviews', { token: teacher, body: { courseId: course.id, rating: 5 } }), 403, 'ENROLLMENT_REQUIRED');
    const draft = await createCourse(t, { status: 'DRAFT', publishedAt: null });
    expectError(await review(stu(1), { courseId: draft.id, rating: 5 }), 404, 'NOT_FOUND');
    expectError(await review(stu(1), { courseId: 'no-such-course', rating: 5 }), 404, 'NOT_FOUND');
  });

  it('rating is an integer from 1 to 5', async () => {
    const course = await setup();
    for (const rating of [0, 6, 3.5, '4', null, -1]) expectError(await review(stu(1), { courseId: course.id, rating }), 400, 'VALIDATION_ERROR');
    expectError(await review(stu(1), { courseId: course.id }), 400, 'VALIDATION_ERROR');
    expectError(await review(stu(1), { courseId: course.id, rating: 5, comment: 'x'.repeat(5001) }), 400, 'VALIDATION_ERROR');
    expectOk(await review(stu(1), { courseId: course.id, rating: 1 }), 201);
    expectOk(await review(stu(2), { courseId: course.id, rating: 5 }), 201);
  });
});

describe('ratings and the list', () => {
  it('averageRating and reviewCount appear in the catalogue and the course detail', async () => {
    const course = await setup('Rated course');
    const unrated = await setup('Unrated course');
    expectOk(await review(stu(1), { courseId: course.id, rating: 4 }), 201);
    expectOk(await review(stu(2), { courseId: course.id, rating: 5 }), 201);
    expectOk(await review(stu(3), { courseId: course.id, rating: 4 }), 201);

    const detail = expectOk(await t.request('GET', `/api/courses/${course.id}`, { token: await tok(stu(5)) }));
    expect(detail).toMatchObject({ id: course.id, averageRating: 4.33, reviewCount: 3 });
    expect(expectOk(await t.request('GET', `/api/courses/${unrated.id}`, { token: teacher }))).toMatchObject({ averageRating: null, reviewCount: 0 });

    const catalogue = expectOk(await t.request('GET', '/api/catalogue', { token: await tok(stu(5)), query: { perPage: 100 } }));
    expect(catalogue.find((c: { id: string }) => c.id === course.id)).toMatchObject({ averageRating: 4.33, reviewCount: 3 });
    expect(catalogue.find((c: { id: string }) => c.id === unrated.id)).toMatchObject({ averageRating: null, reviewCount: 0 });
  });

  it('GET /api/courses/{id}/reviews: newest change first, paginated, with names; 404 where the course is not visible', async () => {
    const course = await setup();
    for (const n of [1, 2, 3]) {
      t.clock.advance(1000);
      expectOk(await review(stu(n), { courseId: course.id, rating: n + 2, comment: `from ${n}` }), 201);
    }
    t.clock.advance(1000);
    expectOk(await review(stu(1), { courseId: course.id, rating: 2 }), 200);
    const page1 = await t.request('GET', `/api/courses/${course.id}/reviews`, { token: await tok(stu(5)), query: { perPage: 2 } });
    expect(expectOk(page1).map((r: { studentId: string; rating: number }) => [r.studentId, r.rating])).toEqual([
      [stu(1), 2],
      [stu(3), 5],
    ]);
    expect(page1.body.meta).toEqual({ total: 3, page: 1, perPage: 2, totalPages: 2 });
    expect(expectOk(page1)[1]).toMatchObject({ studentName: nameOf(stu(3)), comment: 'from 3' });
    const draft = await createCourse(t, { status: 'DRAFT', publishedAt: null });
    expectError(await t.request('GET', `/api/courses/${draft.id}/reviews`, { token: await tok(stu(1)) }), 404, 'NOT_FOUND');
    expect(expectOk(await t.request('GET', `/api/courses/${draft.id}/reviews`, { token: admin }))).toEqual([]);
  });

  it('another institution sees and writes no review of this one', async () => {
    const course = await setup();
    expectOk(await review(stu(1), { courseId: course.id, rating: 5 }), 201);
    const northStudent = await t.token({ role: 'STUDENT', id: NORTH_STUDENT_ID, institutionId: 'inst_north' });
    const northAdmin = await t.token({ role: 'ADMIN', id: NORTH_ADMIN_ID, institutionId: 'inst_north' });
    expectError(await t.request('POST', '/api/reviews', { token: northStudent, body: { courseId: course.id, rating: 1 } }), 404, 'NOT_FOUND');
    expectError(await t.request('GET', `/api/courses/${course.id}/reviews`, { token: northAdmin }), 404, 'NOT_FOUND');
    expectError(await t.request('GET', `/api/courses/${course.id}`, { token: northAdmin }), 404, 'NOT_FOUND');
    const catalogue = expectOk(await t.request('GET', '/api/catalogue', { token: northStudent }));
    expect(catalogue.some((c: { id: string }) => c.id === course.id)).toBe(false);
    expect(await t.db.select().from(courseReviews).where(eq(courseReviews.courseId, course.id))).toHaveLength(1);
  });
});
