/**
 * The parent portal (spec 4.6) with the CRM simulator's parent of two children: who may call
 * it, children read fresh from the CRM, the overview's blocks and limits, a child of another
 * parent (403), a child with no data, CRM failure (500) and a bounded number of queries.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, createLesson, enroll } from '../helpers/factories.js';
import { expectError, expectOk } from '../helpers/expect.js';
import { mintToken } from '../../src/platform/auth/tokens.js';
import { newId } from '../../src/platform/ids.js';
import { assignments, submissions } from '../../src/modules/assignments/assignments.tables.js';
import { certificates } from '../../src/modules/certificates/certificates.tables.js';
import { liveSessionParticipants, liveSessions } from '../../src/modules/live-sessions/live-sessions.tables.js';
import { DEMO_PARENT_ID, DEMO_SIBLING_ID, DEMO_STUDENT_ID, DEMO_TEACHER_ID, DEMO_UNRELATED_STUDENT_ID, NORTH_PARENT_ID } from '../../src/dev/crm-sim/fixtures.js';

let t: TestApp;
let parent: string;

beforeAll(async () => {
  t = await createTestApp();
  parent = await t.token({ role: 'PARENT', id: DEMO_PARENT_ID });
});
afterAll(async () => t.close());

const DAY = 86_400_000;
/** The overview's collections and counts for a child with nothing recorded (rule 6). */
const NOTHING_RECORDED = {
  courses: [],
  recentGrades: [],
  upcomingAssignments: [],
  liveClasses: { attendedThisMonth: 0, missedThisMonth: 0, upcoming: [] },
  gamification: { currentStreak: 0, longestStreak: 0, totalPoints: 0, totalBadges: 0 },
  certificates: [],
};

