/**
 * Development seed: POST /api/dev/seed creates demo content idempotently for ADMINs, the demo
 * student then sees it in the catalogue; production refuses it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectError, expectOk } from '../helpers/expect.js';
import { courses, lessons, LESSON_TYPES } from '../../src/modules/courses/courses.tables.js';
import { enrollments } from '../../src/modules/enrollments/enrollments.tables.js';
import { scormPackages } from '../../src/modules/scorm/scorm.tables.js';

describe('POST /api/dev/seed', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await createTestApp();
    admin = await t.token({ role: 'ADMIN', id: 'u_demo_admin' });
  }, 180_000);
  afterAll(() => t?.close());

  it('seeds courses with lessons of every type, enrollments and progress, once', async () => {
    const first = expectOk(await t.request('POST', '/api/dev/seed', { token: admin }));
    expect(first).toMatchObject({ institutionId: 'inst_demo', created: true });
    expect(first.courses).toBeGreaterThanOrEqual(2);
    const seededLessons = await t.db.select().from(lessons).where(eq(lessons.institutionId, 'inst_demo'));
    expect(new Set(seededLessons.map((l) => l.type))).toEqual(new Set(LESSON_TYPES));
    const seededEnrollments = await t.db.select().from(enrollments).where(eq(enrollments.institutionId, 'inst_demo'));
    expect(seededEnrollments.length).toBe(first.enrollments);
    expect(seededEnrollments.some((e) => e.progress > 0)).toBe(true);

    const again = expectOk(await t.request('POST', '/api/dev/seed', { token: admin }));
    expect(again).toMatchObject({ created: false, courses: first.courses, lessons: first.lessons, enrollments: first.enrollments });
    expect(await t.db.select().from(courses).where(eq(courses.institutionId, 'inst_demo'))).toHaveLength(first.courses);
  });

  it('shows the seeded published courses in the demo student catalogue and my-courses', async () => {
    const student = await t.token({ role: 'STUDENT', id: 'c_demo_stu_01' });
    const catalogue = expectOk(await t.request('GET', '/api/catalogue', { token: student }));
    expect(catalogue.length).toBeGreaterThanOrEqual(2);
    expect(catalogue.every((c: any) => c.status === 'PUBLISHED')).toBe(true);
    expect(catalogue.every((c: any) => c.lessonCount > 0)).toBe(true);
    const mine = expectOk(await t.request('GET', '/api/my-courses', { token: student }));
    expect(mine.length).toBeGreaterThan(0);
    const nav = expectOk(await t.request('GET', `/api/learn/${mine[0].courseId}`, { token: student }));
    expect(nav.modules.length).toBeGreaterThan(0);
  });

  it('seeds a quiz on the QUIZ lesson that the demo student can take', async () => {
    const student = await t.token({ role: 'STUDENT', id: 'c_demo_stu_01' });
    const [quizLesson] = (await t.db.select().from(lessons).where(eq(lessons.institutionId, 'inst_demo'))).filter((l) => l.type === 'QUIZ');
    const quiz = expectOk(await t.request('GET', `/api/quiz/${quizLesson!.id}`, { token: student }));
    expect(quiz).toMatchObject({ questionCount: 5, totalPoints: 6, maxAttempts: 3 });
    expect(new Set(quiz.questions.map((q: any) => q.type))).toEqual(new Set(['SINGLE_CHOICE', 'MULTIPLE_CHOICE', 'TRUE_FALSE', 'SHORT_ANSWER', 'NUMERIC']));
    const attempt = expectOk(
      await t.request('POST', `/api/quiz/${quizLesson!.id}/attempt`, {
        token: student,
        body: {
          answers: [
            { questionId: 'q1', optionIds: ['b'] },
            { questionId: 'q2', optionIds: ['a', 'c'] },
            { questionId: 'q3', value: true },
            { questionId: 'q4', text: ' Variable ' },
            { questionId: 'q5', value: 3.5 },
          ],
        },
      }),
    );
    expect(attempt).toMatchObject({ score: 6, percentage: 100, passed: true, completion: { lessonCompleted: true } });
  });

  it('gives the SCORM lesson a real SCORM 1.2 package (once), which launches and serves its SCO', async () => {
    const [lab] = await t.db
      .select()
      .from(lessons)
      .where(and(eq(lessons.institutionId, 'inst_demo'), eq(lessons.type, 'SCORM')));
    expect(await t.db.select().from(scormPackages).where(eq(scormPackages.lessonId, lab!.id))).toHaveLength(1);
    const l = expectOk(await t.request('GET', `/api/scorm/${lab!.id}/launch`, { token: admin }));
    expect(l).toMatchObject({ version: '1.2', title: 'Virtual microscope lab', sco: { identifier: 'lab', scormType: 'sco' } });
    expect(l.cmi['cmi.student_data.mastery_score']).toBe('70');
    const page = await t.app.inject({ method: 'GET', url: new URL(l.launchUrl).pathname, headers: { authorization: `Bearer ${admin}` } });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<script src="lab.js"></script>');
    const js = await t.app.inject({ method: 'GET', url: new URL('lab.js', l.launchUrl).pathname, headers: { authorization: `Bearer ${admin}` } });
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.body).toContain("api.LMSInitialize('')");
  });

  it('refuses non-admins with 403 and seeds only the caller institution', async () => {
    expectError(await t.request('POST', '/api/dev/seed', { token: await t.token({ role: 'TEACHER', id: 'u_demo_teacher' }) }), 403, 'FORBIDDEN');
    expectError(await t.request('POST', '/api/dev/seed', { token: await t.token({ role: 'STUDENT', id: 'c_demo_stu_01' }) }), 403, 'FORBIDDEN');
    expect(await t.db.select().from(courses).where(eq(courses.institutionId, 'inst_north'))).toHaveLength(0);
  });
});

describe('POST /api/dev/seed in production', () => {
  let t: TestApp;
  beforeAll(async () => {
    // The database is handed to the app directly; the URL only satisfies production's config check.
    t = await createTestApp({ env: { NODE_ENV: 'production', DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused' } });
  }, 180_000);
  afterAll(() => t?.close());

  it('is refused with 403 FORBIDDEN even for an ADMIN (issue 4), and writes nothing; the other dev routes do not exist', async () => {
    const admin = await t.token({ role: 'ADMIN', id: 'u_demo_admin' });
    expectError(await t.request('POST', '/api/dev/seed', { token: admin }), 403, 'FORBIDDEN');
    expectError(await t.request('POST', '/api/dev/seed'), 401, 'AUTH_REQUIRED');
    expect(await t.db.select().from(courses)).toHaveLength(0);
    expectError(await t.request('GET', '/api/dev/people'), 404, 'NOT_FOUND');
  });
});
