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
