/**
 * Quizzes (issue 11, spec 4.9 quiz rows) through HTTP: authoring with validation, the learner
 * view without answer keys, access like lesson content, server-side grading of every question
 * type, completion through the assessment, the attempt limit (also under concurrency), the
 * time limit with its grace period, and the attempt lists of learners and staff.
 *
 * The concurrent tests run on PGlite here and on PostgreSQL in CI (`DATABASE_URL`), where the
 * requests really overlap on their own connections.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { createTestApp, type ApiResponse, type TestApp } from '../helpers/app.js';
import { createCourse, createLesson, enroll } from '../helpers/factories.js';
import { expectError, expectOk, failingFields } from '../helpers/expect.js';
import { quizAttempts, quizzes } from '../../src/modules/quizzes/quizzes.tables.js';
import { lessons } from '../../src/modules/courses/courses.tables.js';
import { enrollments, lessonProgress } from '../../src/modules/enrollments/enrollments.tables.js';
import { certificates } from '../../src/modules/certificates/certificates.tables.js';
import { NORTH_ADMIN_ID, NORTH_STUDENT_ID, NORTH_TEACHER_ID, OVERDUE_STUDENT_ID, SECOND_INSTITUTION } from '../../src/dev/crm-sim/fixtures.js';

const EXPLANATION = 'EXPLANATION-SECRET-mitochondria';
const ACCEPTED = 'Lutetia';

/** One question of each type; 7 points in all. */
const QUIZ = {
  title: 'Cells and more',
  description: 'A short check',
  passingScore: 60,
  questions: [
    {
      type: 'SINGLE_CHOICE',
      prompt: 'Which organelle makes energy?',
      options: [
        { id: 'a', text: 'Nucleus' },
        { id: 'b', text: 'Mitochondrion' },
      ],
      correctOptionIds: ['b'],
      points: 2,
      explanation: EXPLANATION,
    },
    {
      type: 'MULTIPLE_CHOICE',
      prompt: 'Which are prime?',
      options: [
        { id: 'two', text: '2' },
        { id: 'four', text: '4' },
        { id: 'five', text: '5' },
      ],
      correctOptionIds: ['two', 'five'],
      points: 2,
    },
    { type: 'TRUE_FALSE', prompt: 'The Sun is a star.', correctAnswer: true },
    { type: 'SHORT_ANSWER', prompt: 'The Roman name of Paris?', acceptedAnswers: [ACCEPTED, 'Lutetia Parisiorum'] },
    { type: 'NUMERIC', prompt: 'Pi to two decimals?', numericAnswer: 3.14, tolerance: 0.01 },
  ],
};

/** Names of answer-key fields: none may appear in a learner's quiz, start or attempt response. */
const KEY_FIELDS = ['correctOptionIds', 'correctAnswer', 'acceptedAnswers', 'numericAnswer', 'tolerance', 'explanation'];

let t: TestApp;
let teacher: string;
let teacher2: string;
let admin: string;
const tokens = new Map<string, string>();
const stu = (n: number) => `c_demo_stu_${String(n).padStart(2, '0')}`;
const student = async (n: number | string) => {
  const id = typeof n === 'number' ? stu(n) : n;
  if (!tokens.has(id)) tokens.set(id, await t.token({ role: 'STUDENT', id }));
  return tokens.get(id)!;
};

beforeAll(async () => {
  t = await createTestApp({ env: { DB_POOL_SIZE: '20' } });
  teacher = await t.token({ role: 'TEACHER', id: 'u_demo_teacher' });
  teacher2 = await t.token({ role: 'TEACHER', id: 'u_demo_teacher2' });
  admin = await t.token({ role: 'ADMIN', id: 'u_demo_admin' });
});
afterAll(async () => t.close());

/** A learner-facing response carries no answer key, explanation or accepted answer. */
function expectNoAnswerKeys(res: ApiResponse, opts: { results?: boolean } = {}) {
  for (const key of KEY_FIELDS) expect(res.raw, `${key} in ${res.raw.slice(0, 200)}`).not.toContain(`"${key}"`);
  // `correct` is only ever the per-question result of an attempt ("was the answer right").
  if (!opts.results) expect(res.raw).not.toContain('"correct"');
  expect(res.raw).not.toContain(EXPLANATION);
}

interface Setup {
  courseId: string;
  lessonId: string;
  quiz: any;
  /** Answers that are all right, by the stored question ids. */
  rightAnswers: any[];
  token: string;
  studentId: string;
}

/**
 * A published course with a QUIZ lesson (and `extraLessons` TEXT lessons) whose quiz is `body`,
 * created through PUT by the owner, and student `n` enrolled.
 */
async function setup(n: number, body: Record<string, unknown> = {}, opts: { extraLessons?: number; certificate?: boolean; lesson?: Record<string, unknown> } = {}): Promise<Setup> {
  const course = await createCourse(t, { ownerId: 'u_demo_teacher', certificateEnabled: opts.certificate ?? false });
  const lesson = await createLesson(t, { courseId: course.id, type: 'QUIZ', title: 'Quiz', order: 1, ...opts.lesson });
  for (let i = 0; i < (opts.extraLessons ?? 0); i++) await createLesson(t, { courseId: course.id, type: 'TEXT', order: 2 + i });
  const quiz = expectOk(await t.request('PUT', `/api/quiz/${lesson.id}`, { token: teacher, body: { ...QUIZ, ...body } }), 201);
  await enroll(t, { courseId: course.id, studentId: stu(n) });
  return { courseId: course.id, lessonId: lesson.id, quiz, rightAnswers: rightAnswers(quiz), token: await student(n), studentId: stu(n) };
}

