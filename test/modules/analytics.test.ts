/**
 * Analytics reports (spec 4.9): the entity registry, definitions validated against it, running
 * them (filters, groups, aggregates, sorting, date ranges, pages), tenant isolation of every
 * entity, saved reports with their access rules and audit rows, and the report rate limits of
 * spec part 8.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectError, expectOk, failingFields } from '../helpers/expect.js';
import { buildFixture, type Fixture } from '../helpers/routes.js';
import { usingPostgres } from '../helpers/database.js';
import { newId } from '../../src/platform/ids.js';
import { auditLog } from '../../src/modules/audit/audit.tables.js';
import { certificates } from '../../src/modules/certificates/certificates.tables.js';
import { complianceRecords, complianceTrainings } from '../../src/modules/compliance/compliance.tables.js';
import { liveSessionParticipants, liveSessions } from '../../src/modules/live-sessions/live-sessions.tables.js';
import { ENTITIES } from '../../src/modules/analytics/analytics.registry.js';
import { withStatementTimeout } from '../../src/modules/analytics/analytics.query.js';
import { DEMO_ADMIN_ID, DEMO_TEACHER2_ID, DEMO_TEACHER_ID, NORTH_ADMIN_ID, NORTH_STUDENT_ID, NORTH_TEACHER_ID } from '../../src/dev/crm-sim/fixtures.js';

let t: TestApp;
let a: Fixture;
let b: Fixture;
let admin: string;
let teacher: string;
let teacher2: string;
let student: string;
let northAdmin: string;

const run = (token: string, body: unknown) => t.request('POST', '/api/analytics/reports/run', { token, body });

/** Certificates and compliance records have no creation route that fits a fixture: rows of each institution, straight in. */
async function addCertificateAndCompliance(f: Fixture, personId: string) {
  const now = t.clock.now();
  await t.db.insert(certificates).values({
    id: newId(),
    institutionId: f.institutionId,
    courseId: f.courseId,
    enrollmentId: f.enrollmentId,
    studentId: f.studentId,
    courseTitle: 'Sweep',
    certificateNumber: `CERT-${newId()}`,
    verificationCode: newId(),
    finalScore: 88,
    issuedAt: now,
  });
  const trainingId = newId();
  await t.db
    .insert(complianceTrainings)
    .values({ institutionId: f.institutionId, id: trainingId, courseId: f.courseId, title: 'Safety', dueDate: now, createdBy: personId, createdAt: now, updatedAt: now });
  await t.db.insert(complianceRecords).values({
    institutionId: f.institutionId,
    id: newId(),
    trainingId,
    personId: f.studentId,
    assignedAt: new Date(now.getTime() - 86_400_000),
    dueAt: new Date(now.getTime() - 3_600_000),
    createdAt: now,
    updatedAt: now,
  });
}

beforeAll(async () => {
  t = await createTestApp();
  a = await buildFixture(t);
  b = await buildFixture(t, { institutionId: 'inst_north', adminId: NORTH_ADMIN_ID, studentId: NORTH_STUDENT_ID, otherStudentId: 'c_northside_stu_02' });
  await addCertificateAndCompliance(a, DEMO_ADMIN_ID);
  await addCertificateAndCompliance(b, NORTH_ADMIN_ID);
  // Lesson progress of each fixture's student.
  for (const f of [a, b]) {
    const learner = await t.token({ role: 'STUDENT', id: f.studentId, institutionId: f.institutionId });
    expectOk(await t.request('POST', `/api/lessons/${f.lessonId}/progress`, { token: learner, body: { progressPercent: 40, positionSeconds: 120 } }));
  }
  admin = await t.token({ role: 'ADMIN', id: DEMO_ADMIN_ID });
  teacher = await t.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
  teacher2 = await t.token({ role: 'TEACHER', id: DEMO_TEACHER2_ID });
  student = await t.token({ role: 'STUDENT', id: a.studentId });
  northAdmin = await t.token({ role: 'ADMIN', id: NORTH_ADMIN_ID, institutionId: 'inst_north' });
}, 120_000);
afterAll(async () => t?.close());

