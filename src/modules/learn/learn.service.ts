import { and, desc, eq, ilike, ne, or, sql, type SQL } from 'drizzle-orm';
import type { ServiceContext } from '../../platform/context.js';
import { iso } from '../../platform/dto.js';
import { notFound } from '../../platform/http/errors.js';
import { pageMeta, pageOffset, toPage } from '../../platform/http/pagination.js';
import { escapeLike } from '../../platform/db/like.js';
import { byId, inTenant, sameTenantRef } from '../../platform/db/tenancy.js';
import { courses, type Lesson } from '../courses/courses.tables.js';
import { lessonViewOf, loadCourse, toCourseDto, toLessonDto } from '../courses/courses.service.js';
import { enrollments } from '../enrollments/enrollments.tables.js';
import { toEnrollmentDto } from '../enrollments/enrollments.dto.js';
import { courseState, requireAccess, type CourseState } from '../access/access.service.js';
import { averageRatingOfCourse, reviewCountOfCourse } from '../reviews/reviews.summary.js';

function navLesson(l: Lesson, state: CourseState) {
  const p = state.progressByLesson.get(l.id);
  const lock = state.locks.get(l.id) ?? { locked: false, unlocksAt: null, reason: null };
  return {
    id: l.id,
    moduleId: l.moduleId,
    title: l.title,
    type: l.type,
    order: l.order,
    isRequired: l.isRequired,
    durationSeconds: l.durationSeconds,
    completed: p?.completed ?? false,
    progressPercent: p?.progressPercent ?? 0,
    locked: lock.locked,
    unlocksAt: iso(lock.unlocksAt),
    lockReason: lock.reason,
  };
}

/** GET /api/learn/:courseId — modules and lessons with completion and lock state. */
export async function learnNavigation(ctx: ServiceContext, courseId: string) {
  const { course, enrollment } = await requireAccess(ctx, 'course.learn', courseId);
  const state = await courseState(ctx, course, enrollment);
  return {
    course: toCourseDto(course),
    enrollment: enrollment ? toEnrollmentDto(enrollment) : null,
    modules: state.modules.map((m) => ({
      id: m.id,
      title: m.title,
      order: m.order,
      lessons: state.ordered.filter((l) => l.moduleId === m.id).map((l) => navLesson(l, state)),
    })),
    lessonsWithoutModule: state.ordered.filter((l) => !l.moduleId || !state.modules.some((m) => m.id === l.moduleId)).map((l) => navLesson(l, state)),
  };
}

/** Open a lesson (the `lesson.open` rule) with its progress and neighbours in reading order. */
async function openLesson(ctx: ServiceContext, lessonId: string) {
  const opened = await requireAccess(ctx, 'lesson.open', lessonId);
  const { lesson, course } = opened;
  const enrollment = opened.enrollment && opened.enrollment.status !== 'DROPPED' ? opened.enrollment : null;
  const state = opened.state ?? (await courseState(ctx, course, enrollment));
  if (enrollment) {
    await ctx.db
      .update(enrollments)
      .set({ lastAccessedAt: ctx.clock.now() })
      .where(byId(ctx, enrollments, enrollment.id));
  }
  const index = state.ordered.findIndex((l) => l.id === lesson.id);
  const p = state.progressByLesson.get(lesson.id);
  return {
    lesson: toLessonDto(lesson, lessonViewOf(ctx)),
    progress: p
      ? {
          completed: p.completed,
          completedAt: iso(p.completedAt),
          progressPercent: p.progressPercent,
          positionSeconds: p.positionSeconds,
          pdfPage: p.pdfPage,
          pdfTotalPages: p.pdfTotalPages,
        }
      : null,
    previousLessonId: index > 0 ? state.ordered[index - 1].id : null,
    nextLessonId: index >= 0 && index < state.ordered.length - 1 ? state.ordered[index + 1].id : null,
  };
}

/** GET /api/learn/:courseId/:lessonId */
export async function learnLesson(ctx: ServiceContext, courseId: string, lessonId: string) {
  await loadCourse(ctx, courseId);
  const { lesson } = await requireAccess(ctx, 'lesson.view', lessonId);
  if (lesson.courseId !== courseId) throw notFound('Lesson');
  return openLesson(ctx, lessonId);
}

