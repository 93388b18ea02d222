import { z } from 'zod';
import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { commonErrors, envelope, ok } from '../../platform/http/envelope.js';
import { serviceContext } from '../../platform/context.js';
import { actorOf } from '../../platform/auth/auth-plugin.js';
import { ENROLLMENT_STATUSES } from '../enrollments/enrollments.tables.js';
import * as svc from './progress.service.js';

const params = z.object({ id: z.string().min(1) });
const progressFields = {
  completed: z.boolean().optional(),
  progressPercent: z.number().min(0).max(100).optional(),
  positionSeconds: z.number().int().min(0).max(86_400 * 7).optional(),
};
const progressResult = z.object({
  lessonId: z.string(),
  enrollmentId: z.string(),
  completed: z.boolean(),
  completedAt: z.string().nullable(),
  progressPercent: z.number().int().describe('this lesson, 0-100'),
  positionSeconds: z.number().int().nullable(),
  pdfPage: z.number().int().nullable(),
  pdfTotalPages: z.number().int().nullable(),
  updatedAt: z.string(),
  progress: z.number().int().describe("the enrollment's progress, 0-100"),
  status: z.enum(ENROLLMENT_STATUSES).describe("the enrollment's status"),
  courseCompleted: z.boolean(),
  completedNow: z.boolean().describe('this call completed the course'),
  certificateId: z.string().nullable(),
});
const answerSchema = z.object({
  lessonId: z.string(),
  blockId: z.string(),
  answer: z.unknown(),
  isCorrect: z.boolean().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const eventSchema = z.object({
  type: z.string().trim().min(1).max(40).describe('play, pause, seek, complete, …'),
  positionSeconds: z.number().min(0).max(86_400 * 7).optional(),
  occurredAt: z.string().datetime({ offset: true }).optional(),
  data: z.record(z.string(), z.unknown()).optional(),
});

const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);
  const ctx = (req: Parameters<typeof actorOf>[0]) => serviceContext(deps, actorOf(req));
  const tags = ['progress'];

  r.post('/api/lessons/:id/progress', {
    schema: {
      tags,
      operationId: 'updateLessonProgress',
      summary: 'Update lesson progress; completing every required lesson completes the course',
      params,
      body: z.object(progressFields),
      response: { 200: envelope(progressResult), ...commonErrors },
    },
  }, async (req) => ok(await svc.updateProgress(ctx(req), req.params.id, req.body)));

  r.post('/api/lessons/:id/progress-v2', {
    schema: {
      tags,
      operationId: 'updateLessonProgressBatch',
      summary: 'Batched progress updates for lessons of the same course, in one transaction',
      params,
      body: z.object({ items: z.array(z.object({ lessonId: z.string().min(1).optional(), ...progressFields })).min(1).max(200) }),
      response: { 200: envelope(z.object({ items: z.array(progressResult), progress: z.number().int(), status: z.enum(ENROLLMENT_STATUSES) })), ...commonErrors },
    },
  }, async (req) => ok(await svc.updateProgressBatch(ctx(req), req.params.id, req.body.items)));

  r.post('/api/lessons/:id/pdf-progress', {
    schema: {
      tags,
      operationId: 'updatePdfProgress',
      summary: 'Page reached of total pages in a PDF lesson; reaching the last page completes it',
      params,
      body: z.object({ page: z.number().int().min(1).max(100_000), totalPages: z.number().int().min(1).max(100_000) }),
      response: { 200: envelope(progressResult), ...commonErrors },
    },
  }, async (req) => ok(await svc.updatePdfProgress(ctx(req), req.params.id, req.body.page, req.body.totalPages)));

  r.post('/api/lessons/:id/events', {
    schema: {
      tags,
      operationId: 'recordLearnerEvents',
      summary: 'Store learner player events (one or a list); a complete/ended event completes the lesson',
      params,
      body: z.union([eventSchema, z.object({ events: z.array(eventSchema).min(1).max(500) })]),
      response: { 201: envelope(z.object({ recorded: z.number().int(), progress: progressResult.nullable() })), ...commonErrors },
    },
  }, async (req, reply) => {
    const events = 'events' in req.body ? req.body.events : [req.body];
    return reply.code(201).send(ok(await svc.recordEvents(ctx(req), req.params.id, events)));
  });

  r.post('/api/lessons/:id/interactions', {
    schema: {
      tags,
      operationId: 'recordInteraction',
      summary: 'Store a learner interaction with the lesson',
      params,
      body: z.object({ kind: z.string().trim().min(1).max(60), targetId: z.string().max(200).optional(), data: z.record(z.string(), z.unknown()).optional() }),
      response: {
        201: envelope(z.object({ id: z.string(), lessonId: z.string(), kind: z.string(), targetId: z.string().nullable(), data: z.record(z.string(), z.unknown()), createdAt: z.string() })),
        ...commonErrors,
      },
    },
  }, async (req, reply) => reply.code(201).send(ok(await svc.recordInteraction(ctx(req), req.params.id, req.body))));

  const blockParams = z.object({ id: z.string().min(1), blockId: z.string().min(1) });
  r.get('/api/lessons/:id/blocks/:blockId/answer', {
    schema: { tags, operationId: 'getBlockAnswer', summary: "The caller's answer to an interactive block, or null", params: blockParams, response: { 200: envelope(answerSchema.nullable()), ...commonErrors } },
  }, async (req) => ok(await svc.getBlockAnswer(ctx(req), req.params.id, req.params.blockId)));

  r.post('/api/lessons/:id/blocks/:blockId/answer', {
    schema: {
      tags,
      operationId: 'answerBlock',
      summary: 'Answer an interactive block (the latest answer replaces the previous one)',
      params: blockParams,
      body: z.object({ answer: z.union([z.string().max(10_000), z.number(), z.boolean(), z.array(z.unknown()).max(100), z.record(z.string(), z.unknown())]) }),
      response: { 200: envelope(answerSchema), ...commonErrors },
    },
  }, async (req) => ok(await svc.answerBlock(ctx(req), req.params.id, req.params.blockId, req.body.answer)));
};

export const progressModule: AppModule = { name: 'progress', routes };
