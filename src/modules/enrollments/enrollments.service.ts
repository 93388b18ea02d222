import { notify } from '../notifications/notify.js';
import { and, asc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import { withTx, type ServiceContext } from '../../platform/context.js';
import { newId } from '../../platform/ids.js';
import { AppError, notFound } from '../../platform/http/errors.js';
import { pageMeta, pageOffset, toPage, type Page } from '../../platform/http/pagination.js';
import { byId, inTenant } from '../../platform/db/tenancy.js';
import { courses, type Course } from '../courses/courses.tables.js';
import { requireAccess } from '../access/access.service.js';
import { institutionSlug } from '../institutions/institutions.service.js';
import { enrollments, type Enrollment, type EnrollmentStatus } from './enrollments.tables.js';
import { toEnrollmentDto } from './enrollments.dto.js';
import { audit } from '../audit/audit.js';
import { refreshCourseProgress } from '../progress/course-progress.js';
import { canManageCourses } from '../../platform/auth/permissions.js';

const SEAT_STATUSES: EnrollmentStatus[] = ['ACTIVE', 'COMPLETED'];

/** Lock the course row so seat counting and the inserts are serialised per course. */
export async function lockCourse(tx: ServiceContext, courseId: string): Promise<Course> {
  const [course] = await tx.db
    .select()
    .from(courses)
    .where(byId(tx, courses, courseId))
    .for('update')
    .limit(1);
  if (!course) throw notFound('Course');
  return course;
}

/**
 * Lock several courses (a learning path's) in one statement, in id order, so two transactions
 * locking overlapping sets (paths listing the same courses in another order) cannot deadlock.
 * The map holds the courses that exist, as they are under the lock.
 */
export async function lockCourses(tx: ServiceContext, courseIds: readonly string[]): Promise<Map<string, Course>> {
  if (courseIds.length === 0) return new Map();
  const rows = await tx.db
    .select()
    .from(courses)
    .where(and(inTenant(tx, courses), inArray(courses.id, [...new Set(courseIds)])))
    .orderBy(asc(courses.id))
    .for('update');
  return new Map(rows.map((c) => [c.id, c]));
}

type EnrollOutcome = { kind: 'enrolled'; enrollment: Enrollment } | { kind: 'already'; enrollment: Enrollment } | { kind: 'full' };

/**
 * Enroll students inside a transaction holding the course lock, in the order given, with a
 * fixed number of statements whatever their number: read their enrollments and the seats
 * taken, then one insert for the new ones and one update reactivating the DROPPED ones (their
 * progress kept; no longer tied to a learning path: a path that enrolls sets it again). Seats
 * are ACTIVE and COMPLETED enrollments.
 */
export async function enrollStudents(tx: ServiceContext, course: Course, studentIds: string[]): Promise<Map<string, EnrollOutcome>> {
  const [existing, [{ taken }]] = await Promise.all([
    tx.db
      .select()
      .from(enrollments)
      .where(and(inTenant(tx, enrollments), eq(enrollments.courseId, course.id), inArray(enrollments.studentId, studentIds))),
    tx.db
      .select({ taken: sql<number>`count(*)::int` })
      .from(enrollments)
      .where(and(inTenant(tx, enrollments), eq(enrollments.courseId, course.id), inArray(enrollments.status, SEAT_STATUSES))),
  ]);
  const byStudent = new Map(existing.map((e) => [e.studentId, e]));
  const outcomes = new Map<string, EnrollOutcome>();
  const toInsert: string[] = [];
  const toReactivate: string[] = [];
  let seatsLeft = course.maxEnrollments === null ? Infinity : course.maxEnrollments - taken;
  for (const studentId of studentIds) {
    const current = byStudent.get(studentId);
    if (current && current.status !== 'DROPPED') outcomes.set(studentId, { kind: 'already', enrollment: current });
    else if (seatsLeft <= 0) outcomes.set(studentId, { kind: 'full' });
    else {
      seatsLeft--;
      (current ? toReactivate : toInsert).push(studentId);
    }
  }
  const now = tx.clock.now();
  const written = [
    ...(toInsert.length > 0
      ? await tx.db
          .insert(enrollments)
          .values(
            toInsert.map((studentId) => ({
              id: newId(),
              institutionId: tx.institutionId,
              courseId: course.id,
              studentId,
              status: 'ACTIVE' as const,
              enrolledBy: tx.actor.personId,
              enrolledAt: now,
              updatedAt: now,
            })),
          )
          .returning()
      : []),
    ...(toReactivate.length > 0
      ? await tx.db
          .update(enrollments)
          .set({ status: 'ACTIVE', droppedAt: null, enrolledBy: tx.actor.personId, learningPathId: null, updatedAt: now })
          .where(and(inTenant(tx, enrollments), eq(enrollments.courseId, course.id), inArray(enrollments.studentId, toReactivate), eq(enrollments.status, 'DROPPED')))
          .returning()
      : []),
  ];
  // A reactivated enrollment kept its lesson completions; the course may have changed since.
  const wasDropped = new Set(toReactivate);
  const reactivatedIds = written.filter((e) => wasDropped.has(e.studentId)).map((e) => e.id);
  if (reactivatedIds.length > 0) {
    await refreshCourseProgress(tx, course.id, reactivatedIds);
    const rows = await tx.db
      .select()
      .from(enrollments)
      .where(and(inTenant(tx, enrollments), inArray(enrollments.id, reactivatedIds)));
    const fresh = new Map(rows.map((e) => [e.id, e]));
    written.forEach((e, i) => (written[i] = fresh.get(e.id) ?? e));
  }
  for (const e of written) outcomes.set(e.studentId, { kind: 'enrolled', enrollment: e });
  await notify(tx, {
    institutionId: tx.institutionId,
    key: 'ENROLL_WELCOME',
    recipients: written.map((e) => e.studentId),
    metadata: { courseId: course.id, courseTitle: course.title },
    actionUrl: `/learn/${course.id}`,
  });
  return outcomes;
}

/** POST /api/courses/:id/enroll — a student enrolls themself in a published course. */
export async function selfEnroll(ctx: ServiceContext, courseId: string) {
  const course = await requireAccess(ctx, 'course.selfEnroll', courseId);
  const me = ctx.actor.personId;
  const outcome = await withTx(ctx, async (tx) => {
    // Checked again under the lock: a course archived or unpublished meanwhile takes no one.
    const locked = await lockCourse(tx, course.id);
    if (locked.status !== 'PUBLISHED') throw notFound('Course');
    return (await enrollStudents(tx, locked, [me])).get(me)!;
  });
  if (outcome.kind === 'already') throw new AppError('ALREADY_ENROLLED', 'You are already enrolled in this course');
  if (outcome.kind === 'full') throw new AppError('COURSE_FULL', 'This course has no seats left');
  return toEnrollmentDto(outcome.enrollment);
}

const archivedCourse = () => new AppError('CONFLICT', 'An archived course cannot take enrollments');

/** POST /api/courses/:id/enrollments — enroll many students; per-id results, never all-or-nothing. */
export async function bulkEnroll(ctx: ServiceContext, courseId: string, studentIds: string[]) {
  const course = await requireAccess(ctx, 'course.staff', courseId);
  if (course.status === 'ARCHIVED') throw archivedCourse();
  const unique = [...new Set(studentIds)];
  const outcomes = await withTx(ctx, async (tx) => {
    const locked = await lockCourse(tx, course.id);
    if (locked.status === 'ARCHIVED') throw archivedCourse();
    const result = await enrollStudents(tx, locked, unique);
    // One audit row per enrollment made (new, or a DROPPED one made ACTIVE again), in one insert.
    await audit(
      tx,
      [...result.values()].flatMap((o) =>
        o.kind === 'enrolled'
          ? [
              {
                action: 'enrollment.create',
                targetType: 'enrollment',
                targetId: o.enrollment.id,
                after: { courseId: course.id, studentId: o.enrollment.studentId, status: o.enrollment.status },
              },
            ]
          : [],
      ),
    );
    return result;
  });
  const result = {
    enrolled: [] as ReturnType<typeof toEnrollmentDto>[],
    alreadyEnrolled: [] as ReturnType<typeof toEnrollmentDto>[],
    failed: [] as Array<{ studentId: string; code: string; message: string }>,
  };
  for (const studentId of unique) {
    const outcome = outcomes.get(studentId);
    if (outcome?.kind === 'enrolled') result.enrolled.push(toEnrollmentDto(outcome.enrollment));
    else if (outcome?.kind === 'already') result.alreadyEnrolled.push(toEnrollmentDto(outcome.enrollment));
    else result.failed.push({ studentId, code: 'COURSE_FULL', message: 'No seats left' });
  }
  return result;
}

/** The enrollment of a student in a course of the institution, or 404. */
export async function loadEnrollment(ctx: ServiceContext, courseId: string, studentId: string): Promise<Enrollment> {
  const [row] = await ctx.db
    .select()
    .from(enrollments)
    .where(and(inTenant(ctx, enrollments), eq(enrollments.courseId, courseId), eq(enrollments.studentId, studentId)))
    .limit(1);
  if (!row) throw notFound('Enrollment');
  return row;
}

/**
 * Display names of people, through the CRM's optional lookups: one lookup per distinct id
 * (cached, unknown ids remembered briefly by the client), a missing one degrades to a label.
 */
export async function studentNames(ctx: ServiceContext, studentIds: string[]): Promise<Map<string, string>> {
  const unique = [...new Set(studentIds)];
  const slug = unique.length > 0 ? await institutionSlug(ctx, ctx.institutionId).catch(() => null) : null;
  const names = await Promise.all(unique.map(async (id) => [id, (slug ? await ctx.crm.displayNameOrNull(slug, id) : null) ?? `Student ${id}`] as const));
  return new Map(names);
}

export async function listEnrollments(ctx: ServiceContext, courseId: string, q: { page: number; perPage?: number; limit?: number; status?: EnrollmentStatus }) {
  const course = await requireAccess(ctx, 'course.staff', courseId);
  const page: Page = toPage(q);
  const filters: SQL[] = [inTenant(ctx, enrollments), eq(enrollments.courseId, course.id)];
  if (q.status) filters.push(eq(enrollments.status, q.status));
  const where = and(...filters);
  const [rows, [{ total }]] = await Promise.all([
    ctx.db.select().from(enrollments).where(where).orderBy(asc(enrollments.enrolledAt), asc(enrollments.id)).limit(page.perPage).offset(pageOffset(page)),
    ctx.db
      .select({ total: sql<number>`count(*)::int` })
      .from(enrollments)
      .where(where),
  ]);
  const names = await studentNames(
    ctx,
    rows.map((e) => e.studentId),
  );
  return { rows: rows.map((e) => ({ ...toEnrollmentDto(e), studentName: names.get(e.studentId)! })), meta: pageMeta(page, total) };
}

export async function getEnrollment(ctx: ServiceContext, courseId: string, studentId: string) {
  const course = await requireAccess(ctx, 'enrollment.view', { courseId, studentId });
  const enrollment = await loadEnrollment(ctx, course.id, studentId);
  const names = await studentNames(ctx, [studentId]);
  return { ...toEnrollmentDto(enrollment), studentName: names.get(studentId)! };
}

/**
 * Unenroll: the row is kept with status DROPPED. Course staff, or the student themself. Only an
 * ACTIVE enrollment drops (a conditional update), so a completion committing at the same time
 * wins and the answer is 409, never a COMPLETED enrollment turned DROPPED.
 */
export async function unenroll(ctx: ServiceContext, courseId: string, studentId: string) {
  const course = await requireAccess(ctx, 'enrollment.drop', { courseId, studentId });
  const enrollment = await loadEnrollment(ctx, course.id, studentId);
  const now = ctx.clock.now();
  const dropped = await withTx(ctx, async (tx) => {
    const [row] = await tx.db
      .update(enrollments)
      .set({ status: 'DROPPED', droppedAt: now, updatedAt: now })
      .where(and(byId(tx, enrollments, enrollment.id), eq(enrollments.status, 'ACTIVE')))
      .returning();
    // Staff drops are audited; a student leaving a course is not a staff write.
    if (row && canManageCourses(tx.actor)) {
      await audit(tx, {
        action: 'enrollment.drop',
        targetType: 'enrollment',
        targetId: row.id,
        before: { status: 'ACTIVE' },
        after: { courseId: course.id, studentId, status: 'DROPPED' },
      });
    }
    return row;
  });
  if (dropped) return toEnrollmentDto(dropped);
  const current = await loadEnrollment(ctx, course.id, studentId);
  if (current.status === 'COMPLETED') throw new AppError('CONFLICT', 'A completed enrollment cannot be dropped');
  return toEnrollmentDto(current);
}