/** The right answer to each question of a quiz as staff see it. */
function rightAnswers(quiz: any) {
  return quiz.questions.map((q: any) => {
    switch (q.type) {
      case 'SINGLE_CHOICE':
      case 'MULTIPLE_CHOICE':
        return { questionId: q.id, optionIds: q.correctOptionIds };
      case 'TRUE_FALSE':
        return { questionId: q.id, value: q.correctAnswer };
      case 'SHORT_ANSWER':
        return { questionId: q.id, text: q.acceptedAnswers[0] };
      default:
        return { questionId: q.id, value: q.numericAnswer };
    }
  });
}

const idOf = (quiz: any, type: string) => quiz.questions.find((q: any) => q.type === type).id as string;
const submit = (s: Setup, answers: any[], extra: Record<string, unknown> = {}) =>
  t.request('POST', `/api/quiz/${s.lessonId}/attempt`, { token: s.token, body: { answers, ...extra } });
const progressOf = async (s: Setup) => {
  const [e] = await t.db
    .select()
    .from(enrollments)
    .where(and(eq(enrollments.courseId, s.courseId), eq(enrollments.studentId, s.studentId)));
  const [p] = await t.db
    .select()
    .from(lessonProgress)
    .where(and(eq(lessonProgress.enrollmentId, e!.id), eq(lessonProgress.lessonId, s.lessonId)));
  return { enrollment: e!, lesson: p ?? null };
};
const attemptRows = (s: Setup) =>
  t.db
    .select()
    .from(quizAttempts)
    .where(and(eq(quizAttempts.quizId, s.lessonId), eq(quizAttempts.studentId, s.studentId)));

// ── authoring ──────────────────────────────────────────────────────────────────

