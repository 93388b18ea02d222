import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { envelope, errorResponse, ok } from '../../platform/http/envelope.js';
import type { Deps } from '../../platform/context.js';
import { requestContext } from '../../platform/auth/auth-plugin.js';
import { routeRateLimits } from '../../platform/http/rate-limit.js';
import {
  contentParams,
  contentWildcardParams,
  launchQuery,
  launchSchema,
  packageBodyDoc,
  packageSchema,
  scormParams,
  trackBody,
  trackResultSchema,
  playerPageSchema,
  contentBytesSchema,
} from './scorm.schemas.js';
import * as scorm from './scorm.service.js';

const tags = ['scorm'];

const LEARNER_ACCESS =
  'Learners need what opening the lesson needs (`lesson.open`): an ACTIVE or COMPLETED enrollment (403 ENROLLMENT_REQUIRED), the lesson not ' +
  'drip-locked (403 LESSON_LOCKED) and, when the institution gates on fees, fees not overdue (402 FEE_OVERDUE). A lesson of another ' +
  'institution, a lesson that is not a SCORM lesson, or one without a package is 404.';

const contentLengthOf = (req: FastifyRequest) => {
  const v = req.headers['content-length'];
  return typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : undefined;
};

/** The package upload lives in its own scope, where bodies are left unparsed so the zip streams to disk. */
async function uploadRoute(scope: FastifyInstance, deps: Deps) {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
  typed(scope).put(
    '/api/scorm/:id/package',
    {
      config: { recordScope: 'owner-edit' },
      schema: {
        tags,
        operationId: 'uploadScormPackage',
        summary: 'Upload the package of a SCORM lesson (the zip as the request body)',
        description:
          'The course owner with canManageCourses, or an ADMIN (others 403). Body: the zip, `Content-Type: application/zip` (also ' +
          '`application/x-zip-compressed` or `application/octet-stream`; else 415), at most SCORM_MAX_PACKAGE_BYTES (default 500 MB; 413). ' +
          'Checked before anything is stored, each refusal 400 VALIDATION_ERROR with `details.problem` (and `details.entry`): not_a_zip, ' +
          'too_many_entries, path_traversal, absolute_path, backslash, bad_name, symlink, encrypted, unsupported_compression, duplicate_entry, ' +
          'entry_too_large, total_too_large, compression_ratio, size_mismatch, no_manifest, bad_manifest, missing_file. imsmanifest.xml (SCORM 1.2 or ' +
          '2004 2nd–4th edition) gives the version, the default organization’s items, their resources, launch files (xml:base and item parameters ' +
          'applied), scormType, mastery score (1.2 masteryscore; 2004 minNormalizedMeasure with satisfiedByMeasure) and the 2004 sequencing as data. ' +
          'A new package replaces the current one (201 either way, `replacedPackageId`); learners’ earlier attempts are kept, and their next launch ' +
          'starts a new attempt. A lesson of another type is 400.',
        consumes: ['application/zip'],
        params: scormParams,
        body: packageBodyDoc,
        response: {
          201: envelope(packageSchema),
          413: errorResponse(413, 'over SCORM_MAX_PACKAGE_BYTES'),
          415: errorResponse(415, 'the body is not a zip'),
        },
      },
    },
    async (req, reply) => {
      try {
        const pkg = await scorm.uploadPackage(requestContext(deps, req), req.params.id, {
          contentType: req.headers['content-type'],
          contentLength: contentLengthOf(req),
          body: req.raw,
        });
        return reply.code(201).send(ok(pkg));
      } catch (err) {
        // Refused before the whole body was read: the connection is not reused mid-body.
        if (!req.raw.readableEnded) reply.header('connection', 'close');
        throw err;
      }
    },
  );
}

