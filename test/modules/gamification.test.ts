/**
 * Gamification: points for learning events awarded once under replays, badges once, streaks
 * by calendar day in the institution's time zone, the leaderboard's order and ties, and the
 * totals in the parent overview.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, createLesson, enroll } from '../helpers/factories.js';
import { expectError } from '../helpers/expect.js';
import { notifications } from '../../src/modules/notifications/notifications.tables.js';
import { pointAwards } from '../../src/modules/gamification/gamification.tables.js';
import { streaksOf } from '../../src/modules/gamification/gamification.service.js';
import { DEMO_ADMIN_ID, DEMO_PARENT_ID, DEMO_SIBLING_ID, DEMO_STUDENT_ID, DEMO_TEACHER_ID, demoFixtures } from '../../src/dev/crm-sim/fixtures.js';

let t: TestApp;
let student: string;
let sibling: string;
let admin: string;

beforeAll(async () => {
  t = await createTestApp();
  student = await t.token({ role: 'STUDENT', id: DEMO_STUDENT_ID });
  sibling = await t.token({ role: 'STUDENT', id: DEMO_SIBLING_ID });
  admin = await t.token({ role: 'ADMIN', id: DEMO_ADMIN_ID });
});
afterAll(async () => t.close());
beforeEach(async () => {
  t.clock.set('2026-03-02T09:00:00.000Z');
  await t.db.execute(sql`delete from gamification_points`);
  await t.db.execute(sql`delete from gamification_badges`);
  await t.db.execute(sql`delete from gamification_activity_days`);
  await t.request('PATCH', '/api/settings', { token: admin, body: { timezone: 'UTC' } });
});

async function courseFor(studentIds: string[], lessons = 2) {
  const course = await createCourse(t);
  const ls = [];
  for (let i = 0; i < lessons; i++) ls.push(await createLesson(t, { courseId: course.id, order: i }));
  for (const id of studentIds) await enroll(t, { courseId: course.id, studentId: id });
  return { course, lessons: ls };
}

const complete = (token: string, lessonId: string) => t.request('POST', `/api/lessons/${lessonId}/progress`, { token, body: { completed: true } });
const points = async (studentId: string) => (await t.db.select().from(pointAwards).where(eq(pointAwards.studentId, studentId))).reduce((sum, p) => sum + p.points, 0);

describe('points and badges', () => {
  it('a completed lesson is worth 10 once, however often it is reported; the first gives FIRST_LESSON and BADGE_EARNED', async () => {
    const { lessons } = await courseFor([DEMO_STUDENT_ID], 3);
    expect((await complete(student, lessons[0]!.id)).status).toBe(200);
    await complete(student, lessons[0]!.id);
    await t.request('POST', `/api/lessons/${lessons[0]!.id}/progress`, { token: student, body: { progressPercent: 100 } });
    expect(await points(DEMO_STUDENT_ID)).toBe(10);
    const badges = await t.request('GET', '/api/gamification/badges', { token: student });
    expect(badges.body.data.earned).toEqual([{ key: 'FIRST_LESSON', name: 'First steps', description: expect.any(String), earnedAt: t.clock.now().toISOString() }]);
    expect(badges.body.data.available.map((b: any) => b.key)).not.toContain('FIRST_LESSON');
    const sent = await t.db
      .select()
      .from(notifications)
      .where(and(eq(notifications.recipientId, DEMO_STUDENT_ID), eq(notifications.key, 'BADGE_EARNED'), eq(notifications.channel, 'IN_APP')));
    expect(sent.map((n) => n.title)).toEqual(['Badge earned: First steps']);
  });

  it('completing the course adds 100 and FIRST_COURSE, once', async () => {
    const { lessons } = await courseFor([DEMO_STUDENT_ID], 2);
    await complete(student, lessons[0]!.id);
    const last = await complete(student, lessons[1]!.id);
    expect(last.body.data.courseCompleted).toBe(true);
    await complete(student, lessons[1]!.id);
    expect(await points(DEMO_STUDENT_ID)).toBe(10 + 10 + 100);
    const keys = (await t.request('GET', '/api/gamification/badges', { token: student })).body.data.earned.map((b: any) => b.key).sort();
    expect(keys).toEqual(['FIRST_COURSE', 'FIRST_LESSON']);
  });
});

describe('points and badges from assessments', () => {
  const badgeMails = async (studentId: string) =>
    (
      await t.db
        .select()
        .from(notifications)
        .where(and(eq(notifications.recipientId, studentId), eq(notifications.key, 'BADGE_EARNED'), eq(notifications.channel, 'IN_APP')))
    )
      .map((n) => n.title)
      .sort();
  const earned = async (token: string) => (await t.request('GET', '/api/gamification/badges', { token })).body.data.earned.map((b: any) => b.key).sort();
  const kinds = async (studentId: string) => (await t.db.select().from(pointAwards).where(eq(pointAwards.studentId, studentId))).map((p) => `${p.kind}:${p.points}`).sort();

  it('a passed quiz is worth 20 once; a perfect one gives PERFECT_QUIZ once, however often it is passed again', async () => {
    await t.db.delete(notifications).where(eq(notifications.recipientId, DEMO_STUDENT_ID));
    const { course } = await courseFor([DEMO_STUDENT_ID], 1);
    const quizLesson = await createLesson(t, { courseId: course.id, type: 'QUIZ', order: 5 });
    const teacher = await t.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
    const put = await t.request('PUT', `/api/quiz/${quizLesson.id}`, {
      token: teacher,
      body: {
        title: 'Stars',
        passingScore: 50,
        questions: [
          { type: 'TRUE_FALSE', prompt: 'The Sun is a star.', correctAnswer: true },
          { type: 'TRUE_FALSE', prompt: 'The Moon is a star.', correctAnswer: false },
        ],
      },
    });
    expect(put.status, put.raw).toBe(201);
    const [q1, q2] = put.body.data.questions as [any, any];
    const attempt = (answers: unknown[]) => t.request('POST', `/api/quiz/${quizLesson.id}/attempt`, { token: student, body: { answers } });

    const failed = await attempt([{ questionId: q1.id, value: false }]);
    expect(failed.body.data).toMatchObject({ passed: false });
    expect(await points(DEMO_STUDENT_ID)).toBe(0);

    const half = await attempt([{ questionId: q1.id, value: true }]);
    expect(half.body.data).toMatchObject({ passed: true, percentage: 50 });
    expect(await kinds(DEMO_STUDENT_ID)).toEqual(['LESSON_COMPLETED:10', 'QUIZ_PASSED:20']);
    expect(await earned(student)).toEqual(['FIRST_LESSON']);

    for (let i = 0; i < 2; i++) {
      const perfect = await attempt([
        { questionId: q1.id, value: true },
        { questionId: q2.id, value: false },
      ]);
      expect(perfect.body.data).toMatchObject({ passed: true, percentage: 100 });
    }
    expect(await kinds(DEMO_STUDENT_ID)).toEqual(['LESSON_COMPLETED:10', 'QUIZ_PASSED:20']);
    expect(await earned(student)).toEqual(['FIRST_LESSON', 'PERFECT_QUIZ']);
    expect(await badgeMails(DEMO_STUDENT_ID)).toEqual(['Badge earned: First steps', 'Badge earned: Perfect score']);
  });

  it('an assignment graded at or above passing is worth 25 once, also when regraded; a grade below passing is worth nothing', async () => {
    const { course } = await courseFor([DEMO_SIBLING_ID], 1);
    const lesson = await createLesson(t, { courseId: course.id, type: 'ASSIGNMENT', order: 5 });
    const teacher = await t.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
    const put = await t.request('PUT', `/api/assignments/${lesson.id}`, {
      token: teacher,
      body: { title: 'Essay', instructions: 'Write.', maxScore: 10, passingScore: 6, dueDate: '2026-04-01T00:00:00.000Z' },
    });
    expect(put.status, put.raw).toBe(200);
    const sub = await t.request('POST', `/api/assignments/${lesson.id}/submit`, { token: sibling, body: { textContent: 'My essay' } });
    expect(sub.status, sub.raw).toBe(201);
    const grade = (score: number) => t.request('POST', `/api/assignments/${lesson.id}/grade`, { token: teacher, body: { submissionId: sub.body.data.id, score } });

    expect((await grade(5)).status).toBe(200);
    expect(await points(DEMO_SIBLING_ID)).toBe(0);
    expect((await grade(6)).status).toBe(200);
    expect(await kinds(DEMO_SIBLING_ID)).toEqual(['ASSIGNMENT_PASSED:25', 'LESSON_COMPLETED:10']);
    for (const score of [9, 4, 10]) expect((await grade(score)).status).toBe(200);
    expect(await kinds(DEMO_SIBLING_ID)).toEqual(['ASSIGNMENT_PASSED:25', 'LESSON_COMPLETED:10']);
  });
});

describe('streaks', () => {
  it('counts calendar days in the institution’s time zone: two local days within one UTC day make a streak of 2', async () => {
    await t.request('PATCH', '/api/settings', { token: admin, body: { timezone: 'Asia/Tokyo' } });
    const { lessons } = await courseFor([DEMO_STUDENT_ID], 3);
    t.clock.set('2026-03-02T14:00:00.000Z'); // 23:00 on 2 March in Tokyo
    await complete(student, lessons[0]!.id);
    t.clock.set('2026-03-02T16:00:00.000Z'); // 01:00 on 3 March in Tokyo
    await complete(student, lessons[1]!.id);
    const streak = await t.request('GET', '/api/gamification/streak', { token: student });
    expect(streak.body.data).toEqual({ currentStreak: 2, longestStreak: 2, lastActiveDay: '2026-03-03', today: '2026-03-03' });
    // A day without learning breaks the current streak, not the longest.
    t.clock.set('2026-03-05T01:00:00.000Z');
    expect((await t.request('GET', '/api/gamification/streak', { token: student })).body.data).toMatchObject({ currentStreak: 0, longestStreak: 2 });
  });

  it('a 7-day streak gives STREAK_7 and 50 points once', async () => {
    const { lessons } = await courseFor([DEMO_STUDENT_ID], 1);
    for (let d = 0; d < 8; d++) {
      t.clock.set(new Date(Date.parse('2026-03-02T09:00:00.000Z') + d * 86_400_000));
      await t.request('POST', `/api/lessons/${lessons[0]!.id}/progress`, { token: student, body: { positionSeconds: d } });
    }
    const rows = await t.db.select().from(pointAwards).where(eq(pointAwards.studentId, DEMO_STUDENT_ID));
    expect(rows.filter((r) => r.kind === 'STREAK_7')).toHaveLength(1);
    expect((await t.request('GET', '/api/gamification/badges', { token: student })).body.data.earned.map((b: any) => b.key)).toContain('STREAK_7');
    expect((await t.request('GET', '/api/gamification/streak', { token: student })).body.data).toMatchObject({ currentStreak: 8, longestStreak: 8 });
  });

  it('handing in an assignment and a failed quiz attempt count the day (no points); a teacher’s grade does not', async () => {
    const { course } = await courseFor([DEMO_STUDENT_ID], 1);
    const teacher = await t.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
    const essay = await createLesson(t, { courseId: course.id, type: 'ASSIGNMENT', order: 5 });
    const quiz = await createLesson(t, { courseId: course.id, type: 'QUIZ', order: 6 });
    expect(
      (
        await t.request('PUT', `/api/assignments/${essay.id}`, {
          token: teacher,
          body: { title: 'Essay', instructions: 'Write.', maxScore: 10, passingScore: 6, dueDate: '2026-04-01T00:00:00.000Z' },
        })
      ).status,
    ).toBe(200);
    const put = await t.request('PUT', `/api/quiz/${quiz.id}`, {
      token: teacher,
      body: { title: 'Stars', passingScore: 100, questions: [{ type: 'TRUE_FALSE', prompt: 'The Sun is a star.', correctAnswer: true }] },
    });
    expect(put.status, put.raw).toBe(201);
    const streak = async () => (await t.request('GET', '/api/gamification/streak', { token: student })).body.data;

    const sub = await t.request('POST', `/api/assignments/${essay.id}/submit`, { token: student, body: { textContent: 'My essay' } });
    expect(sub.status, sub.raw).toBe(201);
    expect(await streak()).toMatchObject({ currentStreak: 1, lastActiveDay: '2026-03-02' });
    t.clock.set('2026-03-03T09:00:00.000Z');
    const failed = await t.request('POST', `/api/quiz/${quiz.id}/attempt`, { token: student, body: { answers: [{ questionId: put.body.data.questions[0].id, value: false }] } });
    expect(failed.body.data).toMatchObject({ passed: false });
    expect(await streak()).toMatchObject({ currentStreak: 2, lastActiveDay: '2026-03-03' });
    expect(await points(DEMO_STUDENT_ID)).toBe(0);
    // The teacher grades on the 4th: points, but the learner did nothing that day.
    t.clock.set('2026-03-04T09:00:00.000Z');
    expect((await t.request('POST', `/api/assignments/${essay.id}/grade`, { token: teacher, body: { submissionId: sub.body.data.id, score: 8 } })).status).toBe(200);
    expect(await streak()).toMatchObject({ currentStreak: 2, lastActiveDay: '2026-03-03', today: '2026-03-04' });
    expect(await points(DEMO_STUDENT_ID)).toBe(25 + 10);
  });

  it('streaksOf: runs of consecutive days, current only when it reaches today or yesterday', () => {
    expect(streaksOf([], '2026-03-02')).toEqual({ currentStreak: 0, longestStreak: 0 });
    expect(streaksOf(['2026-02-27', '2026-02-28', '2026-03-01'], '2026-03-02')).toEqual({ currentStreak: 3, longestStreak: 3 });
    expect(streaksOf(['2026-02-20', '2026-02-21', '2026-02-22', '2026-03-02'], '2026-03-02')).toEqual({ currentStreak: 1, longestStreak: 3 });
    expect(streaksOf(['2026-02-27'], '2026-03-02')).toEqual({ currentStreak: 0, longestStreak: 1 });
  });
});

describe('leaderboard', () => {
  it('orders by points, ties by who got there first, then id; week and month periods; the caller’s institution only', async () => {
    const { lessons } = await courseFor([DEMO_STUDENT_ID, DEMO_SIBLING_ID], 3);
    t.clock.set('2026-02-20T09:00:00.000Z');
    // A token minted at that time (the tokens of beforeAll were issued later: iat in the future).
    expect((await complete(await t.token({ role: 'STUDENT', id: DEMO_STUDENT_ID }), lessons[0]!.id)).status).toBe(200); // 10, last month
    t.clock.set('2026-03-02T09:00:00.000Z');
    await complete(sibling, lessons[0]!.id); // 10 this week
    t.clock.set('2026-03-02T10:00:00.000Z');
    await complete(student, lessons[1]!.id); // student: 20 in all, 10 this week (reached later)

    const all = await t.request('GET', '/api/gamification/leaderboard', { token: student, query: { period: 'all' } });
    expect(all.status).toBe(200);
    expect(all.body.data.map((r: any) => [r.rank, r.studentId, r.points])).toEqual([
      [1, DEMO_STUDENT_ID, 20],
      [2, DEMO_SIBLING_ID, 10],
    ]);
    expect(all.body.data[0]).toMatchObject({ isMe: true, name: expect.any(String) });
    expect(all.body.data[0].name).not.toMatch(/^Student /);
    expect(all.body.meta).toEqual({ total: 2, page: 1, perPage: 20, totalPages: 1 });
    // This week both have 10: the sibling reached it first.
    const week = await t.request('GET', '/api/gamification/leaderboard', { token: student, query: { period: 'week' } });
    expect(week.body.data.map((r: any) => [r.studentId, r.points])).toEqual([
      [DEMO_SIBLING_ID, 10],
      [DEMO_STUDENT_ID, 10],
    ]);
    const month = await t.request('GET', '/api/gamification/leaderboard', { token: student, query: { period: 'month', perPage: 1 } });
    expect(month.body.data).toHaveLength(1);
    expect(month.body.meta.total).toBe(2);
    // A page past the end is empty and still tells the total.
    const past = await t.request('GET', '/api/gamification/leaderboard', { token: student, query: { period: 'month', perPage: 1, page: 5 } });
    expect(past.body).toMatchObject({ data: [], meta: { total: 2, page: 5, perPage: 1, totalPages: 2 } });
    expectError(await t.request('GET', '/api/gamification/leaderboard', { token: student, query: { period: 'year' } }), 400, 'VALIDATION_ERROR');
    const north = await t.token({ role: 'STUDENT', id: 'c_northside_stu_01', institutionId: 'inst_north' });
    expect((await t.request('GET', '/api/gamification/leaderboard', { token: north })).body.data).toEqual([]);
  });

  it('equal points reached at the same moment are ordered by id; names come from the CRM per distinct person', async () => {
    const ids = ['c_demo_stu_06', 'c_demo_stu_04', 'c_demo_stu_05'];
    const { lessons } = await courseFor(ids, 1);
    // Same points (lesson and course completed), same instant (the clock does not move): only the id can order them.
    for (const id of ids) expect((await complete(await t.token({ role: 'STUDENT', id }), lessons[0]!.id)).status).toBe(200);
    const reached = await t.db.select().from(pointAwards);
    expect(new Set(reached.map((p) => p.awardedAt.toISOString())).size).toBe(1);
    const board = await t.request('GET', '/api/gamification/leaderboard', { token: student, query: { period: 'all' } });
    expect(board.status).toBe(200);
    expect(board.body.data.map((r: any) => [r.rank, r.studentId, r.points])).toEqual([
      [1, 'c_demo_stu_04', 110],
      [2, 'c_demo_stu_05', 110],
      [3, 'c_demo_stu_06', 110],
    ]);
    const names = new Map(demoFixtures.students.map((s) => [s.contact.id, `${s.contact.firstName} ${s.contact.lastName}`]));
    expect(board.body.data.map((r: any) => r.name)).toEqual(['c_demo_stu_04', 'c_demo_stu_05', 'c_demo_stu_06'].map((id) => names.get(id)));
    // The second page continues the same order.
    const page2 = await t.request('GET', '/api/gamification/leaderboard', { token: student, query: { period: 'all', perPage: 2, page: 2 } });
    expect(page2.body.data.map((r: any) => [r.rank, r.studentId])).toEqual([[3, 'c_demo_stu_06']]);
    // The CRM down: the generic label, not a failure.
    t.crmSim.setFault('down');
    try {
      const degraded = await t.request('GET', '/api/gamification/leaderboard', { token: student, query: { period: 'all' } });
      expect(degraded.status).toBe(200);
      expect(degraded.body.data).toHaveLength(3);
    } finally {
      t.crmSim.setFault(null);
    }
  });

  it('the parent overview shows the child’s totals', async () => {
    const { lessons } = await courseFor([DEMO_STUDENT_ID], 2);
    await complete(student, lessons[0]!.id);
    const parent = await t.token({ role: 'PARENT', id: DEMO_PARENT_ID });
    const res = await t.request('GET', `/api/parent/children/${DEMO_STUDENT_ID}/overview`, { token: parent });
    expect(res.body.data.gamification).toEqual({ currentStreak: 1, longestStreak: 1, totalPoints: 10, totalBadges: 1 });
  });
});
