import { z } from 'zod';
import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { commonErrors, envelope, errorEnvelope, ok, paged, pagedEnvelope } from '../../platform/http/envelope.js';
import { paginationFields } from '../../platform/http/pagination.js';
import { serviceContext } from '../../platform/context.js';
import { actorOf } from '../../platform/auth/auth-plugin.js';
import { courseSchema, lessonSchema } from '../courses/courses.schemas.js';
import { LESSON_TYPES } from '../courses/courses.tables.js';
import { enrollmentSchema } from '../enrollments/enrollments.dto.js';
import * as svc from './learn.service.js';

const navLesson = z.object({
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
  lockReason: z.enum(['UNLOCK_AT', 'UNLOCK_AFTER_DAYS', 'SEQUENTIAL']).nullable(),
});

const catalogueRow = courseSchema.extend({
  lessonCount: z.number().int(),
  enrollmentCount: z.number().int(),
  seatsLeft: z.number().int().nullable(),
  enrollmentStatus: z.enum(['ACTIVE', 'DROPPED', 'COMPLETED']).nullable().describe("the caller's enrollment status, if any"),
});

const myCourseRow = enrollmentSchema.extend({
  enrollmentId: z.string(),
  course: courseSchema.extend({ lessonCount: z.number().int() }),
});

const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);
  const ctx = (req: Parameters<typeof actorOf>[0]) => serviceContext(deps, actorOf(req));
  const tags = ['learn'];

  r.get('/api/catalogue', {
    schema: {
      tags,
      operationId: 'catalogue',
      summary: 'Published courses of the institution',
      querystring: z.object({ ...paginationFields, search: z.string().trim().min(1).max(200).optional(), categoryId: z.string().optional() }),
      response: { 200: pagedEnvelope(catalogueRow), ...commonErrors },
    },
  }, async (req) => {
    const { rows, meta } = await svc.catalogue(ctx(req), req.query);
    return paged(rows, meta);
  });

  r.get('/api/my-courses', {
    schema: {
      tags,
      operationId: 'myCourses',
      summary: "The caller's enrollments with progress (ACTIVE and COMPLETED unless status is given)",
      querystring: z.object({ ...paginationFields, status: z.enum(['ACTIVE', 'COMPLETED', 'DROPPED']).optional() }),
      response: { 200: pagedEnvelope(myCourseRow), ...commonErrors },
    },
  }, async (req) => {
    const { rows, meta } = await svc.myCourses(ctx(req), req.query);
    return paged(rows, meta);
  });

  r.get('/api/learn/:courseId', {
    schema: {
      tags,
      operationId: 'learnNavigation',
      summary: 'Course navigation: modules, lessons, completion and lock state (enrolled learners or managers)',
      params: z.object({ courseId: z.string().min(1) }),
      response: {
        200: envelope(
          z.object({
            course: courseSchema,
            enrollment: enrollmentSchema.nullable(),
            modules: z.array(z.object({ id: z.string(), title: z.string(), order: z.number().int(), lessons: z.array(navLesson) })),
            lessonsWithoutModule: z.array(navLesson),
          }),
        ),
        ...commonErrors,
      },
    },
  }, async (req) => ok(await svc.learnNavigation(ctx(req), req.params.courseId)));

  r.get('/api/learn/:courseId/:lessonId', {
    schema: {
      tags,
      operationId: 'learnLesson',
      summary: 'Lesson content: needs an ACTIVE or COMPLETED enrollment (403 ENROLLMENT_REQUIRED), unlocked (403 LESSON_LOCKED), fees not overdue when gated (402)',
      params: z.object({ courseId: z.string().min(1), lessonId: z.string().min(1) }),
      response: {
        200: envelope(
          z.object({
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
          }),
        ),
        402: errorEnvelope,
        ...commonErrors,
      },
    },
  }, async (req) => ok(await svc.learnLesson(ctx(req), req.params.courseId, req.params.lessonId)));
};

export const learnModule: AppModule = { name: 'learn', routes };