describe('PUT and GET /api/quiz/{id} (authoring)', () => {
  it('creates the quiz (201) with server ids and totalPoints; replacing it keeps the ids sent back (200)', async () => {
    const course = await createCourse(t, { ownerId: 'u_demo_teacher' });
    const lesson = await createLesson(t, { courseId: course.id, type: 'QUIZ' });
    const res = await t.request('PUT', `/api/quiz/${lesson.id}`, { token: teacher, body: QUIZ });
    const quiz = expectOk(res, 201);
    expect(quiz).toMatchObject({
      id: lesson.id,
      lessonId: lesson.id,
      courseId: course.id,
      title: 'Cells and more',
      passingScore: 60,
      maxAttempts: null,
      timeLimitMinutes: null,
      shuffleQuestions: false,
      shuffleOptions: false,
      questionCount: 5,
      totalPoints: 7,
      myAttempts: null,
    });
    expect(quiz.questions.map((q: any) => q.order)).toEqual([1, 2, 3, 4, 5]);
    expect(quiz.questions[0]).toMatchObject({ type: 'SINGLE_CHOICE', correctOptionIds: ['b'], explanation: EXPLANATION, points: 2 });
    expect(quiz.questions[4]).toMatchObject({ type: 'NUMERIC', numericAnswer: 3.14, tolerance: 0.01, points: 1 });
    expect(new Set(quiz.questions.map((q: any) => q.id)).size).toBe(5);

    // Staff read the whole quiz back.
    expect(expectOk(await t.request('GET', `/api/quiz/${lesson.id}`, { token: teacher }))).toEqual(quiz);

    // Replace: keep question 1 (sent back with its id, moved last), drop the others, add one.
    t.clock.advance(1000);
    const kept = { ...quiz.questions[0], prompt: 'Which organelle makes ATP?', order: 9 };
    const replaced = expectOk(
      await t.request('PUT', `/api/quiz/${lesson.id}`, {
        token: teacher,
        body: { title: 'Renamed', maxAttempts: 3, timeLimitMinutes: 15, questions: [kept, { type: 'TRUE_FALSE', prompt: 'Water is wet.', correctAnswer: true, order: 1 }] },
      }),
      200,
    );
    expect(replaced).toMatchObject({ title: 'Renamed', passingScore: 70, maxAttempts: 3, timeLimitMinutes: 15, questionCount: 2, totalPoints: 3, description: null });
    expect(replaced.questions.map((q: any) => [q.type, q.order])).toEqual([
      ['TRUE_FALSE', 1],
      ['SINGLE_CHOICE', 2],
    ]);
    expect(replaced.questions[1]).toMatchObject({ id: quiz.questions[0].id, prompt: 'Which organelle makes ATP?' });
    expect(replaced.questions[0].id).not.toBe(quiz.questions[2].id);
    expect(replaced.createdAt).toBe(quiz.createdAt);
    expect(replaced.updatedAt).not.toBe(quiz.updatedAt);
  });

  it('refuses invalid quizzes with 400 VALIDATION_ERROR naming each field', async () => {
    const course = await createCourse(t, { ownerId: 'u_demo_teacher' });
    const lesson = await createLesson(t, { courseId: course.id, type: 'QUIZ' });
    const put = (body: unknown) => t.request('PUT', `/api/quiz/${lesson.id}`, { token: teacher, body });
    const choice = (over: Record<string, unknown>) => ({
      type: 'SINGLE_CHOICE',
      prompt: 'P',
      options: [
        { id: 'a', text: 'A' },
        { id: 'b', text: 'B' },
      ],
      correctOptionIds: ['a'],
      ...over,
    });

    const cases: Array<[unknown, string[]]> = [
      [{ ...QUIZ, questions: [choice({ correctOptionIds: ['a', 'b'] })] }, ['body.questions.0.correctOptionIds']],
      [{ ...QUIZ, questions: [choice({ correctOptionIds: ['z'] })] }, ['body.questions.0.correctOptionIds.0']],
      [{ ...QUIZ, questions: [choice({ type: 'MULTIPLE_CHOICE', options: [{ id: 'a', text: 'A' }] })] }, ['body.questions.0.options']],
      [{ ...QUIZ, questions: [{ type: 'NUMERIC', prompt: 'P', numericAnswer: 1, tolerance: -0.5 }] }, ['body.questions.0.tolerance']],
      [{ ...QUIZ, questions: [{ type: 'NUMERIC', prompt: 'P' }] }, ['body.questions.0.numericAnswer']],
      [{ ...QUIZ, questions: [{ type: 'TRUE_FALSE', prompt: 'P' }] }, ['body.questions.0.correctAnswer']],
      [{ ...QUIZ, questions: [{ type: 'SHORT_ANSWER', prompt: 'P', acceptedAnswers: [] }] }, ['body.questions.0.acceptedAnswers']],
      [{ ...QUIZ, questions: [{ type: 'TRUE_FALSE', prompt: 'P', correctAnswer: true, acceptedAnswers: ['x'] }] }, ['body.questions.0.acceptedAnswers']],
      [{ ...QUIZ, questions: [{ type: 'TRUE_FALSE', prompt: 'P', correctAnswer: true, points: 0 }] }, ['body.questions.0.points']],
      [{ ...QUIZ, questions: [{ type: 'TRUE_FALSE', prompt: '   ', correctAnswer: true }] }, ['body.questions.0.prompt']],
      [{ ...QUIZ, questions: [{ id: 'made-up', type: 'TRUE_FALSE', prompt: 'P', correctAnswer: true }] }, ['body.questions.0.id']],
      [{ ...QUIZ, passingScore: 101 }, ['body.passingScore']],
      [{ ...QUIZ, maxAttempts: 0 }, ['body.maxAttempts']],
      [{ ...QUIZ, timeLimitMinutes: 2000 }, ['body.timeLimitMinutes']],
      [{ ...QUIZ, questions: [] }, ['body.questions']],
      [{ ...QUIZ, title: '' }, ['body.title']],
    ];
    for (const [body, fields] of cases) {
      const res = await put(body);
      expectError(res, 400, 'VALIDATION_ERROR');
      expect(failingFields(res), JSON.stringify(body)).toEqual(fields);
    }
    // Nothing was stored.
    expect(await t.db.select().from(quizzes).where(eq(quizzes.id, lesson.id))).toEqual([]);
  });

  it('is for the course owner with canManageCourses or an ADMIN', async () => {
    const course = await createCourse(t, { ownerId: 'u_demo_teacher' });
    const lesson = await createLesson(t, { courseId: course.id, type: 'QUIZ' });
    expectError(await t.request('PUT', `/api/quiz/${lesson.id}`, { token: teacher2, body: QUIZ }), 403, 'FORBIDDEN');
    expectError(await t.request('PUT', `/api/quiz/${lesson.id}`, { token: await student(1), body: QUIZ }), 403, 'FORBIDDEN');
    expectOk(await t.request('PUT', `/api/quiz/${lesson.id}`, { token: admin, body: QUIZ }), 201);
    // Any manager of the institution reads the whole quiz (like the lesson itself).
    expect(expectOk(await t.request('GET', `/api/quiz/${lesson.id}`, { token: teacher2 })).questions[0].correctOptionIds).toEqual(['b']);
  });

  it('a lesson that is not a QUIZ lesson: PUT 400, the other routes 404; a QUIZ lesson without a quiz: 404', async () => {
    const course = await createCourse(t, { ownerId: 'u_demo_teacher' });
    const text = await createLesson(t, { courseId: course.id, type: 'TEXT' });
    const empty = await createLesson(t, { courseId: course.id, type: 'QUIZ', order: 2 });
    await enroll(t, { courseId: course.id, studentId: stu(4) });
    const s = await student(4);
    const res = await t.request('PUT', `/api/quiz/${text.id}`, { token: teacher, body: QUIZ });
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(failingFields(res)).toEqual(['params.id']);
    for (const id of [text.id, empty.id, 'no-such-lesson']) {
      expectError(await t.request('GET', `/api/quiz/${id}`, { token: teacher }), 404, 'NOT_FOUND');
      expectError(await t.request('GET', `/api/quiz/${id}`, { token: s }), 404, 'NOT_FOUND');
      expectError(await t.request('POST', `/api/quiz/${id}/start`, { token: s }), 404, 'NOT_FOUND');
      expectError(await t.request('POST', `/api/quiz/${id}/attempt`, { token: s, body: { answers: [] } }), 404, 'NOT_FOUND');
      expectError(await t.request('GET', `/api/quiz/${id}/attempts`, { token: teacher }), 404, 'NOT_FOUND');
    }
    expectError(await t.request('PUT', `/api/quiz/no-such-lesson`, { token: teacher, body: QUIZ }), 404, 'NOT_FOUND');
  });

  it('duplicating the course copies the quiz of each QUIZ lesson, not the attempts', async () => {
    const s = await setup(3);
    expectOk(await submit(s, s.rightAnswers));
    const copy = expectOk(await t.request('POST', `/api/courses/${s.courseId}/duplicate`, { token: teacher2 }), 201);
    const quizLessonIds = (
      await t.db
        .select()
        .from(lessons)
        .where(and(eq(lessons.courseId, copy.id), eq(lessons.type, 'QUIZ')))
    ).map((l) => l.id);
    expect(quizLessonIds).toHaveLength(1);
    const copied = expectOk(await t.request('GET', `/api/quiz/${quizLessonIds[0]}`, { token: teacher2 }));
    expect(copied).toMatchObject({ id: quizLessonIds[0], courseId: copy.id, title: QUIZ.title, totalPoints: 7 });
    expect(copied.questions).toEqual(s.quiz.questions);
    expect(expectOk(await t.request('GET', `/api/quiz/${quizLessonIds[0]}/attempts`, { token: teacher2 }))).toEqual([]);
  });

  it('deleting the lesson deletes its quiz and attempts', async () => {
    const s = await setup(5);
    expectOk(await submit(s, s.rightAnswers));
    expectOk(await t.request('DELETE', `/api/lessons/${s.lessonId}`, { token: teacher }));
    expect(await t.db.select().from(quizzes).where(eq(quizzes.id, s.lessonId))).toEqual([]);
    expect(await attemptRows(s)).toEqual([]);
  });
});

