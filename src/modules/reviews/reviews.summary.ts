import { and, eq, sql } from 'drizzle-orm';
import type { ServiceContext } from '../../platform/context.js';
import { inTenant } from '../../platform/db/tenancy.js';
import { courseReviews } from './reviews.tables.js';

/** A course's rating as the catalogue and the course detail show it: the mean of its reviews (2 decimals), null without any. */
export interface RatingSummary {
  averageRating: number | null;
  reviewCount: number;
}

/*
 * Correlated subqueries on the outer "courses" row (for lists): explicit aliases, since in a
 * single-table select Drizzle leaves interpolated column names unqualified.
 */
export const averageRatingOfCourse = sql<
  number | null
>`(select round(avg(r.rating)::numeric, 2)::float8 from course_reviews r where r.institution_id = "courses"."institution_id" and r.course_id = "courses"."id")`;
export const reviewCountOfCourse = sql<number>`(select count(*)::int from course_reviews r where r.institution_id = "courses"."institution_id" and r.course_id = "courses"."id")`;

/** The rating of one course: one query over the course's reviews. */
export async function ratingOf(ctx: Pick<ServiceContext, 'db' | 'institutionId'>, courseId: string): Promise<RatingSummary> {
  const [row] = await ctx.db
    .select({ averageRating: sql<number | null>`round(avg(${courseReviews.rating})::numeric, 2)::float8`, reviewCount: sql<number>`count(*)::int` })
    .from(courseReviews)
    .where(and(inTenant(ctx, courseReviews), eq(courseReviews.courseId, courseId)));
  return { averageRating: row?.averageRating ?? null, reviewCount: row?.reviewCount ?? 0 };
}
