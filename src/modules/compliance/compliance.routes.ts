import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { envelope, ok, paged, pagedEnvelope } from '../../platform/http/envelope.js';
import { actorOf, requestContext } from '../../platform/auth/auth-plugin.js';
import { createTrainingBody, pageQuery, recordSchema, recordsQuery, trainingSchema, waiveBody } from './compliance.schemas.js';
import * as compliance from './compliance.service.js';

const tags = ['compliance'];

/** Spec 4.9 compliance rows: required training, per-person records, waivers. */
const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);
  const ctxOf = (req: Parameters<typeof actorOf>[0]) => requestContext(deps, req);

  r.get(
    '/api/compliance/training',
    {
      schema: {
        tags,
        operationId: 'listComplianceTrainings',
        summary: 'Required trainings (staff)',
        description:
          'Course managers (canManageCourses; anyone else 403 FORBIDDEN): the institution’s trainings with their course, targets (classes, sections, roles), due date and recurrence. 400 VALIDATION_ERROR for a bad page value.',
        querystring: pageQuery,
        response: { 200: pagedEnvelope(trainingSchema) },
      },
    },
    async (req) => {
      const { rows, meta } = await compliance.listTrainings(ctxOf(req), req.query);
      return paged(rows, meta);
    },
  );

  r.post(
    '/api/compliance/training',
    {
      config: { errors: ['BAD_GATEWAY'] },
      schema: {
        tags,
        operationId: 'createComplianceTraining',
        summary: 'Require a course for classes, sections or roles by a due date (ADMIN)',
        description:
          'Students of the classes and sections (and every class when roles include STUDENT) are read from the CRM roster, get a record and an enrollment in the course; ' +
          'students who join a targeted class or section later are assigned by the hourly sweep. TEACHER and ADMIN targets get their record when they first read their records. ' +
          '`recurrenceMonths`: a completion is valid that long; when it expires the next cycle opens, due as long after as the first cycle lasted (dueDate minus creation), ' +
          'and the course is opened again for the learner. A dueDate already past is accepted: its records are OVERDUE from the start (and its later cycles due as they open). Audited (`compliance_training.create`, `enrollment.create`). ADMIN only (403 FORBIDDEN otherwise). A course of another institution, or unknown: 404 NOT_FOUND; a class or section the CRM does not know: 400 VALIDATION_ERROR naming it; the CRM unreachable while reading the roster: 502 BAD_GATEWAY (nothing is created).',
        body: createTrainingBody,
        response: { 201: envelope(trainingSchema) },
      },
    },
    async (req, reply) => reply.code(201).send(ok(await compliance.createTraining(ctxOf(req), req.body))),
  );

  r.get(
    '/api/compliance/records',
    {
      schema: {
        tags,
        operationId: 'listComplianceRecords',
        summary: 'Compliance records: the current cycle of each obligation',
        description:
          'Status: WAIVED, COMPLETED (a completion inside the cycle), OVERDUE (past due) or ASSIGNED. Learners see their own; staff filter by class, section, training, person and status. Any signed-in user: course managers (canManageCourses) see everyone’s records; anyone else only their own (the class, section and person filters are ignored for them). A TEACHER or ADMIN targeted by role gets their own records on first read. 400 VALIDATION_ERROR for an unknown status or a bad page value.',
        querystring: recordsQuery,
        response: { 200: pagedEnvelope(recordSchema) },
      },
    },
    async (req) => {
      const { rows, meta } = await compliance.listRecords(ctxOf(req), req.query);
      return paged(rows, meta);
    },
  );

  r.post(
    '/api/compliance/waive',
    {
      schema: {
        tags,
        operationId: 'waiveComplianceRecord',
        summary: 'Waive the current cycle of a record, with a reason (ADMIN)',
        description:
          'Names the record by `recordId`, or by `trainingId` with `personId` (or `studentId`): the current cycle of that obligation. Reason 3–500 characters; a waived record is 409. ADMIN only (403 FORBIDDEN otherwise). An unknown record 404 NOT_FOUND; a record that is not the current cycle of its obligation 409 CONFLICT. Audited.',
        body: waiveBody,
        response: { 200: envelope(recordSchema) },
      },
    },
    async (req) => ok(await compliance.waive(ctxOf(req), req.body)),
  );
};

export const complianceModule: AppModule = {
  name: 'compliance',
  routes,
  jobs: (deps) => ({
    'compliance.sweep': async () => {
      await compliance.sweepCompliance(deps);
    },
  }),
};
