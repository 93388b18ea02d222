import { z } from 'zod';
import { optionalFilter } from '../../platform/http/query-filters.js';
import { paginationFields, paginationFieldsFor } from '../../platform/http/pagination.js';
import { COURSE_STATUSES, DRIP_MODES, LESSON_TYPES } from './courses.tables.js';
import { ratingFields } from '../reviews/reviews.schemas.js';

const title = z.string().trim().min(1, 'required').max(200);
const isoDateTime = z.string().datetime({ offset: true }).describe('ISO 8601 timestamp');
const ts = z.string().describe('ISO 8601 timestamp');
/** A link a client loads: http or https only (https only in production, checked by the service). */
const webUrl = z.url({ protocol: /^https?$/, message: 'must be an http or https URL' }).max(2000);

export const courseSchema = z.object({
  id: z.string(),
  institutionId: z.string(),
  title: z.string(),
  description: z.string().nullable(),
  categoryId: z.string().nullable(),
  ownerId: z.string(),
  status: z.enum(COURSE_STATUSES),
  maxEnrollments: z.number().int().nullable(),
  dripMode: z.enum(DRIP_MODES),
  certificateEnabled: z.boolean(),
  certificateValidityMonths: z.number().int().nullable(),
  thumbnailUrl: z.string().nullable(),
  estimatedDuration: z.number().int().nullable().describe('minutes'),
  passingScore: z.number().int().nullable(),
  publishedAt: ts.nullable(),
  archivedAt: ts.nullable(),
  createdAt: ts,
  updatedAt: ts,
});

/** DELETE /api/courses/{id}: the course, now ARCHIVED, with the delete answer's `deleted: true`. */
export const archivedCourseSchema = courseSchema.extend({ deleted: z.literal(true) });

/** Course detail: the course and its reviews' rating. */
export const courseDetailSchema = courseSchema.extend(ratingFields);

const courseFields = {
  title,
  description: z.string().max(20_000).nullable().optional(),
  categoryId: z.string().min(1).nullable().optional(),
  maxEnrollments: z.number().int().min(1).max(1_000_000).nullable().optional(),
  dripMode: z.enum(DRIP_MODES).optional(),
  certificateEnabled: z.boolean().optional(),
  certificateValidityMonths: z.number().int().min(1).max(600).nullable().optional(),
  thumbnailUrl: webUrl.nullable().optional(),
  estimatedDuration: z.number().int().min(0).max(1_000_000).nullable().optional(),
  passingScore: z.number().int().min(0).max(100).nullable().optional(),
};

export const createCourseBody = z.object(courseFields);
export const updateCourseBody = z.object({ ...courseFields, title: title.optional() });
export const publishBody = z.object({ status: z.enum(['PUBLISHED', 'DRAFT']) });

export const listCoursesQuery = z.object({
  ...paginationFields,
  status: optionalFilter(z.enum(COURSE_STATUSES)),
  categoryId: optionalFilter(z.string()),
  category: optionalFilter(z.string()).describe('the same as categoryId (categoryId wins when both are sent)'),
  ownerId: optionalFilter(z.string()),
  owner: optionalFilter(z.string()).describe('the same as ownerId (ownerId wins when both are sent)'),
  search: z.string().trim().min(1).max(200).optional(),
});

export const moduleSchema = z.object({
  id: z.string(),
  courseId: z.string(),
  title: z.string(),
  order: z.number().int(),
  createdAt: ts,
  updatedAt: ts,
});
export const createModuleBody = z.object({ title, order: z.number().int().min(0).max(100_000).optional() });
export const updateModuleBody = z.object({ title: title.optional(), order: z.number().int().min(0).max(100_000).optional() });

export const lessonBlockSchema = z.object({ id: z.string().min(1).max(100), type: z.string().min(1).max(50) }).passthrough();

export const lessonSchema = z.object({
  id: z.string(),
  courseId: z.string(),
  moduleId: z.string().nullable(),
  title: z.string(),
  type: z.enum(LESSON_TYPES),
  order: z.number().int(),
  content: z.string().nullable(),
  videoUrl: z.string().nullable(),
  durationSeconds: z.number().int().nullable(),
  isRequired: z.boolean(),
  unlockAfterDays: z.number().int().nullable(),
  unlockAt: ts.nullable(),
  blocks: z.array(lessonBlockSchema),
  xapiCompletion: z.boolean().describe('a completed or passed xAPI statement about the lesson completes it for the learner'),
  createdAt: ts,
  updatedAt: ts,
});

const lessonFields = {
  title,
  type: z.enum(LESSON_TYPES),
  moduleId: z.string().min(1).nullable().optional(),
  order: z.number().int().min(0).max(100_000).optional(),
  content: z.string().max(500_000).nullable().optional(),
  videoUrl: webUrl.nullable().optional(),
  durationSeconds: z
    .number()
    .int()
    .min(0)
    .max(86_400 * 7)
    .nullable()
    .optional(),
  isRequired: z.boolean().optional(),
  unlockAfterDays: z.number().int().min(0).max(3650).nullable().optional(),
  unlockAt: isoDateTime.nullable().optional(),
  blocks: z.array(lessonBlockSchema).max(200).optional(),
  xapiCompletion: z.boolean().optional().describe('default true: a completed or passed xAPI statement about the lesson completes it (never QUIZ or ASSIGNMENT lessons)'),
};
export const createLessonBody = z.object(lessonFields);
export const updateLessonBody = z.object({ ...lessonFields, title: title.optional(), type: z.enum(LESSON_TYPES).optional() });

/** A lesson in a course outline: content fields are null (blocks empty) where the reader may not open it. */
export const outlineLessonSchema = lessonSchema.extend({
  locked: z.boolean(),
  unlocksAt: ts.nullable(),
  lockReason: z.enum(['UNLOCK_AT', 'UNLOCK_AFTER_DAYS', 'SEQUENTIAL', 'PREREQUISITE']).nullable(),
});
export const outlineModuleSchema = moduleSchema.extend({ lessons: z.array(outlineLessonSchema) });

export const categorySchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  createdAt: ts,
});
/** Categories are few: a page of up to 100 by default, so a plain GET lists them all. */
export const CATEGORY_PAGE_SIZE = 100;
export const categoryListQuery = z.object({ ...paginationFieldsFor(CATEGORY_PAGE_SIZE) });

export const createCategoryBody = z.object({ name: z.string().trim().min(1).max(100), description: z.string().max(2000).nullable().optional() });

export const idParams = z.object({ id: z.string().min(1) });
