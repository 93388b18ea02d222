/**
 * The audit log (issue 14.4; spec 4.9 `GET /api/audit-log`): every staff write of this tree
 * writes one row (actor, action, target, changed fields before and after, request id) in the
 * transaction of the change; a failed write leaves none, and a row that cannot be written fails
 * the change; the table is append-only; the list is ADMIN-only, filtered, paginated newest
 * first, and shows one institution's rows only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, createLesson, enroll } from '../helpers/factories.js';
import { expectError, expectOk } from '../helpers/expect.js';
import { captionForm } from '../helpers/routes.js';
import { auditLog, type AuditRow } from '../../src/modules/audit/audit.tables.js';
import { courses } from '../../src/modules/courses/courses.tables.js';
import { DEMO_ADMIN_ID, DEMO_TEACHER2_ID, DEMO_TEACHER_ID, NORTH_ADMIN_ID } from '../../src/dev/crm-sim/fixtures.js';

const stu = (n: number) => `c_demo_stu_${String(n).padStart(2, '0')}`;

let t: TestApp;
let teacher: string;
let teacher2: string;
let admin: string;
let northAdmin: string;

beforeAll(async () => {
  t = await createTestApp();
  teacher = await t.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
  teacher2 = await t.token({ role: 'TEACHER', id: DEMO_TEACHER2_ID });
  admin = await t.token({ role: 'ADMIN', id: DEMO_ADMIN_ID });
  northAdmin = await t.token({ role: 'ADMIN', id: NORTH_ADMIN_ID, institutionId: 'inst_north' });
});
afterAll(async () => t.close());

const rowsFor = (targetId: string): Promise<AuditRow[]> => t.db.select().from(auditLog).where(eq(auditLog.targetId, targetId)).orderBy(auditLog.id);
const countAll = async () => (await t.db.select({ n: sql<number>`count(*)::int` }).from(auditLog))[0]!.n;

/** Sends a request with its own request id and checks the answer's `x-request-id` echoes it. */
async function send(method: string, url: string, token: string, body?: unknown, status = 200) {
  const requestId = `req-${Math.random().toString(36).slice(2, 10)}`;
  const res = await t.request(method, url, { token, body, headers: { 'x-request-id': requestId } });
  const data = expectOk(res, status);
  expect(res.headers['x-request-id']).toBe(requestId);
  return { data, requestId };
}

