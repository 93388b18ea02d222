import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { envelope, errorResponse, ok, paged, pagedEnvelope } from '../../platform/http/envelope.js';
import { actorOf, requestContext } from '../../platform/auth/auth-plugin.js';
import {
  bulkEnrollBody,
  bulkEnrollResultSchema,
  courseParams,
  droppedEnrollmentSchema,
  enrollmentSchema,
  listEnrollmentsQuery,
  namedEnrollmentSchema,
  studentParams,
} from './enrollments.schemas.js';
import * as svc from './enrollments.service.js';

const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);
  const ctx = (req: Parameters<typeof actorOf>[0]) => requestContext(deps, req);
  const tags = ['enrollments'];

  r.post(
    '/api/courses/:id/enroll',
    {
      config: { recordScope: 'institution', errors: ['FEE_OVERDUE'] },
      schema: {
        tags,
        operationId: 'selfEnroll',
        summary: 'Enroll yourself (STUDENT) in a published course; fee gating applies',
        params: courseParams,
        response: { 201: envelope(enrollmentSchema), 409: errorResponse(409, 'already ACTIVE or COMPLETED in the course, or no seat left', ['ALREADY_ENROLLED', 'COURSE_FULL']) },
      },
    },
    async (req, reply) => reply.code(201).send(ok(await svc.selfEnroll(ctx(req), req.params.id))),
  );

  r.post(
    '/api/courses/:id/enrollments',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'bulkEnroll',
        summary: 'Enroll students by CRM contact id (canManageCourses); results per id',
        params: courseParams,
        body: bulkEnrollBody,
        response: {
          200: envelope(bulkEnrollResultSchema),
        },
      },
    },
    async (req) => ok(await svc.bulkEnroll(ctx(req), req.params.id, req.body.studentIds)),
  );

  r.get(
    '/api/courses/:id/enrollments',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'listEnrollments',
        summary: 'Enrollments of a course with student names from the CRM (canManageCourses)',
        params: courseParams,
        querystring: listEnrollmentsQuery,
        response: { 200: pagedEnvelope(namedEnrollmentSchema) },
      },
    },
    async (req) => {
      const { rows, meta } = await svc.listEnrollments(ctx(req), req.params.id, req.query);
      return paged(rows, meta);
    },
  );

  r.get(
    '/api/courses/:id/enrollments/:studentId',
    {
      config: { recordScope: 'owner' },
      schema: {
        tags,
        operationId: 'getEnrollment',
        summary: 'One enrollment (managers, or the student themself)',
        params: studentParams,
        response: { 200: envelope(namedEnrollmentSchema) },
      },
    },
    async (req) => ok(await svc.getEnrollment(ctx(req), req.params.id, req.params.studentId)),
  );

  r.delete(
    '/api/courses/:id/enrollments/:studentId',
    {
      config: { recordScope: 'owner' },
      schema: {
        tags,
        operationId: 'unenroll',
        summary: 'Unenroll: status becomes DROPPED, the row and learner data are kept',
        description:
          'The answer is the enrollment, now DROPPED, with `deleted: true` (the delete answer of every route, `{id, deleted: true}`, with the record that stays). A COMPLETED enrollment is 409.',
        params: studentParams,
        response: { 200: envelope(droppedEnrollmentSchema), 409: errorResponse(409, 'a COMPLETED enrollment cannot be dropped', ['CONFLICT']) },
      },
    },
    async (req) => ok({ ...(await svc.unenroll(ctx(req), req.params.id, req.params.studentId)), deleted: true as const }),
  );
};

export const enrollmentsModule: AppModule = { name: 'enrollments', routes };
