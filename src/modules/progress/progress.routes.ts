import type { AppModule, ModuleRoutes } from '../types.js';
import { progressJobs } from './course-progress.js';
import { typed } from '../types.js';
import { envelope, ok } from '../../platform/http/envelope.js';
import { actorOf, requestContext } from '../../platform/auth/auth-plugin.js';
import {
  answerBody,
  answerSchema,
  blockParams,
  eventsBody,
  eventsResultSchema,
  interactionBody,
  interactionSchema,
  lessonParams as params,
  pdfProgressBody,
  progressBatchBody,
  progressBatchResultSchema,
  progressBody,
  progressResultSchema as progressResult,
} from './progress.schemas.js';
import * as svc from './progress.service.js';

const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);
  const ctx = (req: Parameters<typeof actorOf>[0]) => requestContext(deps, req);
  const tags = ['progress'];

  r.post(
    '/api/lessons/:id/progress',
    {
      config: { recordScope: 'institution', errors: ['FEE_OVERDUE'] },
      schema: {
        tags,
        operationId: 'updateLessonProgress',
        summary: 'Update lesson progress; completing every required lesson completes the course',
        description:
          'Sets completed, progressPercent (0-100) and positionSeconds; progress only moves forward (a completed lesson stays completed). A QUIZ, ASSIGNMENT or SCORM lesson is completed by its assessment or tracking data: claiming completion of one is 409 CONFLICT. Needs an ACTIVE or COMPLETED enrollment in the course (403 ENROLLMENT_REQUIRED, course managers too); for learners also the lesson unlocked (403 LESSON_LOCKED) and, where fee gating is on, fees not overdue (402 FEE_OVERDUE). A lesson the caller may not know: 404 NOT_FOUND.',
        params,
        body: progressBody,
        response: { 200: envelope(progressResult) },
      },
    },
    async (req) => ok(await svc.updateProgress(ctx(req), req.params.id, req.body)),
  );

  r.post(
    '/api/lessons/:id/progress-v2',
    {
      config: { recordScope: 'institution', errors: ['FEE_OVERDUE'] },
      schema: {
        tags,
        operationId: 'updateLessonProgressBatch',
        summary: 'Batched progress updates for lessons of the same course, in one transaction',
        description:
          'Items count in order: on a SEQUENTIAL course a lesson completed by an earlier item opens the next one for the items after it. A locked lesson (403 LESSON_LOCKED) or a lesson of another course (400) writes nothing. Needs an ACTIVE or COMPLETED enrollment in the course (403 ENROLLMENT_REQUIRED, course managers too); for learners also the lesson unlocked (403 LESSON_LOCKED) and, where fee gating is on, fees not overdue (402 FEE_OVERDUE). A lesson the caller may not know: 404 NOT_FOUND. The path’s lesson decides the course; `items[].lessonId` defaults to it.',
        params,
        body: progressBatchBody,
        response: { 200: envelope(progressBatchResultSchema) },
      },
    },
    async (req) => ok(await svc.updateProgressBatch(ctx(req), req.params.id, req.body.items)),
  );

  r.post(
    '/api/lessons/:id/pdf-progress',
    {
      config: { recordScope: 'institution', errors: ['FEE_OVERDUE'] },
      schema: {
        tags,
        operationId: 'updatePdfProgress',
        summary: 'Page reached of total pages in a PDF lesson; reaching the last page completes it',
        description:
          'page and totalPages are at least 1 and page at most totalPages (else 400 VALIDATION_ERROR); a lesson that is not a PDF lesson is 400. Needs an ACTIVE or COMPLETED enrollment in the course (403 ENROLLMENT_REQUIRED, course managers too); for learners also the lesson unlocked (403 LESSON_LOCKED) and, where fee gating is on, fees not overdue (402 FEE_OVERDUE). A lesson the caller may not know: 404 NOT_FOUND.',
        params,
        body: pdfProgressBody,
        response: { 200: envelope(progressResult) },
      },
    },
    async (req) => ok(await svc.updatePdfProgress(ctx(req), req.params.id, req.body.page, req.body.totalPages)),
  );

  r.post(
    '/api/lessons/:id/events',
    {
      config: { recordScope: 'institution', errors: ['FEE_OVERDUE'] },
      schema: {
        tags,
        operationId: 'recordLearnerEvents',
        summary: 'Store learner player events (one or a list); a complete/ended event completes the lesson',
        description:
          'Each event: a type, and optionally positionSeconds, occurredAt and data. The last positionSeconds becomes the lesson position; a complete or ended event completes a lesson that is not QUIZ, ASSIGNMENT or SCORM (those ignore it). Needs an ACTIVE or COMPLETED enrollment in the course (403 ENROLLMENT_REQUIRED, course managers too); for learners also the lesson unlocked (403 LESSON_LOCKED) and, where fee gating is on, fees not overdue (402 FEE_OVERDUE). A lesson the caller may not know: 404 NOT_FOUND.',
        params,
        body: eventsBody,
        response: { 201: envelope(eventsResultSchema) },
      },
    },
    async (req, reply) => {
      const events = 'events' in req.body ? req.body.events : [req.body];
      return reply.code(201).send(ok(await svc.recordEvents(ctx(req), req.params.id, events)));
    },
  );

  r.post(
    '/api/lessons/:id/interactions',
    {
      config: { recordScope: 'institution', errors: ['FEE_OVERDUE'] },
      schema: {
        tags,
        operationId: 'recordInteraction',
        summary: 'Store a learner interaction with the lesson',
        description:
          'A `kind`, an optional `targetId` and free-form `data`, stored for analytics; nothing is completed. Needs an ACTIVE or COMPLETED enrollment in the course (403 ENROLLMENT_REQUIRED, course managers too); for learners also the lesson unlocked (403 LESSON_LOCKED) and, where fee gating is on, fees not overdue (402 FEE_OVERDUE). A lesson the caller may not know: 404 NOT_FOUND.',
        params,
        body: interactionBody,
        response: {
          201: envelope(interactionSchema),
        },
      },
    },
    async (req, reply) => reply.code(201).send(ok(await svc.recordInteraction(ctx(req), req.params.id, req.body))),
  );

  r.get(
    '/api/lessons/:id/blocks/:blockId/answer',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'getBlockAnswer',
        summary: "The caller's answer to an interactive block, or null",
        description:
          'Anyone of the institution who may know the course (no enrollment, drip or fee check: only their own answer is read). An unknown lesson, or a block id a lesson with declared blocks does not have: 404 NOT_FOUND.',
        params: blockParams,
        response: { 200: envelope(answerSchema.nullable()) },
      },
    },
    async (req) => ok(await svc.getBlockAnswer(ctx(req), req.params.id, req.params.blockId)),
  );

  r.post(
    '/api/lessons/:id/blocks/:blockId/answer',
    {
      config: { recordScope: 'institution', errors: ['FEE_OVERDUE'] },
      schema: {
        tags,
        operationId: 'answerBlock',
        summary: 'Answer an interactive block (the latest answer replaces the previous one)',
        description:
          'A block with a `correctAnswer` grades the answer (`isCorrect`); other blocks store it ungraded. A lesson that declares blocks takes only their ids (else 404); one that declares none takes any block id. Needs an ACTIVE or COMPLETED enrollment in the course (403 ENROLLMENT_REQUIRED, course managers too); for learners also the lesson unlocked (403 LESSON_LOCKED) and, where fee gating is on, fees not overdue (402 FEE_OVERDUE). A lesson the caller may not know: 404 NOT_FOUND.',
        params: blockParams,
        body: answerBody,
        response: { 200: envelope(answerSchema) },
      },
    },
    async (req) => ok(await svc.answerBlock(ctx(req), req.params.id, req.params.blockId, req.body.answer)),
  );
};

export const progressModule: AppModule = { name: 'progress', routes, jobs: progressJobs };
