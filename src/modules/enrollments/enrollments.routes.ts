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
        description:
          'Students only (anyone else 403 FORBIDDEN), in a PUBLISHED course (else 404 NOT_FOUND). Already ACTIVE or COMPLETED in it: 409 ALREADY_ENROLLED (checked first); a DROPPED enrollment becomes ACTIVE again. Then the institution must allow self-enrollment (403 FORBIDDEN) and, when it gates on fees, the student’s fees must not be overdue (402 FEE_OVERDUE); a full course is 409 COURSE_FULL. The student gets ENROLL_WELCOME.',
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
        description:
          'Needs canManageCourses (403 FORBIDDEN otherwise); any course of the institution (404 NOT_FOUND otherwise) that is not ARCHIVED (409 CONFLICT). The ids (1 to 1,000, repeats ignored) are stored as given: they are not checked against the CRM. Never all-or-nothing: each id is `enrolled` (new, or a DROPPED enrollment made ACTIVE), `alreadyEnrolled`, or `failed` with COURSE_FULL once the seats run out. New enrollments get ENROLL_WELCOME and are audited (enrollment.create).',
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
        description:
          'Needs canManageCourses (403 FORBIDDEN otherwise); any course of the institution (404 NOT_FOUND otherwise). Oldest first; `status` narrows to ACTIVE, COMPLETED or DROPPED. Names are looked up in the CRM; a name it cannot give reads "Student <id>" (a CRM outage does not fail the list).',
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
        description:
          'Course managers (canManageCourses), or the student themself; for anyone else, as for no enrollment or a course of another institution, 404 NOT_FOUND. The name comes from the CRM ("Student <id>" when it cannot give one).',
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
          'The answer is the enrollment, now DROPPED, with `deleted: true` (the delete answer of every route, `{id, deleted: true}`, with the record that stays). A COMPLETED enrollment is 409. Course managers, or the student themself (anyone else 404 NOT_FOUND). Dropping a DROPPED enrollment answers it unchanged. Staff drops are audited (enrollment.drop).',
        params: studentParams,
        response: { 200: envelope(droppedEnrollmentSchema), 409: errorResponse(409, 'a COMPLETED enrollment cannot be dropped', ['CONFLICT']) },
      },
    },
    async (req) => ok({ ...(await svc.unenroll(ctx(req), req.params.id, req.params.studentId)), deleted: true as const }),
  );
};

export const enrollmentsModule: AppModule = { name: 'enrollments', routes };
