import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { envelope, ok, paged, pagedEnvelope } from '../../platform/http/envelope.js';
import { actorOf, requestContext } from '../../platform/auth/auth-plugin.js';
import {
  catalogueQuery,
  catalogueRowSchema,
  courseLessonParams,
  courseParams,
  learnLessonSchema,
  lessonParams,
  myCourseRowSchema,
  myCoursesQuery,
  navigationSchema,
} from './learn.schemas.js';
import { lessonSchema } from '../courses/courses.schemas.js';
import * as svc from './learn.service.js';

const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);
  const ctx = (req: Parameters<typeof actorOf>[0]) => requestContext(deps, req);
  const tags = ['learn'];

  r.get(
    '/api/catalogue',
    {
      schema: {
        tags,
        operationId: 'catalogue',
        summary: 'Published courses of the institution',
        description:
          'Any signed-in user of the institution. Each course with its lesson count, enrollments, seats left (null without maxEnrollments), rating and the caller’s own enrollment status. Filters: search (title or description), categoryId (or category). Newest published first. 400 VALIDATION_ERROR for a bad filter or page value.',
        querystring: catalogueQuery,
        response: { 200: pagedEnvelope(catalogueRowSchema) },
      },
    },
    async (req) => {
      const { rows, meta } = await svc.catalogue(ctx(req), req.query);
      return paged(rows, meta);
    },
  );

  r.get(
    '/api/my-courses',
    {
      schema: {
        tags,
        operationId: 'myCourses',
        summary: "The caller's enrollments with progress (ACTIVE and COMPLETED unless status is given)",
        description:
          'Any signed-in user: their own enrollments (as a student), each with its course and lesson count, most recently accessed first; `status` picks ACTIVE, COMPLETED or DROPPED. 400 VALIDATION_ERROR for an unknown status or a bad page value.',
        querystring: myCoursesQuery,
        response: { 200: pagedEnvelope(myCourseRowSchema) },
      },
    },
    async (req) => {
      const { rows, meta } = await svc.myCourses(ctx(req), req.query);
      return paged(rows, meta);
    },
  );

  r.get(
    '/api/learn/:courseId',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'learnNavigation',
        summary: 'Course navigation: modules, lessons, completion and lock state (enrolled learners or managers)',
        description:
          'Course managers (canManageCourses) and learners with an ACTIVE or COMPLETED enrollment (else 403 ENROLLMENT_REQUIRED); a course the caller may not know (unpublished, never enrolled, or of another institution) 404 NOT_FOUND. Modules in order with their lessons, then `lessonsWithoutModule`; each lesson with completion and lock state (drip schedule, sequential order, learning-path prerequisite). No fee check: the lessons themselves answer 402 when fees are overdue.',
        params: courseParams,
        response: {
          200: envelope(navigationSchema),
        },
      },
    },
    async (req) => ok(await svc.learnNavigation(ctx(req), req.params.courseId)),
  );

  r.get(
    '/api/learn/:courseId/:lessonId',
    {
      config: { recordScope: 'institution', errors: ['FEE_OVERDUE'] },
      schema: {
        tags,
        operationId: 'learnLesson',
        summary: 'Lesson content with the caller’s progress and the previous and next lessons',
        description:
          'Course managers (canManageCourses) open any lesson of the institution, without an enrollment, drip locks or fee gating. Learners need an ACTIVE or ' +
          'COMPLETED enrollment (403 ENROLLMENT_REQUIRED), the lesson unlocked (403 LESSON_LOCKED, also for a course behind an uncompleted one of their ' +
          'learning path) and, when the institution gates on fees, fees not overdue (402 FEE_OVERDUE); answer fields are stripped from their blocks. ' +
          'Opening it stamps the enrollment’s lastAccessedAt. An unknown course, a lesson of another course, or one the caller may not know: 404 NOT_FOUND.',
        params: courseLessonParams,
        response: {
          200: envelope(learnLessonSchema),
        },
      },
    },
    async (req) => ok(await svc.learnLesson(ctx(req), req.params.courseId, req.params.lessonId)),
  );
  r.get(
    '/api/lessons/:id',
    {
      config: { recordScope: 'institution', errors: ['FEE_OVERDUE'] },
      schema: {
        tags,
        operationId: 'getLesson',
        summary: 'A lesson: whole for course managers; enrolled learners open it subject to drip locks and fee gating, with answer fields stripped from blocks',
        description:
          'Course managers (canManageCourses) get any lesson of the institution whole. Learners need an ACTIVE or COMPLETED enrollment (403 ENROLLMENT_REQUIRED), the lesson unlocked (403 LESSON_LOCKED) and, when the institution gates on fees, fees not overdue (402 FEE_OVERDUE); answer fields are stripped from their blocks. A lesson the caller may not know: 404 NOT_FOUND. Opening it stamps the enrollment’s lastAccessedAt.',
        params: lessonParams,
        response: { 200: envelope(lessonSchema) },
      },
    },
    async (req) => ok(await svc.getLessonForViewer(ctx(req), req.params.id)),
  );
};

export const learnModule: AppModule = { name: 'learn', routes };
