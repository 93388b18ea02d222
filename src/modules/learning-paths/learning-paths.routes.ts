import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { envelope, ok, paged, pagedEnvelope } from '../../platform/http/envelope.js';
import { actorOf, requestContext } from '../../platform/auth/auth-plugin.js';
import {
  addCoursesBody,
  createPathBody,
  enrollPathBody,
  enrollResultSchema,
  idParams,
  listPathsQuery,
  pathListItem,
  pathSchema,
  updatePathBody,
} from './learning-paths.schemas.js';
import * as paths from './learning-paths.service.js';

const tags = ['learning paths'];

/** Spec 4.9 learning-path rows: ordered courses taken one after another. */
const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);
  const ctxOf = (req: Parameters<typeof actorOf>[0]) => requestContext(deps, req);

  r.get(
    '/api/learning-paths',
    {
      schema: {
        tags,
        operationId: 'listLearningPaths',
        summary: 'Learning paths, newest first',
        description:
          'Staff see every path; learners see PUBLISHED paths and the ones they are on, with their progress. `status` narrows either list. Any signed-in user of the institution. 400 VALIDATION_ERROR for an unknown status or a bad page value.',
        querystring: listPathsQuery,
        response: { 200: pagedEnvelope(pathListItem) },
      },
    },
    async (req) => {
      const { rows, meta } = await paths.listPaths(ctxOf(req), req.query);
      return paged(rows, meta);
    },
  );

  r.post(
    '/api/learning-paths',
    {
      schema: {
        tags,
        operationId: 'createLearningPath',
        summary: 'Create a learning path (canManageCourses)',
        description:
          '`courseIds` in order; every course must be of the caller’s institution (else 404). `status` defaults to PUBLISHED (learners see it and may enroll); ' +
          'DRAFT keeps it to staff until a PATCH publishes it. Needs canManageCourses (403 FORBIDDEN otherwise). A course twice in `courseIds` is 409 CONFLICT; an invalid field 400 VALIDATION_ERROR. Audited.',
        body: createPathBody,
        response: { 201: envelope(pathSchema) },
      },
    },
    async (req, reply) => reply.code(201).send(ok(await paths.createPath(ctxOf(req), req.body))),
  );

  r.get(
    '/api/learning-paths/:id',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'getLearningPath',
        summary: 'A learning path with its courses in order and the caller’s progress',
        description:
          'A course is `locked` until every course before it is completed (its lessons answer 403 LESSON_LOCKED to a learner the path enrolled). Learners reach PUBLISHED paths and their own; others 404. Course managers see any path of the institution.',
        params: idParams,
        response: { 200: envelope(pathSchema) },
      },
    },
    async (req) => ok(await paths.getPath(ctxOf(req), req.params.id)),
  );

  r.patch(
    '/api/learning-paths/:id',
    {
      config: { recordScope: 'owner-edit' },
      schema: {
        tags,
        operationId: 'updateLearningPath',
        summary: 'Change a learning path (its creator or ADMIN)',
        description:
          'Only the fields sent change (title, description, status: DRAFT hides it from learners, PUBLISHED shows it). Needs canManageCourses (403 FORBIDDEN otherwise) and the path’s creator or an ADMIN (other staff 403 FORBIDDEN); an unknown path, or one of another institution, 404 NOT_FOUND. 400 VALIDATION_ERROR for an invalid field. Audited (learning_path.update).',
        params: idParams,
        body: updatePathBody,
        response: { 200: envelope(pathSchema) },
      },
    },
    async (req) => ok(await paths.updatePath(ctxOf(req), req.params.id, req.body)),
  );

  r.post(
    '/api/learning-paths/:id/courses',
    {
      config: { recordScope: 'owner-edit' },
      schema: {
        tags,
        operationId: 'addLearningPathCourses',
        summary: 'Add courses to a path at a position (default: the end)',
        description:
          '`courseId` or `courseIds`; a course of another institution is 404, one already on the path 409. Needs canManageCourses (403 FORBIDDEN otherwise) and the path’s creator or an ADMIN (other staff 403 FORBIDDEN); an unknown path, or one of another institution, 404 NOT_FOUND. A course sent twice is also 409 CONFLICT. Later courses move down. Audited (learning_path.add_courses).',
        params: idParams,
        body: addCoursesBody,
        response: { 200: envelope(pathSchema) },
      },
    },
    async (req) => ok(await paths.addCourses(ctxOf(req), req.params.id, req.body)),
  );

  r.post(
    '/api/learning-paths/:id/enroll',
    {
      config: { recordScope: 'institution', errors: ['FEE_OVERDUE'] },
      schema: {
        tags,
        operationId: 'enrollLearningPath',
        summary: 'Enroll in a published path and its courses (idempotent)',
        description:
          'Learners enroll themselves (self-enrollment and fee rules as for a course); staff may pass `studentIds`. Each course is reported: ENROLLED, ALREADY_ENROLLED, ' +
          'COURSE_FULL or NOT_AVAILABLE (not published) — one full course does not fail the rest. The path order is a prerequisite: the lessons of an enrollment made here ' +
          'answer 403 LESSON_LOCKED (reason PREREQUISITE, naming the course) until the courses before it are completed. Staff enrollments are audited. A path that is not PUBLISHED: 409 CONFLICT; one the caller may not see 404 NOT_FOUND. Self-enrollment: students only (staff 403 FORBIDDEN), the institution must allow it (403 FORBIDDEN) and, where fee gating is on, fees not overdue (402 FEE_OVERDUE). `studentIds` needs canManageCourses (403 FORBIDDEN).',
        params: idParams,
        body: enrollPathBody,
        response: { 200: envelope(enrollResultSchema) },
      },
    },
    async (req) => ok(await paths.enrollPath(ctxOf(req), req.params.id, req.body)),
  );
};

export const learningPathsModule: AppModule = { name: 'learning-paths', routes };
