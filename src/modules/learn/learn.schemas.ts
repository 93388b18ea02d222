import { z } from 'zod';
import { optionalFilter } from '../../platform/http/query-filters.js';
import { paginationFields } from '../../platform/http/pagination.js';
import { courseSchema, lessonSchema } from '../courses/courses.schemas.js';
import { LESSON_TYPES } from '../courses/courses.tables.js';
import { enrollmentSchema } from '../enrollments/enrollments.dto.js';
import { ratingFields } from '../reviews/reviews.schemas.js';

export const navLessonSchema = z.object({
  id: z.string(),
  moduleId: z.string().nullable(),
  title: z.string(),
  type: z.enum(LESSON_TYPES),
  order: z.number().int(),
  isRequired: z.boolean(),
  durationSeconds: z.number().int().nullable(),
  completed: z.boolean(),
  progressPercent: z.number().int(),
  locked: z.boolean(),
  unlocksAt: z.string().nullable(),
  lockReason: z.enum(['UNLOCK_AT', 'UNLOCK_AFTER_DAYS', 'SEQUENTIAL', 'PREREQUISITE']).nullable(),
});

export const catalogueRowSchema = courseSchema.extend({
  lessonCount: z.number().int(),
  enrollmentCount: z.number().int(),
  seatsLeft: z.number().int().nullable(),
  enrollmentStatus: z.enum(['ACTIVE', 'DROPPED', 'COMPLETED']).nullable().describe("the caller's enrollment status, if any"),
  ...ratingFields,
});

export const myCourseRowSchema = enrollmentSchema.extend({
  enrollmentId: z.string(),
  course: courseSchema.extend({ lessonCount: z.number().int() }),
});

export const catalogueQuery = z.object({
  ...paginationFields,
  search: z.string().trim().min(1).max(200).optional(),
  categoryId: optionalFilter(z.string()),
  category: optionalFilter(z.string()).describe('the same as categoryId (categoryId wins when both are sent)'),
});

export const myCoursesQuery = z.object({ ...paginationFields, status: optionalFilter(z.enum(['ACTIVE', 'COMPLETED', 'DROPPED'])) });

export const courseParams = z.object({ courseId: z.string().min(1) });
export const courseLessonParams = z.object({ courseId: z.string().min(1), lessonId: z.string().min(1) });

export const navigationSchema = z.object({
  course: courseSchema,
  enrollment: enrollmentSchema.nullable(),
  modules: z.array(z.object({ id: z.string(), title: z.string(), order: z.number().int(), lessons: z.array(navLessonSchema) })),
  lessonsWithoutModule: z.array(navLessonSchema),
});

export const learnLessonSchema = z.object({
  lesson: lessonSchema,
  progress: z
    .object({
      completed: z.boolean(),
      completedAt: z.string().nullable(),
      progressPercent: z.number().int(),
      positionSeconds: z.number().int().nullable(),
      pdfPage: z.number().int().nullable(),
      pdfTotalPages: z.number().int().nullable(),
    })
    .nullable(),
  previousLessonId: z.string().nullable(),
  nextLessonId: z.string().nullable(),
});

export const lessonParams = z.object({ id: z.string().min(1) });
