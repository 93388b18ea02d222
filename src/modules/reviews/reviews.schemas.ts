import { z } from 'zod';
import { paginationFields } from '../../platform/http/pagination.js';

export const REVIEW_COMMENT_MAX = 5_000;

export const idParams = z.object({ id: z.string().min(1).max(200) });
export const listQuery = z.object(paginationFields);

export const submitReviewBody = z.strictObject({
  courseId: z.string().min(1).max(200),
  rating: z.number().int().min(1).max(5).describe('an integer from 1 to 5'),
  comment: z
    .string()
    .max(REVIEW_COMMENT_MAX)
    .nullable()
    .optional()
    .describe('stored as given and served as plain text; on a second POST, absent keeps the current comment and null removes it'),
});
export type SubmitReview = z.infer<typeof submitReviewBody>;

export const reviewSchema = z.object({
  id: z.string(),
  courseId: z.string(),
  studentId: z.string(),
  studentName: z.string().describe('from the CRM, else `Student <id>`'),
  rating: z.number().int(),
  comment: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

/** Fields the catalogue and the course detail add for a course's reviews. */
export const ratingFields = {
  averageRating: z.number().nullable().describe('mean rating of its reviews (2 decimals); null without reviews'),
  reviewCount: z.number().int(),
};