describe('entity registry', () => {
  it('lists the entities with typed fields and joins, to staff only', async () => {
    const data = expectOk(await t.request('GET', '/api/analytics/entities', { token: teacher }));
    const names = data.entities.map((e: { name: string }) => e.name);
    expect(names).toEqual(expect.arrayContaining(['enrollments', 'lessonProgress', 'quizAttempts', 'submissions', 'certificates', 'liveAttendance', 'notes', 'complianceRecords']));
    const progress = data.entities.find((e: { name: string }) => e.name === 'lessonProgress');
    expect(progress.fields).toContainEqual(expect.objectContaining({ name: 'progressPercent', type: 'integer', filterable: true, groupable: true, aggregatable: true }));
    expect(progress.joins.map((j: { name: string }) => j.name)).toEqual(['lesson', 'course']);
    expect(progress.joins[1].fields).toContainEqual(expect.objectContaining({ name: 'course.title', type: 'string' }));
    expect(data.operators.timestamp).toEqual(expect.arrayContaining(['gte', 'lt', 'between']));
    expect(data.aggregates).toEqual(['count', 'countDistinct', 'sum', 'avg', 'min', 'max']);

    // Notes: counted only, never their content or author.
    const notes = data.entities.find((e: { name: string }) => e.name === 'notes');
    expect(notes.aggregateOnly).toBe(true);
    expect(notes.fields.map((f: { name: string }) => f.name)).not.toEqual(expect.arrayContaining(['content']));
    expect(notes.fields.map((f: { name: string }) => f.name)).not.toContain('studentId');

    expectError(await t.request('GET', '/api/analytics/entities', { token: student }), 403, 'FORBIDDEN');
    // The canManageCourses claim alone is authoring, not analytics.
    const claimed = await t.token({ role: 'STUDENT', id: a.otherStudentId, permissions: ['canManageCourses'] });
    expectError(await t.request('GET', '/api/analytics/entities', { token: claimed }), 403, 'FORBIDDEN');
  });
});

describe('definitions are validated against the registry', () => {
  const refused = async (definition: unknown, fields: string[]) => {
    const res = await run(teacher, { definition });
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(failingFields(res)).toEqual(fields);
    return res;
  };

  it('names an unknown entity, field, join, operator and aggregate', async () => {
    const res = await refused({ entity: 'payments' }, ['body.definition.entity']);
    expect(res.body.error.details.fields[0].message).toContain('unknown entity "payments"');
    await refused({ entity: 'enrollments', columns: ['status', 'salary'] }, ['body.definition.columns.1']);
    await refused({ entity: 'enrollments', columns: ['teacher.name'] }, ['body.definition.columns.0']);
    const op = await refused({ entity: 'enrollments', filters: [{ field: 'status', op: 'like', value: 'A%' }] }, ['body.definition.filters.0.op']);
    expect(op.body.error.details.fields[0].message).toContain('unknown operator "like"');
    const fn = await refused({ entity: 'enrollments', aggregates: [{ fn: 'median', field: 'progress', as: 'm' }] }, ['body.definition.aggregates.0.fn']);
    expect(fn.body.error.details.fields[0].message).toContain('unknown aggregate "median"');
  });

  it('refuses operators, values and aggregates that do not fit the field type, and lists every problem', async () => {
    const res = await refused(
      {
        entity: 'enrollments',
        filters: [
          { field: 'progress', op: 'contains', value: '5' },
          { field: 'status', op: 'eq', value: 'PAUSED' },
          { field: 'enrolledAt', op: 'gte', value: 'yesterday' },
          { field: 'progress', op: 'in', value: [1, 'two'] },
          { field: 'completedAt', op: 'isNull', value: 3 },
        ],
        aggregates: [
          { fn: 'avg', field: 'status', as: 'avgStatus' },
          { fn: 'sum', as: 'nothing' },
        ],
        groupBy: ['finalScore'],
      },
      [
        'body.definition.filters.0.op',
        'body.definition.filters.1.value',
        'body.definition.filters.2.value',
        'body.definition.filters.3.value.1',
        'body.definition.filters.4.value',
        'body.definition.groupBy.0',
        'body.definition.aggregates.0.field',
        'body.definition.aggregates.1.field',
      ],
    );
    expect(res.body.error.message).toBe('Invalid report definition');
  });

  it('refuses columns and sorts that do not fit a grouped report, and listing notes', async () => {
    await refused({ entity: 'enrollments', groupBy: ['status'], columns: ['studentId'], sort: [{ field: 'progress' }] }, [
      'body.definition.columns.0',
      'body.definition.sort.0.field',
    ]);
    await refused({ entity: 'notes' }, ['body.definition.aggregates']);
    await refused({ entity: 'notes', aggregates: [{ fn: 'max', field: 'createdAt', as: 'last' }] }, ['body.definition.aggregates.0.field']);
  });

  it('refuses a body with both or neither of reportId and definition, and unknown keys', async () => {
    expectError(await run(teacher, {}), 400, 'VALIDATION_ERROR');
    expectError(await run(teacher, { reportId: a.reportId, definition: { entity: 'enrollments' } }), 400, 'VALIDATION_ERROR');
    expectError(await run(teacher, { definition: { entity: 'enrollments', sql: 'drop table x' } }), 400, 'VALIDATION_ERROR');
  });

  it('keeps text of a definition out of the SQL: values are parameters', async () => {
    const hostile = "x'; drop table enrollments; --";
    const data = expectOk(await run(teacher, { definition: { entity: 'enrollments', columns: ['id'], filters: [{ field: 'studentId', op: 'contains', value: hostile }] } }));
    expect(data.rows).toEqual([]);
    expect(expectOk(await run(teacher, { definition: { entity: 'enrollments', aggregates: [{ fn: 'count', as: 'n' }] } })).rows[0].n).toBeGreaterThan(0);
  });
});

