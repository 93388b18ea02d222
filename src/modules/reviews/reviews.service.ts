import { and, desc, eq, getTableColumns, sql } from 'drizzle-orm';
import type { ServiceContext } from '../../platform/context.js';
import { iso } from '../../platform/dto.js';
import { inTenant } from '../../platform/db/tenancy.js';
import { pageMeta, pageOffset, toPage } from '../../platform/http/pagination.js';
import { newId } from '../../platform/ids.js';
import { requireAccess } from '../access/access.service.js';
import { displayNames } from '../institutions/display-names.js';
import { courseReviews, type CourseReview } from './reviews.tables.js';
import type { SubmitReview } from './reviews.schemas.js';

async function withNames(ctx: ServiceContext, rows: CourseReview[]) {
  const names = await displayNames(
    ctx,
    rows.map((r) => ({ id: r.studentId, label: 'Student' })),
  );
  return rows.map((r) => ({
    id: r.id,
    courseId: r.courseId,
    studentId: r.studentId,
    studentName: names.get(r.studentId)!,
    rating: r.rating,
    comment: r.comment,
    createdAt: iso(r.createdAt),
    updatedAt: iso(r.updatedAt),
  }));
}

/**
 * POST /api/reviews: a student with an ACTIVE or COMPLETED enrollment rates the course 1–5.
 * One review per student and course, in one statement (`ON CONFLICT`): a second POST updates it
 * (`created` false); two at once leave one row.
 */
export async function submitReview(ctx: ServiceContext, body: SubmitReview) {
  const { course } = await requireAccess(ctx, 'course.review', body.courseId);
  const now = ctx.clock.now();
  const [row] = await ctx.db
    .insert(courseReviews)
    .values({
      institutionId: ctx.institutionId,
      id: newId(),
      courseId: course.id,
      studentId: ctx.actor.personId,
      rating: body.rating,
      comment: body.comment ?? null,
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoUpdate({
      target: [courseReviews.institutionId, courseReviews.courseId, courseReviews.studentId],
      set: { rating: body.rating, ...(body.comment !== undefined ? { comment: body.comment } : {}), updatedAt: now },
    })
    .returning({ ...getTableColumns(courseReviews), created: sql<boolean>`(xmax = 0)` });
  const { created, ...review } = row!;
  const [dto] = await withNames(ctx, [review]);
  return { review: dto!, created };
}

/** GET /api/courses/{id}/reviews: whoever may see the course reads its reviews, newest first (latest change). */
export async function listReviews(ctx: ServiceContext, courseId: string, q: { page: number; perPage?: number; limit?: number }) {
  const course = await requireAccess(ctx, 'course.view', courseId);
  const page = toPage(q);
  const where = and(inTenant(ctx, courseReviews), eq(courseReviews.courseId, course.id));
  const [rows, [{ total }]] = await Promise.all([
    ctx.db.select().from(courseReviews).where(where).orderBy(desc(courseReviews.updatedAt), desc(courseReviews.id)).limit(page.perPage).offset(pageOffset(page)),
    ctx.db
      .select({ total: sql<number>`count(*)::int` })
      .from(courseReviews)
      .where(where),
  ]);
  return { rows: await withNames(ctx, rows), meta: pageMeta(page, total) };
}