/** GET /api/lessons/:id — managers get the whole lesson; learners open it as through /learn. */
export async function getLessonForViewer(ctx: ServiceContext, lessonId: string) {
  return (await openLesson(ctx, lessonId)).lesson;
}

/*
 * Correlated subqueries on the outer "courses" row, written with explicit aliases: in a
 * single-table select Drizzle leaves interpolated column names unqualified, so they would bind
 * to the inner table and compare it with itself.
 */
const lessonCountOfCourse = sql<number>`(select count(*)::int from lessons l where l.institution_id = "courses"."institution_id" and l.course_id = "courses"."id")`;

/** GET /api/catalogue — published courses of the institution. */
export async function catalogue(ctx: ServiceContext, q: { page: number; perPage?: number; limit?: number; search?: string; categoryId?: string; category?: string }) {
  const page = toPage(q);
  const filters: SQL[] = [inTenant(ctx, courses), eq(courses.status, 'PUBLISHED')];
  const categoryId = q.categoryId ?? q.category;
  if (categoryId) filters.push(eq(courses.categoryId, categoryId));
  if (q.search) {
    const pattern = `%${escapeLike(q.search)}%`;
    filters.push(or(ilike(courses.title, pattern), ilike(courses.description, pattern)) as SQL);
  }
  const where = and(...filters);
  const seats = sql<number>`(select count(*)::int from enrollments e where e.institution_id = "courses"."institution_id" and e.course_id = "courses"."id" and e.status <> 'DROPPED')`;
  const mine = sql<
    string | null
  >`(select e.status from enrollments e where e.institution_id = "courses"."institution_id" and e.course_id = "courses"."id" and e.student_id = ${ctx.actor.personId})`;
  const [rows, [{ total }]] = await Promise.all([
    ctx.db
      .select({ course: courses, lessonCount: lessonCountOfCourse, seats, mine, averageRating: averageRatingOfCourse, reviewCount: reviewCountOfCourse })
      .from(courses)
      .where(where)
      .orderBy(desc(courses.publishedAt), desc(courses.id))
      .limit(page.perPage)
      .offset(pageOffset(page)),
    ctx.db
      .select({ total: sql<number>`count(*)::int` })
      .from(courses)
      .where(where),
  ]);
  return {
    rows: rows.map((r) => ({
      ...toCourseDto(r.course),
      lessonCount: r.lessonCount,
      enrollmentCount: r.seats,
      seatsLeft: r.course.maxEnrollments === null ? null : Math.max(0, r.course.maxEnrollments - r.seats),
      enrollmentStatus: (r.mine ?? null) as 'ACTIVE' | 'DROPPED' | 'COMPLETED' | null,
      averageRating: r.averageRating,
      reviewCount: r.reviewCount,
    })),
    meta: pageMeta(page, total),
  };
}

/** GET /api/my-courses — the caller's enrollments with progress (DROPPED only when asked for). */
export async function myCourses(ctx: ServiceContext, q: { page: number; perPage?: number; limit?: number; status?: 'ACTIVE' | 'COMPLETED' | 'DROPPED' }) {
  const page = toPage(q);
  const where = and(inTenant(ctx, enrollments), eq(enrollments.studentId, ctx.actor.personId), q.status ? eq(enrollments.status, q.status) : ne(enrollments.status, 'DROPPED'));
  const [rows, [{ total }]] = await Promise.all([
    ctx.db
      .select({ enrollment: enrollments, course: courses, lessonCount: lessonCountOfCourse })
      .from(enrollments)
      .innerJoin(courses, sameTenantRef(enrollments.courseId, enrollments.institutionId, courses))
      .where(where)
      .orderBy(desc(sql`coalesce(${enrollments.lastAccessedAt}, ${enrollments.enrolledAt})`), desc(enrollments.id))
      .limit(page.perPage)
      .offset(pageOffset(page)),
    ctx.db
      .select({ total: sql<number>`count(*)::int` })
      .from(enrollments)
      .where(where),
  ]);
  return {
    rows: rows.map((r) => ({ ...toEnrollmentDto(r.enrollment), enrollmentId: r.enrollment.id, course: { ...toCourseDto(r.course), lessonCount: r.lessonCount } })),
    meta: pageMeta(page, total),
  };
}
