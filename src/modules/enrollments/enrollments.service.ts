import { and, asc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { ServiceContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/client.js';
import { newId } from '../../platform/ids.js';
import { AppError, forbidden, notFound } from '../../platform/http/errors.js';
import { pageMeta, pageOffset, toPage, type Page } from '../../platform/http/pagination.js';
import { canManageCourses, requireManageCourses } from '../../platform/auth/permissions.js';
import { courses, type Course } from '../courses/courses.tables.js';
import { loadCourse } from '../courses/courses.service.js';
import { assertFeesAllow } from '../institutions/fee-gating.js';
import { getSettings, institutionSlug } from '../institutions/institutions.service.js';
import { enrollments, type Enrollment, type EnrollmentStatus } from './enrollments.tables.js';
import { toEnrollmentDto } from './enrollments.dto.js';
import { inTenant, byId } from '../../platform/db/tenancy.js';

const SEAT_STATUSES: EnrollmentStatus[] = ['ACTIVE', 'COMPLETED'];

/** Lock the course row so seat counting and the insert are serialised per course. */
async function lockCourse(tx: Tx, institutionId: string, courseId: string): Promise<Course> {
  const [course] = await tx
    .select()
    .from(courses)
    .where(and(eq(courses.id, courseId), eq(courses.institutionId, institutionId)))
    .for('update')
    .limit(1);
  if (!course) throw notFound('Course');
  return course;
}

async function seatsTaken(tx: Tx, institutionId: string, courseId: string): Promise<number> {
  const [{ n }] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(enrollments)
    .where(and(eq(enrollments.institutionId, institutionId), eq(enrollments.courseId, courseId), inArray(enrollments.status, SEAT_STATUSES)));
  return n;
}

type EnrollOutcome = { kind: 'enrolled'; enrollment: Enrollment } | { kind: 'already'; enrollment: Enrollment } | { kind: 'full' };

/**
 * Enroll one student inside a transaction holding the course lock. A DROPPED enrollment is
 * reactivated (its progress kept). Seats are ACTIVE and COMPLETED enrollments.
 */
async function enrollInTx(tx: Tx, ctx: ServiceContext, course: Course, studentId: string): Promise<EnrollOutcome> {
  const [existing] = await tx
    .select()
    .from(enrollments)
    .where(and(inTenant(ctx, enrollments), eq(enrollments.courseId, course.id), eq(enrollments.studentId, studentId)))
    .limit(1);
  if (existing && existing.status !== 'DROPPED') return { kind: 'already', enrollment: existing };
  if (course.maxEnrollments !== null && (await seatsTaken(tx, ctx.institutionId, course.id)) >= course.maxEnrollments) {
    return { kind: 'full' };
  }
  const now = ctx.clock.now();
  if (existing) {
    const [reactivated] = await tx
      .update(enrollments)
      .set({ status: 'ACTIVE', droppedAt: null, enrolledBy: ctx.actor.personId, updatedAt: now })
      .where(eq(enrollments.id, existing.id))
      .returning();
    return { kind: 'enrolled', enrollment: reactivated };
  }
  const [created] = await tx
    .insert(enrollments)
    .values({
      id: newId(),
      institutionId: ctx.institutionId,
      courseId: course.id,
      studentId,
      status: 'ACTIVE',
      enrolledBy: ctx.actor.personId,
      enrolledAt: now,
      updatedAt: now,
    })
    .returning();
  return { kind: 'enrolled', enrollment: created };
}

/** POST /api/courses/:id/enroll — a student enrolls themself in a published course. */
export async function selfEnroll(ctx: ServiceContext, courseId: string) {
  if (ctx.actor.role !== 'STUDENT') throw forbidden('Only students can self-enroll');
  const course = await loadCourse(ctx, courseId);
  if (course.status !== 'PUBLISHED') throw notFound('Course');
  const settings = await getSettings(ctx.db, ctx.institutionId);
  if (!settings.allowSelfEnrollment) throw forbidden('Self-enrollment is turned off for this institution');
  await assertFeesAllow(ctx, 'enrollment');
  const outcome = await ctx.db.transaction(async (tx) => {
    const locked = await lockCourse(tx, ctx.institutionId, course.id);
    return enrollInTx(tx, ctx, locked, ctx.actor.personId);
  });
  if (outcome.kind === 'already') throw new AppError('ALREADY_ENROLLED', 'You are already enrolled in this course');
  if (outcome.kind === 'full') throw new AppError('COURSE_FULL', 'This course has no seats left');
  return toEnrollmentDto(outcome.enrollment);
}

/** POST /api/courses/:id/enrollments — enroll many students; per-id results, never all-or-nothing. */
export async function bulkEnroll(ctx: ServiceContext, courseId: string, studentIds: string[]) {
  requireManageCourses(ctx.actor);
  const course = await loadCourse(ctx, courseId);
  if (course.status === 'ARCHIVED') throw new AppError('CONFLICT', 'An archived course cannot take enrollments');
  const unique = [...new Set(studentIds)];
  const result = {
    enrolled: [] as ReturnType<typeof toEnrollmentDto>[],
    alreadyEnrolled: [] as ReturnType<typeof toEnrollmentDto>[],
    failed: [] as Array<{ studentId: string; code: string; message: string }>,
  };
  await ctx.db.transaction(async (tx) => {
    const locked = await lockCourse(tx, ctx.institutionId, course.id);
    for (const studentId of unique) {
      const outcome = await enrollInTx(tx, ctx, locked, studentId);
      if (outcome.kind === 'enrolled') result.enrolled.push(toEnrollmentDto(outcome.enrollment));
      else if (outcome.kind === 'already') result.alreadyEnrolled.push(toEnrollmentDto(outcome.enrollment));
      else result.failed.push({ studentId, code: 'COURSE_FULL', message: 'No seats left' });
    }
  });
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

/** Managers see any enrollment of the course; a student sees only their own. */
function assertMaySeeEnrollment(ctx: ServiceContext, studentId: string) {
  if (!canManageCourses(ctx.actor) && ctx.actor.personId !== studentId) throw notFound('Enrollment');
}

async function studentName(ctx: ServiceContext, slug: string | null, studentId: string): Promise<string> {
  const name = slug ? await ctx.crm.displayNameOrNull(slug, studentId) : null;
  return name ?? `Student ${studentId}`;
}

export async function listEnrollments(ctx: ServiceContext, courseId: string, q: { page: number; perPage?: number; limit?: number; status?: EnrollmentStatus }) {
  requireManageCourses(ctx.actor);
  const course = await loadCourse(ctx, courseId);
  const page: Page = toPage(q);
  const filters: SQL[] = [inTenant(ctx, enrollments), eq(enrollments.courseId, course.id)];
  if (q.status) filters.push(eq(enrollments.status, q.status));
  const where = and(...filters);
  const [rows, [{ total }]] = await Promise.all([
    ctx.db.select().from(enrollments).where(where).orderBy(asc(enrollments.enrolledAt), asc(enrollments.id)).limit(page.perPage).offset(pageOffset(page)),
    ctx.db.select({ total: sql<number>`count(*)::int` }).from(enrollments).where(where),
  ]);
  // Names come from the CRM (optional lookups, cached); a missing one degrades to a label.
  const slug = await institutionSlug(ctx, ctx.institutionId).catch(() => null);
  const data = await Promise.all(rows.map(async (e) => ({ ...toEnrollmentDto(e), studentName: await studentName(ctx, slug, e.studentId) })));
  return { rows: data, meta: pageMeta(page, total) };
}

export async function getEnrollment(ctx: ServiceContext, courseId: string, studentId: string) {
  assertMaySeeEnrollment(ctx, studentId);
  await loadCourse(ctx, courseId);
  const enrollment = await loadEnrollment(ctx, courseId, studentId);
  const slug = await institutionSlug(ctx, ctx.institutionId).catch(() => null);
  return { ...toEnrollmentDto(enrollment), studentName: await studentName(ctx, slug, studentId) };
}

/** Unenroll: the row is kept with status DROPPED. Managers, or the student themself. */
export async function unenroll(ctx: ServiceContext, courseId: string, studentId: string) {
  if (!canManageCourses(ctx.actor) && ctx.actor.personId !== studentId) throw forbidden('You may only unenroll yourself');
  await loadCourse(ctx, courseId);
  const enrollment = await loadEnrollment(ctx, courseId, studentId);
  if (enrollment.status === 'DROPPED') return toEnrollmentDto(enrollment);
  if (enrollment.status === 'COMPLETED') throw new AppError('CONFLICT', 'A completed enrollment cannot be dropped');
  const now = ctx.clock.now();
  const [dropped] = await ctx.db
    .update(enrollments)
    .set({ status: 'DROPPED', droppedAt: now, updatedAt: now })
    .where(byId(ctx, enrollments, enrollment.id))
    .returning();
  return toEnrollmentDto(dropped);
}