describe('who may use the portal', () => {
  it('staff and student contacts get 403; a parent session without contactId 400; no session 401', async () => {
    expectError(await t.request('GET', '/api/parent/children', { token: await t.token({ role: 'TEACHER', id: DEMO_TEACHER_ID }) }), 403, 'FORBIDDEN');
    expectError(await t.request('GET', '/api/parent/children', { token: await t.token({ role: 'STUDENT', id: DEMO_STUDENT_ID }) }), 403, 'FORBIDDEN');
    expectError(await t.request('GET', '/api/parent/children', { token: await t.token({ role: 'PARENT', id: DEMO_PARENT_ID, contact: false }) }), 403, 'FORBIDDEN');
    const noContactId = await mintToken(
      t.config.AUTH_SECRET,
      { sub: 'u_parent', institutionId: 'inst_demo', role: 'PARENT', isContact: true, contactType: 'CONTACT_PARENT' },
      t.clock.now(),
    );
    expectError(await t.request('GET', '/api/parent/children', { token: noContactId }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('GET', `/api/parent/children/${DEMO_STUDENT_ID}/overview`, { token: noContactId }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('GET', '/api/parent/children'), 401, 'AUTH_REQUIRED');
  });

  it('a child without a portal Contact row yet is listed with contactId null; its overview, asked by its studentId, is the child block and empty collections (rule 6)', async () => {
    const real = await t.deps.crm.getParentChildren('demo', DEMO_PARENT_ID);
    const pupil = { ...real[0]!, studentId: 'stu_no_contact_yet', contactId: null, name: 'New Pupil' };
    const spy = vi.spyOn(t.deps.crm, 'getParentChildren').mockResolvedValue([...real, pupil]);
    try {
      const list = expectOk(await t.request('GET', '/api/parent/children', { token: parent }));
      expect(list.children.map((c: { contactId: string | null }) => c.contactId)).toEqual([...real.map((c) => c.contactId), null]);
      const overview = expectOk(await t.request('GET', '/api/parent/children/stu_no_contact_yet/overview', { token: parent }));
      expect(overview).toEqual({
        child: expect.objectContaining({ contactId: null, studentId: 'stu_no_contact_yet', name: 'New Pupil' }),
        ...NOTHING_RECORDED,
      });
      // A child with a Contact row is still named by its Contact id only.
      if (real[0]!.studentId !== real[0]!.contactId) {
        expectError(await t.request('GET', `/api/parent/children/${real[0]!.studentId}/overview`, { token: parent }), 403, 'FORBIDDEN');
      }
    } finally {
      spy.mockRestore();
    }
  });

  it('a staff Contact (isContact, CONTACT_STAFF) gets 403, whatever role the token claims', async () => {
    for (const role of ['TEACHER', 'PARENT'] as const) {
      const staffContact = await mintToken(
        t.config.AUTH_SECRET,
        { sub: 'c_demo_staff_contact', institutionId: 'inst_demo', role, contactId: 'c_demo_staff_contact', isContact: true, contactType: 'CONTACT_STAFF' },
        t.clock.now(),
      );
      expectError(await t.request('GET', '/api/parent/children', { token: staffContact }), 403, 'FORBIDDEN');
      expectError(await t.request('GET', `/api/parent/children/${DEMO_STUDENT_ID}/overview`, { token: staffContact }), 403, 'FORBIDDEN');
    }
  });
});

describe('GET /api/parent/children', () => {
  it('lists both children with the fields of 4.6 and institutionId, read from the CRM on every call', async () => {
    t.crmSim.resetRecords();
    const res = await t.request('GET', '/api/parent/children', { token: parent });
    expect(res.status).toBe(200);
    expect(res.body.error).toBeNull();
    const children = res.body.data.children;
    expect(children.map((c: any) => c.contactId).sort()).toEqual([DEMO_STUDENT_ID, DEMO_SIBLING_ID].sort());
    expect(Object.keys(children[0]).sort()).toEqual(
      ['class', 'contactId', 'email', 'institutionId', 'isPrimary', 'name', 'photoUrl', 'relation', 'section', 'status', 'studentCode', 'studentId'].sort(),
    );
    expect(children[0].institutionId).toBe('inst_demo');
    await t.request('GET', '/api/parent/children', { token: parent });
    const calls = t.crmSim.requests.filter((r) => r.path === `/api/lms/parent/${DEMO_PARENT_ID}/children`);
    expect(calls).toHaveLength(2);
  });

  it('a CRM failure is 500 INTERNAL_ERROR', async () => {
    t.crmSim.setFault('error500');
    try {
      expectError(await t.request('GET', '/api/parent/children', { token: parent }), 500, 'INTERNAL_ERROR');
      expectError(await t.request('GET', `/api/parent/children/${DEMO_STUDENT_ID}/overview`, { token: parent }), 500, 'INTERNAL_ERROR');
    } finally {
      t.crmSim.setFault(null);
    }
  });
});

describe('GET /api/parent/children/{childId}/overview', () => {
  it('refuses a child who is not the caller’s (403), also one of another institution’s parent', async () => {
    expectError(await t.request('GET', `/api/parent/children/${DEMO_UNRELATED_STUDENT_ID}/overview`, { token: parent }), 403, 'FORBIDDEN');
    const northParent = await t.token({ role: 'PARENT', id: NORTH_PARENT_ID, institutionId: 'inst_north' });
    expectError(await t.request('GET', `/api/parent/children/${DEMO_STUDENT_ID}/overview`, { token: northParent }), 403, 'FORBIDDEN');
  });

  it('a child with no data gets the child block, empty lists and zero counts', async () => {
    const res = await t.request('GET', `/api/parent/children/${DEMO_SIBLING_ID}/overview`, { token: parent });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      child: expect.objectContaining({ contactId: DEMO_SIBLING_ID, studentId: expect.any(String) }),
      ...NOTHING_RECORDED,
    });
  });

  /** A course with `graded` graded and `open` future assignments for the child. */
  async function courseWithWork(childId: string, graded: number, open: number, status: 'ACTIVE' | 'DROPPED' = 'ACTIVE') {
    const course = await createCourse(t, { title: `Course ${newId().slice(-4)}`, passingScore: 60, estimatedDuration: 90 });
    const e = await enroll(t, { courseId: course.id, studentId: childId, status, progress: 40, finalScore: 75 });
    const now = t.clock.now();
    for (let i = 0; i < graded + open; i++) {
      const lesson = await createLesson(t, { courseId: course.id, type: 'ASSIGNMENT', order: i });
      const isGraded = i < graded;
      await t.db.insert(assignments).values({
        institutionId: 'inst_demo',
        id: lesson.id,
        courseId: course.id,
        title: `Work ${i}`,
        instructions: '',
        maxScore: 20,
        passingScore: 12,
        dueDate: new Date(now.getTime() + (isGraded ? -DAY : (i + 1) * DAY)),
        createdAt: now,
        updatedAt: now,
      });
      if (isGraded) {
        await t.db.insert(submissions).values({
          institutionId: 'inst_demo',
          id: newId(),
          assignmentId: lesson.id,
          enrollmentId: e.id,
          studentId: childId,
          textContent: 'x',
          isLate: false,
          status: 'GRADED',
          score: 10 + i,
          instructorScore: 10 + i,
          gradedAt: new Date(now.getTime() - (graded - i) * 60_000),
          submittedAt: now,
          createdAt: now,
          updatedAt: now,
        });
      }
    }
    return { course, enrollment: e };
  }

  it('courses, the last 10 grades, 5 upcoming unsubmitted assignments of ACTIVE enrollments, certificates', async () => {
    const child = DEMO_STUDENT_ID;
    const a = await courseWithWork(child, 12, 3);
    await courseWithWork(child, 0, 4);
    await courseWithWork(child, 0, 2, 'DROPPED');
    // One future assignment already submitted: not upcoming.
    const submittedLesson = await createLesson(t, { courseId: a.course.id, type: 'ASSIGNMENT', order: 99 });
    const now = t.clock.now();
    await t.db.insert(assignments).values({
      institutionId: 'inst_demo',
      id: submittedLesson.id,
      courseId: a.course.id,
      title: 'Done early',
      instructions: '',
      maxScore: 10,
      dueDate: new Date(now.getTime() + DAY / 2),
      createdAt: now,
      updatedAt: now,
    });
    await t.db.insert(submissions).values({
      institutionId: 'inst_demo',
      id: newId(),
      assignmentId: submittedLesson.id,
      enrollmentId: a.enrollment.id,
      studentId: child,
      isLate: false,
      submittedAt: now,
      createdAt: now,
      updatedAt: now,
    });
    await t.db.insert(certificates).values({
      institutionId: 'inst_demo',
      id: newId(),
      courseId: a.course.id,
      enrollmentId: a.enrollment.id,
      studentId: child,
      courseTitle: a.course.title,
      certificateNumber: 'CERT-1',
      verificationCode: 'VERIFY1',
      issuedAt: now,
    } as never);

    const res = await t.request('GET', `/api/parent/children/${child}/overview`, { token: parent });
    expect(res.status, res.raw).toBe(200);
    const d = res.body.data;
    expect(d.courses).toHaveLength(3);
    expect(d.courses.find((c: any) => c.courseId === a.course.id)).toMatchObject({
      enrollmentId: a.enrollment.id,
      courseTitle: a.course.title,
      progress: 40,
      status: 'ACTIVE',
      finalScore: 75,
      passed: true,
      totalLessons: 16,
      estimatedDuration: 90,
    });
    expect(d.recentGrades).toHaveLength(10);
    expect(d.recentGrades[0]).toMatchObject({
      assignmentName: 'Work 11',
      score: 21,
      maxScore: 20,
      passingScore: 12,
      percentage: 105,
      passed: true,
      status: 'GRADED',
      courseTitle: a.course.title,
    });
    expect(d.recentGrades[9]).toMatchObject({ assignmentName: 'Work 2', score: 12, percentage: 60, passed: true });
    expect(d.upcomingAssignments).toHaveLength(5);
    const dues = d.upcomingAssignments.map((u: any) => u.dueDate);
    expect([...dues].sort()).toEqual(dues);
    expect(d.upcomingAssignments.map((u: any) => u.title)).not.toContain('Done early');
    expect(d.upcomingAssignments[0]).toEqual({
      assignmentId: expect.any(String),
      title: expect.any(String),
      courseId: expect.any(String),
      courseTitle: expect.any(String),
      dueDate: expect.any(String),
      maxScore: 20,
    });
    expect(d.certificates).toEqual([
      { id: expect.any(String), certificateNumber: 'CERT-1', verificationCode: 'VERIFY1', courseTitle: a.course.title, issuedAt: now.toISOString(), expiresAt: null, pdfUrl: null },
    ]);
  });

  it('live classes: attended and missed over COMPLETED sessions of this calendar month in the institution’s zone; at most 5 upcoming', async () => {
    const admin = await t.token({ role: 'ADMIN', id: 'u_demo_admin' });
    expect((await t.request('PATCH', '/api/settings', { token: admin, body: { timezone: 'America/New_York' } })).status).toBe(200);
    const child = DEMO_SIBLING_ID;
    const course = await createCourse(t, { title: 'Live biology' });
    await enroll(t, { courseId: course.id, studentId: child });
    t.clock.set('2026-03-15T12:00:00.000Z');
    const now = t.clock.now();
    const session = (scheduledAt: string, status: 'SCHEDULED' | 'COMPLETED') => ({
      institutionId: 'inst_demo',
      id: newId(),
      courseId: course.id,
      title: `Class ${scheduledAt}`,
      scheduledAt: new Date(scheduledAt),
      durationMinutes: 45,
      hostId: DEMO_TEACHER_ID,
      createdBy: DEMO_TEACHER_ID,
      status,
      createdAt: now,
      updatedAt: now,
    });
    const attended = session('2026-03-02T15:00:00.000Z', 'COMPLETED');
    const marked = session('2026-03-10T15:00:00.000Z', 'COMPLETED');
    const missed = session('2026-03-12T15:00:00.000Z', 'COMPLETED');
    // Held and ended on 1 March, before the child enrolled (2 March): not missed.
    const beforeEnrolling = session('2026-03-01T12:00:00.000Z', 'COMPLETED');
    // 22:00 on 28 February in New York: last month there, though March in UTC.
    const lastMonth = session('2026-03-01T03:00:00.000Z', 'COMPLETED');
    const future = [1, 2, 3, 4, 5, 6].map((d) => session(`2026-03-${String(15 + d).padStart(2, '0')}T15:00:00.000Z`, 'SCHEDULED'));
    await t.db.insert(liveSessions).values([attended, marked, missed, beforeEnrolling, lastMonth, ...future] as never);
    await t.db.insert(liveSessionParticipants).values([
      { institutionId: 'inst_demo', id: newId(), sessionId: attended.id, personId: child, joinCount: 1, firstJoinedAt: now, createdAt: now, updatedAt: now },
      { institutionId: 'inst_demo', id: newId(), sessionId: marked.id, personId: child, joinCount: 0, mark: 'PRESENT', createdAt: now, updatedAt: now },
      { institutionId: 'inst_demo', id: newId(), sessionId: lastMonth.id, personId: child, joinCount: 1, createdAt: now, updatedAt: now },
    ] as never);
    try {
      const res = await t.request('GET', `/api/parent/children/${child}/overview`, { token: await t.token({ role: 'PARENT', id: DEMO_PARENT_ID }) });
      expect(res.status, res.raw).toBe(200);
      const live = res.body.data.liveClasses;
      expect(live.attendedThisMonth).toBe(2);
      expect(live.missedThisMonth).toBe(1);
      expect(live.upcoming).toHaveLength(5);
      expect(live.upcoming[0]).toEqual({
        sessionId: future[0]!.id,
        title: future[0]!.title,
        courseId: course.id,
        courseTitle: 'Live biology',
        scheduledAt: '2026-03-16T15:00:00.000Z',
        durationMinutes: 45,
      });
    } finally {
      t.clock.set('2026-03-02T09:00:00.000Z');
      await t.request('PATCH', '/api/settings', { token: admin, body: { timezone: 'UTC' } });
    }
  });

  it('runs a fixed number of queries, whatever the number of courses and grades', async () => {
    const count = async (childId: string) => {
      const session = (t.db as any).session;
      const original = session.prepareQuery;
      let n = 0;
      session.prepareQuery = function (...args: unknown[]) {
        n++;
        return original.apply(this, args);
      };
      try {
        expect((await t.request('GET', `/api/parent/children/${childId}/overview`, { token: parent })).status).toBe(200);
      } finally {
        session.prepareQuery = original;
      }
      return n;
    };
    const before = await count(DEMO_SIBLING_ID);
    await courseWithWork(DEMO_SIBLING_ID, 4, 2);
    await courseWithWork(DEMO_SIBLING_ID, 3, 1);
    expect(await count(DEMO_SIBLING_ID)).toBe(before);
    expect(before).toBeLessThan(16);
  });

  it('recentGrades: the final score wins over the instructor’s and the peer average; unknown scores and pass marks are null, not 0 or true', async () => {
    const child = DEMO_SIBLING_ID;
    const course = await createCourse(t, { title: 'Grading rules' });
    const e = await enroll(t, { courseId: course.id, studentId: child });
    const now = t.clock.now();
    const grade = async (
      title: string,
      scores: { score: number | null; instructorScore: number | null; peerScoreAverage: number | null },
      passingScore: number | null,
      minutesAgo: number,
    ) => {
      const lesson = await createLesson(t, { courseId: course.id, type: 'ASSIGNMENT' });
      await t.db.insert(assignments).values({
        institutionId: 'inst_demo',
        id: lesson.id,
        courseId: course.id,
        title,
        instructions: '',
        maxScore: 20,
        passingScore,
        dueDate: now,
        createdAt: now,
        updatedAt: now,
      });
      await t.db.insert(submissions).values({
        institutionId: 'inst_demo',
        id: newId(),
        assignmentId: lesson.id,
        enrollmentId: e.id,
        studentId: child,
        isLate: false,
        status: 'GRADED',
        ...scores,
        gradedAt: new Date(now.getTime() + 3_600_000 - minutesAgo * 60_000),
        submittedAt: now,
        createdAt: now,
        updatedAt: now,
      });
    };
    // The final score (18) differs from the instructor's (9) and the peer average (5): 18 counts.
    await grade('Final wins', { score: 18, instructorScore: 9, peerScoreAverage: 5 }, 10, 1);
    // No final score: the instructor's, then the peer average.
    await grade('Instructor', { score: null, instructorScore: 9, peerScoreAverage: 5 }, 10, 2);
    await grade('Peer', { score: null, instructorScore: null, peerScoreAverage: 11 }, 10, 3);
    // Nothing known: null score, percentage and passed.
    await grade('Unknown', { score: null, instructorScore: null, peerScoreAverage: null }, 10, 4);
    // No passing score: passed is unknown, not true.
    await grade('No pass mark', { score: 4, instructorScore: 4, peerScoreAverage: null }, null, 5);

    const d = expectOk(await t.request('GET', `/api/parent/children/${child}/overview`, { token: parent }));
    const byName = new Map<string, any>(d.recentGrades.map((g: any) => [g.assignmentName, g]));
    expect(byName.get('Final wins')).toMatchObject({ score: 18, maxScore: 20, passingScore: 10, percentage: 90, passed: true });
    expect(byName.get('Instructor')).toMatchObject({ score: 9, percentage: 45, passed: false });
    expect(byName.get('Peer')).toMatchObject({ score: 11, percentage: 55, passed: true });
    expect(byName.get('Unknown')).toMatchObject({ score: null, percentage: null, passed: null });
    expect(byName.get('No pass mark')).toMatchObject({ score: 4, passingScore: null, percentage: 20, passed: null });
  });
});

