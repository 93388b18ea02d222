import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { deletedSchema, envelope, ok, paged, pagedEnvelope } from '../../platform/http/envelope.js';
import { actorOf, requestContext } from '../../platform/auth/auth-plugin.js';
import * as svc from './courses.service.js';
import {
  CATEGORY_PAGE_SIZE,
  categoryListQuery,
  categorySchema,
  courseDetailSchema,
  archivedCourseSchema,
  courseSchema,
  createCategoryBody,
  createCourseBody,
  createLessonBody,
  createModuleBody,
  idParams,
  lessonSchema,
  listCoursesQuery,
  moduleSchema,
  outlineModuleSchema,
  publishBody,
  updateCourseBody,
  updateLessonBody,
  updateModuleBody,
} from './courses.schemas.js';

const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);
  const ctx = (req: Parameters<typeof actorOf>[0]) => requestContext(deps, req);
  const tags = ['courses'];

  r.get(
    '/api/courses',
    {
      schema: {
        tags,
        operationId: 'listCourses',
        summary: 'List courses (managers see drafts; learners see published)',
        querystring: listCoursesQuery,
        response: { 200: pagedEnvelope(courseSchema) },
      },
    },
    async (req) => {
      const { rows, meta } = await svc.listCourses(ctx(req), req.query);
      return paged(rows, meta);
    },
  );

  r.post(
    '/api/courses',
    {
      schema: {
        tags,
        operationId: 'createCourse',
        summary: 'Create a DRAFT course owned by the caller (canManageCourses)',
        body: createCourseBody,
        response: { 201: envelope(courseSchema) },
      },
    },
    async (req, reply) => reply.code(201).send(ok(await svc.createCourse(ctx(req), req.body))),
  );

  r.get(
    '/api/courses/:id',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'getCourse',
        summary: 'Course detail, with its rating (averageRating, reviewCount)',
        params: idParams,
        response: { 200: envelope(courseDetailSchema) },
      },
    },
    async (req) => ok(await svc.getCourse(ctx(req), req.params.id)),
  );

  r.patch(
    '/api/courses/:id',
    {
      config: { recordScope: 'owner-edit' },
      schema: {
        tags,
        operationId: 'updateCourse',
        summary: 'Update a course (owner or ADMIN)',
        params: idParams,
        body: updateCourseBody,
        response: { 200: envelope(courseSchema) },
      },
    },
    async (req) => ok(await svc.updateCourse(ctx(req), req.params.id, req.body)),
  );

  r.delete(
    '/api/courses/:id',
    {
      config: { recordScope: 'owner-edit' },
      schema: {
        tags,
        operationId: 'archiveCourse',
        summary: 'Archive a course (owner or ADMIN); learner data is kept',
        description:
          'DELETE archives: the answer is the course, now ARCHIVED, with `deleted: true` (the delete answer of every route, `{id, deleted: true}`, with the record that stays).',
        params: idParams,
        response: { 200: envelope(archivedCourseSchema) },
      },
    },
    async (req) => ok({ ...(await svc.archiveCourse(ctx(req), req.params.id)), deleted: true as const }),
  );

  r.post(
    '/api/courses/:id/publish',
    {
      config: { recordScope: 'owner-edit' },
      schema: {
        tags,
        operationId: 'publishCourse',
        summary: 'Set publish status PUBLISHED or DRAFT (owner or ADMIN)',
        params: idParams,
        body: publishBody,
        response: { 200: envelope(courseSchema) },
      },
    },
    async (req) => ok(await svc.publishCourse(ctx(req), req.params.id, req.body.status)),
  );

  r.post(
    '/api/courses/:id/duplicate',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'duplicateCourse',
        summary: 'Deep-copy a course (modules, lessons, quizzes, assignments with rubrics) into a new DRAFT owned by the caller',
        description: 'Learner data (enrollments, attempts, submissions) is not copied, nor are caption tracks and SCORM packages (upload them again).',
        params: idParams,
        response: { 201: envelope(courseSchema) },
      },
    },
    async (req, reply) => reply.code(201).send(ok(await svc.duplicateCourse(ctx(req), req.params.id))),
  );

  r.get(
    '/api/courses/:id/modules',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'listModules',
        summary: 'Modules of a course, in order, each with its lessons',
        description:
          'Course managers get whole lessons; everyone else the outline with lock state, and content (answer fields stripped) only for lessons they may ' +
          'open (enrolled, unlocked, fees allowing: a fee-gated student simply gets no content, not 402). Lessons without a module are not included: ' +
          'GET /api/learn/{courseId} lists them as `lessonsWithoutModule`. Anyone who may see the course: managers, or a PUBLISHED course, or one the caller ' +
          'has an enrollment in; otherwise 404 NOT_FOUND.',
        params: idParams,
        response: { 200: envelope(outlineModuleSchema.array()) },
      },
    },
    async (req) => ok(await svc.listModules(ctx(req), req.params.id)),
  );

  r.post(
    '/api/courses/:id/modules',
    {
      config: { recordScope: 'owner-edit' },
      schema: {
        tags,
        operationId: 'createModule',
        summary: 'Add a module (owner or ADMIN); order defaults to the end',
        params: idParams,
        body: createModuleBody,
        response: { 201: envelope(moduleSchema) },
      },
    },
    async (req, reply) => reply.code(201).send(ok(await svc.createModule(ctx(req), req.params.id, req.body))),
  );

  r.patch(
    '/api/modules/:id',
    {
      config: { recordScope: 'owner-edit' },
      schema: { tags, operationId: 'updateModule', summary: 'Rename or reorder a module', params: idParams, body: updateModuleBody, response: { 200: envelope(moduleSchema) } },
    },
    async (req) => ok(await svc.updateModule(ctx(req), req.params.id, req.body)),
  );

  r.delete(
    '/api/modules/:id',
    {
      config: { recordScope: 'owner-edit' },
      schema: {
        tags,
        operationId: 'deleteModule',
        summary: 'Delete a module; its lessons stay in the course without a module',
        params: idParams,
        response: { 200: envelope(deletedSchema) },
      },
    },
    async (req) => ok(await svc.deleteModule(ctx(req), req.params.id)),
  );

  r.post(
    '/api/courses/:id/lessons',
    {
      config: { recordScope: 'owner-edit' },
      schema: {
        tags,
        operationId: 'createLesson',
        summary: 'Add a lesson (owner or ADMIN); order defaults to the end of its module',
        params: idParams,
        body: createLessonBody,
        response: { 201: envelope(lessonSchema) },
      },
    },
    async (req, reply) => reply.code(201).send(ok(await svc.createLesson(ctx(req), req.params.id, req.body))),
  );

  r.patch(
    '/api/lessons/:id',
    {
      config: { recordScope: 'owner-edit' },
      schema: {
        tags,
        operationId: 'updateLesson',
        summary: 'Update a lesson (owner or ADMIN)',
        params: idParams,
        body: updateLessonBody,
        response: { 200: envelope(lessonSchema) },
      },
    },
    async (req) => ok(await svc.updateLesson(ctx(req), req.params.id, req.body)),
  );

  r.delete(
    '/api/lessons/:id',
    {
      config: { recordScope: 'owner-edit' },
      schema: { tags, operationId: 'deleteLesson', summary: 'Delete a lesson (owner or ADMIN)', params: idParams, response: { 200: envelope(deletedSchema) } },
    },
    async (req) => ok(await svc.deleteLesson(ctx(req), req.params.id)),
  );

  r.get(
    '/api/categories',
    {
      schema: {
        tags: ['categories'],
        operationId: 'listCategories',
        summary: 'Course categories of the institution, by name',
        description: `Paginated (spec 4.1); ${CATEGORY_PAGE_SIZE} a page unless perPage or limit says otherwise, so a plain GET lists them all in most institutions.`,
        querystring: categoryListQuery,
        response: { 200: pagedEnvelope(categorySchema) },
      },
    },
    async (req) => {
      const { rows, meta } = await svc.listCategories(ctx(req), req.query);
      return paged(rows, meta);
    },
  );

  r.post(
    '/api/categories',
    {
      schema: {
        tags: ['categories'],
        operationId: 'createCategory',
        summary: 'Create a category (canManageCourses); names are unique',
        body: createCategoryBody,
        response: { 201: envelope(categorySchema) },
      },
    },
    async (req, reply) => reply.code(201).send(ok(await svc.createCategory(ctx(req), req.body))),
  );
};

export const coursesModule: AppModule = { name: 'courses', routes };
