/**
 * Live sessions (issue 12, spec 4.9 rows): create, list with filters and visibility, start and
 * end, join, register, attendance (marks and joins, totals once COMPLETED, course totals over
 * COMPLETED sessions only) and the iCalendar file, parsed back with ical.js.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import ICAL from 'ical.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, enroll } from '../helpers/factories.js';
import { expectError, expectOk, failingFields } from '../helpers/expect.js';
import { liveSessions } from '../../src/modules/live-sessions/live-sessions.tables.js';
import { institutions } from '../../src/modules/institutions/institutions.tables.js';
import { notifications } from '../../src/modules/notifications/notifications.tables.js';
import { DEMO_ADMIN_ID, DEMO_TEACHER2_ID, DEMO_TEACHER_ID, NORTH_ADMIN_ID, SECOND_INSTITUTION } from '../../src/dev/crm-sim/fixtures.js';

let t: TestApp;
let teacher: string;
let teacher2: string;
let admin: string;
const stu = (n: number) => `c_demo_stu_${String(n).padStart(2, '0')}`;
const studentToken = (n: number) => t.token({ role: 'STUDENT', id: stu(n) });

beforeAll(async () => {
  t = await createTestApp();
  teacher = await t.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
  teacher2 = await t.token({ role: 'TEACHER', id: DEMO_TEACHER2_ID });
  admin = await t.token({ role: 'ADMIN', id: DEMO_ADMIN_ID });
});
afterAll(async () => t?.close());

async function courseWith(students: Array<{ n: number; status?: 'ACTIVE' | 'COMPLETED' | 'DROPPED' }>) {
  const course = await createCourse(t, { title: 'Live algebra' });
  for (const s of students) await enroll(t, { courseId: course.id, studentId: stu(s.n), status: s.status ?? 'ACTIVE' });
  return course;
}

async function createSession(courseId: string, body: Record<string, unknown> = {}, token = teacher) {
  return expectOk(
    await t.request('POST', '/api/live-sessions', {
      token,
      body: { courseId, title: 'Quadratics live', scheduledAt: '2026-03-05T15:00:00.000Z', durationMinutes: 45, ...body },
    }),
    201,
  );
}

describe('create', () => {
  it('answers 201 SCHEDULED with the caller as host and empty recording fields', async () => {
    const course = await courseWith([]);
    const s = await createSession(course.id, { description: 'Bring a calculator' });
    expect(s).toEqual({
      id: expect.any(String),
      courseId: course.id,
      title: 'Quadratics live',
      description: 'Bring a calculator',
      scheduledAt: '2026-03-05T15:00:00.000Z',
      durationMinutes: 45,
      hostId: DEMO_TEACHER_ID,
      status: 'SCHEDULED',
      roomName: null,
      startedAt: null,
      endedAt: null,
      recordingStatus: null,
      recordingStartedAt: null,
      recordingStoppedAt: null,
      recordingUrl: null,
      recordingDuration: null,
      createdAt: t.clock.now().toISOString(),
      updatedAt: t.clock.now().toISOString(),
    });
    const other = await createSession(course.id, { hostId: DEMO_TEACHER2_ID }, admin);
    expect(other.hostId).toBe(DEMO_TEACHER2_ID);
  });

  it('a hostId must be staff of the institution in the CRM or a learner ACTIVE in the course (the host controls the session): anyone else is 400 and nothing is created', async () => {
    const course = await courseWith([{ n: 20 }, { n: 21, status: 'DROPPED' }]);
    const before = (await t.db.select().from(liveSessions).where(eq(liveSessions.courseId, course.id))).length;
    for (const hostId of [stu(21), stu(22), 'c_demo_par_01', 'nobody_at_all', 'u_northside_teacher']) {
      const res = await t.request('POST', '/api/live-sessions', {
        token: teacher,
        body: { courseId: course.id, title: 'Hosted', scheduledAt: '2026-03-05T15:00:00.000Z', durationMinutes: 45, hostId },
      });
      expectError(res, 400, 'VALIDATION_ERROR');
      expect(res.body.error.details.fields).toEqual([{ field: 'body.hostId', message: expect.stringContaining(hostId) }]);
    }
    expect(await t.db.select().from(liveSessions).where(eq(liveSessions.courseId, course.id))).toHaveLength(before);
    // Naming oneself needs no CRM lookup; a learner of the course may lead a session.
    expect((await createSession(course.id, { hostId: DEMO_TEACHER_ID })).hostId).toBe(DEMO_TEACHER_ID);
    expect((await createSession(course.id, { hostId: stu(20) })).hostId).toBe(stu(20));
  });

  it('an archived course takes no new session (409); a session ending after the year 9999 is 400', async () => {
    const archived = await createCourse(t, { title: 'Old course', status: 'ARCHIVED' });
    expectError(
      await t.request('POST', '/api/live-sessions', {
        token: teacher,
        body: { courseId: archived.id, title: 'Late', scheduledAt: '2026-03-05T15:00:00.000Z', durationMinutes: 45 },
      }),
      409,
      'CONFLICT',
    );
    const course = await courseWith([]);
    const far = await t.request('POST', '/api/live-sessions', {
      token: teacher,
      body: { courseId: course.id, title: 'Far', scheduledAt: '9999-12-31T23:59:00Z', durationMinutes: 1440 },
    });
    expectError(far, 400, 'VALIDATION_ERROR');
    expect(far.body.error.details.fields).toEqual([{ field: 'body.scheduledAt', message: 'the session must end before the year 10000' }]);
    expect((await createSession(course.id, { scheduledAt: '9999-12-31T22:00:00Z', durationMinutes: 60 })).scheduledAt).toBe('9999-12-31T22:00:00.000Z');
  });

  it('tells every ACTIVE enrollment of the course with LIVE_CLASS_SCHEDULED, in one notify, delivered in-app by the worker', async () => {
    const course = await courseWith([{ n: 1 }, { n: 2 }, { n: 4, status: 'COMPLETED' }, { n: 5, status: 'DROPPED' }]);
    const s = await createSession(course.id);
    const rows = await t.db
      .select()
      .from(notifications)
      .where(and(eq(notifications.key, 'LIVE_CLASS_SCHEDULED'), sql`${notifications.metadata}->>'sessionId' = ${s.id}`));
    const inApp = rows.filter((r) => r.channel === 'IN_APP');
    expect(inApp.map((r) => r.recipientId).sort()).toEqual([stu(1), stu(2)]);
    expect(inApp[0]).toMatchObject({
      institutionId: 'inst_demo',
      status: 'PENDING',
      title: 'Live class scheduled: Quadratics live',
      message: 'A live class "Quadratics live" in Live algebra is scheduled for 2026-03-05T15:00:00.000Z.',
      actionUrl: `/live-sessions/${s.id}`,
      metadata: { sessionId: s.id, courseId: course.id, title: 'Quadratics live', courseTitle: 'Live algebra', scheduledAt: '2026-03-05T15:00:00.000Z', durationMinutes: 45 },
    });
    // All rows of the call share one delivery batch.
    expect(new Set(inApp.map((r) => r.batchId)).size).toBe(1);
    await t.worker.drain();
    const list = await t.request('GET', '/api/notifications', { token: await studentToken(1) });
    expect(list.body.data.notifications.map((n: any) => n.key)).toContain('LIVE_CLASS_SCHEDULED');
  });

  it('needs canManageCourses (403), a course of the institution (404) and a valid body (400)', async () => {
    const course = await courseWith([{ n: 1 }]);
    expectError(
      await t.request('POST', '/api/live-sessions', {
        token: await studentToken(1),
        body: { courseId: course.id, title: 'x', scheduledAt: '2026-03-05T15:00:00Z', durationMinutes: 30 },
      }),
      403,
      'FORBIDDEN',
    );
    const north = await createCourse(t, { institutionId: SECOND_INSTITUTION.id, ownerId: 'u_northside_teacher' });
    expectError(
      await t.request('POST', '/api/live-sessions', { token: teacher, body: { courseId: north.id, title: 'x', scheduledAt: '2026-03-05T15:00:00Z', durationMinutes: 30 } }),
      404,
      'NOT_FOUND',
    );
    const bad = await t.request('POST', '/api/live-sessions', {
      token: teacher,
      body: { courseId: course.id, title: '', scheduledAt: '2026-02-30T10:00:00Z', durationMinutes: 0, extra: 1 },
    });
    expectError(bad, 400, 'VALIDATION_ERROR');
    const missing = await t.request('POST', '/api/live-sessions', { token: teacher, body: { courseId: course.id } });
    expectError(missing, 400, 'VALIDATION_ERROR');
    expect(failingFields(missing)).toEqual(expect.arrayContaining(['body.title', 'body.scheduledAt', 'body.durationMinutes']));
  });
});

describe('list', () => {
  it('filters by course, status and date range, paginated, and shows students only their courses', async () => {
    const a = await courseWith([{ n: 4 }, { n: 5, status: 'COMPLETED' }, { n: 6, status: 'DROPPED' }]);
    const b = await courseWith([]);
    const s1 = await createSession(a.id, { scheduledAt: '2026-04-01T10:00:00.000Z' });
    const s2 = await createSession(a.id, { scheduledAt: '2026-04-02T10:00:00.000Z' });
    const s3 = await createSession(a.id, { scheduledAt: '2026-04-03T10:00:00.000Z' });
    const other = await createSession(b.id, { scheduledAt: '2026-04-01T11:00:00.000Z' });
    expectOk(await t.request('POST', `/api/live-sessions/${s2.id}/start`, { token: teacher }));

    const all = await t.request('GET', '/api/live-sessions', { token: teacher, query: { courseId: a.id } });
    expect(expectOk(all).map((s: { id: string }) => s.id)).toEqual([s1.id, s2.id, s3.id]);
    expect(all.body.meta).toEqual({ total: 3, page: 1, perPage: 20, totalPages: 1 });
    for (const s of expectOk(all))
      expect(Object.keys(s)).toEqual(expect.arrayContaining(['roomName', 'recordingStatus', 'recordingStartedAt', 'recordingStoppedAt', 'recordingUrl', 'recordingDuration']));

    const live = expectOk(await t.request('GET', '/api/live-sessions', { token: teacher, query: { courseId: a.id, status: 'LIVE' } }));
    expect(live.map((s: { id: string }) => s.id)).toEqual([s2.id]);
    const range = expectOk(await t.request('GET', '/api/live-sessions', { token: teacher, query: { courseId: a.id, from: '2026-04-02T00:00:00Z', to: '2026-04-03T10:00:00Z' } }));
    expect(range.map((s: { id: string }) => s.id)).toEqual([s2.id]);
    // Bare dates are whole days (UTC), as on the audit log: 2 to 3 April takes both days' sessions.
    const days = expectOk(await t.request('GET', '/api/live-sessions', { token: teacher, query: { courseId: a.id, from: '2026-04-02', to: '2026-04-03' } }));
    expect(days.map((s: { id: string }) => s.id)).toEqual([s2.id, s3.id]);
    expect(failingFields(await t.request('GET', '/api/live-sessions', { token: teacher, query: { from: '2026-04-03T12:00:00Z', to: '2026-04-03' } }))).toEqual([]);
    expect(failingFields(await t.request('GET', '/api/live-sessions', { token: teacher, query: { from: '2026-04-04', to: '2026-04-03' } }))).toEqual(['querystring.from']);
    const page2 = await t.request('GET', '/api/live-sessions', { token: teacher, query: { courseId: a.id, perPage: 2, page: 2 } });
    expect(expectOk(page2).map((s: { id: string }) => s.id)).toEqual([s3.id]);
    expect(page2.body.meta).toEqual({ total: 3, page: 2, perPage: 2, totalPages: 2 });

    // ACTIVE and COMPLETED enrollments see the course's sessions; DROPPED and unrelated see none.
    for (const n of [4, 5]) {
      const mine = expectOk(await t.request('GET', '/api/live-sessions', { token: await studentToken(n), query: { from: '2026-04-01T00:00:00Z', to: '2026-04-04T00:00:00Z' } }));
      expect(mine.map((s: { id: string }) => s.id)).toEqual([s1.id, s2.id, s3.id]);
    }
    expect(expectOk(await t.request('GET', '/api/live-sessions', { token: await studentToken(6), query: { courseId: a.id } }))).toEqual([]);
    expect(expectOk(await t.request('GET', '/api/live-sessions', { token: await studentToken(7), query: { courseId: b.id } }))).toEqual([]);
    expect(other.courseId).toBe(b.id);

    expectError(await t.request('GET', '/api/live-sessions', { token: teacher, query: { from: '2026-05-01T00:00:00Z', to: '2026-04-01T00:00:00Z' } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('GET', '/api/live-sessions', { token: teacher, query: { status: 'PAUSED' } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('GET', '/api/live-sessions', { token: teacher, query: { perPage: 101 } }), 400, 'VALIDATION_ERROR');
  });

  it('another institution sees nothing of these sessions, by list or by id', async () => {
    const course = await courseWith([{ n: 8 }]);
    const s = await createSession(course.id);
    const north = await t.token({ role: 'ADMIN', id: NORTH_ADMIN_ID, institutionId: SECOND_INSTITUTION.id });
    expect(expectOk(await t.request('GET', '/api/live-sessions', { token: north, query: { courseId: course.id } }))).toEqual([]);
    expectError(await t.request('GET', `/api/live-sessions/${s.id}`, { token: north }), 404, 'NOT_FOUND');
    expectError(await t.request('POST', `/api/live-sessions/${s.id}/start`, { token: north }), 404, 'NOT_FOUND');
  });
});

describe('start and end', () => {
  it('SCHEDULED → LIVE with the room name <prefix>-<slug>-<id> → COMPLETED; repeats are answered unchanged', async () => {
    const course = await courseWith([{ n: 9 }]);
    const s = await createSession(course.id);
    expectError(await t.request('POST', `/api/live-sessions/${s.id}/end`, { token: teacher }), 409, 'CONFLICT');

    t.clock.advance(60_000);
    const started = expectOk(await t.request('POST', `/api/live-sessions/${s.id}/start`, { token: teacher }));
    expect(started).toMatchObject({ id: s.id, status: 'LIVE', roomName: `lms-demo-${s.id}`, startedAt: t.clock.now().toISOString(), endedAt: null });
    expect(expectOk(await t.request('POST', `/api/live-sessions/${s.id}/start`, { token: teacher }))).toEqual(started);

    t.clock.advance(45 * 60_000);
    const ended = expectOk(await t.request('POST', `/api/live-sessions/${s.id}/end`, { token: admin }));
    expect(ended).toMatchObject({ status: 'COMPLETED', roomName: started.roomName, startedAt: started.startedAt, endedAt: t.clock.now().toISOString() });
    expect(expectOk(await t.request('POST', `/api/live-sessions/${s.id}/end`, { token: teacher }))).toEqual(ended);
    expectError(await t.request('POST', `/api/live-sessions/${s.id}/start`, { token: teacher }), 409, 'CONFLICT');
  });

  it('uses RECORDING_ROOM_PREFIX, and starts without a room when the CRM does not know the institution', async () => {
    const other = await createTestApp({ env: { RECORDING_ROOM_PREFIX: 'meet' } });
    try {
      const course = await createCourse(other, {});
      const teacherOther = await other.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
      const body = { courseId: course.id, title: 'x', scheduledAt: '2026-03-05T15:00:00Z', durationMinutes: 30 };
      const s = expectOk(await other.request('POST', '/api/live-sessions', { token: teacherOther, body }), 201);
      expect(expectOk(await other.request('POST', `/api/live-sessions/${s.id}/start`, { token: teacherOther })).roomName).toBe(`meet-demo-${s.id}`);

      // An institution the CRM does not list: no slug, so no room (and recording/start will say 409).
      const lostTeacher = await other.token({ role: 'TEACHER', id: 'u_lost', institutionId: 'inst_lost' });
      const lostCourse = await createCourse(other, { institutionId: 'inst_lost', ownerId: 'u_lost' });
      const lost = expectOk(await other.request('POST', '/api/live-sessions', { token: lostTeacher, body: { ...body, courseId: lostCourse.id } }), 201);
      const [inst] = await other.db.select().from(institutions).where(eq(institutions.id, 'inst_lost'));
      expect(inst?.slug ?? null).toBeNull();
      const started = expectOk(await other.request('POST', `/api/live-sessions/${lost.id}/start`, { token: lostTeacher }));
      expect(started).toMatchObject({ status: 'LIVE', roomName: null });
    } finally {
      await other.close();
    }
  });

  it('only the host or ADMIN controls a session: anyone else of the institution 403 (spec 4.5), though a stranger cannot see it (404)', async () => {
    const course = await courseWith([{ n: 10 }]);
    const s = await createSession(course.id);
    expectError(await t.request('POST', `/api/live-sessions/${s.id}/start`, { token: teacher2 }), 403, 'FORBIDDEN');
    expectError(await t.request('POST', `/api/live-sessions/${s.id}/start`, { token: await studentToken(10) }), 403, 'FORBIDDEN');
    expectError(await t.request('POST', `/api/live-sessions/${s.id}/start`, { token: await studentToken(11) }), 403, 'FORBIDDEN');
    expectError(await t.request('GET', `/api/live-sessions/${s.id}`, { token: await studentToken(11) }), 404, 'NOT_FOUND');
    expect(expectOk(await t.request('GET', `/api/live-sessions/${s.id}`, { token: await studentToken(10) })).id).toBe(s.id);
    expect(expectOk(await t.request('POST', `/api/live-sessions/${s.id}/start`, { token: admin })).status).toBe('LIVE');
    // A host who is not a course manager (a learner of the course: a student-led session) still controls their session.
    await enroll(t, { courseId: course.id, studentId: 'c_demo_stu_12' });
    const guest = await t.token({ role: 'STUDENT', id: 'c_demo_stu_12' });
    const hosted = await createSession(course.id, { hostId: 'c_demo_stu_12' }, admin);
    expect(expectOk(await t.request('POST', `/api/live-sessions/${hosted.id}/start`, { token: guest })).status).toBe('LIVE');
  });

  it('two concurrent starts both answer LIVE with one start time', async () => {
    const course = await courseWith([]);
    const s = await createSession(course.id);
    const [a, b] = await Promise.all([
      t.request('POST', `/api/live-sessions/${s.id}/start`, { token: teacher }),
      t.request('POST', `/api/live-sessions/${s.id}/start`, { token: admin }),
    ]);
    expect(expectOk(a).startedAt).toBe(expectOk(b).startedAt);
  });
});

describe('join and register', () => {
  it('host and ACTIVE students join a LIVE session; each join is recorded', async () => {
    const course = await courseWith([{ n: 13 }, { n: 14, status: 'COMPLETED' }]);
    const s = await createSession(course.id);
    const student = await studentToken(13);
    expectError(await t.request('POST', `/api/live-sessions/${s.id}/join`, { token: student }), 409, 'CONFLICT');
    expectOk(await t.request('POST', `/api/live-sessions/${s.id}/start`, { token: teacher }));

    const first = expectOk(await t.request('POST', `/api/live-sessions/${s.id}/join`, { token: student }));
    expect(first).toEqual({
      sessionId: s.id,
      role: 'PARTICIPANT',
      roomName: `lms-demo-${s.id}`,
      joinUrl: `http://lms.test/live-sessions/${s.id}`,
      joinedAt: t.clock.now().toISOString(),
      joinCount: 1,
    });
    t.clock.advance(5 * 60_000);
    expect(expectOk(await t.request('POST', `/api/live-sessions/${s.id}/join`, { token: student })).joinCount).toBe(2);
    expect(expectOk(await t.request('POST', `/api/live-sessions/${s.id}/join`, { token: teacher })).role).toBe('HOST');
    expect(expectOk(await t.request('POST', `/api/live-sessions/${s.id}/join`, { token: admin })).role).toBe('HOST');

    expectError(await t.request('POST', `/api/live-sessions/${s.id}/join`, { token: await studentToken(14) }), 403, 'ENROLLMENT_REQUIRED');
    expectError(await t.request('POST', `/api/live-sessions/${s.id}/join`, { token: teacher2 }), 403, 'FORBIDDEN');
    expectError(await t.request('POST', `/api/live-sessions/${s.id}/join`, { token: await studentToken(15) }), 404, 'NOT_FOUND');

    expectOk(await t.request('POST', `/api/live-sessions/${s.id}/end`, { token: teacher }));
    expectError(await t.request('POST', `/api/live-sessions/${s.id}/join`, { token: student }), 409, 'CONFLICT');
  });

  it('register is idempotent and for ACTIVE students only', async () => {
    const course = await courseWith([{ n: 16 }, { n: 17, status: 'DROPPED' }]);
    const s = await createSession(course.id);
    const student = await studentToken(16);
    const first = expectOk(await t.request('POST', `/api/live-sessions/${s.id}/register`, { token: student }));
    expect(first).toEqual({ sessionId: s.id, studentId: stu(16), registeredAt: t.clock.now().toISOString(), alreadyRegistered: false });
    t.clock.advance(1000);
    expect(expectOk(await t.request('POST', `/api/live-sessions/${s.id}/register`, { token: student }))).toEqual({ ...first, alreadyRegistered: true });
    const [a, b] = await Promise.all([
      t.request('POST', `/api/live-sessions/${s.id}/register`, { token: student }),
      t.request('POST', `/api/live-sessions/${s.id}/register`, { token: student }),
    ]);
    expect(expectOk(a).registeredAt).toBe(first.registeredAt);
    expect(expectOk(b).registeredAt).toBe(first.registeredAt);

    expectError(await t.request('POST', `/api/live-sessions/${s.id}/register`, { token: teacher }), 403, 'FORBIDDEN');
    expectError(await t.request('POST', `/api/live-sessions/${s.id}/register`, { token: await studentToken(17) }), 404, 'NOT_FOUND');
    expectOk(await t.request('POST', `/api/live-sessions/${s.id}/start`, { token: teacher }));
    expectOk(await t.request('POST', `/api/live-sessions/${s.id}/end`, { token: teacher }));
    expectError(await t.request('POST', `/api/live-sessions/${s.id}/register`, { token: student }), 409, 'CONFLICT');
  });
});

describe('attendance', () => {
  it('marks override joins; attended/missed and the totals appear once COMPLETED', async () => {
    // 18 registers and joins; 19 joins; 20 only registers; 21 nothing; 22 COMPLETED enrollment, marked PRESENT; 23 DROPPED (not on the roster).
    const course = await courseWith([{ n: 18 }, { n: 19 }, { n: 20 }, { n: 21 }, { n: 22, status: 'COMPLETED' }, { n: 23, status: 'DROPPED' }]);
    const s = await createSession(course.id);
    expectError(
      await t.request('POST', `/api/live-sessions/${s.id}/attendance`, { token: teacher, body: { records: [{ studentId: stu(18), status: 'PRESENT' }] } }),
      409,
      'CONFLICT',
    );
    for (const n of [18, 20]) expectOk(await t.request('POST', `/api/live-sessions/${s.id}/register`, { token: await studentToken(n) }));
    expectOk(await t.request('POST', `/api/live-sessions/${s.id}/start`, { token: teacher }));
    for (const n of [18, 19]) expectOk(await t.request('POST', `/api/live-sessions/${s.id}/join`, { token: await studentToken(n) }));

    // While LIVE: no attended/missed yet.
    const during = await t.request('GET', `/api/live-sessions/${s.id}/attendance`, { token: teacher });
    expect(expectOk(during)).toMatchObject({ sessionStatus: 'LIVE', final: false, totals: { students: 5, registered: 2, joined: 2, marked: 0, attended: 0, missed: 0 } });
    expect(expectOk(during).students.every((r: { attendance: unknown }) => r.attendance === null)).toBe(true);

    // The host marks 19 ABSENT (they joined, but left at once) and 22 PRESENT.
    const marked = expectOk(
      await t.request('POST', `/api/live-sessions/${s.id}/attendance`, {
        token: teacher,
        body: {
          records: [
            { studentId: stu(19), status: 'ABSENT' },
            { studentId: stu(22), status: 'PRESENT' },
          ],
        },
      }),
    );
    expect(marked).toEqual({ sessionId: s.id, updated: 2, final: false, totals: { students: 5, registered: 2, joined: 2, marked: 2, attended: 0, missed: 0 } });

    const stranger = await t.request('POST', `/api/live-sessions/${s.id}/attendance`, {
      token: teacher,
      body: {
        records: [
          { studentId: stu(18), status: 'PRESENT' },
          { studentId: stu(23), status: 'PRESENT' },
        ],
      },
    });
    expectError(stranger, 400, 'VALIDATION_ERROR');
    expect(stranger.body.error.details.fields).toEqual([{ field: 'body.records.1.studentId', message: `${stu(23)} is not enrolled` }]);
    expectError(
      await t.request('POST', `/api/live-sessions/${s.id}/attendance`, {
        token: teacher,
        body: {
          records: [
            { studentId: stu(18), status: 'PRESENT' },
            { studentId: stu(18), status: 'ABSENT' },
          ],
        },
      }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await t.request('POST', `/api/live-sessions/${s.id}/attendance`, { token: teacher, body: { records: [{ studentId: stu(18), status: 'LATE' }] } }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await t.request('POST', `/api/live-sessions/${s.id}/attendance`, { token: teacher2, body: { records: [{ studentId: stu(18), status: 'PRESENT' }] } }),
      403,
      'FORBIDDEN',
    );
    expectError(await t.request('GET', `/api/live-sessions/${s.id}/attendance`, { token: await studentToken(18) }), 403, 'FORBIDDEN');

    expectOk(await t.request('POST', `/api/live-sessions/${s.id}/end`, { token: teacher }));
    const after = await t.request('GET', `/api/live-sessions/${s.id}/attendance`, { token: teacher2 });
    const data = expectOk(after);
    expect(data).toMatchObject({ sessionStatus: 'COMPLETED', final: true, totals: { students: 5, registered: 2, joined: 2, marked: 2, attended: 2, missed: 3 } });
    expect(Object.fromEntries(data.students.map((r: { studentId: string; attendance: string }) => [r.studentId, r.attendance]))).toEqual({
      [stu(18)]: 'attended',
      [stu(19)]: 'missed',
      [stu(20)]: 'missed',
      [stu(21)]: 'missed',
      [stu(22)]: 'attended',
    });
    expect(data.students.find((r: { studentId: string }) => r.studentId === stu(18))).toMatchObject({
      joinCount: 1,
      mark: null,
      registeredAt: expect.any(String),
      firstJoinedAt: expect.any(String),
    });
    expect(after.body.meta).toEqual({ total: 5, page: 1, perPage: 50, totalPages: 1 });
    const paged = await t.request('GET', `/api/live-sessions/${s.id}/attendance`, { token: teacher, query: { perPage: 2, page: 3 } });
    expect(expectOk(paged).students.map((r: { studentId: string }) => r.studentId)).toEqual([stu(22)]);

    // A mark after the end still counts (the host corrects the record).
    const corrected = expectOk(await t.request('POST', `/api/live-sessions/${s.id}/attendance`, { token: admin, body: { records: [{ studentId: stu(21), status: 'PRESENT' }] } }));
    expect(corrected.totals).toMatchObject({ attended: 3, missed: 2, marked: 3 });
  });

  it('course totals count COMPLETED sessions only; a learner sees their own row', async () => {
    const course = await courseWith([{ n: 24 }, { n: 25 }]);
    const done1 = await createSession(course.id, { scheduledAt: '2026-03-10T10:00:00Z' });
    const done2 = await createSession(course.id, { scheduledAt: '2026-03-11T10:00:00Z' });
    const live = await createSession(course.id, { scheduledAt: '2026-03-12T10:00:00Z' });
    await createSession(course.id, { scheduledAt: '2026-03-13T10:00:00Z' });
    for (const s of [done1, done2, live]) expectOk(await t.request('POST', `/api/live-sessions/${s.id}/start`, { token: teacher }));
    // 24 joins all three; 25 joins only the live one.
    for (const s of [done1, done2, live]) expectOk(await t.request('POST', `/api/live-sessions/${s.id}/join`, { token: await studentToken(24) }));
    expectOk(await t.request('POST', `/api/live-sessions/${live.id}/join`, { token: await studentToken(25) }));
    for (const s of [done1, done2]) expectOk(await t.request('POST', `/api/live-sessions/${s.id}/end`, { token: teacher }));

    const summary = await t.request('GET', '/api/live-sessions/attendance-summary', { token: teacher, query: { courseId: course.id } });
    expect(expectOk(summary)).toEqual({
      courseId: course.id,
      completedSessions: 2,
      students: [
        { studentId: stu(24), attended: 2, missed: 0, rate: 1 },
        { studentId: stu(25), attended: 0, missed: 2, rate: 0 },
      ],
    });
    expect(summary.body.meta.total).toBe(2);
    const own = expectOk(await t.request('GET', '/api/live-sessions/attendance-summary', { token: await studentToken(25), query: { courseId: course.id } }));
    expect(own.students).toEqual([{ studentId: stu(25), attended: 0, missed: 2, rate: 0 }]);
    expectError(
      await t.request('GET', '/api/live-sessions/attendance-summary', { token: await studentToken(25), query: { courseId: course.id, studentId: stu(24) } }),
      404,
      'NOT_FOUND',
    );
    expectError(await t.request('GET', '/api/live-sessions/attendance-summary', { token: await studentToken(26), query: { courseId: course.id } }), 404, 'NOT_FOUND');
    const one = expectOk(await t.request('GET', '/api/live-sessions/attendance-summary', { token: admin, query: { courseId: course.id, studentId: stu(24) } }));
    expect(one.students).toEqual([{ studentId: stu(24), attended: 2, missed: 0, rate: 1 }]);
  });

  it('a class held while a student was not an active learner is not missed: enrolled later, or completed or dropped before it; same in roster, summary and parent overview', async () => {
    // Student 04 finished the course and student 05 dropped it a minute before the class.
    const course = await courseWith([{ n: 1 }, { n: 4, status: 'COMPLETED' }, { n: 5, status: 'DROPPED' }]);
    t.clock.advance(60_000);
    const held = await createSession(course.id, { scheduledAt: t.clock.now().toISOString() });
    expectOk(await t.request('POST', `/api/live-sessions/${held.id}/start`, { token: teacher }));
    expectOk(await t.request('POST', `/api/live-sessions/${held.id}/end`, { token: teacher }));
    t.clock.advance(60_000);
    // Student 02 (the demo parent's second child) joins the course a minute after the class.
    await enroll(t, { courseId: course.id, studentId: stu(2) });

    const roster = expectOk(await t.request('GET', `/api/live-sessions/${held.id}/attendance`, { token: teacher }));
    expect(roster.totals).toMatchObject({ students: 3, attended: 0, missed: 1 });
    expect(Object.fromEntries(roster.students.map((r: { studentId: string; attendance: string }) => [r.studentId, r.attendance]))).toEqual({
      [stu(1)]: 'missed',
      [stu(2)]: 'not-enrolled',
      [stu(4)]: 'not-enrolled',
    });
    const summary = expectOk(await t.request('GET', '/api/live-sessions/attendance-summary', { token: teacher, query: { courseId: course.id } }));
    expect(summary).toEqual({
      courseId: course.id,
      completedSessions: 1,
      students: [
        { studentId: stu(1), attended: 0, missed: 1, rate: 0 },
        { studentId: stu(2), attended: 0, missed: 0, rate: null },
        { studentId: stu(4), attended: 0, missed: 0, rate: null },
      ],
    });
    const dropped = expectOk(await t.request('GET', '/api/live-sessions/attendance-summary', { token: await studentToken(5), query: { courseId: course.id } }));
    expect(dropped.students).toEqual([{ studentId: stu(5), attended: 0, missed: 0, rate: null }]);
    // The same rule in the parent's view of each child (the demo parent has both).
    const parent = await t.token({ role: 'PARENT', id: 'c_demo_par_01' });
    const missedOf = async (child: string) => expectOk(await t.request('GET', `/api/parent/children/${child}/overview`, { token: parent })).liveClasses.missedThisMonth;
    expect(await missedOf(stu(1))).toBeGreaterThanOrEqual(1);
    const before = await missedOf(stu(2));
    // Student 02 misses a second class, held after their enrollment: now it counts.
    const next = await createSession(course.id, { scheduledAt: t.clock.now().toISOString() });
    expectOk(await t.request('POST', `/api/live-sessions/${next.id}/start`, { token: teacher }));
    expectOk(await t.request('POST', `/api/live-sessions/${next.id}/end`, { token: teacher }));
    expect(await missedOf(stu(2))).toBe(before + 1);
  });
});

describe('calendar file', () => {
  it('is RFC 5545 with start, duration, title, URL and a stable UID, parsed back with ical.js', async () => {
    const course = await courseWith([{ n: 27 }]);
    const s = await createSession(course.id, { title: 'Revision, part 2; bring notes', scheduledAt: '2026-03-20T14:30:00.000Z', durationMinutes: 90, description: 'Chapters 3–4' });
    const res = await t.app.inject({ method: 'GET', url: `/api/live-sessions/${s.id}/ics`, headers: { authorization: `Bearer ${await studentToken(27)}` } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('text/calendar; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="live-session-${s.id}.ics"`);

    const parse = (text: string) => {
      const cal = new ICAL.Component(ICAL.parse(text));
      expect(cal.name).toBe('vcalendar');
      const events = cal.getAllSubcomponents('vevent');
      expect(events).toHaveLength(1);
      return new ICAL.Event(events[0]!);
    };
    const event = parse(res.body);
    expect(event.uid).toBe(`${s.id}@lms.test`);
    expect(event.summary).toBe('Revision, part 2; bring notes');
    // The calendar's name is TEXT too (RFC 7986): escaped like the summary.
    expect(res.body).toContain('\r\nNAME:Revision\\, part 2\\; bring notes\r\n');
    expect(res.body).toContain('\r\nX-WR-CALNAME:Revision\\, part 2\\; bring notes\r\n');
    expect(event.startDate.toJSDate().toISOString()).toBe('2026-03-20T14:30:00.000Z');
    expect(event.endDate.toJSDate().toISOString()).toBe('2026-03-20T16:00:00.000Z');
    expect(event.duration.toSeconds()).toBe(90 * 60);
    expect(event.component.getFirstPropertyValue('url')).toBe(`http://lms.test/live-sessions/${s.id}`);
    expect(event.description).toContain('Chapters 3–4');
    expect(event.description).toContain('Live algebra');

    // The UID stays the same after the session changes.
    t.clock.advance(3_600_000);
    expectOk(await t.request('POST', `/api/live-sessions/${s.id}/start`, { token: teacher }));
    const again = await t.app.inject({ method: 'GET', url: `/api/live-sessions/${s.id}/ics`, headers: { authorization: `Bearer ${teacher}` } });
    expect(parse(again.body).uid).toBe(event.uid);

    const stranger = await t.app.inject({ method: 'GET', url: `/api/live-sessions/${s.id}/ics`, headers: { authorization: `Bearer ${await studentToken(28)}` } });
    expect(stranger.statusCode).toBe(404);
    expect(stranger.json().error.code).toBe('NOT_FOUND');
  });
});

describe('storage', () => {
  it('keeps the session in the creator’s institution', async () => {
    const course = await courseWith([]);
    const s = await createSession(course.id);
    const [row] = await t.db.select().from(liveSessions).where(eq(liveSessions.id, s.id));
    expect(row).toMatchObject({ institutionId: 'inst_demo', courseId: course.id, createdBy: DEMO_TEACHER_ID });
  });
});