describe('every staff write writes its audit row', () => {
  it('courses, modules and lessons: create, update, publish, duplicate, delete, archive', async () => {
    const created = await send('POST', '/api/courses', teacher, { title: 'Audited', dripMode: 'NONE' }, 201);
    const courseId = created.data.id as string;
    const updated = await send('PATCH', `/api/courses/${courseId}`, teacher, { title: 'Audited v2', dripMode: 'NONE', description: 'd'.repeat(300) });
    // An update that changes nothing (the values already stored, or no field) writes no row.
    await send('PATCH', `/api/courses/${courseId}`, teacher, { title: 'Audited v2', dripMode: 'NONE' });
    await send('PATCH', `/api/courses/${courseId}`, teacher, {});
    const published = await send('POST', `/api/courses/${courseId}/publish`, teacher, { status: 'PUBLISHED' });
    const mod = await send('POST', `/api/courses/${courseId}/modules`, teacher, { title: 'M1' }, 201);
    await send('PATCH', `/api/modules/${mod.data.id}`, teacher, { title: 'M1 renamed', order: 0 });
    await send('PATCH', `/api/modules/${mod.data.id}`, teacher, { title: 'M1 renamed' });
    const lesson = await send('POST', `/api/courses/${courseId}/lessons`, teacher, { title: 'L1', type: 'TEXT', moduleId: mod.data.id, content: 'short' }, 201);
    await send('PATCH', `/api/lessons/${lesson.data.id}`, teacher, {
      content: 'c'.repeat(500),
      blocks: Array.from({ length: 40 }, (_, i) => ({ id: `b${i}`, type: 'text', text: 'x'.repeat(40) })),
    });
    const copy = await send('POST', `/api/courses/${courseId}/duplicate`, teacher2, undefined, 201);
    await send('DELETE', `/api/lessons/${lesson.data.id}`, teacher);
    await send('DELETE', `/api/modules/${mod.data.id}`, teacher);
    const archived = await send('DELETE', `/api/courses/${courseId}`, admin);

    const course = await rowsFor(courseId);
    expect(course.map((r) => [r.action, r.actorId, r.actorRole, r.targetType])).toEqual([
      ['course.create', DEMO_TEACHER_ID, 'TEACHER', 'course'],
      ['course.update', DEMO_TEACHER_ID, 'TEACHER', 'course'],
      ['course.publish', DEMO_TEACHER_ID, 'TEACHER', 'course'],
      ['course.archive', DEMO_ADMIN_ID, 'ADMIN', 'course'],
    ]);
    expect(course.map((r) => r.requestId)).toEqual([created.requestId, updated.requestId, published.requestId, archived.requestId]);
    expect(course[0]).toMatchObject({ before: null, after: { title: 'Audited', status: 'DRAFT', ownerId: DEMO_TEACHER_ID } });
    // Only the changed fields (dripMode was sent unchanged); long text is cut.
    expect(course[1]!.before).toEqual({ title: 'Audited', description: null });
    expect(course[1]!.after).toEqual({ title: 'Audited v2', description: `${'d'.repeat(200)}… (300 characters)` });
    expect(course[2]).toMatchObject({ before: { status: 'DRAFT', publishedAt: null }, after: { status: 'PUBLISHED', publishedAt: t.clock.now().toISOString() } });
    expect(course[3]).toMatchObject({ before: { status: 'PUBLISHED', archivedAt: null }, after: { status: 'ARCHIVED' } });

    const [dup] = await rowsFor(copy.data.id);
    expect(dup).toMatchObject({ action: 'course.duplicate', actorId: DEMO_TEACHER2_ID, after: { sourceCourseId: courseId, title: 'Audited v2 (copy)', modules: 1, lessons: 1 } });

    expect((await rowsFor(mod.data.id)).map((r) => [r.action, r.before, r.after])).toEqual([
      ['module.create', null, { courseId, title: 'M1', order: 0 }],
      ['module.update', { title: 'M1' }, { title: 'M1 renamed' }],
      ['module.delete', { courseId, title: 'M1 renamed', order: 0 }, null],
    ]);
    const lessonRows = await rowsFor(lesson.data.id);
    expect(lessonRows.map((r) => r.action)).toEqual(['lesson.create', 'lesson.update', 'lesson.delete']);
    expect(lessonRows[1]!.before).toEqual({ content: 'short', blocks: [] });
    expect(lessonRows[1]!.after).toEqual({ content: `${'c'.repeat(200)}… (500 characters)`, blocks: '[40 items]' });
  });

  it('enrollments (bulk enroll, staff unenroll; not a student leaving), settings, captions, categories and grading', async () => {
    const course = await createCourse(t, { ownerId: DEMO_TEACHER_ID });
    const bulk = await send('POST', `/api/courses/${course.id}/enrollments`, teacher, { studentIds: [stu(1), stu(2), stu(3)] });
    const enrolled = bulk.data.enrolled as Array<{ id: string; studentId: string }>;
    for (const e of enrolled) {
      expect(await rowsFor(e.id)).toEqual([
        expect.objectContaining({
          action: 'enrollment.create',
          targetType: 'enrollment',
          requestId: bulk.requestId,
          after: { courseId: course.id, studentId: e.studentId, status: 'ACTIVE' },
        }),
      ]);
    }
    await send('DELETE', `/api/courses/${course.id}/enrollments/${stu(1)}`, teacher);
    await send('DELETE', `/api/courses/${course.id}/enrollments/${stu(2)}`, await t.token({ role: 'STUDENT', id: stu(2) }));
    const byId = new Map(enrolled.map((e) => [e.studentId, e.id]));
    expect((await rowsFor(byId.get(stu(1))!)).map((r) => [r.action, r.before, r.after])).toEqual([
      ['enrollment.create', null, { courseId: course.id, studentId: stu(1), status: 'ACTIVE' }],
      ['enrollment.drop', { status: 'ACTIVE' }, { courseId: course.id, studentId: stu(1), status: 'DROPPED' }],
    ]);
    expect((await rowsFor(byId.get(stu(2))!)).map((r) => r.action)).toEqual(['enrollment.create']);

    await send('PATCH', '/api/settings', admin, { feeGatingEnabled: true, timezone: 'Europe/Paris' });
    await send('PATCH', '/api/settings', admin, { feeGatingEnabled: false, timezone: 'Europe/Paris' });
    // Sending the values already set changes nothing and writes no row.
    await send('PATCH', '/api/settings', admin, { feeGatingEnabled: false, timezone: 'Europe/Paris' });
    expect((await rowsFor('inst_demo')).map((r) => [r.action, r.targetType, r.before, r.after])).toEqual([
      ['settings.update', 'institution', { feeGatingEnabled: false, timezone: 'UTC' }, { feeGatingEnabled: true, timezone: 'Europe/Paris' }],
      ['settings.update', 'institution', { feeGatingEnabled: true }, { feeGatingEnabled: false }],
    ]);

    const lesson = await createLesson(t, { courseId: course.id, type: 'VIDEO' });
    const form = captionForm();
    const up = await t.app.inject({
      method: 'POST',
      url: `/api/lessons/${lesson.id}/captions`,
      headers: { ...form.headers, authorization: `Bearer ${teacher}` },
      payload: form.payload,
    });
    expect(up.statusCode, up.body).toBe(201);
    const captionId = up.json().data.id as string;
    await send('PATCH', `/api/lessons/${lesson.id}/captions/${captionId}`, teacher, { label: 'English (UK)' });
    await send('DELETE', `/api/lessons/${lesson.id}/captions/${captionId}`, teacher);
    expect((await rowsFor(captionId)).map((r) => [r.action, r.before, r.after])).toEqual([
      ['caption.create', null, { lessonId: lesson.id, blockId: null, language: 'en', label: 'English', isDefault: false }],
      ['caption.update', { label: 'English' }, { label: 'English (UK)' }],
      ['caption.delete', { lessonId: lesson.id, blockId: null, language: 'en', label: 'English (UK)', isDefault: false }, null],
    ]);

    const category = await send('POST', '/api/categories', teacher, { name: `Audit category ${Math.random()}` }, 201);
    expect((await rowsFor(category.data.id)).map((r) => r.action)).toEqual(['category.create']);

    const essay = await createLesson(t, { courseId: course.id, type: 'ASSIGNMENT', title: 'Essay' });
    await send('PUT', `/api/assignments/${essay.id}`, teacher, { title: 'Essay', instructions: 'Write', maxScore: 10, dueDate: '2099-01-01T00:00:00.000Z' });
    const submission = await send('POST', `/api/assignments/${essay.id}/submit`, await t.token({ role: 'STUDENT', id: stu(3) }), { textContent: 'My essay' }, 201);
    const graded = await send('POST', `/api/assignments/${essay.id}/grade`, teacher, { submissionId: submission.data.id, score: 8, feedback: 'Good' });
    expect(await rowsFor(submission.data.id)).toEqual([
      expect.objectContaining({
        action: 'submission.grade',
        targetType: 'submission',
        actorId: DEMO_TEACHER_ID,
        requestId: graded.requestId,
        before: { status: 'SUBMITTED', score: null, instructorScore: null, feedback: null, gradedBy: null },
        after: { status: 'GRADED', score: 8, instructorScore: 8, feedback: 'Good', gradedBy: DEMO_TEACHER_ID },
      }),
    ]);
  });
});