/** Issue 15: SCORM 1.2 and 2004 packages (spec 4.9 `GET /api/scorm/{id}/launch`, `POST /api/scorm/{id}/track`). */
const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);
  const ctxOf = (req: FastifyRequest) => requestContext(deps, req);

  await app.register(async (scope) => uploadRoute(scope, deps));

  r.get(
    '/api/scorm/:id/launch',
    {
      config: { recordScope: 'institution', errors: ['FEE_OVERDUE'] },
      schema: {
        tags,
        operationId: 'launchScorm',
        summary: 'Launch a SCORM lesson: launch URL, version, SCOs and the learner’s saved CMI state',
        description:
          '`scoId` picks the SCO (its id or manifest identifier; default the first). `state.entry` is `ab-initio` for a new attempt, `resume` after ' +
          'a suspend (exit "suspend"), "" when continuing an attempt that was not suspended; `cmi` holds every value the SCO may read (1.2 ' +
          'cmi.core.* / 2004 cmi.*: suspend_data, location, credit, mode, statuses, scores, objectives…). `launchUrl` is under a content grant ' +
          'valid for SCORM_LAUNCH_TTL_SECONDS, bound to the caller; `playerUrl` is the launch page with the run-time API. Managers without an ' +
          `enrollment launch in browse mode (credit no-credit), untracked. ${LEARNER_ACCESS}`,
        params: scormParams,
        querystring: launchQuery,
        response: { 200: envelope(launchSchema) },
      },
    },
    async (req) => ok(await scorm.launch(ctxOf(req), req.params.id, req.query.scoId)),
  );

  r.get(
    '/api/scorm/:id/player',
    {
      config: { recordScope: 'institution', errors: ['FEE_OVERDUE'] },
      schema: {
        tags,
        operationId: 'scormPlayer',
        summary: 'The launch page: the SCORM run-time API adapter and the SCO in a frame (text/html)',
        description:
          'Defines `window.API` (1.2: LMSInitialize, LMSFinish, LMSGetValue, LMSSetValue, LMSCommit, LMSGetLastError, LMSGetErrorString, ' +
          'LMSGetDiagnostic) or `window.API_1484_11` (2004: Initialize, Terminate, GetValue, SetValue, Commit, GetLastError, GetErrorString, ' +
          'GetDiagnostic) for the SCO framed below it. Reads are answered from the launch state; writes to read-only, keyword and unknown ' +
          'elements fail at once with the version’s error code; other writes are sent to POST /api/scorm/{id}/track on Commit and Terminate, ' +
          `whose validation decides the result. Same access as the launch. ${LEARNER_ACCESS}`,
        params: scormParams,
        querystring: launchQuery,
        response: {
          200: { description: 'the launch page', content: { 'text/html': { schema: playerPageSchema } } },
        },
      },
    },
    async (req, reply) => {
      const html = await scorm.player(ctxOf(req), req.params.id, req.query.scoId);
      return reply.header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store').send(html);
    },
  );

  r.post(
    '/api/scorm/:id/track',
    {
      config: { recordScope: 'institution', errors: ['FEE_OVERDUE'] },
      schema: {
        tags,
        operationId: 'trackScorm',
        summary: 'Store CMI values of a SCO (a batch of SetValue calls, with Commit or Terminate)',
        description:
          'Body: `{scoId, attemptId?, values: {element: value}, terminate?}` or a list of them. Each element is checked against the package ' +
          'version’s data model: names (with cmi.objectives.n / cmi.interactions.n indices: an existing record or the next one), read-only ' +
          'and keyword elements, vocabularies, CMITimespan / timeinterval, scores (1.2 0–100; 2004 scaled −1..1), lengths (suspend_data 4,096 ' +
          'in 1.2, 64,000 in 2004). Any refusal is 400 VALIDATION_ERROR with `details.errors` `[{element, code, message}]` (SCORM 1.2 codes ' +
          '201, 402, 403, 405; 2004 351, 401, 404, 406, 407, 408) and nothing is stored. Values go to the caller’s open attempt at the SCO ' +
          '(or a new one); `terminate` ends the session: the session time joins the total; exit "suspend" suspends the attempt (resumed at ' +
          'the next launch), exit "normal"/"logout"/"time-out", or an empty exit once completed, passed or failed, ends it. The lesson ' +
          'completes when every SCO is completed and not failed, or passed (1.2: lesson_status completed or passed, with the mastery score ' +
          'applied to score.raw; 2004: completion_status completed, success_status passed/failed, with the passing score applied to ' +
          'score.scaled and the completion threshold to progress_measure); its score is the SCOs’ score as a percentage. 409 for an ' +
          `ended attempt. Needs an enrollment (403 ENROLLMENT_REQUIRED, managers too). ${LEARNER_ACCESS}`,
        params: scormParams,
        body: trackBody,
        response: { 200: envelope(trackResultSchema), 409: errorResponse(409, 'the attempt has ended', ['CONFLICT']) },
      },
    },
    async (req) => ok(await scorm.track(ctxOf(req), req.params.id, req.body)),
  );

  const contentSchema = {
    tags,
    operationId: 'getScormContent',
    summary: 'A file of a SCORM package, under the launch grant',
    description:
      'The address comes from the launch (`contentBaseUrl` + the file’s path in the package, any depth). It needs the caller’s session as ' +
      'well as the grant, which is bound to the caller, the lesson’s current package and an expiry: another person’s or a forged grant, ' +
      'or a file the package does not have, is 404; an expired grant 403. Served with the content type of its extension.',
    params: contentParams,
    response: {
      200: { description: 'the file’s bytes', content: { 'application/octet-stream': { schema: contentBytesSchema } } },
      403: errorResponse(403, 'the grant has expired', ['FORBIDDEN']),
    },
  };
  const contentHandler = async (req: FastifyRequest, reply: FastifyReply) => {
    const p = req.params as { id: string; token: string; asset?: string; '*'?: string };
    const file = await scorm.openContent(ctxOf(req), p.id, p.token, p['*'] ?? p.asset ?? '');
    return reply.header('content-type', file.contentType).header('content-length', String(file.size)).header('cache-control', 'private, max-age=3600').send(file.stream);
  };
  const contentConfig = { recordScope: 'owner' as const, rateLimit: routeRateLimits(deps.config).scormContent };
  r.get('/api/scorm/:id/content/:token/:asset', { config: contentConfig, schema: contentSchema }, contentHandler);
  r.get('/api/scorm/:id/content/:token/*', { config: contentConfig, schema: { ...contentSchema, params: contentWildcardParams, hide: true } }, contentHandler);
};

export const scormModule: AppModule = { name: 'scorm', routes };