// ── the learner view and access ────────────────────────────────────────────────

describe('GET /api/quiz/{id} for learners', () => {
  it('never contains correct answers, accepted answers, tolerances, numeric answers or explanations', async () => {
    const s = await setup(6);
    const res = await t.request('GET', `/api/quiz/${s.lessonId}`, { token: s.token });
    const quiz = expectOk(res);
    expectNoAnswerKeys(res);
    expect(res.raw).not.toContain(ACCEPTED);
    expect(quiz).toMatchObject({ questionCount: 5, totalPoints: 7, myAttempts: { used: 0, remaining: null, passed: false, bestPercentage: null, inProgress: null } });
    expect(quiz.questions[0]).toEqual({
      id: s.quiz.questions[0].id,
      type: 'SINGLE_CHOICE',
      prompt: 'Which organelle makes energy?',
      options: [
        { id: 'a', text: 'Nucleus' },
        { id: 'b', text: 'Mitochondrion' },
      ],
      points: 2,
      order: 1,
    });
    expect(quiz.questions[4]).toEqual({ id: s.quiz.questions[4].id, type: 'NUMERIC', prompt: 'Pi to two decimals?', points: 1, order: 5 });
    // The same over /api/v1 with a bearer token.
    expectNoAnswerKeys(await t.request('GET', `/api/v1/quiz/${s.lessonId}`, { token: s.token }));
  });

  it('shuffles questions and options per learner, the same on every reload of an attempt', async () => {
    const questions = Array.from({ length: 12 }, (_, i) => ({
      type: 'SINGLE_CHOICE',
      prompt: `Q${i}`,
      options: ['a', 'b', 'c', 'd', 'e'].map((id) => ({ id, text: id.toUpperCase() })),
      correctOptionIds: ['a'],
    }));
    const s = await setup(7, { questions, shuffleQuestions: true, shuffleOptions: true });
    const first = expectOk(await t.request('GET', `/api/quiz/${s.lessonId}`, { token: s.token }));
    const again = expectOk(await t.request('GET', `/api/quiz/${s.lessonId}`, { token: s.token }));
    expect(again.questions).toEqual(first.questions);
    expect(new Set(first.questions.map((q: any) => q.id))).toEqual(new Set(s.quiz.questions.map((q: any) => q.id)));
    expect(first.questions.map((q: any) => q.id)).not.toEqual(s.quiz.questions.map((q: any) => q.id));
    expect(first.questions.some((q: any) => q.options.map((o: any) => o.id).join() !== 'a,b,c,d,e')).toBe(true);
    // Starting the attempt shows the same order as the page the learner was looking at.
    const started = expectOk(await t.request('POST', `/api/quiz/${s.lessonId}/start`, { token: s.token }), 201);
    expect(started.quiz.questions).toEqual(first.questions);
    // Staff see the authored order.
    expect(expectOk(await t.request('GET', `/api/quiz/${s.lessonId}`, { token: teacher })).questions.map((q: any) => q.prompt)).toEqual(questions.map((q) => q.prompt));
  });

  it('refuses learners like lesson content: not enrolled, dropped, drip-locked, fees overdue', async () => {
    const s = await setup(8);
    const routes = (token: string, lessonId = s.lessonId) => [
      t.request('GET', `/api/quiz/${lessonId}`, { token }),
      t.request('POST', `/api/quiz/${lessonId}/start`, { token }),
      t.request('POST', `/api/quiz/${lessonId}/attempt`, { token, body: { answers: [] } }),
    ];
    for (const res of await Promise.all(routes(await student(9)))) expectError(res, 403, 'ENROLLMENT_REQUIRED');
    await enroll(t, { courseId: s.courseId, studentId: stu(10), status: 'DROPPED' });
    for (const res of await Promise.all(routes(await student(10)))) expectError(res, 403, 'ENROLLMENT_REQUIRED');
    // A manager opens the quiz but, without an enrollment, does not take it.
    expectError(await t.request('POST', `/api/quiz/${s.lessonId}/start`, { token: teacher }), 403, 'ENROLLMENT_REQUIRED');
    expectError(await t.request('POST', `/api/quiz/${s.lessonId}/attempt`, { token: teacher, body: { answers: [] } }), 403, 'ENROLLMENT_REQUIRED');

    // Drip: a quiz unlocked 7 days after enrollment.
    const locked = await setup(11, {}, { lesson: { unlockAfterDays: 7 } });
    for (const res of await Promise.all(routes(locked.token, locked.lessonId))) {
      expectError(res, 403, 'LESSON_LOCKED');
      expect(res.raw).not.toContain('Mitochondrion');
    }
    // Fee gating on: the overdue student is refused with 402.
    await enroll(t, { courseId: s.courseId, studentId: OVERDUE_STUDENT_ID });
    expectOk(await t.request('PATCH', '/api/settings', { token: admin, body: { feeGatingEnabled: true } }));
    try {
      for (const res of await Promise.all(routes(await student(OVERDUE_STUDENT_ID)))) expectError(res, 402, 'FEE_OVERDUE');
    } finally {
      expectOk(await t.request('PATCH', '/api/settings', { token: admin, body: { feeGatingEnabled: false } }));
    }
    expect(await t.db.select().from(quizAttempts).where(eq(quizAttempts.quizId, s.lessonId))).toEqual([]);
  });
});

// ── grading and completion ─────────────────────────────────────────────────────