describe('running reports', () => {
  it('lists rows with joined fields, filters and sorting, a page at a time', async () => {
    const definition = {
      entity: 'enrollments',
      columns: ['studentId', 'status', 'course.title', 'enrolledAt'],
      filters: [{ field: 'courseId', op: 'eq', value: a.courseId }],
      sort: [{ field: 'studentId', direction: 'desc' }],
    };
    const res = await run(teacher, { definition, perPage: 1 });
    const data = expectOk(res);
    expect(res.body.meta).toEqual({ total: 2, page: 1, perPage: 1, totalPages: 2 });
    expect(data.columns).toEqual([
      { key: 'studentId', label: 'Student id', type: 'string' },
      { key: 'status', label: 'Status', type: 'enum' },
      { key: 'course.title', label: 'Course title', type: 'string' },
      { key: 'enrolledAt', label: 'Enrolled at', type: 'timestamp' },
    ]);
    const ids = [a.studentId, a.otherStudentId].sort().reverse();
    expect(data.rows).toEqual([{ studentId: ids[0], status: 'ACTIVE', 'course.title': expect.stringContaining('Sweep course'), enrolledAt: t.clock.now().toISOString() }]);
    const second = expectOk(await run(teacher, { definition, perPage: 1, page: 2 }));
    expect(second.rows[0].studentId).toBe(ids[1]);
    // Spec 4.1: the page size may be named `limit`, and the page may come in the query string.
    const byLimit = await run(teacher, { definition, limit: 1, page: 2 });
    expect(byLimit.body.meta).toEqual({ total: 2, page: 2, perPage: 1, totalPages: 2 });
    expect(expectOk(byLimit).rows).toEqual(second.rows);
    const byQuery = await t.request('POST', '/api/analytics/reports/run', { token: teacher, body: { definition }, query: { page: '2', limit: '1' } });
    expect(byQuery.body.meta).toEqual({ total: 2, page: 2, perPage: 1, totalPages: 2 });
    expect(expectOk(byQuery).rows).toEqual(second.rows);
    const bodyWins = await t.request('POST', '/api/analytics/reports/run', { token: teacher, body: { definition, perPage: 2 }, query: { limit: '1' } });
    expect(bodyWins.body.meta).toEqual({ total: 2, page: 1, perPage: 2, totalPages: 1 });
    const tooMany = await run(teacher, { definition, limit: 101 });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('groups with aggregates, time buckets in the institution zone, and sorts by an aggregate', async () => {
    const data = expectOk(
      await run(teacher, {
        definition: {
          entity: 'lessonProgress',
          groupBy: ['course.id', { field: 'updatedAt', granularity: 'month' }],
          aggregates: [
            { fn: 'count', as: 'rows' },
            { fn: 'countDistinct', field: 'studentId', as: 'students' },
            { fn: 'avg', field: 'progressPercent', as: 'avgProgress' },
            { fn: 'max', field: 'updatedAt', as: 'lastUpdate' },
          ],
          filters: [{ field: 'course.id', op: 'in', value: [a.courseId] }],
          sort: [{ field: 'rows', direction: 'desc' }],
        },
      }),
    );
    expect(data.columns.map((c: { key: string }) => c.key)).toEqual(['course.id', 'updatedAt:month', 'rows', 'students', 'avgProgress', 'lastUpdate']);
    expect(data.rows).toHaveLength(1);
    expect(data.rows[0]).toMatchObject({ 'course.id': a.courseId, 'updatedAt:month': '2026-03-01', lastUpdate: t.clock.now().toISOString() });
    expect(data.rows[0].rows).toBeGreaterThan(0);
    expect(typeof data.rows[0].avgProgress).toBe('number');
  });

  it('totals without groups, and counts notes per lesson without their content', async () => {
    const total = expectOk(
      await run(teacher, {
        definition: {
          entity: 'enrollments',
          aggregates: [
            { fn: 'count', as: 'n' },
            { fn: 'avg', field: 'progress', as: 'avg' },
          ],
        },
      }),
    );
    expect(total.rows).toEqual([{ n: 2, avg: expect.any(Number) }]);
    // Pages of a grouped report count groups, also past the last page.
    const grouped = { entity: 'enrollments', groupBy: ['studentId'], filters: [{ field: 'courseId', op: 'eq', value: a.courseId }] };
    const first = await run(teacher, { definition: grouped, perPage: 1 });
    expect(first.body.meta).toEqual({ total: 2, page: 1, perPage: 1, totalPages: 2 });
    expect(first.body.data.rows).toEqual([{ studentId: [a.studentId, a.otherStudentId].sort()[0], count: 1 }]);
    const past = await run(teacher, { definition: grouped, perPage: 1, page: 3 });
    expect(past.body.data.rows).toEqual([]);
    expect(past.body.meta.total).toBe(2);
    const notes = expectOk(await run(teacher, { definition: { entity: 'notes', groupBy: ['lesson.title', 'hasTimestamp'] } }));
    expect(notes.rows).toEqual([{ 'lesson.title': 'Video lesson', hasTimestamp: true, count: 1 }]);
    expect(JSON.stringify(notes)).not.toContain(a.secrets[0]);
  });

  it('reports on every entity of the registry, each filtered by the date range', async () => {
    for (const entity of ENTITIES) {
      const res = await run(teacher, { definition: { entity: entity.name, aggregates: [{ fn: 'count', as: 'n' }], dateRange: { lastDays: 30 } } });
      expect(res.status, `${entity.name}: ${res.raw}`).toBe(200);
      expect(res.body.data.rows[0].n, entity.name).toBeGreaterThanOrEqual(entity.name === 'certificates' || entity.name === 'complianceRecords' ? 1 : 0);
    }
    const future = expectOk(await run(teacher, { definition: { entity: 'enrollments', columns: ['id'], dateRange: { from: '2027-01-01T00:00:00Z' } } }));
    expect(future.rows).toEqual([]);
  });

  it('derives compliance status and live attendance as their modules do', async () => {
    const compliance = expectOk(await run(teacher, { definition: { entity: 'complianceRecords', columns: ['status', 'training.title', 'course.id'] } }));
    expect(compliance.rows).toEqual([{ status: 'OVERDUE', 'training.title': 'Safety', 'course.id': a.courseId }]);
    // A completion recorded before the cycle was assigned (the learner had finished the course
    // already) is COMPLETED in both places.
    const now = t.clock.now();
    const trainingId = newId();
    await t.db
      .insert(complianceTrainings)
      .values({ institutionId: 'inst_demo', id: trainingId, courseId: a.courseId, title: 'Earlier', dueDate: now, createdBy: DEMO_ADMIN_ID, createdAt: now, updatedAt: now });
    const early = { trainingId, personId: a.studentId, assignedAt: now, dueAt: new Date(now.getTime() - 1000), completedAt: new Date(now.getTime() - 86_400_000) };
    await t.db.insert(complianceRecords).values({ institutionId: 'inst_demo', id: newId(), ...early, createdAt: now, updatedAt: now });
    try {
      const filters = [{ field: 'trainingId', op: 'eq', value: trainingId }];
      const report = expectOk(await run(teacher, { definition: { entity: 'complianceRecords', columns: ['status'], filters } }));
      const records = expectOk(await t.request('GET', '/api/compliance/records', { token: teacher, query: { trainingId } }));
      expect([report.rows.map((r: any) => r.status), records.map((r: any) => r.status)]).toEqual([['COMPLETED'], ['COMPLETED']]);
    } finally {
      await t.db.delete(complianceRecords).where(eq(complianceRecords.trainingId, trainingId));
      await t.db.delete(complianceTrainings).where(eq(complianceTrainings.id, trainingId));
    }
    const attendance = expectOk(await run(teacher, { definition: { entity: 'liveAttendance', columns: ['personId', 'joinCount', 'attended', 'session.status'] } }));
    // The session is LIVE: nobody has attended (or missed) it yet.
    expect(attendance.rows).toEqual([{ personId: a.studentId, joinCount: 1, attended: false, 'session.status': 'LIVE' }]);
    // Once it is COMPLETED, the same rule as the roster's: joined and unmarked is attended, a mark decides.
    const attendedRows = async () => expectOk(await run(teacher, { definition: { entity: 'liveAttendance', columns: ['attended'] } })).rows.map((r: any) => r.attended);
    const participant = and(eq(liveSessionParticipants.sessionId, a.liveSessionId), eq(liveSessionParticipants.personId, a.studentId));
    await t.db.update(liveSessions).set({ status: 'COMPLETED' }).where(eq(liveSessions.id, a.liveSessionId));
    try {
      expect(await attendedRows()).toEqual([true]);
      await t.db.update(liveSessionParticipants).set({ mark: 'ABSENT' }).where(participant);
      expect(await attendedRows()).toEqual([false]);
    } finally {
      await t.db.update(liveSessionParticipants).set({ mark: null }).where(participant);
      await t.db.update(liveSessions).set({ status: 'LIVE' }).where(eq(liveSessions.id, a.liveSessionId));
    }
  });
});

describe('tenant isolation', () => {
  it("runs every entity over the caller's institution only", async () => {
    const northTeacher = await t.token({ role: 'TEACHER', id: NORTH_TEACHER_ID, institutionId: 'inst_north' });
    for (const entity of ENTITIES) {
      const idField = entity.fields.find((f) => f.name === 'id') ? 'id' : null;
      const definition = idField ? { entity: entity.name, columns: ['id'] } : { entity: entity.name, groupBy: ['lesson.id'], aggregates: [{ fn: 'count', as: 'n' }] };
      const rowsA = expectOk(await run(teacher, { definition, perPage: 100 })).rows;
      const rowsB = expectOk(await run(northTeacher, { definition, perPage: 100 })).rows;
      expect(rowsA.length, entity.name).toBeGreaterThan(0);
      expect(rowsB.length, entity.name).toBeGreaterThan(0);
      const a = new Set(rowsA.map((r: Record<string, unknown>) => JSON.stringify(r)));
      expect(
        rowsB.filter((r: Record<string, unknown>) => a.has(JSON.stringify(r))),
        entity.name,
      ).toEqual([]);
    }
    // A filter naming A's course finds nothing for B.
    const probe = expectOk(await run(northTeacher, { definition: { entity: 'enrollments', columns: ['id'], filters: [{ field: 'courseId', op: 'eq', value: a.courseId }] } }));
    expect(probe.rows).toEqual([]);
  });

  it("another institution's saved report is 404 to run, export, read or change", async () => {
    expectError(await run(northAdmin, { reportId: a.reportId }), 404, 'NOT_FOUND');
    expectError(await t.request('POST', '/api/analytics/reports/export', { token: northAdmin, body: { reportId: a.reportId, format: 'CSV' } }), 404, 'NOT_FOUND');
    expectError(await t.request('GET', `/api/analytics/reports/${a.reportId}`, { token: northAdmin }), 404, 'NOT_FOUND');
    expectError(await t.request('PATCH', `/api/analytics/reports/${a.reportId}`, { token: northAdmin, body: { name: 'mine now' } }), 404, 'NOT_FOUND');
    const list = expectOk(await t.request('GET', '/api/analytics/reports', { token: northAdmin }));
    expect(list.map((r: { id: string }) => r.id)).toEqual([b.reportId]);
  });
});

describe('saved reports', () => {
  const definition = { entity: 'enrollments', groupBy: ['status'], aggregates: [{ fn: 'count', as: 'n' }] };

  it('saves a validated definition, runs it by id, and audits every change', async () => {
    const bad = await t.request('POST', '/api/analytics/reports', { token: teacher, body: { name: 'Bad', definition: { entity: 'enrollments', columns: ['nope'] } } });
    expectError(bad, 400, 'VALIDATION_ERROR');
    expect(failingFields(bad)).toEqual(['body.definition.columns.0']);

    const created = expectOk(await t.request('POST', '/api/analytics/reports', { token: teacher, body: { name: 'By status', definition } }), 201);
    expect(created).toMatchObject({ name: 'By status', visibility: 'PRIVATE', ownerId: DEMO_TEACHER_ID, canEdit: true, definition });
    const ran = expectOk(await run(teacher, { reportId: created.id }));
    expect(ran.rows).toEqual([{ status: 'ACTIVE', n: 2 }]);

    const updated = expectOk(await t.request('PATCH', `/api/analytics/reports/${created.id}`, { token: teacher, body: { name: 'Enrollments by status', visibility: 'SHARED' } }));
    expect(updated).toMatchObject({ name: 'Enrollments by status', visibility: 'SHARED' });
    expectOk(await t.request('DELETE', `/api/analytics/reports/${created.id}`, { token: teacher }));
    expectError(await t.request('GET', `/api/analytics/reports/${created.id}`, { token: teacher }), 404, 'NOT_FOUND');

    const rows = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.targetId, created.id), eq(auditLog.institutionId, 'inst_demo')))
      .orderBy(sql`${auditLog.id}`);
    expect(rows.map((r) => r.action)).toEqual(['report.create', 'report.update', 'report.delete']);
    expect(rows[1]!.before).toEqual({ name: 'By status', visibility: 'PRIVATE' });
    expect(rows[1]!.after).toEqual({ name: 'Enrollments by status', visibility: 'SHARED' });
    expect(rows.every((r) => r.actorId === DEMO_TEACHER_ID)).toBe(true);
  });

  it('keeps a private report to its owner and ADMIN; a shared one is read by staff and changed by owner or ADMIN only', async () => {
    const mine = expectOk(await t.request('POST', '/api/analytics/reports', { token: teacher, body: { name: 'Private one', definition } }), 201);
    const shared = expectOk(await t.request('POST', '/api/analytics/reports', { token: teacher, body: { name: 'Shared one', visibility: 'SHARED', definition } }), 201);

    expectError(await t.request('GET', `/api/analytics/reports/${mine.id}`, { token: teacher2 }), 404, 'NOT_FOUND');
    expectError(await run(teacher2, { reportId: mine.id }), 404, 'NOT_FOUND');
    expect(expectOk(await t.request('GET', `/api/analytics/reports/${shared.id}`, { token: teacher2 })).canEdit).toBe(false);
    expectOk(await run(teacher2, { reportId: shared.id }));
    expectError(await t.request('PATCH', `/api/analytics/reports/${shared.id}`, { token: teacher2, body: { name: 'x' } }), 403, 'FORBIDDEN');
    expectError(await t.request('DELETE', `/api/analytics/reports/${shared.id}`, { token: teacher2 }), 403, 'FORBIDDEN');
    expectError(
      await t.request('POST', `/api/analytics/reports/${shared.id}/alerts`, { token: teacher2, body: { name: 'x', metric: 'n', comparison: 'gt', threshold: 1 } }),
      403,
      'FORBIDDEN',
    );

    const listed = expectOk(await t.request('GET', '/api/analytics/reports', { token: teacher2, query: { perPage: 100 } })).map((r: { id: string }) => r.id);
    expect(listed).toContain(shared.id);
    expect(listed).not.toContain(mine.id);
    expect(listed).not.toContain(a.reportId);

    // ADMIN sees and changes every report of the institution.
    expect(expectOk(await t.request('GET', `/api/analytics/reports/${mine.id}`, { token: admin })).canEdit).toBe(true);
    expectOk(await t.request('PATCH', `/api/analytics/reports/${mine.id}`, { token: admin, body: { description: 'checked by admin' } }));
    expectError(await t.request('GET', '/api/analytics/reports', { token: student }), 403, 'FORBIDDEN');
    expectError(await t.request('GET', `/api/analytics/reports/${shared.id}`, { token: student }), 403, 'FORBIDDEN');
  });
});

