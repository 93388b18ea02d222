import { and, eq } from 'drizzle-orm';
import type { ServiceContext } from '../../platform/context.js';
import type { DbOrTx } from '../../platform/db/client.js';
import { canManageCourses } from '../../platform/auth/permissions.js';
import { AppError, notFound } from '../../platform/http/errors.js';
import { courses, lessons, type Course, type Lesson } from './courses.tables.js';
import { enrollments, type Enrollment } from '../enrollments/enrollments.tables.js';
import { inTenant, byId, sameTenantRef } from '../../platform/db/tenancy.js';

/** A lesson of the caller's institution with its course, or 404 NOT_FOUND. */
export async function findLesson(ctx: ServiceContext, lessonId: string, db: DbOrTx = ctx.db): Promise<{ lesson: Lesson; course: Course }> {
  const [row] = await db
    .select({ lesson: lessons, course: courses })
    .from(lessons)
    .innerJoin(courses, sameTenantRef(lessons.courseId, lessons.institutionId, courses))
    .where(byId(ctx, lessons, lessonId))
    .limit(1);
  if (!row) throw notFound('Lesson');
  return row;
}

/** The caller's enrollment in a course (any status), or null. */
export async function findOwnEnrollment(ctx: ServiceContext, courseId: string, db: DbOrTx = ctx.db): Promise<Enrollment | null> {
  const [row] = await db
    .select()
    .from(enrollments)
    .where(
      and(
        inTenant(ctx, enrollments),
        eq(enrollments.courseId, courseId),
        eq(enrollments.studentId, ctx.actor.personId),
      ),
    )
    .limit(1);
  return row ?? null;
}

/**
 * Who may see a lesson (and what hangs off it: captions, transcripts): course managers, or a
 * learner with an ACTIVE or COMPLETED enrollment in its course (403 ENROLLMENT_REQUIRED).
 */
export async function assertCanViewLesson(ctx: ServiceContext, lessonId: string) {
  const found = await findLesson(ctx, lessonId);
  if (canManageCourses(ctx.actor)) return { ...found, enrollment: await findOwnEnrollment(ctx, found.course.id) };
  const enrollment = await findOwnEnrollment(ctx, found.course.id);
  if (!enrollment || enrollment.status === 'DROPPED') {
    throw new AppError('ENROLLMENT_REQUIRED', 'You must be enrolled in this course');
  }
  return { ...found, enrollment };
}

/** For creating learner data (notes, bookmarks): an ACTIVE enrollment is required. */
export async function requireActiveEnrollment(ctx: ServiceContext, lessonId: string) {
  const found = await findLesson(ctx, lessonId);
  const enrollment = await findOwnEnrollment(ctx, found.course.id);
  if (!enrollment || enrollment.status !== 'ACTIVE') {
    throw new AppError('ENROLLMENT_REQUIRED', 'An active enrollment in this course is required');
  }
  return { ...found, enrollment };
}