describe('POST /api/quiz/{id}/attempt (grading)', () => {
  it('grades every question type on the server; a pass completes the lesson and the course', async () => {
    const s = await setup(12, {}, { certificate: true });
    const res = await submit(s, s.rightAnswers);
    const attempt = expectOk(res);
    expectNoAnswerKeys(res, { results: true });
    expect(res.raw).not.toContain(EXPLANATION);
    expect(attempt).toMatchObject({
      quizId: s.lessonId,
      studentId: s.studentId,
      attemptNumber: 1,
      status: 'SUBMITTED',
      score: 7,
      maxScore: 7,
      percentage: 100,
      passed: true,
      deadlineAt: null,
      completion: { lessonCompleted: true, lessonScore: 100, progress: 100, enrollmentStatus: 'COMPLETED', courseCompleted: true, completedNow: true },
    });
    expect(attempt.completion.certificateId).toEqual(expect.any(String));
    expect(attempt.results).toEqual(s.quiz.questions.map((q: any) => ({ questionId: q.id, correct: true, pointsAwarded: q.points, points: q.points })));
    const { enrollment, lesson } = await progressOf(s);
    expect(lesson).toMatchObject({ completed: true, score: 100, progressPercent: 100 });
    expect(enrollment).toMatchObject({ status: 'COMPLETED', progress: 100, finalScore: 100 });
    expect(await t.db.select().from(certificates).where(eq(certificates.enrollmentId, enrollment.id))).toHaveLength(1);
    const [row] = await attemptRows(s);
    expect(row).toMatchObject({ status: 'SUBMITTED', score: 7, percentage: 100, passed: true, attemptNumber: 1 });
    expect(row!.answers).toHaveLength(5);
  });

  it('short answers ignore case and spacing; numeric answers count within the tolerance; choice needs the exact set', async () => {
    const s = await setup(13, { passingScore: 100 });
    const q = (type: string) => idOf(s.quiz, type);
    const cases: Array<[any, boolean]> = [
      [{ questionId: q('SHORT_ANSWER'), text: '   lutetia   PARISIORUM ' }, true],
      [{ questionId: q('SHORT_ANSWER'), text: 'LUTETIA' }, true],
      [{ questionId: q('SHORT_ANSWER'), text: 'Lutèce' }, false],
      [{ questionId: q('NUMERIC'), value: 3.15 }, true],
      [{ questionId: q('NUMERIC'), value: 3.13 }, true],
      [{ questionId: q('NUMERIC'), value: 3.16 }, false],
      [{ questionId: q('MULTIPLE_CHOICE'), optionIds: ['five', 'two'] }, true],
      [{ questionId: q('MULTIPLE_CHOICE'), optionIds: ['two'] }, false],
      [{ questionId: q('MULTIPLE_CHOICE'), optionIds: ['two', 'four', 'five'] }, false],
      [{ questionId: q('SINGLE_CHOICE'), optionIds: ['a'] }, false],
      [{ questionId: q('TRUE_FALSE'), value: false }, false],
      [{ questionId: q('TRUE_FALSE'), value: true }, true],
    ];
    const res = await submit(
      s,
      cases.map(([a]) => a),
      {},
    );
    // The same question answered twice is refused: send each case on its own instead.
    expectError(res, 400, 'VALIDATION_ERROR');
    const s2 = await setup(14, { passingScore: 100 });
    for (const [answer, correct] of cases) {
      const mapped = { ...answer, questionId: idOf(s2.quiz, s.quiz.questions.find((x: any) => x.id === answer.questionId).type) };
      const attempt = expectOk(await submit(s2, [mapped]));
      const result = attempt.results.find((r: any) => r.questionId === mapped.questionId);
      expect(result, JSON.stringify(answer)).toEqual({ questionId: mapped.questionId, correct, pointsAwarded: correct ? result.points : 0, points: result.points });
      expect(attempt.results.filter((r: any) => r.questionId !== mapped.questionId).every((r: any) => !r.correct)).toBe(true);
    }
  });

  it('a failed attempt changes no progress; a later pass completes with the best passing score', async () => {
    const s = await setup(15, { passingScore: 60 }, { extraLessons: 1 });
    // 2 + 1 of 7 points: 42.86%.
    const failed = expectOk(await submit(s, [s.rightAnswers[0], s.rightAnswers[2]]));
    expect(failed).toMatchObject({ score: 3, maxScore: 7, percentage: 42.86, passed: false, completion: null });
    expect((await progressOf(s)).lesson).toBeNull();
    expect((await progressOf(s)).enrollment).toMatchObject({ status: 'ACTIVE', progress: 0 });

    const passed = expectOk(await submit(s, s.rightAnswers));
    expect(passed).toMatchObject({
      attemptNumber: 2,
      percentage: 100,
      passed: true,
      completion: { lessonScore: 100, progress: 50, enrollmentStatus: 'ACTIVE', courseCompleted: false },
    });
    // A later, lower pass keeps the best score on the lesson.
    const lower = expectOk(await submit(s, s.rightAnswers.slice(0, 3)));
    expect(lower).toMatchObject({ attemptNumber: 3, percentage: 71.43, passed: true, completion: { lessonScore: 100 } });
    const { lesson, enrollment } = await progressOf(s);
    expect(lesson).toMatchObject({ completed: true, score: 100 });
    expect(enrollment.progress).toBe(50);
  });

  it('refuses answers that do not fit the quiz with 400 and stores nothing', async () => {
    const s = await setup(16);
    const cases: Array<[any[], string]> = [
      [[{ questionId: 'nope' }], 'body.answers.0.questionId'],
      [[{ questionId: idOf(s.quiz, 'SINGLE_CHOICE'), optionIds: ['zzz'] }], 'body.answers.0.optionIds.0'],
      // Two options for a single-choice question: refused, not graded wrong (no attempt used up).
      [[{ questionId: idOf(s.quiz, 'SINGLE_CHOICE'), optionIds: ['a', 'b'] }], 'body.answers.0.optionIds'],
      [[{ questionId: idOf(s.quiz, 'TRUE_FALSE'), value: 3 }], 'body.answers.0.value'],
      [[{ questionId: idOf(s.quiz, 'NUMERIC'), text: '3.14' }], 'body.answers.0.text'],
      [[{ questionId: idOf(s.quiz, 'SHORT_ANSWER'), value: true }], 'body.answers.0.value'],
    ];
    for (const [answers, field] of cases) {
      const res = await submit(s, answers);
      expectError(res, 400, 'VALIDATION_ERROR');
      expect(failingFields(res)).toEqual([field]);
    }
    expectError(await t.request('POST', `/api/quiz/${s.lessonId}/attempt`, { token: s.token, body: {} }), 400, 'VALIDATION_ERROR');
    expect(await attemptRows(s)).toEqual([]);
    // An empty answer list is a (failed) attempt.
    expect(expectOk(await submit(s, []))).toMatchObject({ score: 0, percentage: 0, passed: false });
  });
});

