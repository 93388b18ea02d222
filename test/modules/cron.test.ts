/**
 * Spec 4.8: the hourly cron endpoints behind `Authorization: Bearer <CRON_SECRET>`, each
 * answering a summary and safe to run twice, and twice at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, createLesson, enroll } from '../helpers/factories.js';
import { expectError } from '../helpers/expect.js';
import { analyticsDailySnapshots } from '../../src/modules/analytics/analytics.tables.js';
import { DEMO_SIBLING_ID, DEMO_STUDENT_ID, DEMO_TEACHER_ID, NORTH_STUDENT_ID, SECOND_INSTITUTION } from '../../src/dev/crm-sim/fixtures.js';
import { notifications } from '../../src/modules/notifications/notifications.tables.js';
import { assignments } from '../../src/modules/assignments/assignments.tables.js';

const SECRET = 'cron-secret-for-tests-0123456789';
const cron = { authorization: `Bearer ${SECRET}` };
const PATHS = ['/api/cron/assignment-reminders', '/api/cron/report-schedules', '/api/cron/analytics-snapshot'];

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { CRON_SECRET: SECRET } });
});
afterAll(async () => t.close());

describe('cron guard', () => {
  it.each(PATHS)('%s needs the cron secret (a session token is not enough)', async (path) => {
    expectError(await t.request('GET', path), 401, 'AUTH_REQUIRED');
    expectError(await t.request('GET', path, { headers: { authorization: 'Bearer wrong' } }), 401, 'AUTH_REQUIRED');
    const admin = await t.token({ role: 'ADMIN', id: 'u_demo_admin' });
    expectError(await t.request('GET', path, { token: admin }), 401, 'AUTH_REQUIRED');
    const res = await t.request('GET', path, { headers: cron });
    expect(res.status).toBe(200);
    expect(res.body.error).toBeNull();
  });

  it('is open without CRON_SECRET (development only)', async () => {
    const open = await createTestApp();
    try {
      expect((await open.request('GET', '/api/cron/report-schedules')).status).toBe(200);
    } finally {
      await open.close();
    }
  });
});

describe('summaries', () => {
  it('report-schedules reports the schedules it ran and the alerts it evaluated', async () => {
    const res = await t.request('GET', '/api/cron/report-schedules', { headers: cron });
    expect(res.body.data).toEqual({ at: t.clock.now().toISOString(), schedulesRun: 0, alertsEvaluated: 0, alertsFired: 0, alertsCleared: 0 });
  });

  it("analytics-snapshot writes one row per institution and local day with today's metrics, also when run twice at once", async () => {
    // An institution is known once someone of it used the service.
    await t.request('GET', '/api/auth/session', { token: await t.token({ role: 'STUDENT', id: DEMO_STUDENT_ID }) });
    const course = await createCourse(t, { status: 'PUBLISHED' });
    await enroll(t, { courseId: course.id, studentId: DEMO_STUDENT_ID });
    await enroll(t, { courseId: course.id, studentId: DEMO_SIBLING_ID, status: 'COMPLETED', completedAt: t.clock.now() });

    const [a, b] = await Promise.all([t.request('GET', '/api/cron/analytics-snapshot', { headers: cron }), t.request('GET', '/api/cron/analytics-snapshot', { headers: cron })]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(a.body.data.snapshotsWritten).toBe(a.body.data.institutions);
    await t.request('GET', '/api/cron/analytics-snapshot', { headers: cron });

    const rows = await t.db.select().from(analyticsDailySnapshots).where(eq(analyticsDailySnapshots.institutionId, 'inst_demo'));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.day).toBe('2026-03-02');
    expect(rows[0]!.metrics).toMatchObject({ activeEnrollments: 1, completedEnrollments: 1, completionsToday: 1, publishedCourses: 1 });

    // The next local day gets its own row.
    t.clock.advance(24 * 3_600_000);
    try {
      await t.request('GET', '/api/cron/analytics-snapshot', { headers: cron });
      const days = await t.db.select({ day: analyticsDailySnapshots.day }).from(analyticsDailySnapshots).where(eq(analyticsDailySnapshots.institutionId, 'inst_demo'));
      expect(days.map((d) => d.day).sort()).toEqual(['2026-03-02', '2026-03-03']);
    } finally {
      t.clock.advance(-24 * 3_600_000);
    }
  });
});

describe('assignment-reminders', () => {
  const HOUR = 3_600_000;
  const stu = (n: number) => `c_demo_stu_${String(n).padStart(2, '0')}`;
  const run = async () => {
    const res = await t.request('GET', '/api/cron/assignment-reminders', { headers: cron });
    expect(res.status, res.raw).toBe(200);
    return res.body.data;
  };
  const remindersOf = (recipientId: string) =>
    t.db
      .select()
      .from(notifications)
      .where(and(eq(notifications.recipientId, recipientId), eq(notifications.key, 'ASSIGNMENT_DUE_REMINDER'), eq(notifications.channel, 'IN_APP')));

  /** An ASSIGNMENT lesson of a new course with its assignment, due `inHours` from now. */
  async function assignmentDue(inHours: number, opts: { institutionId?: string; title?: string } = {}) {
    const course = await createCourse(t, {
      title: 'Reminder course',
      ...(opts.institutionId ? { institutionId: opts.institutionId, ownerId: 'u_northside_teacher' } : { ownerId: DEMO_TEACHER_ID }),
    });
    const lesson = await createLesson(t, { courseId: course.id, type: 'ASSIGNMENT', title: 'Essay' });
    const now = t.clock.now();
    await t.db.insert(assignments).values({
      institutionId: course.institutionId,
      id: lesson.id,
      courseId: course.id,
      title: opts.title ?? 'Essay',
      instructions: 'Write.',
      maxScore: 10,
      dueDate: new Date(now.getTime() + inHours * HOUR),
      createdAt: now,
      updatedAt: now,
    });
    return { course, lesson };
  }

  it('reminds each ACTIVE student without a submission of an assignment due in the next 24 h, once, however often it runs', async () => {
    const start = t.clock.now();
    const soon = await assignmentDue(5, { title: 'Lab report' });
    for (const [n, status] of [
      [1, 'ACTIVE'],
      [2, 'ACTIVE'],
      [4, 'DROPPED'],
      [5, 'COMPLETED'],
    ] as const)
      await enroll(t, { courseId: soon.course.id, studentId: stu(n), status });
    const submitted = await t.request('POST', `/api/assignments/${soon.lesson.id}/submit`, {
      token: await t.token({ role: 'STUDENT', id: stu(2) }),
      body: { textContent: 'Done early' },
    });
    expect(submitted.status, submitted.raw).toBe(201);
    const later = await assignmentDue(30, { title: 'Later essay' });
    await enroll(t, { courseId: later.course.id, studentId: stu(6) });
    const past = await assignmentDue(-1, { title: 'Past essay' });
    await enroll(t, { courseId: past.course.id, studentId: stu(7) });
    const north = await assignmentDue(3, { institutionId: SECOND_INSTITUTION.id, title: 'North essay' });
    await enroll(t, { courseId: north.course.id, studentId: NORTH_STUDENT_ID });

    expect(await run()).toEqual({
      windowFrom: start.toISOString(),
      windowTo: new Date(start.getTime() + 24 * HOUR).toISOString(),
      assignmentsDue: 2,
      remindersCreated: 2,
    });
    const [reminder] = await remindersOf(stu(1));
    expect(reminder).toMatchObject({
      institutionId: 'inst_demo',
      title: 'Due soon: Lab report',
      message: `"Lab report" in Reminder course is due ${new Date(start.getTime() + 5 * HOUR).toISOString()}.`,
      actionUrl: `/assignments/${soon.lesson.id}`,
      metadata: { assignmentId: soon.lesson.id, title: 'Lab report' },
      dedupeKey: `assignment:${soon.lesson.id}`,
    });
    // Submitted, DROPPED, COMPLETED, due later or already past: no reminder.
    for (const n of [2, 4, 5, 6, 7]) expect(await remindersOf(stu(n)), stu(n)).toEqual([]);
    // The other institution's student is reminded in their own institution only.
    expect((await remindersOf(NORTH_STUDENT_ID)).map((r) => r.institutionId)).toEqual(['inst_north']);

    // Again, and twice at once with a newly enrolled student: each student keeps one reminder.
    expect((await run()).remindersCreated).toBe(0);
    await enroll(t, { courseId: soon.course.id, studentId: stu(8) });
    const [a, b] = await Promise.all([run(), run()]);
    expect(a.remindersCreated + b.remindersCreated).toBe(1);
    for (const n of [1, 8]) expect(await remindersOf(stu(n))).toHaveLength(1);

    // The student sees it in their inbox once the worker delivered it.
    await t.worker.drain();
    const inbox = await t.request('GET', '/api/notifications', { token: await t.token({ role: 'STUDENT', id: stu(1) }) });
    expect(inbox.body.data.notifications.filter((n: any) => n.key === 'ASSIGNMENT_DUE_REMINDER').map((n: any) => n.title)).toEqual(['Due soon: Lab report']);

    // 20 hours on, the later assignment is due within 24 h and the first one is past.
    t.clock.advance(20 * HOUR);
    try {
      expect(await run()).toMatchObject({ assignmentsDue: 1, remindersCreated: 1 });
      expect(await remindersOf(stu(6))).toHaveLength(1);
      expect(await remindersOf(stu(1))).toHaveLength(1);
    } finally {
      t.clock.advance(-20 * HOUR);
    }
  });
});
