import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { deletedSchema, envelope, ok, paged, pagedEnvelope } from '../../platform/http/envelope.js';
import { actorOf, requestContext } from '../../platform/auth/auth-plugin.js';
import {
  bookmarkParams,
  bookmarkSchema,
  createBookmarkBody,
  createNoteBody,
  lessonParams,
  myBookmarkRowSchema,
  myListQuery,
  myNoteRowSchema,
  noteParams,
  noteSchema,
  updateBookmarkBody,
  updateNoteBody,
} from './notes.schemas.js';
import * as notes from './notes.service.js';

const tags = ['notes'];

/** Spec 4.3: a student's private notes and bookmarks on lessons, and the "my" aggregates. */
const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);
  const ctxOf = (req: Parameters<typeof actorOf>[0]) => requestContext(deps, req);

  // ── notes ──────────────────────────────────────────────────────────────────
  r.get(
    '/api/lessons/:id/notes',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'listLessonNotes',
        summary: "The caller's notes on a lesson, newest first",
        description:
          'Notes are private: only the caller’s own. Anyone of the institution who may know the lesson’s course (no enrollment needed: a former learner keeps their notes); an unknown lesson, or one of a course they may not know, 404 NOT_FOUND.',
        params: lessonParams,
        response: { 200: envelope(noteSchema.array()) },
      },
    },
    async (req) => ok(await notes.listLessonNotes(ctxOf(req), req.params.id)),
  );

  r.post(
    '/api/lessons/:id/notes',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'createLessonNote',
        summary: 'Add a note to a lesson (requires an ACTIVE enrollment)',
        description:
          'Needs an ACTIVE enrollment in the lesson’s course (403 ENROLLMENT_REQUIRED, also for a COMPLETED or DROPPED one and for staff without an enrollment; spec 4.3); an unknown lesson 404 NOT_FOUND. 400 VALIDATION_ERROR for content empty after trimming or over 10,000 characters, or a timestampSeconds on a lesson that is not VIDEO.',
        params: lessonParams,
        body: createNoteBody,
        response: { 201: envelope(noteSchema) },
      },
    },
    async (req, reply) => reply.code(201).send(ok(await notes.createNote(ctxOf(req), req.params.id, req.body))),
  );

  r.patch(
    '/api/lessons/:id/notes/:noteId',
    {
      config: { recordScope: 'owner' },
      schema: {
        tags,
        operationId: 'updateLessonNote',
        summary: "Change one of the caller's notes",
        description:
          'Only the fields sent change (content or timestampSeconds; at least one, else 400 VALIDATION_ERROR). No enrollment needed. Only the caller’s own note: another person’s, or one of another lesson, is 404 NOT_FOUND, as is a lesson they may not know. 400 for a timestampSeconds on a lesson that is not VIDEO.',
        params: noteParams,
        body: updateNoteBody,
        response: { 200: envelope(noteSchema) },
      },
    },
    async (req) => ok(await notes.updateNote(ctxOf(req), req.params.id, req.params.noteId, req.body)),
  );

  r.delete(
    '/api/lessons/:id/notes/:noteId',
    {
      config: { recordScope: 'owner' },
      schema: {
        tags,
        operationId: 'deleteLessonNote',
        summary: "Delete one of the caller's notes",
        description: 'No enrollment needed. Only the caller’s own note: another person’s, or one of another lesson, is 404 NOT_FOUND, as is a lesson they may not know.',
        params: noteParams,
        response: { 200: envelope(deletedSchema) },
      },
    },
    async (req) => ok(await notes.deleteNote(ctxOf(req), req.params.id, req.params.noteId)),
  );

  // ── bookmarks ──────────────────────────────────────────────────────────────
  r.get(
    '/api/lessons/:id/bookmarks',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'listLessonBookmarks',
        summary: "The caller's bookmarks on a lesson, by timestampSeconds ascending",
        description:
          'Bookmarks are private: only the caller’s own. Anyone of the institution who may know the lesson’s course (no enrollment needed: a former learner keeps their notes); an unknown lesson, or one of a course they may not know, 404 NOT_FOUND.',
        params: lessonParams,
        response: { 200: envelope(bookmarkSchema.array()) },
      },
    },
    async (req) => ok(await notes.listLessonBookmarks(ctxOf(req), req.params.id)),
  );

  r.post(
    '/api/lessons/:id/bookmarks',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'createLessonBookmark',
        summary: 'Bookmark a position of a lesson (requires an ACTIVE enrollment)',
        description:
          'Needs an ACTIVE enrollment in the lesson’s course (403 ENROLLMENT_REQUIRED, also for a COMPLETED or DROPPED one and for staff without an enrollment; spec 4.3); an unknown lesson 404 NOT_FOUND. 400 VALIDATION_ERROR for a timestampSeconds outside 0 to 86,400 or a label over 120 characters.',
        params: lessonParams,
        body: createBookmarkBody,
        response: { 201: envelope(bookmarkSchema) },
      },
    },
    async (req, reply) => reply.code(201).send(ok(await notes.createBookmark(ctxOf(req), req.params.id, req.body))),
  );

  r.patch(
    '/api/lessons/:id/bookmarks/:bookmarkId',
    {
      config: { recordScope: 'owner' },
      schema: {
        tags,
        operationId: 'updateLessonBookmark',
        summary: "Change one of the caller's bookmarks",
        description:
          'Only the fields sent change (timestampSeconds or label; at least one, else 400 VALIDATION_ERROR). No enrollment needed. Only the caller’s own bookmark: another person’s, or one of another lesson, is 404 NOT_FOUND, as is a lesson they may not know.',
        params: bookmarkParams,
        body: updateBookmarkBody,
        response: { 200: envelope(bookmarkSchema) },
      },
    },
    async (req) => ok(await notes.updateBookmark(ctxOf(req), req.params.id, req.params.bookmarkId, req.body)),
  );

  r.delete(
    '/api/lessons/:id/bookmarks/:bookmarkId',
    {
      config: { recordScope: 'owner' },
      schema: {
        tags,
        operationId: 'deleteLessonBookmark',
        summary: "Delete one of the caller's bookmarks",
        description: 'No enrollment needed. Only the caller’s own bookmark: another person’s, or one of another lesson, is 404 NOT_FOUND, as is a lesson they may not know.',
        params: bookmarkParams,
        response: { 200: envelope(deletedSchema) },
      },
    },
    async (req) => ok(await notes.deleteBookmark(ctxOf(req), req.params.id, req.params.bookmarkId)),
  );

  // ── my notes / my bookmarks ────────────────────────────────────────────────
  r.get(
    '/api/me/notes',
    {
      schema: {
        tags,
        operationId: 'listMyNotes',
        summary: "The caller's notes across lessons, updatedAt descending",
        description:
          'Any signed-in user: only their own notes, each with its lesson and course. `courseId` narrows to one course; `search` (1 to 200 characters) matches the content, case-insensitively. 400 VALIDATION_ERROR for a bad search or page value.',
        querystring: myListQuery,
        response: { 200: pagedEnvelope(myNoteRowSchema) },
      },
    },
    async (req) => {
      const { rows, meta } = await notes.listMyNotes(ctxOf(req), req.query);
      return paged(rows, meta);
    },
  );

  r.get(
    '/api/me/bookmarks',
    {
      schema: {
        tags,
        operationId: 'listMyBookmarks',
        summary: "The caller's bookmarks across lessons, createdAt descending",
        description:
          'Any signed-in user: only their own bookmarks, each with its lesson and course. `courseId` narrows to one course; `search` (1 to 200 characters) matches the label, case-insensitively. 400 VALIDATION_ERROR for a bad search or page value.',
        querystring: myListQuery,
        response: { 200: pagedEnvelope(myBookmarkRowSchema) },
      },
    },
    async (req) => {
      const { rows, meta } = await notes.listMyBookmarks(ctxOf(req), req.query);
      return paged(rows, meta);
    },
  );
};

export const notesModule: AppModule = { name: 'notes', routes };
