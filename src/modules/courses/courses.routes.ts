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
        description:
          'Any signed-in user of the institution (staff, students, parents). Course managers (canManageCourses) see DRAFT and PUBLISHED courses, and ARCHIVED ones with status=ARCHIVED; everyone else sees PUBLISHED courses only (another status gives an empty page). Filters: status, categoryId (or category), ownerId (or owner), search (title or description, case-insensitive). Newest first. 400 VALIDATION_ERROR for an unknown status or page value.',
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
        description:
          'Needs canManageCourses (ADMIN, TEACHER or the permission claim; else 403 FORBIDDEN). The course stays DRAFT, hidden from learners, until published. 400 VALIDATION_ERROR for an invalid field, a categoryId that is not a category of the institution, or a thumbnailUrl that is not a web address (https; http outside production). Audited (course.create).',
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
        description:
          'Course managers see any course of the institution; anyone else a PUBLISHED course or one they have an enrollment in (any status). Any other course, or one of another institution: 404 NOT_FOUND.',
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
        description:
          'Only the fields sent change. The course owner with canManageCourses, or an ADMIN (anyone else 403 FORBIDDEN; a course of another institution 404 NOT_FOUND). 400 VALIDATION_ERROR for an invalid field, an unknown categoryId or a thumbnailUrl that is not a web address. Audited (course.update).',
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
          'DELETE archives: the answer is the course, now ARCHIVED, with `deleted: true` (the delete answer of every route, `{id, deleted: true}`, with the record that stays). The course owner with canManageCourses, or an ADMIN (anyone else 403 FORBIDDEN; a course of another institution 404 NOT_FOUND). Archiving an archived course answers it unchanged. Audited (course.archive).',
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
        description:
          'PUBLISHED shows the course to learners (publishedAt is set the first time); DRAFT hides it again; either also unarchives an ARCHIVED course. The course owner with canManageCourses, or an ADMIN (anyone else 403 FORBIDDEN; a course of another institution 404 NOT_FOUND). Audited (course.publish).',
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
        description:
          'Learner data (enrollments, attempts, submissions) is not copied, nor are caption tracks and SCORM packages (upload them again). Needs canManageCourses (403 FORBIDDEN otherwise), any course of the institution (404 NOT_FOUND otherwise). Audited (course.duplicate).',
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
        description:
          'The course owner with canManageCourses, or an ADMIN (anyone else 403 FORBIDDEN; a course of another institution 404 NOT_FOUND). 400 VALIDATION_ERROR for a missing title or a negative order. Audited (module.create).',
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
      schema: {
        tags,
        operationId: 'updateModule',
        summary: 'Rename or reorder a module',
        description:
          'Only title and order change (those sent). The course owner with canManageCourses, or an ADMIN (anyone else 403 FORBIDDEN; an unknown module 404 NOT_FOUND). Audited (module.update).',
        params: idParams,
        body: updateModuleBody,
        response: { 200: envelope(moduleSchema) },
      },
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
        description:
          'Its lessons, and learners’ progress on them, stay in the course without a module. The course owner with canManageCourses, or an ADMIN (anyone else 403 FORBIDDEN; an unknown module 404 NOT_FOUND). Audited (module.delete).',
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
        description:
          'The course owner with canManageCourses, or an ADMIN (anyone else 403 FORBIDDEN; a course of another institution 404 NOT_FOUND). 400 VALIDATION_ERROR for an invalid field, a moduleId that is not a module of this course, duplicate block ids, or a video, PDF or block link that is not a web address. Every enrollment’s progress is recounted (one more lesson). Audited (lesson.create).',
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
        description:
          'Only the fields sent change. The course owner with canManageCourses, or an ADMIN (anyone else 403 FORBIDDEN; an unknown lesson 404 NOT_FOUND). 400 VALIDATION_ERROR as for creation. Changing isRequired recounts every enrollment’s progress. Audited (lesson.update).',
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
      schema: {
        tags,
        operationId: 'deleteLesson',
        summary: 'Delete a lesson (owner or ADMIN)',
        description:
          'Deletes the lesson with what hangs off it (progress, notes, bookmarks, caption tracks, SCORM packages; their stored files are removed by a job). The course owner with canManageCourses, or an ADMIN (anyone else 403 FORBIDDEN; an unknown lesson 404 NOT_FOUND). Audited (lesson.delete).',
        params: idParams,
        response: { 200: envelope(deletedSchema) },
      },
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
        description: `Paginated (spec 4.1); ${CATEGORY_PAGE_SIZE} a page unless perPage or limit says otherwise, so a plain GET lists them all in most institutions. Any signed-in user of the institution. 400 VALIDATION_ERROR for a bad page value.`,
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
        description:
          'Needs canManageCourses (403 FORBIDDEN otherwise). 409 CONFLICT when the institution already has a category of that name; 400 VALIDATION_ERROR for an empty or too long name. Audited (category.create).',
        body: createCategoryBody,
        response: { 201: envelope(categorySchema) },
      },
    },
    async (req, reply) => reply.code(201).send(ok(await svc.createCategory(ctx(req), req.body))),
  );
};

export const coursesModule: AppModule = { name: 'courses', routes };