// ── attempt limit ──────────────────────────────────────────────────────────────

describe('maxAttempts (409 ATTEMPT_LIMIT)', () => {
  it('refuses an attempt beyond the limit, submitted or started', async () => {
    const s = await setup(17, { maxAttempts: 2 });
    expectOk(await submit(s, []));
    const quiz = expectOk(await t.request('GET', `/api/quiz/${s.lessonId}`, { token: s.token }));
    expect(quiz.myAttempts).toMatchObject({ used: 1, remaining: 1, passed: false, bestPercentage: 0 });
    expectOk(await submit(s, s.rightAnswers));
    const res = await submit(s, s.rightAnswers);
    expectError(res, 409, 'ATTEMPT_LIMIT');
    expect(res.body.error.details).toEqual({ maxAttempts: 2, used: 2 });
    expectError(await t.request('POST', `/api/quiz/${s.lessonId}/start`, { token: s.token }), 409, 'ATTEMPT_LIMIT');
    expect(await attemptRows(s)).toHaveLength(2);
    expect(expectOk(await t.request('GET', `/api/quiz/${s.lessonId}`, { token: s.token })).myAttempts).toMatchObject({ used: 2, remaining: 0, passed: true, bestPercentage: 100 });
  });

  it('ten concurrent attempts at a limit of 3 store exactly 3; the rest are 409', async () => {
    const s = await setup(18, { maxAttempts: 3 });
    const results = await Promise.all(Array.from({ length: 10 }, () => submit(s, s.rightAnswers)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses, JSON.stringify(results.map((r) => r.body.error))).toEqual([200, 200, 200, 409, 409, 409, 409, 409, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.error.code).toBe('ATTEMPT_LIMIT');
    const rows = await attemptRows(s);
    expect(rows.map((r) => r.attemptNumber).sort()).toEqual([1, 2, 3]);
    // Completion happened once, whichever attempt came first.
    const { enrollment } = await progressOf(s);
    expect(enrollment.status).toBe('COMPLETED');
  });

  it('ten concurrent starts open one attempt', async () => {
    const s = await setup(19, { maxAttempts: 3, timeLimitMinutes: 5 });
    const results = await Promise.all(Array.from({ length: 10 }, () => t.request('POST', `/api/quiz/${s.lessonId}/start`, { token: s.token })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(results.map((r) => r.body.data.attempt.id)).size).toBe(1);
    expect(await attemptRows(s)).toHaveLength(1);
  });
});

// ── time limit ─────────────────────────────────────────────────────────────────

describe('time limit: POST /start, then /attempt within the limit + 30 s', () => {
  it('hides the questions until the start', async () => {
    const s = await setup(20, { timeLimitMinutes: 10 });
    const before = expectOk(await t.request('GET', `/api/quiz/${s.lessonId}`, { token: s.token }));
    expect(before).toMatchObject({ timeLimitMinutes: 10, questions: null, questionCount: 5, myAttempts: { inProgress: null } });
    expect(await attemptRows(s)).toEqual([]);

    const startRes = await t.request('POST', `/api/quiz/${s.lessonId}/start`, { token: s.token });
    const started = expectOk(startRes, 201);
    expectNoAnswerKeys(startRes);
    const now = t.clock.now().getTime();
    expect(started.attempt).toMatchObject({ attemptNumber: 1, status: 'IN_PROGRESS', passed: null, score: null, results: null, answers: null, submittedAt: null });
    expect(Date.parse(started.attempt.startedAt)).toBe(now);
    expect(Date.parse(started.attempt.deadlineAt)).toBe(now + 10 * 60_000);
    expect(started.quiz.questions).toHaveLength(5);
    expect(started.quiz.myAttempts).toMatchObject({ used: 1, inProgress: { id: started.attempt.id, deadlineAt: started.attempt.deadlineAt } });

    // Idempotent while open; the quiz now shows its questions.
    t.clock.advance(60_000);
    const again = expectOk(await t.request('POST', `/api/quiz/${s.lessonId}/start`, { token: s.token }), 200);
    expect(again.attempt.id).toBe(started.attempt.id);
    expect(expectOk(await t.request('GET', `/api/quiz/${s.lessonId}`, { token: s.token })).questions).toHaveLength(5);

    // 29 s past the deadline is within the grace period.
    t.clock.advance(9 * 60_000 + 29_000);
    const done = expectOk(await submit(s, s.rightAnswers, { attemptId: started.attempt.id }));
    expect(done).toMatchObject({ id: started.attempt.id, status: 'SUBMITTED', passed: true, deadlineAt: started.attempt.deadlineAt });
    // Submitting the same attempt again: 409.
    expectError(await submit(s, s.rightAnswers, { attemptId: started.attempt.id }), 409, 'CONFLICT');
    expectError(await submit(s, s.rightAnswers, { attemptId: 'not-mine' }), 404, 'NOT_FOUND');
  });

  it('a client that never calls /start: /attempt alone is an attempt started and submitted at once, within its time, counted', async () => {
    const s = await setup(31, { timeLimitMinutes: 10, maxAttempts: 2 });
    const now = t.clock.now().toISOString();
    const first = expectOk(await submit(s, s.rightAnswers.slice(0, 2)));
    expect(first).toMatchObject({ attemptNumber: 1, status: 'SUBMITTED', startedAt: now, submittedAt: now, passed: false, completion: null });
    expect(Date.parse(first.deadlineAt)).toBe(Date.parse(now) + 10 * 60_000);
    t.clock.advance(60_000);
    const second = expectOk(await submit(s, s.rightAnswers));
    expect(second).toMatchObject({ attemptNumber: 2, status: 'SUBMITTED', passed: true, percentage: 100, completion: { lessonCompleted: true } });
    expectError(await submit(s, s.rightAnswers), 409, 'ATTEMPT_LIMIT');
    expect((await attemptRows(s)).map((r) => r.status)).toEqual(['SUBMITTED', 'SUBMITTED']);
    // With an attempt open (from /start on another device, say), /attempt submits that one.
    const s2 = await setup(32, { timeLimitMinutes: 10 });
    const started = expectOk(await t.request('POST', `/api/quiz/${s2.lessonId}/start`, { token: s2.token }), 201);
    expect(expectOk(await submit(s2, s2.rightAnswers))).toMatchObject({ id: started.attempt.id, attemptNumber: 1 });
  });

  it('a submission after the deadline + 30 s is 400 and recorded EXPIRED, ungraded and not passed', async () => {
    const s = await setup(21, { timeLimitMinutes: 10, maxAttempts: 2 });
    const started = expectOk(await t.request('POST', `/api/quiz/${s.lessonId}/start`, { token: s.token }), 201);
    t.clock.advance(10 * 60_000 + 31_000);
    const res = await submit(s, s.rightAnswers);
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(res.body.error.details).toMatchObject({ attemptId: started.attempt.id, status: 'EXPIRED', graceSeconds: 30 });
    const [row] = await attemptRows(s);
    expect(row).toMatchObject({ status: 'EXPIRED', passed: false, score: null, percentage: null, results: null });
    expect(row!.answers).toHaveLength(5);
    expect(row!.submittedAt!.getTime()).toBe(t.clock.now().getTime());
    expect((await progressOf(s)).lesson).toBeNull();

    // It counted: one attempt left, then the limit.
    const second = expectOk(await t.request('POST', `/api/quiz/${s.lessonId}/start`, { token: s.token }), 201);
    expect(second.attempt.attemptNumber).toBe(2);
    t.clock.advance(11 * 60_000);
    // An open attempt found past its time is recorded EXPIRED when the learner starts again; the limit still holds.
    expectError(await t.request('POST', `/api/quiz/${s.lessonId}/start`, { token: s.token }), 409, 'ATTEMPT_LIMIT');
    expect((await attemptRows(s)).map((r) => r.status).sort()).toEqual(['EXPIRED', 'EXPIRED']);
  });

  it('starting again after an abandoned attempt ran out opens a new one', async () => {
    const s = await setup(22, { timeLimitMinutes: 1 });
    const first = expectOk(await t.request('POST', `/api/quiz/${s.lessonId}/start`, { token: s.token }), 201);
    t.clock.advance(2 * 60_000);
    const list = expectOk(await t.request('GET', `/api/quiz/${s.lessonId}/attempts`, { token: s.token }));
    expect(list[0]).toMatchObject({ id: first.attempt.id, status: 'EXPIRED', passed: false });
    const second = expectOk(await t.request('POST', `/api/quiz/${s.lessonId}/start`, { token: s.token }), 201);
    expect(second.attempt).toMatchObject({ attemptNumber: 2, status: 'IN_PROGRESS' });
    expectError(await submit(s, s.rightAnswers, { attemptId: first.attempt.id }), 409, 'CONFLICT');
    expect(expectOk(await submit(s, s.rightAnswers))).toMatchObject({ id: second.attempt.id, passed: true });
  });

  it('without a time limit, a started attempt is submitted by the next /attempt', async () => {
    const s = await setup(23);
    const started = expectOk(await t.request('POST', `/api/quiz/${s.lessonId}/start`, { token: s.token }), 201);
    expect(started.attempt.deadlineAt).toBeNull();
    t.clock.advance(3 * 86_400_000);
    expect(expectOk(await submit(s, s.rightAnswers))).toMatchObject({ id: started.attempt.id, attemptNumber: 1, passed: true });
  });
});

// ── attempt lists ──────────────────────────────────────────────────────────────

describe('GET /api/quiz/{id}/attempts', () => {
  it('learners see their own attempts; staff see everyone’s with names, paginated', async () => {
    const s = await setup(24);
    const others = [25, 26];
    for (const n of others) await enroll(t, { courseId: s.courseId, studentId: stu(n) });
    await submit(s, s.rightAnswers.slice(0, 1));
    t.clock.advance(1000);
    await submit(s, s.rightAnswers);
    for (const n of others) {
      t.clock.advance(1000);
      expectOk(await t.request('POST', `/api/quiz/${s.lessonId}/attempt`, { token: await student(n), body: { answers: s.rightAnswers } }));
    }

    const ownRes = await t.request('GET', `/api/quiz/${s.lessonId}/attempts`, { token: s.token });
    const own = expectOk(ownRes);
    expectNoAnswerKeys(ownRes, { results: true });
    expect(ownRes.body.meta).toEqual({ total: 2, page: 1, perPage: 20, totalPages: 1 });
    expect(own.map((a: any) => [a.studentId, a.attemptNumber, a.passed, a.studentName])).toEqual([
      [s.studentId, 2, true, null],
      [s.studentId, 1, false, null],
    ]);
    // A learner's studentId filter does not widen the list.
    expect(expectOk(await t.request('GET', `/api/quiz/${s.lessonId}/attempts`, { token: s.token, query: { studentId: stu(25) } })).map((a: any) => a.studentId)).toEqual([
      s.studentId,
      s.studentId,
    ]);

    t.crmSim.resetRecords();
    const page1 = await t.request('GET', `/api/quiz/${s.lessonId}/attempts`, { token: teacher, query: { perPage: 3 } });
    expect(page1.body.meta).toEqual({ total: 4, page: 1, perPage: 3, totalPages: 2 });
    const contact = (id: string) => t.crmSim.data.inst_demo.students.find((x) => x.contact.id === id)!.contact;
    expect(expectOk(page1).map((a: any) => [a.studentId, a.studentName])).toEqual([
      [stu(26), `${contact(stu(26)).firstName} ${contact(stu(26)).lastName}`],
      [stu(25), `${contact(stu(25)).firstName} ${contact(stu(25)).lastName}`],
      [s.studentId, `${contact(s.studentId).firstName} ${contact(s.studentId).lastName}`],
    ]);
    // One CRM lookup per distinct student at most.
    for (const id of [s.studentId, stu(25), stu(26)]) expect(t.crmSim.requests.filter((r) => r.path === `/api/lms/contact/${id}`).length).toBeLessThanOrEqual(1);
    const page2 = expectOk(await t.request('GET', `/api/quiz/${s.lessonId}/attempts`, { token: teacher, query: { page: 2, limit: 3 } }));
    expect(page2.map((a: any) => [a.studentId, a.attemptNumber])).toEqual([[s.studentId, 1]]);
    const filtered = expectOk(await t.request('GET', `/api/quiz/${s.lessonId}/attempts`, { token: teacher2, query: { studentId: stu(25) } }));
    expect(filtered.map((a: any) => a.studentId)).toEqual([stu(25)]);
    expectError(await t.request('GET', `/api/quiz/${s.lessonId}/attempts`, { token: teacher, query: { perPage: 101 } }), 400, 'VALIDATION_ERROR');
  });

  it('a name the CRM cannot give degrades to a generic label', async () => {
    const s = await setup(27);
    expectOk(await submit(s, []));
    t.crmSim.setFault('error500', { pathPrefix: '/api/lms/' });
    try {
      const list = expectOk(await t.request('GET', `/api/quiz/${s.lessonId}/attempts`, { token: admin, query: { studentId: s.studentId } }));
      expect(list[0].studentName).toBe(`Student ${s.studentId}`);
    } finally {
      t.crmSim.setFault(null);
    }
  });
});

// ── tenancy and documentation ──────────────────────────────────────────────────

describe('other institutions', () => {
  it('are 404 on every quiz route, whatever the role, and change nothing', async () => {
    const s = await setup(28);
    expectOk(await submit(s, s.rightAnswers));
    const inst = SECOND_INSTITUTION.id;
    for (const [role, id] of [
      ['STUDENT', NORTH_STUDENT_ID],
      ['TEACHER', NORTH_TEACHER_ID],
      ['ADMIN', NORTH_ADMIN_ID],
    ] as const) {
      const token = await t.token({ role, id, institutionId: inst });
      expectError(await t.request('GET', `/api/quiz/${s.lessonId}`, { token }), 404, 'NOT_FOUND');
      expectError(await t.request('GET', `/api/quiz/${s.lessonId}/attempts`, { token }), 404, 'NOT_FOUND');
      expectError(await t.request('POST', `/api/quiz/${s.lessonId}/start`, { token }), 404, 'NOT_FOUND');
      expectError(await t.request('POST', `/api/quiz/${s.lessonId}/attempt`, { token, body: { answers: s.rightAnswers } }), 404, 'NOT_FOUND');
      const put = await t.request('PUT', `/api/quiz/${s.lessonId}`, { token, body: QUIZ });
      expectError(put, role === 'STUDENT' ? 403 : 404, role === 'STUDENT' ? 'FORBIDDEN' : 'NOT_FOUND');
    }
    expect(await attemptRows(s)).toHaveLength(1);
    expect(expectOk(await t.request('GET', `/api/quiz/${s.lessonId}`, { token: teacher })).title).toBe(QUIZ.title);
  });
});

describe('OpenAPI', () => {
  it('documents every quiz route with operationId, tags, summary, description and responses', async () => {
    const doc = JSON.parse((await t.request('GET', '/openapi.json')).raw);
    const ops: Array<[string, string, string, string[]]> = [
      ['/api/quiz/{id}', 'get', 'getQuiz', ['200', '402', '403', '404']],
      ['/api/quiz/{id}', 'put', 'upsertQuiz', ['200', '201', '400', '403', '404']],
      ['/api/quiz/{id}/start', 'post', 'startQuizAttempt', ['200', '201', '402', '403', '404', '409']],
      ['/api/quiz/{id}/attempt', 'post', 'submitQuizAttempt', ['200', '400', '402', '403', '404', '409']],
      ['/api/quiz/{id}/attempts', 'get', 'listQuizAttempts', ['200', '400', '404']],
    ];
    for (const [path, method, operationId, codes] of ops) {
      const op = doc.paths[path]?.[method];
      expect(op?.operationId, `${method} ${path}`).toBe(operationId);
      expect(op.tags).toEqual(['quizzes']);
      expect(op.summary.length).toBeGreaterThan(10);
      expect(op.description.length).toBeGreaterThan(50);
      for (const code of codes) expect(op.responses[code], `${method} ${path} ${code}`).toBeDefined();
    }
    const body = doc.paths['/api/quiz/{id}/attempt'].post.requestBody.content['application/json'].schema;
    expect(Object.keys(body.properties)).toEqual(['attemptId', 'answers']);
    expect(Object.keys(body.properties.answers.items.properties)).toEqual(['questionId', 'optionIds', 'value', 'text']);
  });
});
