import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { deletedSchema, envelope, ok, paged, pagedEnvelope } from '../../platform/http/envelope.js';
import { actorOf, requestContext } from '../../platform/auth/auth-plugin.js';
import {
  createReplyBody,
  createThreadBody,
  idParams,
  listQuery,
  repliesQuery,
  moderateReplyBody,
  moderateThreadBody,
  replySchema,
  threadDetailEnvelope,
  threadSchema,
  updateReplyBody,
  updateThreadBody,
} from './discussions.schemas.js';
import * as svc from './discussions.service.js';

const tags = ['discussions'];
const who =
  'Only course staff (canManageCourses) and students with an ACTIVE or COMPLETED enrollment in the course take part; anyone else 403 ENROLLMENT_REQUIRED ' +
  '(404 for a course they may not know).';
const text = 'Text is stored as given and served as plain text; nothing is rendered as HTML. Author names come from the CRM, else `Student <id>` / `Staff <id>`.';

/** Spec 4.9 `/api/courses/{id}/discussions` and `/api/lessons/{id}/discussions`: threads, replies, edits, soft deletes, moderation. */
const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);
  const ctxOf = (req: Parameters<typeof actorOf>[0]) => requestContext(deps, req);

  r.get(
    '/api/courses/:id/discussions',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'listCourseDiscussions',
        summary: 'Discussion threads of a course (lesson threads included), pinned first, then by latest activity',
        description: `${who} Hidden threads are listed to staff only; a deleted thread stays while it has readable replies, without its text and author. ${text}`,
        params: idParams,
        querystring: listQuery,
        response: { 200: pagedEnvelope(threadSchema) },
      },
    },
    async (req) => {
      const { rows, meta } = await svc.listCourseThreads(ctxOf(req), req.params.id, req.query);
      return paged(rows, meta);
    },
  );

  r.post(
    '/api/courses/:id/discussions',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'createCourseDiscussion',
        summary: 'Start a discussion thread in a course',
        description: `${who} ${text}`,
        params: idParams,
        body: createThreadBody,
        response: { 201: envelope(threadSchema) },
      },
    },
    async (req, reply) => reply.code(201).send(ok(await svc.createCourseThread(ctxOf(req), req.params.id, req.body))),
  );

  r.get(
    '/api/lessons/:id/discussions',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'listLessonDiscussions',
        summary: 'Discussion threads of a lesson, pinned first, then by latest activity',
        description: `${who} The lesson's course decides (drip locks do not apply). ${text}`,
        params: idParams,
        querystring: listQuery,
        response: { 200: pagedEnvelope(threadSchema) },
      },
    },
    async (req) => {
      const { rows, meta } = await svc.listLessonThreads(ctxOf(req), req.params.id, req.query);
      return paged(rows, meta);
    },
  );

  r.post(
    '/api/lessons/:id/discussions',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'createLessonDiscussion',
        summary: 'Start a discussion thread on a lesson',
        description: `${who} ${text}`,
        params: idParams,
        body: createThreadBody,
        response: { 201: envelope(threadSchema) },
      },
    },
    async (req, reply) => reply.code(201).send(ok(await svc.createLessonThread(ctxOf(req), req.params.id, req.body))),
  );

  r.get(
    '/api/discussions/:id',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'getDiscussion',
        summary: 'A thread with a page of its replies (oldest first, default 50)',
        description:
          `${who} A hidden thread is 404 for students. Every reply keeps its place so nesting stays whole (\`parentReplyId\`): deleted replies, and for ` +
          `students hidden ones, come without text and author. ${text}`,
        params: idParams,
        querystring: repliesQuery,
        response: { 200: threadDetailEnvelope },
      },
    },
    async (req) => {
      const { data, meta } = await svc.getThread(ctxOf(req), req.params.id, req.query);
      return { data, error: null, meta };
    },
  );

  r.patch(
    '/api/discussions/:id',
    {
      config: { recordScope: 'owner-edit' },
      schema: {
        tags,
        operationId: 'updateDiscussion',
        summary: 'Edit a thread’s title or body (its author only)',
        description:
          'Sets `editedAt`. Anyone else who can read the thread: 403; a deleted thread: 404. 403 is FORBIDDEN; 404 NOT_FOUND also for a thread the caller cannot read. 400 VALIDATION_ERROR when neither title nor body is given, or one is empty.',
        params: idParams,
        body: updateThreadBody,
        response: { 200: envelope(threadSchema) },
      },
    },
    async (req) => ok(await svc.updateThread(ctxOf(req), req.params.id, req.body)),
  );

  r.delete(
    '/api/discussions/:id',
    {
      config: { recordScope: 'owner-edit' },
      schema: {
        tags,
        operationId: 'deleteDiscussion',
        summary: 'Delete a thread (its author only; soft: replies stay)',
        description:
          'Soft delete: the thread stays listed while it has readable replies, without its text and author, and takes no new replies (409 CONFLICT). Its author only: anyone else who can read it 403 FORBIDDEN (staff too: they hide instead); an unknown or already deleted thread, or one the caller cannot read, 404 NOT_FOUND.',
        params: idParams,
        response: { 200: envelope(deletedSchema) },
      },
    },
    async (req) => ok(await svc.deleteThread(ctxOf(req), req.params.id)),
  );

  r.post(
    '/api/discussions/:id/moderate',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'moderateDiscussion',
        summary: 'Pin, lock or hide a thread (canManageCourses)',
        description:
          'A locked thread takes no new replies (409 CONFLICT); a hidden one is seen by staff only. Each change is written to the audit log. canManageCourses only (403 FORBIDDEN for anyone else, whatever the id); an unknown thread 404 NOT_FOUND.',
        params: idParams,
        body: moderateThreadBody,
        response: { 200: envelope(threadSchema) },
      },
    },
    async (req) => ok(await svc.moderateThread(ctxOf(req), req.params.id, req.body)),
  );

  r.post(
    '/api/discussions/:id/replies',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'replyToDiscussion',
        summary: 'Reply to a thread, or under one of its replies (`parentReplyId`)',
        description: `${who} A locked or deleted thread → 409 CONFLICT. The thread's author gets DISCUSSION_REPLY. ${text}`,
        params: idParams,
        body: createReplyBody,
        response: { 201: envelope(replySchema) },
      },
    },
    async (req, reply) => reply.code(201).send(ok(await svc.createReply(ctxOf(req), req.params.id, req.body))),
  );

  r.patch(
    '/api/discussion-replies/:id',
    {
      config: { recordScope: 'owner-edit' },
      schema: {
        tags,
        operationId: 'updateDiscussionReply',
        summary: 'Edit a reply (its author only)',
        description:
          'Sets `editedAt`. Anyone else who can read it: 403; a deleted reply: 404. 403 is FORBIDDEN; 404 NOT_FOUND also for a reply the caller cannot read. 400 VALIDATION_ERROR for an empty body.',
        params: idParams,
        body: updateReplyBody,
        response: { 200: envelope(replySchema) },
      },
    },
    async (req) => ok(await svc.updateReply(ctxOf(req), req.params.id, req.body.body)),
  );

  r.delete(
    '/api/discussion-replies/:id',
    {
      config: { recordScope: 'owner-edit' },
      schema: {
        tags,
        operationId: 'deleteDiscussionReply',
        summary: 'Delete a reply (its author only; soft: its place and the replies under it stay)',
        description:
          'Soft delete: the reply keeps its place, without text or author, so the replies under it stay in order. Its author only: anyone else who can read it 403 FORBIDDEN; an unknown or already deleted reply, or one the caller cannot read, 404 NOT_FOUND.',
        params: idParams,
        response: { 200: envelope(deletedSchema) },
      },
    },
    async (req) => ok(await svc.deleteReply(ctxOf(req), req.params.id)),
  );

  r.post(
    '/api/discussion-replies/:id/moderate',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'moderateDiscussionReply',
        summary: 'Hide or show a reply (canManageCourses)',
        description:
          'A hidden reply keeps its place; students see it without text and author. Written to the audit log. canManageCourses only (403 FORBIDDEN for anyone else, whatever the id); an unknown reply 404 NOT_FOUND.',
        params: idParams,
        body: moderateReplyBody,
        response: { 200: envelope(replySchema) },
      },
    },
    async (req) => ok(await svc.moderateReply(ctxOf(req), req.params.id, req.body.isHidden)),
  );
};

export const discussionsModule: AppModule = { name: 'discussions', routes };
