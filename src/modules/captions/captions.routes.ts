import type { FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { deletedSchema, envelope, errorResponse, ok } from '../../platform/http/envelope.js';
import { AppError, validationError } from '../../platform/http/errors.js';
import { assertCleanInput } from '../../platform/http/input-guard.js';
import { assertSessionTenant, requestContext } from '../../platform/auth/auth-plugin.js';
import { SUPPORTED_CAPTION_LANGUAGES, captionParams, captionTrackSchema, captionUpdateBody, captionUploadBodyDoc, lessonParams, transcriptSchema } from './captions.schemas.js';
import * as captions from './captions.service.js';
import { captionsJobs } from './captions.jobs.js';

const tags = ['captions'];
const TRANSCRIPT_CACHE_CONTROL = 'private, max-age=3600';
/** One WebVTT file of at most 1 MB, and the form's few text fields. */
const CAPTION_UPLOAD_LIMITS = { fileSize: 1_048_576, files: 1, fields: 20 };

/**
 * The multipart form of a caption upload: the `file` part buffered (CAPTION_UPLOAD_LIMITS stops
 * it at 1 MB) and the text fields as strings.
 */
async function readCaptionForm(req: FastifyRequest): Promise<captions.CaptionForm> {
  if (!req.isMultipart()) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the caption upload as multipart/form-data');
  }
  const fields: Record<string, string> = {};
  let file: captions.CaptionFile | null = null;
  try {
    for await (const part of req.parts()) {
      if (part.type === 'file') {
        const data = await part.toBuffer();
        if (part.fieldname === 'file' && !file) {
          file = { filename: part.filename ?? '', mimetype: part.mimetype ?? '', data, truncated: part.file.truncated };
        }
      } else if (typeof part.value === 'string') {
        fields[part.fieldname] = part.value;
      } else if (part.value !== undefined && part.value !== null) {
        fields[part.fieldname] = String(part.value);
      }
    }
  } catch (err) {
    if ((err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') {
      throw new AppError('PAYLOAD_TOO_LARGE', 'The caption file is larger than 1 MB');
    }
    if ((err as { code?: string }).code === 'FST_FILES_LIMIT') {
      // A second file part is a malformed form, not a large one.
      throw validationError('Send one caption file', [{ field: 'file', message: 'only one file may be sent' }]);
    }
    throw err;
  }
  assertCleanInput(fields, 'body');
  assertSessionTenant(req, fields);
  return { file, fields };
}

/** Spec 4.2: WebVTT caption tracks of lesson videos and their transcripts. */
const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);
  const ctxOf = (req: FastifyRequest) => requestContext(deps, req);
  const transcripts = new captions.TranscriptCache(deps.clock);

  r.get(
    '/api/lessons/:id/captions',
    {
      config: { recordScope: 'institution', errors: ['FEE_OVERDUE'] },
      schema: {
        tags,
        operationId: 'listLessonCaptions',
        summary: 'Caption tracks of a lesson, default track first',
        description:
          'Open to course managers and to learners with an ACTIVE or COMPLETED enrollment (else 403 ENROLLMENT_REQUIRED). Course managers need nothing more; learners also need the lesson unlocked (403 LESSON_LOCKED) and, where fee gating is on, fees not overdue (402 FEE_OVERDUE). A lesson the caller may not know 404 NOT_FOUND.',
        params: lessonParams,
        response: { 200: envelope(captionTrackSchema.array()) },
      },
    },
    async (req) => ok(await captions.listCaptions(ctxOf(req), req.params.id)),
  );

  // multipart/form-data is parsed for this route only: @fastify/multipart's hooks (a close
  // listener per request, a clean-up of saved files after it) would otherwise run on every route.
  await app.register(async (scope) => {
    await scope.register(multipart, { limits: CAPTION_UPLOAD_LIMITS });
    typed(scope).post(
      '/api/lessons/:id/captions',
      {
        config: { recordScope: 'institution' },
        schema: {
          tags,
          operationId: 'createLessonCaption',
          summary: 'Upload a WebVTT caption track (multipart/form-data)',
          description:
            'Requires canManageCourses. Fields: `file` (required; type text/vtt or text/plain, or a .vtt name; must begin ' +
            'with WEBVTT and parse as WebVTT; at most 1 MB, else 413 PAYLOAD_TOO_LARGE), `language` (required; ISO 639-1, ' +
            `one of SUPPORTED_CAPTION_LANGUAGES: ${SUPPORTED_CAPTION_LANGUAGES.join(', ')}), \`label\` (required, 1 to 80 ` +
            'characters), `blockId` (optional; a video block of the lesson when it is made of blocks, any id otherwise), `isDefault` (optional; "true", "1" or "on"; ' +
            'demotes the other default of the same lesson video). The file is stored under a server-generated key.',
          consumes: ['multipart/form-data'],
          params: lessonParams,
          body: captionUploadBodyDoc,
          response: {
            201: envelope(captionTrackSchema),
            409: errorResponse(409, 'a concurrent default change won twice; retry', ['CONFLICT']),
            413: errorResponse(413, 'file over 1 MB'),
            415: errorResponse(415, 'body is not multipart/form-data'),
          },
        },
      },
      async (req, reply) => reply.code(201).send(ok(await captions.createCaption(ctxOf(req), req.params.id, () => readCaptionForm(req)))),
    );
  });

  r.patch(
    '/api/lessons/:id/captions/:captionId',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'updateLessonCaption',
        summary: 'Change the label, language or default flag of a caption track',
        description:
          'Requires canManageCourses. isDefault true demotes the other default of the same (lesson, blockId). canManageCourses only (403 FORBIDDEN otherwise), any course of the institution; an unknown lesson or track 404 NOT_FOUND. 400 VALIDATION_ERROR for an unsupported language or an empty label; 409 CONFLICT when a concurrent default change won (retry). Audited.',
        params: captionParams,
        body: captionUpdateBody,
        response: {
          200: envelope(captionTrackSchema),
          409: errorResponse(409, 'a concurrent default change won twice; retry', ['CONFLICT']),
        },
      },
    },
    async (req) => ok(await captions.updateCaption(ctxOf(req), req.params.id, req.params.captionId, req.body)),
  );

  r.delete(
    '/api/lessons/:id/captions/:captionId',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'deleteLessonCaption',
        summary: 'Delete a caption track and its stored file',
        description:
          'Requires canManageCourses. Removing the stored file is best-effort: the track is removed even if it fails. canManageCourses only (403 FORBIDDEN otherwise), any course of the institution; an unknown lesson or track 404 NOT_FOUND. Audited.',
        params: captionParams,
        response: { 200: envelope(deletedSchema) },
      },
    },
    async (req) => ok(await captions.deleteCaption(ctxOf(req), transcripts, req.params.id, req.params.captionId)),
  );

  r.get(
    '/api/lessons/:id/captions/:captionId/transcript',
    {
      config: { recordScope: 'institution', errors: ['FEE_OVERDUE'] },
      schema: {
        tags,
        operationId: 'getLessonCaptionTranscript',
        summary: 'The cues of a caption track as a transcript',
        description:
          'Parsed from the stored WebVTT file; cached server-side for 3600 s and sent with ' +
          '`Cache-Control: private, max-age=3600`. 502 INTERNAL_ERROR when the stored file cannot be fetched. Who may open the lesson: course managers, and learners with an ACTIVE or COMPLETED enrollment (403 ENROLLMENT_REQUIRED), the lesson unlocked (403 LESSON_LOCKED) and, where fee gating is on, fees not overdue (402 FEE_OVERDUE); an unknown lesson or track 404 NOT_FOUND.',
        params: captionParams,
        response: {
          200: envelope(transcriptSchema),
          502: errorResponse(502, 'the stored caption file could not be fetched (spec part 7: INTERNAL_ERROR with 502)', ['INTERNAL_ERROR']),
        },
      },
    },
    async (req, reply) => {
      const transcript = await captions.getTranscript(ctxOf(req), transcripts, req.params.id, req.params.captionId);
      reply.header('cache-control', TRANSCRIPT_CACHE_CONTROL);
      return ok(transcript);
    },
  );
};

export const captionsModule: AppModule = { name: 'captions', routes, jobs: captionsJobs };