describe('live sessions, assignments and quizzes', () => {
  it('live sessions: create, start, attendance, recording start and stop, end; each with actor, target, before/after and request id', async () => {
    const course = await createCourse(t, { ownerId: DEMO_TEACHER_ID, title: 'Live audited' });
    await enroll(t, { courseId: course.id, studentId: stu(7) });
    const { data: session, requestId: created } = await send(
      'POST',
      '/api/live-sessions',
      teacher,
      { courseId: course.id, title: 'Audited class', scheduledAt: '2026-03-10T09:00:00Z', durationMinutes: 45 },
      201,
    );
    const { requestId: started } = await send('POST', `/api/live-sessions/${session.id}/start`, teacher);
    const { requestId: marked } = await send('POST', `/api/live-sessions/${session.id}/attendance`, teacher, { records: [{ studentId: stu(7), status: 'ABSENT' }] });
    const { requestId: remarked } = await send('POST', `/api/live-sessions/${session.id}/attendance`, teacher, { records: [{ studentId: stu(7), status: 'PRESENT' }] });
    const { requestId: recStart } = await send('POST', `/api/live-sessions/${session.id}/recording/start`, teacher);
    const { requestId: recStop } = await send('POST', `/api/live-sessions/${session.id}/recording/stop`, teacher);
    const { requestId: ended } = await send('POST', `/api/live-sessions/${session.id}/end`, teacher);
    // Ending again changes nothing and writes nothing.
    const { requestId: endedAgain } = await send('POST', `/api/live-sessions/${session.id}/end`, admin);

    const rows = await rowsFor(session.id);
    const byRequest = (requestId: string) => rows.filter((r) => r.requestId === requestId);
    const common = { actorId: DEMO_TEACHER_ID, actorRole: 'TEACHER', targetType: 'live_session', targetId: session.id };
    expect(byRequest(created)).toEqual([
      expect.objectContaining({
        ...common,
        action: 'live_session.create',
        before: null,
        after: { courseId: course.id, title: 'Audited class', scheduledAt: '2026-03-10T09:00:00.000Z', durationMinutes: 45, hostId: DEMO_TEACHER_ID },
      }),
    ]);
    expect(byRequest(started)).toEqual([
      expect.objectContaining({
        ...common,
        action: 'live_session.start',
        before: { status: 'SCHEDULED', startedAt: null, roomName: null },
        after: expect.objectContaining({ status: 'LIVE', roomName: expect.stringContaining(session.id) }),
      }),
    ]);
    expect(byRequest(marked)).toEqual([expect.objectContaining({ ...common, action: 'live_session.attendance', before: { marks: {} }, after: { marks: { [stu(7)]: 'ABSENT' } } })]);
    expect(byRequest(remarked)).toEqual([expect.objectContaining({ before: { marks: { [stu(7)]: 'ABSENT' } }, after: { marks: { [stu(7)]: 'PRESENT' } } })]);
    expect(byRequest(recStart)).toEqual([
      expect.objectContaining({
        ...common,
        action: 'live_session.recording_start',
        before: { recordingStatus: null, recordingStartedAt: null },
        after: { recordingStatus: 'RECORDING', recordingStartedAt: expect.any(String) },
      }),
    ]);
    expect(byRequest(recStop)).toEqual([
      expect.objectContaining({
        ...common,
        action: 'live_session.recording_stop',
        before: { recordingStatus: 'RECORDING', recordingStoppedAt: null },
        after: { recordingStatus: 'PROCESSING', recordingStoppedAt: expect.any(String) },
      }),
    ]);
    expect(byRequest(ended)).toEqual([
      expect.objectContaining({ ...common, action: 'live_session.end', before: { status: 'LIVE', endedAt: null }, after: expect.objectContaining({ status: 'COMPLETED' }) }),
    ]);
    expect(byRequest(endedAgain)).toEqual([]);
  });

  it('a recording start the recorder refuses (503) and a refused attendance mark leave no audit row', async () => {
    const course = await createCourse(t, { ownerId: DEMO_TEACHER_ID });
    const { data: session } = await send(
      'POST',
      '/api/live-sessions',
      teacher,
      { courseId: course.id, title: 'Fails', scheduledAt: '2026-03-10T09:00:00Z', durationMinutes: 30 },
      201,
    );
    await send('POST', `/api/live-sessions/${session.id}/start`, teacher);
    const before = (await rowsFor(session.id)).length;
    t.recorderSim.setFault('error500');
    try {
      expectError(await t.request('POST', `/api/live-sessions/${session.id}/recording/start`, { token: teacher }), 503, 'SERVICE_UNAVAILABLE');
    } finally {
      t.recorderSim.setFault(null);
    }
    expectError(
      await t.request('POST', `/api/live-sessions/${session.id}/attendance`, { token: teacher, body: { records: [{ studentId: stu(29), status: 'PRESENT' }] } }),
      400,
      'VALIDATION_ERROR',
    );
    expect((await rowsFor(session.id)).length).toBe(before);
  });

  it('PUT /api/assignments/{id} and PUT /api/quiz/{id}: create then update, with the changed fields; a refused PUT leaves no row', async () => {
    const course = await createCourse(t, { ownerId: DEMO_TEACHER_ID });
    const lesson = await createLesson(t, { courseId: course.id, type: 'ASSIGNMENT' });
    const body = { title: 'Essay', instructions: 'Write.', maxScore: 10, dueDate: '2026-04-01T00:00:00.000Z' };
    const { requestId: created } = await send('PUT', `/api/assignments/${lesson.id}`, teacher, body);
    const { requestId: updated } = await send('PUT', `/api/assignments/${lesson.id}`, teacher, {
      ...body,
      maxScore: 20,
      rubric: { title: 'Marks', criteria: [{ title: 'Clarity', description: 'Clear', maxPoints: 20, order: 1 }] },
    });
    expectError(await t.request('PUT', `/api/assignments/${lesson.id}`, { token: teacher2, body: { ...body, title: 'Not mine' } }), 403, 'FORBIDDEN');
    const assignmentRows = await rowsFor(lesson.id);
    expect(assignmentRows).toEqual([
      expect.objectContaining({
        actorId: DEMO_TEACHER_ID,
        action: 'assignment.create',
        targetType: 'assignment',
        requestId: created,
        before: null,
        after: expect.objectContaining({ title: 'Essay', maxScore: 10, dueDate: '2026-04-01T00:00:00.000Z' }),
      }),
      expect.objectContaining({
        action: 'assignment.update',
        requestId: updated,
        before: { maxScore: 10, rubric: null },
        after: { maxScore: 20, rubric: { title: 'Marks', criteria: [{ title: 'Clarity', maxPoints: 20 }] } },
      }),
    ]);

    const quizLesson = await createLesson(t, { courseId: course.id, type: 'QUIZ' });
    const quiz = {
      title: 'Check',
      passingScore: 50,
      questions: [{ type: 'TRUE_FALSE', prompt: 'Sky is blue.', correctAnswer: true, order: 0 }],
    };
    const { requestId: quizCreated } = await send('PUT', `/api/quiz/${quizLesson.id}`, teacher, quiz, 201);
    const { requestId: quizUpdated } = await send('PUT', `/api/quiz/${quizLesson.id}`, teacher, { ...quiz, passingScore: 80 });
    expectError(await t.request('PUT', `/api/quiz/${quizLesson.id}`, { token: teacher2, body: quiz }), 403, 'FORBIDDEN');
    expect(await rowsFor(quizLesson.id)).toEqual([
      expect.objectContaining({
        action: 'quiz.create',
        targetType: 'quiz',
        requestId: quizCreated,
        before: null,
        after: expect.objectContaining({ title: 'Check', passingScore: 50, questions: [expect.objectContaining({ prompt: 'Sky is blue.' })] }),
      }),
      expect.objectContaining({
        action: 'quiz.update',
        requestId: quizUpdated,
        before: expect.objectContaining({ passingScore: 50 }),
        after: expect.objectContaining({ passingScore: 80 }),
      }),
    ]);
  });
});

