import { and, eq, sql } from 'drizzle-orm';
import type { ServiceContext } from '../../platform/context.js';
import type { Course } from '../courses/courses.tables.js';
import { lessons } from '../courses/courses.tables.js';
import { enrollments, lessonProgress, type Enrollment } from '../enrollments/enrollments.tables.js';
import { issueCertificate } from '../certificates/certificates.service.js';
import type { Certificate } from '../certificates/certificates.tables.js';
import { getSettings } from '../institutions/institutions.service.js';
import { pushCompletion } from '../sync/sync.service.js';
import { notify } from '../notifications/notify.js';
import { byId, inTenant } from '../../platform/db/tenancy.js';

export interface CompletionResult {
  enrollment: Enrollment;
  completedNow: boolean;
  certificate: Certificate | null;
}

/**
 * Whether a completed enrollment passed its course: the course has no passing score, nothing in
 * it was scored (no final score to fall short of), or the final score reaches the passing score.
 * Only a passed course earns its certificate; the parent overview's `passed` of a COMPLETED
 * enrollment is this too, so the two agree.
 */
export const passedCourse = (course: Pick<Course, 'passingScore'>, finalScore: number | null): boolean =>
  course.passingScore === null || finalScore === null || finalScore >= course.passingScore;

/** The certificate of a completed enrollment that passed, when the course issues them (null otherwise). */
async function certify(ctx: ServiceContext, course: Course, enrollment: Enrollment): Promise<Certificate | null> {
  if (!course.certificateEnabled || !passedCourse(course, enrollment.finalScore)) return null;
  const settings = await getSettings(ctx.db, ctx.institutionId);
  return issueCertificate(ctx, course, enrollment, course.certificateValidityMonths ?? settings.certificateValidityMonths);
}

/**
 * Recompute an enrollment's progress (completed required lessons / required lessons; all
 * lessons count when none is marked required). When everything required is complete the
 * enrollment becomes COMPLETED once — a conditional update, so concurrent calls cannot
 * complete it twice — and the certificate and CRM completion push are recorded in the same
 * transaction. A course whose final score falls short of its passing score is completed all the
 * same (and pushed, with an empty certificate number) but issues no certificate; when a later
 * change of the lesson scores (a retaken quiz, a regrade) lifts a completed enrollment's final
 * score to the passing score, the certificate is issued then (no second push or notification:
 * one per completion).
 */
export async function recomputeEnrollment(ctx: ServiceContext, course: Course, enrollment: Enrollment, opts: { touch?: boolean } = {}): Promise<CompletionResult> {
  // The learner's own writes mark the enrollment accessed; the service's recomputations do not.
  const accessed = opts.touch === false ? {} : { lastAccessedAt: ctx.clock.now() };
  const [counts] = await ctx.db
    .select({
      total: sql<number>`count(*)::int`,
      required: sql<number>`count(*) filter (where ${lessons.isRequired})::int`,
      doneAll: sql<number>`count(*) filter (where ${lessonProgress.completed})::int`,
      doneRequired: sql<number>`count(*) filter (where ${lessonProgress.completed} and ${lessons.isRequired})::int`,
      avgScore: sql<number | null>`avg(${lessonProgress.score})::float8`,
    })
    .from(lessons)
    .leftJoin(lessonProgress, and(eq(lessonProgress.lessonId, lessons.id), eq(lessonProgress.enrollmentId, enrollment.id), eq(lessonProgress.institutionId, lessons.institutionId)))
    .where(and(inTenant(ctx, lessons), eq(lessons.courseId, course.id)));
  const [needed, done] = counts.required > 0 ? [counts.required, counts.doneRequired] : [counts.total, counts.doneAll];
  const progress = needed === 0 ? 0 : Math.round((done / needed) * 100);
  const now = ctx.clock.now();
  const complete = needed > 0 && done >= needed;

  // Only what was scored makes a final score: a course of unscored lessons has none.
  const finalScore = counts.avgScore === null ? null : Math.round(counts.avgScore * 100) / 100;

  if (!complete || enrollment.status !== 'ACTIVE') {
    const completed = enrollment.status === 'COMPLETED';
    const [updated] = await ctx.db
      .update(enrollments)
      .set({
        progress: completed ? Math.max(progress, enrollment.progress) : progress,
        // A completed enrollment's final score follows later changes of its lesson scores (a regrade).
        ...(completed && { finalScore }),
        ...accessed,
        updatedAt: now,
      })
      .where(byId(ctx, enrollments, enrollment.id))
      .returning();
    // A completed enrollment that fell short of the passing score and now reaches it earns its certificate now.
    const certificate = completed && !passedCourse(course, enrollment.finalScore) ? await certify(ctx, course, updated) : null;
    return { enrollment: updated, completedNow: false, certificate };
  }

  const [completed] = await ctx.db
    .update(enrollments)
    .set({ status: 'COMPLETED', progress: 100, completedAt: now, finalScore, ...accessed, updatedAt: now })
    .where(and(byId(ctx, enrollments, enrollment.id), eq(enrollments.status, 'ACTIVE')))
    .returning();
  if (!completed) {
    const [current] = await ctx.db
      .select()
      .from(enrollments)
      .where(byId(ctx, enrollments, enrollment.id));
    return { enrollment: current, completedNow: false, certificate: null };
  }
  // Completed either way; a final score below the course's passing score earns no certificate.
  const certificate = await certify(ctx, course, completed);
  await pushCompletion(ctx, completed.id, {
    studentContactId: completed.studentId,
    courseId: course.id,
    courseTitle: course.title,
    completedAt: now.toISOString(),
    // Null when nothing in the course was scored (issue 19: no made-up 100 reaches the CRM's records).
    finalScore,
    // "" when the course issues no certificate, or the learner fell short of its passing score.
    certificateNumber: certificate?.certificateNumber ?? '',
  });
  await notify(ctx, {
    institutionId: ctx.institutionId,
    key: 'COURSE_COMPLETED',
    recipients: [completed.studentId],
    metadata: { courseId: course.id, courseTitle: course.title, certificateNumber: certificate?.certificateNumber ?? null, finalScore },
    actionUrl: certificate ? '/certificates' : `/learn/${course.id}`,
  });
  return { enrollment: completed, completedNow: true, certificate };
}