describe('an archived or unpublished course (the enrollment still ACTIVE)', () => {
  it('feeds neither upcomingAssignments nor liveClasses.upcoming; its classes still count as attended (rule 4)', async () => {
    const child = DEMO_SIBLING_ID;
    const now = t.clock.now();
    const read = async () => expectOk(await t.request('GET', `/api/parent/children/${child}/overview`, { token: parent }));
    const before = await read();
    /** A course of `status` with the child ACTIVE in it, one unsubmitted assignment and one live class `minutes` from now, and one class attended earlier today. */
    const courseOf = async (status: 'PUBLISHED' | 'ARCHIVED' | 'DRAFT', minutes: number) => {
      const course = await createCourse(t, { title: `${status} course`, status });
      await enroll(t, { courseId: course.id, studentId: child, enrolledAt: new Date(now.getTime() - DAY) });
      const lesson = await createLesson(t, { courseId: course.id, type: 'ASSIGNMENT' });
      await t.db.insert(assignments).values({
        institutionId: 'inst_demo',
        id: lesson.id,
        courseId: course.id,
        title: `${status} work`,
        instructions: '',
        maxScore: 10,
        dueDate: new Date(now.getTime() + minutes * 60_000),
        createdAt: now,
        updatedAt: now,
      });
      const session = (title: string, scheduledAt: Date, sessionStatus: 'SCHEDULED' | 'COMPLETED') => ({
        institutionId: 'inst_demo',
        id: newId(),
        courseId: course.id,
        title,
        scheduledAt,
        durationMinutes: 30,
        hostId: DEMO_TEACHER_ID,
        createdBy: DEMO_TEACHER_ID,
        status: sessionStatus,
        createdAt: now,
        updatedAt: now,
      });
      const held = session(`${status} class held`, new Date(now.getTime() - 2 * 3_600_000), 'COMPLETED');
      await t.db.insert(liveSessions).values([session(`${status} class`, new Date(now.getTime() + minutes * 60_000), 'SCHEDULED'), held] as never);
      await t.db
        .insert(liveSessionParticipants)
        .values({ institutionId: 'inst_demo', id: newId(), sessionId: held.id, personId: child, joinCount: 1, firstJoinedAt: now, createdAt: now, updatedAt: now } as never);
      return course;
    };
    // The archived and unpublished ones come first in time: they would crowd the published one out.
    const archived = await courseOf('ARCHIVED', 10);
    const draft = await courseOf('DRAFT', 20);
    const published = await courseOf('PUBLISHED', 30);

    const d = await read();
    expect(d.courses.filter((c: any) => [archived.id, draft.id, published.id].includes(c.courseId)).map((c: any) => c.status)).toEqual(['ACTIVE', 'ACTIVE', 'ACTIVE']);
    expect(d.upcomingAssignments[0]).toEqual({
      assignmentId: expect.any(String),
      title: 'PUBLISHED work',
      courseId: published.id,
      courseTitle: 'PUBLISHED course',
      dueDate: new Date(now.getTime() + 30 * 60_000).toISOString(),
      maxScore: 10,
    });
    expect(d.upcomingAssignments.map((u: any) => u.courseId)).not.toContain(archived.id);
    expect(d.upcomingAssignments.map((u: any) => u.courseId)).not.toContain(draft.id);
    expect(d.liveClasses.upcoming[0]).toMatchObject({ title: 'PUBLISHED class', courseId: published.id, courseTitle: 'PUBLISHED course' });
    expect(d.liveClasses.upcoming.map((s: any) => s.courseId)).not.toContain(archived.id);
    expect(d.liveClasses.upcoming.map((s: any) => s.courseId)).not.toContain(draft.id);
    // The month's counts keep every course: the three classes attended today count.
    expect(d.liveClasses.attendedThisMonth).toBe(before.liveClasses.attendedThisMonth + 3);
    expect(d.liveClasses.missedThisMonth).toBe(before.liveClasses.missedThisMonth);
  });
});