describe('statement timeout', () => {
  it.skipIf(!usingPostgres())('stops a statement that runs past it with 503 statement_timeout (PostgreSQL)', async () => {
    const err = await withStatementTimeout(t.db, 50, async (tx) => tx.execute(sql`select pg_sleep(1)`)).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE', details: { reason: 'statement_timeout', timeoutMs: 50 } });
  });

  it('sets the timeout for the report transaction only', async () => {
    const inside = await withStatementTimeout(t.db, 1234, async (tx) => (await tx.execute(sql`show statement_timeout`)) as unknown as { rows: { statement_timeout: string }[] });
    expect(inside.rows[0]!.statement_timeout).toBe('1234ms');
    const after = (await t.db.execute(sql`show statement_timeout`)) as unknown as { rows: { statement_timeout: string }[] };
    expect(after.rows[0]!.statement_timeout).not.toBe('1234ms');
  });
});

describe('rate limits (spec part 8)', () => {
  it('answers 429 RATE_LIMITED past the run and export limits, per user', async () => {
    const limited = await createTestApp({ env: { RATE_LIMIT_REPORT_RUN: '3', RATE_LIMIT_REPORT_EXPORT: '2' } });
    try {
      const who = await limited.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
      const body = { definition: { entity: 'enrollments', aggregates: [{ fn: 'count', as: 'n' }] } };
      for (let i = 0; i < 3; i++) expect((await limited.request('POST', '/api/analytics/reports/run', { token: who, body })).status).toBe(200);
      const over = await limited.request('POST', '/api/analytics/reports/run', { token: who, body });
      expectError(over, 429, 'RATE_LIMITED');
      expect(over.headers['ratelimit-limit']).toBe('3');
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);

      // Exports count apart from runs.
      const exportBody = { ...body, format: 'CSV' };
      for (let i = 0; i < 2; i++) expect((await limited.request('POST', '/api/analytics/reports/export', { token: who, body: exportBody })).status).toBe(200);
      expectError(await limited.request('POST', '/api/analytics/reports/export', { token: who, body: exportBody }), 429, 'RATE_LIMITED');

      // Another user has their own budget.
      const other = await limited.token({ role: 'ADMIN', id: DEMO_ADMIN_ID });
      expect((await limited.request('POST', '/api/analytics/reports/run', { token: other, body })).status).toBe(200);
      expect((await limited.request('POST', '/api/analytics/reports/export', { token: other, body: exportBody })).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