describe('same transaction as the change', () => {
  it('a refused or failing write leaves no audit row', async () => {
    const course = await createCourse(t, { ownerId: DEMO_TEACHER_ID, status: 'ARCHIVED' });
    const before = await countAll();
    expectError(await t.request('PATCH', `/api/courses/${course.id}`, { token: teacher2, body: { title: 'Not mine' } }), 403, 'FORBIDDEN');
    expectError(await t.request('POST', `/api/courses/${course.id}/enrollments`, { token: teacher, body: { studentIds: [stu(5)] } }), 409, 'CONFLICT');
    expectError(await t.request('PATCH', '/api/settings', { token: teacher, body: { locale: 'fr' } }), 403, 'FORBIDDEN');
    expect(await countAll()).toBe(before);
  });

  it('a change that fails at commit, after its audit row was written, leaves neither', async () => {
    const course = await createCourse(t, { ownerId: DEMO_TEACHER_ID, title: 'Kept title' });
    // A deferred trigger fails the transaction at COMMIT, after the update and the audit insert ran.
    await t.db.execute(
      sql.raw(`create function fail_on_boom() returns trigger language plpgsql as $$
      begin if new.title = 'boom' then raise exception 'boom refused at commit'; end if; return null; end $$`),
    );
    await t.db.execute(
      sql.raw(`create constraint trigger courses_fail_on_boom after update on courses deferrable initially deferred for each row execute function fail_on_boom()`),
    );
    try {
      const before = await countAll();
      expectError(await t.request('PATCH', `/api/courses/${course.id}`, { token: teacher, body: { title: 'boom' } }), 500, 'INTERNAL_ERROR');
      expect(await countAll()).toBe(before);
      expect((await t.db.select().from(courses).where(eq(courses.id, course.id)))[0]!.title).toBe('Kept title');
      // The same write without the failure commits both.
      expectOk(await t.request('PATCH', `/api/courses/${course.id}`, { token: teacher, body: { title: 'fine' } }));
      expect((await rowsFor(course.id)).map((r) => r.after)).toEqual([{ title: 'fine' }]);
    } finally {
      await t.db.execute(sql.raw(`drop trigger courses_fail_on_boom on courses`));
      await t.db.execute(sql.raw(`drop function fail_on_boom()`));
    }
  });

  it('an audit row that cannot be written fails the change with it', async () => {
    const course = await createCourse(t, { ownerId: DEMO_TEACHER_ID });
    await t.db.execute(
      sql.raw(`create function refuse_module_audit() returns trigger language plpgsql as $$
      begin if new.action = 'module.create' then raise exception 'audit refused'; end if; return new; end $$`),
    );
    await t.db.execute(sql.raw(`create trigger audit_refuse before insert on audit_log for each row execute function refuse_module_audit()`));
    try {
      expectError(await t.request('POST', `/api/courses/${course.id}/modules`, { token: teacher, body: { title: 'Never' } }), 500, 'INTERNAL_ERROR');
      expect(expectOk(await t.request('GET', `/api/courses/${course.id}/modules`, { token: teacher }))).toEqual([]);
    } finally {
      await t.db.execute(sql.raw(`drop trigger audit_refuse on audit_log`));
      await t.db.execute(sql.raw(`drop function refuse_module_audit()`));
    }
  });
});

