/**
 * Spec 4.8: the hourly cron endpoints behind `Authorization: Bearer <CRON_SECRET>`, each
 * answering a summary and safe to run twice, and twice at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, enroll } from '../helpers/factories.js';
import { expectError } from '../helpers/expect.js';
import { analyticsDailySnapshots } from '../../src/modules/analytics/analytics.tables.js';
import { DEMO_SIBLING_ID, DEMO_STUDENT_ID } from '../../src/dev/crm-sim/fixtures.js';

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
  it('assignment-reminders reports its 24-hour window and what it created', async () => {
    const res = await t.request('GET', '/api/cron/assignment-reminders', { headers: cron });
    expect(res.body.data).toEqual({
      windowFrom: t.clock.now().toISOString(),
      windowTo: new Date(t.clock.now().getTime() + 24 * 3_600_000).toISOString(),
      assignmentsDue: 0,
      remindersCreated: 0,
    });
  });

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
