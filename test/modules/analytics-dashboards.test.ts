/**
 * Dashboards (spec 4.9): the legacy course analytics endpoint (enrollments, completion rate,
 * averages, lesson drop-off in reading order, the daily series from snapshots) and the revenue
 * dashboard (ADMIN; enrollment volume by period and the CRM's fee standing). Both are cached per
 * institution until the analytics-snapshot cron invalidates them (spec 4.8).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, createLesson, enroll } from '../helpers/factories.js';
import { expectError, expectOk } from '../helpers/expect.js';
import { newId } from '../../src/platform/ids.js';
import { courseModules } from '../../src/modules/courses/courses.tables.js';
import { lessonProgress, type Enrollment } from '../../src/modules/enrollments/enrollments.tables.js';
import { analyticsCourseDailySnapshots, analyticsDailySnapshots } from '../../src/modules/analytics/analytics.tables.js';
import { REVENUE_DEFINITION } from '../../src/modules/analytics/analytics.dashboards.js';
import { DEMO_ADMIN_ID, DEMO_TEACHER_ID, NORTH_TEACHER_ID } from '../../src/dev/crm-sim/fixtures.js';

const SECRET = 'cron-secret-for-dashboards-0123456789';
const snapshotCron = () => t.request('GET', '/api/cron/analytics-snapshot', { headers: { authorization: `Bearer ${SECRET}` } });

let t: TestApp;
let teacher: string;
let admin: string;
let courseId: string;
let lessonIds: string[];

const stu = (n: number) => `c_demo_stu_${String(n).padStart(2, '0')}`;

async function progress(e: Enrollment, lessonId: string, completed: boolean, score: number | null = null) {
  await t.db.insert(lessonProgress).values({
    id: newId(),
    institutionId: 'inst_demo',
    enrollmentId: e.id,
    lessonId,
    studentId: e.studentId,
    completed,
    completedAt: completed ? t.clock.now() : null,
    progressPercent: completed ? 100 : 30,
    score,
    updatedAt: t.clock.now(),
  });
}

beforeAll(async () => {
  t = await createTestApp({ env: { CRON_SECRET: SECRET } });
  teacher = await t.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
  admin = await t.token({ role: 'ADMIN', id: DEMO_ADMIN_ID });
  const course = await createCourse(t, { title: 'Geometry' });
  courseId = course.id;
  // Two modules; reading order is module order, then lesson order (the second module's lesson is created first).
  const now = t.clock.now();
  const [m1, m2] = [newId(), newId()];
  await t.db.insert(courseModules).values([
    { id: m2, institutionId: 'inst_demo', courseId, title: 'Two', order: 2, createdAt: now, updatedAt: now },
    { id: m1, institutionId: 'inst_demo', courseId, title: 'One', order: 1, createdAt: now, updatedAt: now },
  ]);
  const l3 = await createLesson(t, { courseId, moduleId: m2, title: 'Proofs', order: 1 });
  const l1 = await createLesson(t, { courseId, moduleId: m1, title: 'Points', order: 1 });
  const l2 = await createLesson(t, { courseId, moduleId: m1, title: 'Lines', order: 2 });
  lessonIds = [l1.id, l2.id, l3.id];
  const e1 = await enroll(t, { courseId, studentId: stu(1), progress: 100, status: 'COMPLETED', finalScore: 90 });
  const e2 = await enroll(t, { courseId, studentId: stu(2), progress: 66, finalScore: 70 });
  const e3 = await enroll(t, { courseId, studentId: stu(3), progress: 33 });
  const e4 = await enroll(t, { courseId, studentId: stu(4), status: 'DROPPED', progress: 0 });
  // Points: 3 complete; Lines: 2; Proofs: 1 (and one started).
  for (const e of [e1, e2, e3]) await progress(e, l1.id, true);
  for (const e of [e1, e2]) await progress(e, l2.id, true);
  await progress(e1, l3.id, true);
  await progress(e2, l3.id, false);
  // A dropped student's progress does not count.
  await progress(e4, l1.id, true);
});
afterAll(async () => t?.close());

describe('GET /api/analytics/courses/{id}', () => {
  it('gives enrollments, completion rate, averages and lesson drop-off in reading order', async () => {
    const data = expectOk(await t.request('GET', `/api/analytics/courses/${courseId}`, { token: teacher }));
    expect(data.course).toEqual({ id: courseId, title: 'Geometry', status: 'PUBLISHED' });
    expect(data.enrollments).toEqual({ total: 4, active: 2, completed: 1, dropped: 1 });
    expect(data.completionRate).toBe(25);
    expect(data.averageProgress).toBe(66.33); // (100 + 66 + 33) / 3
    expect(data.averageScore).toBe(80);
    expect(data.lessons).toEqual([
      { lessonId: lessonIds[0], title: 'Points', type: 'TEXT', position: 1, started: 3, completed: 3, completionRate: 100, dropOff: 0, dropOffRate: 0 },
      { lessonId: lessonIds[1], title: 'Lines', type: 'TEXT', position: 2, started: 2, completed: 2, completionRate: 66.67, dropOff: 1, dropOffRate: 33.33 },
      { lessonId: lessonIds[2], title: 'Proofs', type: 'TEXT', position: 3, started: 2, completed: 1, completionRate: 33.33, dropOff: 1, dropOffRate: 50 },
    ]);
    expect(data.series).toEqual([]);
  });

  it('is course staff only, and 404 for another institution or an unknown id', async () => {
    const student = await t.token({ role: 'STUDENT', id: stu(1) });
    expectError(await t.request('GET', `/api/analytics/courses/${courseId}`, { token: student }), 403, 'FORBIDDEN');
    const north = await t.token({ role: 'TEACHER', id: NORTH_TEACHER_ID, institutionId: 'inst_north' });
    expectError(await t.request('GET', `/api/analytics/courses/${courseId}`, { token: north }), 404, 'NOT_FOUND');
    expectError(await t.request('GET', `/api/analytics/courses/${newId()}`, { token: teacher }), 404, 'NOT_FOUND');
    expectError(await t.request('GET', `/api/analytics/courses/${courseId}`, { token: teacher, query: { from: '2026-03-05', to: '2026-03-01' } }), 400, 'VALIDATION_ERROR');
  });

  it('is cached until the snapshot cron runs, which also adds a point to the daily series per course', async () => {
    const before = expectOk(await t.request('GET', `/api/analytics/courses/${courseId}`, { token: teacher }));
    await enroll(t, { courseId, studentId: stu(5) });
    const cached = expectOk(await t.request('GET', `/api/analytics/courses/${courseId}`, { token: teacher }));
    expect(cached).toEqual(before);

    const summary = expectOk(await snapshotCron());
    expect(summary.courseSnapshotsWritten).toBeGreaterThanOrEqual(1);
    const fresh = expectOk(await t.request('GET', `/api/analytics/courses/${courseId}`, { token: teacher }));
    expect(fresh.enrollments.total).toBe(5);
    expect(fresh.series).toEqual([
      {
        day: '2026-03-02',
        enrollments: 5,
        active: 3,
        completed: 1,
        dropped: 1,
        enrollmentsToday: 5,
        completionsToday: 1,
        activeLearnersToday: 0,
        averageProgress: 49.75,
        averageScore: 80,
      },
    ]);

    // The next day: a second point; rerunning the same day rewrites its row.
    t.clock.advance(24 * 3_600_000);
    await enroll(t, { courseId, studentId: stu(6) });
    expectOk(await snapshotCron());
    expectOk(await snapshotCron());
    const twoDays = expectOk(await t.request('GET', `/api/analytics/courses/${courseId}`, { token: teacher }));
    expect(twoDays.series.map((p: { day: string; enrollments: number; enrollmentsToday: number }) => [p.day, p.enrollments, p.enrollmentsToday])).toEqual([
      ['2026-03-02', 5, 5],
      ['2026-03-03', 6, 1],
    ]);
    const rows = await t.db.select().from(analyticsCourseDailySnapshots).where(eq(analyticsCourseDailySnapshots.courseId, courseId));
    expect(rows).toHaveLength(2);
    const [institution] = await t.db.select().from(analyticsDailySnapshots).where(eq(analyticsDailySnapshots.day, '2026-03-03'));
    expect(institution!.metrics).toMatchObject({ totalEnrollments: 6, enrollmentsToday: 1, averageFinalScore: 80 });
    t.clock.set(new Date('2026-03-02T09:00:00Z'));
  });
});

describe('GET /api/analytics/dashboard/revenue', () => {
  it('is for administrators only', async () => {
    expectError(await t.request('GET', '/api/analytics/dashboard/revenue', { token: teacher }), 403, 'FORBIDDEN');
  });

  it('counts enrollments, completions and new learners by period, and says what it computes', async () => {
    const course = await createCourse(t, { title: 'History' });
    await enroll(t, { courseId: course.id, studentId: stu(20), enrolledAt: new Date('2026-01-10T12:00:00Z') });
    await enroll(t, { courseId: course.id, studentId: stu(21), enrolledAt: new Date('2026-02-10T12:00:00Z'), status: 'COMPLETED', completedAt: new Date('2026-03-01T12:00:00Z') });
    // stu(20) has had an enrollment since January: not a new learner in February.
    const other = await createCourse(t, { title: 'History 2' });
    await enroll(t, { courseId: other.id, studentId: stu(20), enrolledAt: new Date('2026-02-11T12:00:00Z') });
    const data = expectOk(await t.request('GET', '/api/analytics/dashboard/revenue', { token: admin, query: { from: '2026-01-01', to: '2026-02-28' } }));
    expect(data.definition).toBe(REVENUE_DEFINITION);
    expect(data.currency).toBeNull();
    expect(data.feeGatingEnabled).toBe(false);
    expect(data.periods).toEqual([
      { period: '2026-01-01', newEnrollments: 1, completions: 0, newLearners: 1, feeGatedEnrollments: 0 },
      { period: '2026-02-01', newEnrollments: 2, completions: 0, newLearners: 1, feeGatedEnrollments: 0 },
    ]);
    expect(data.fees).toBeNull();
    const weekly = expectOk(await t.request('GET', '/api/analytics/dashboard/revenue', { token: admin, query: { period: 'week', from: '2026-02-09', to: '2026-03-08' } }));
    // Sunday 1 March (the completion) belongs to the ISO week of Monday 23 February; the week of
    // 16 February had nothing and is there, at zero.
    expect(weekly.periods.map((p: { period: string; newEnrollments: number; completions: number }) => [p.period, p.newEnrollments, p.completions])).toEqual([
      ['2026-02-09', 2, 0],
      ['2026-02-16', 0, 0],
      ['2026-02-23', 0, 1],
      ['2026-03-02', expect.any(Number), expect.any(Number)],
    ]);
  });

  it('lists every bucket of the window, zero-filled, from the one holding `from` to the one holding `to`', async () => {
    const zero = { newEnrollments: 0, completions: 0, newLearners: 0, feeGatedEnrollments: 0 };
    const monthly = expectOk(await t.request('GET', '/api/analytics/dashboard/revenue', { token: admin, query: { from: '2025-09-15', to: '2025-12-10' } }));
    expect(monthly.periods).toEqual(['2025-09-01', '2025-10-01', '2025-11-01', '2025-12-01'].map((period) => ({ period, ...zero })));
    const daily = expectOk(await t.request('GET', '/api/analytics/dashboard/revenue', { token: admin, query: { period: 'day', from: '2026-01-09', to: '2026-01-12' } }));
    expect(daily.periods).toEqual([
      { period: '2026-01-09', ...zero },
      { period: '2026-01-10', ...zero, newEnrollments: 1, newLearners: 1 },
      { period: '2026-01-11', ...zero },
      { period: '2026-01-12', ...zero },
    ]);
    // The default window: the 12 months up to this one (March 2026), each listed.
    const byDefault = expectOk(await t.request('GET', '/api/analytics/dashboard/revenue', { token: admin }));
    expect(byDefault.periods.map((p: { period: string }) => p.period)).toEqual(
      ['2025-04', '2025-05', '2025-06', '2025-07', '2025-08', '2025-09', '2025-10', '2025-11', '2025-12', '2026-01', '2026-02', '2026-03'].map((m) => `${m}-01`),
    );
  });

  it('reads the fee standing of actively enrolled students from the CRM when asked', async () => {
    const course = await createCourse(t, { title: 'Fees' });
    for (const s of [stu(2), stu(3), 'c_demo_unknown_99']) await enroll(t, { courseId: course.id, studentId: s });
    await t.request('PATCH', '/api/settings', { token: admin, body: { feeGatingEnabled: true } });
    expectOk(await snapshotCron()); // fresh figures
    const data = expectOk(await t.request('GET', '/api/analytics/dashboard/revenue', { token: admin, query: { includeFees: 'true' } }));
    expect(data.feeGatingEnabled).toBe(true);
    const active = data.fees.students;
    expect(data.fees.checked).toBe(active);
    // stu 02 PARTIAL (400 outstanding), stu 03 OVERDUE (1,250), the unknown student UNKNOWN, the others PAID.
    expect(data.fees.byStatus).toEqual({ PAID: active - 3, PARTIAL: 1, OVERDUE: 1, UNKNOWN: 1 });
    expect(data.fees.outstandingTotal).toBe(1650);
    expect(data.periods.at(-1)).toMatchObject({ period: '2026-03-01' });
    expect(data.periods.at(-1).feeGatedEnrollments).toBe(data.periods.at(-1).newEnrollments);
  });
});

// Last: its course would change the institution-wide counts the tests above assert.
describe('GET /api/analytics/courses/{id}: drop-off', () => {
  it('drop-off counts learners, not a difference of counts: out-of-order completions do not hide each other', async () => {
    const course = await createCourse(t, { title: 'Out of order' });
    const [a, b, c] = [
      await createLesson(t, { courseId: course.id, title: 'A', order: 1 }),
      await createLesson(t, { courseId: course.id, title: 'B', order: 2 }),
      await createLesson(t, { courseId: course.id, title: 'C', order: 3 }),
    ];
    const x = await enroll(t, { courseId: course.id, studentId: stu(11) });
    const y = await enroll(t, { courseId: course.id, studentId: stu(12) });
    await enroll(t, { courseId: course.id, studentId: stu(13) });
    // x completes A and C, y completes B only, the third learner nothing.
    await progress(x, a.id, true);
    await progress(x, c.id, true);
    await progress(y, b.id, true);
    const data = expectOk(await t.request('GET', `/api/analytics/courses/${course.id}`, { token: teacher }));
    expect(data.lessons.map((l: any) => [l.title, l.completed, l.dropOff, l.dropOffRate])).toEqual([
      ['A', 1, 2, 66.67], // of 3 learners, 2 never completed A
      ['B', 1, 1, 100], // x completed A but not B
      ['C', 1, 1, 100], // y completed B but not C
    ]);
  });
});