describe('append-only', () => {
  it('the database refuses UPDATE, DELETE and TRUNCATE; no route writes the log', async () => {
    const course = await createCourse(t, { ownerId: DEMO_TEACHER_ID, status: 'DRAFT', publishedAt: null });
    expectOk(await t.request('POST', `/api/courses/${course.id}/publish`, { token: teacher, body: { status: 'PUBLISHED' } }));
    const [row] = await rowsFor(course.id);
    for (const statement of [sql`update audit_log set action = 'x' where id = ${row!.id}`, sql`delete from audit_log where id = ${row!.id}`, sql`truncate audit_log`]) {
      await expect(t.db.execute(statement)).rejects.toThrow();
    }
    expect(await rowsFor(course.id)).toEqual([row]);

    const doc = JSON.parse((await t.request('GET', '/openapi.json')).raw) as { paths: Record<string, Record<string, unknown>> };
    const auditPaths = Object.entries(doc.paths).filter(([path]) => path.includes('audit'));
    expect(auditPaths.map(([path, ops]) => [path, Object.keys(ops).filter((m) => m !== 'parameters')])).toEqual([['/api/audit-log', ['get']]]);
    for (const method of ['POST', 'PATCH', 'PUT', 'DELETE']) expect((await t.request(method, '/api/audit-log', { token: admin, body: {} })).status).toBe(405);
  });
});

describe('GET /api/audit-log', () => {
  it('is for ADMIN only', async () => {
    expectError(await t.request('GET', '/api/audit-log', { token: teacher }), 403, 'FORBIDDEN');
    expectError(await t.request('GET', '/api/audit-log', { token: await t.token({ role: 'STUDENT', id: stu(1) }) }), 403, 'FORBIDDEN');
    expectError(await t.request('GET', '/api/audit-log', { token: await t.token({ role: 'TEACHER', id: DEMO_TEACHER_ID, permissions: ['canManageCourses'] }) }), 403, 'FORBIDDEN');
    expectError(await t.request('GET', '/api/audit-log'), 401, 'AUTH_REQUIRED');
  });

  it('filters by actor, action, target and date range; newest first; paginated', async () => {
    const started = t.clock.now();
    try {
      t.clock.set(new Date('2030-01-01T10:00:00.000Z'));
      // Tokens of the moved clock (the suite's ones would be expired by then).
      const teacher = await t.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
      const admin = await t.token({ role: 'ADMIN', id: DEMO_ADMIN_ID });
      const a = expectOk(await t.request('POST', '/api/courses', { token: teacher, body: { title: 'Filter A' } }), 201);
      t.clock.set(new Date('2030-01-02T10:00:00.000Z'));
      expectOk(await t.request('POST', `/api/courses/${a.id}/publish`, { token: teacher, body: { status: 'PUBLISHED' } }));
      t.clock.set(new Date('2030-01-03T10:00:00.000Z'));
      expectOk(await t.request('PATCH', `/api/courses/${a.id}`, { token: admin, body: { title: 'Filter A2' } }));
      const m = expectOk(await t.request('POST', `/api/courses/${a.id}/modules`, { token: admin, body: { title: 'FM' } }), 201);

      const list = async (query: Record<string, string | number>) => {
        const res = await t.request('GET', '/api/audit-log', { token: admin, query });
        return { rows: expectOk(res) as Array<{ action: string; targetId: string; actorId: string; createdAt: string }>, meta: res.body.meta };
      };
      const forA = await list({ targetType: 'course', targetId: a.id });
      expect(forA.rows.map((r) => r.action)).toEqual(['course.update', 'course.publish', 'course.create']);
      expect(forA.meta).toEqual({ total: 3, page: 1, perPage: 50, totalPages: 1 });
      expect(forA.rows[0]).toMatchObject({
        actorId: DEMO_ADMIN_ID,
        actorRole: 'ADMIN',
        before: { title: 'Filter A' },
        after: { title: 'Filter A2' },
        createdAt: '2030-01-03T10:00:00.000Z',
      });

      const teacherOnA = await list({ actorId: DEMO_TEACHER_ID, from: '2030-01-01T00:00:00Z', to: '2030-01-04T00:00:00Z' });
      expect(teacherOnA.rows.map((r) => r.action)).toEqual(['course.publish', 'course.create']);
      expect((await list({ action: 'course.publish', from: '2030-01-02T10:00:00.000Z' })).rows.map((r) => r.targetId)).toEqual([a.id]);
      // `to` is exclusive, `from` inclusive.
      expect((await list({ from: '2030-01-01T10:00:00.000Z', to: '2030-01-02T10:00:00.000Z' })).rows.map((r) => r.action)).toEqual(['course.create']);
      // Bare dates are whole days (UTC): from its start, to its end.
      const jan2 = await list({ from: '2030-01-02', to: '2030-01-02' });
      expect(jan2.rows.length).toBeGreaterThan(0);
      expect(jan2.rows).toEqual((await list({ from: '2030-01-02T00:00:00Z', to: '2030-01-03T00:00:00Z' })).rows);
      expect((await list({ from: '2030-01-01', to: '2030-01-03' })).meta.total).toBe(4);
      // A time on the same day as a bare `to` date is a valid range: from then to the day's end.
      expect((await list({ from: '2030-01-02T09:00:00Z', to: '2030-01-02' })).rows.map((r) => r.action)).toEqual(['course.publish']);
      // Issue 14's words for the filters (actor, target, a date range) work as their ids.
      expect(await list({ actor: DEMO_TEACHER_ID, startDate: '2030-01-01T00:00:00Z', endDate: '2030-01-04T00:00:00Z' })).toEqual(teacherOnA);
      expect((await list({ target: a.id })).rows.map((r) => r.action)).toEqual(['course.update', 'course.publish', 'course.create']);
      // A target type as the action: all its actions.
      expect((await list({ action: 'module', from: '2030-01-03T00:00:00Z' })).rows.map((r) => [r.action, r.targetId])).toEqual([['module.create', m.id]]);

      const page = await list({ from: '2030-01-01T00:00:00Z', perPage: 2, page: 2 });
      expect(page.meta).toEqual({ total: 4, page: 2, perPage: 2, totalPages: 2 });
      expect(page.rows.map((r) => r.action)).toEqual(['course.publish', 'course.create']);

      const bad: Array<Record<string, string | number>> = [
        { from: '2030-01-05T00:00:00Z', to: '2030-01-01T00:00:00Z' },
        { from: 'yesterday' },
        { to: '2030-02-30' },
        { from: '2030-01-03', to: '2030-01-02' },
        { action: 'DROP TABLE' },
        { perPage: 101 },
      ];
      for (const query of bad) {
        expectError(await t.request('GET', '/api/audit-log', { token: admin, query }), 400, 'VALIDATION_ERROR');
      }
    } finally {
      t.clock.set(started);
    }
  });

  it("another institution's admin sees none of these rows", async () => {
    const course = await createCourse(t, { ownerId: DEMO_TEACHER_ID, status: 'DRAFT', publishedAt: null });
    expectOk(await t.request('POST', `/api/courses/${course.id}/publish`, { token: teacher, body: { status: 'PUBLISHED' } }));
    const mine = await t.request('GET', '/api/audit-log', { token: admin, query: { targetId: course.id } });
    expect(expectOk(mine)).toHaveLength(1);
    const theirs = await t.request('GET', '/api/audit-log', { token: northAdmin, query: { targetId: course.id } });
    expect(expectOk(theirs)).toEqual([]);
    const all = await t.request('GET', '/api/audit-log', { token: northAdmin, query: { perPage: 100 } });
    expect(expectOk(all).every((r: { targetId: string }) => r.targetId !== course.id)).toBe(true);
    expect(all.raw).not.toContain(DEMO_TEACHER_ID);
  });
});

// Rows of one request: every row of a bulk write carries the same request id.
describe('request id', () => {
  it('is the request’s own id when the client sends none', async () => {
    const course = await createCourse(t, { ownerId: DEMO_TEACHER_ID });
    await enroll(t, { courseId: course.id, studentId: stu(9), status: 'DROPPED' });
    const res = await t.request('POST', `/api/courses/${course.id}/enrollments`, { token: teacher, body: { studentIds: [stu(8), stu(9)] } });
    expectOk(res);
    const generated = res.headers['x-request-id'] as string;
    expect(generated).toMatch(/^[0-9a-f-]{36}$/);
    const rows = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.action, 'enrollment.create'), eq(auditLog.requestId, generated)));
    expect(rows.map((r) => (r.after as { studentId: string }).studentId).sort()).toEqual([stu(8), stu(9)]);
  });
});
