import { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { envelope, errorResponse, ok, paged, pagedEnvelope } from '../../platform/http/envelope.js';
import { AppError } from '../../platform/http/errors.js';
import { parseJsonBody } from '../../platform/http/input-guard.js';
import type { Deps } from '../../platform/context.js';
import { routeRateLimits } from '../../platform/http/rate-limit.js';
import { requestContext } from '../../platform/auth/auth-plugin.js';
import { verifyWebhookSignature } from '../../platform/auth/signatures.js';
import {
  attendanceBody,
  attendanceListEnvelope,
  attendanceQuery,
  attendanceUpdateSchema,
  courseAttendanceQuery,
  courseAttendanceEnvelope,
  createSessionBody,
  icsSchema,
  idParams,
  joinSchema,
  listSessionsQuery,
  recordingStartSchema,
  recordingStopSchema,
  registrationSchema,
  sessionSchema,
  webhookBody,
  webhookResultSchema,
} from './live-sessions.schemas.js';
import * as service from './live-sessions.service.js';
import { handleRecordingWebhook, startRecording, stopRecording, WEBHOOK_PATH } from './live-sessions.recording.js';
import { liveSessionsJobs } from './live-sessions.jobs.js';

const tags = ['live sessions'];
const recordingTags = ['live session recording'];
const SIGNATURE_HEADERS = ['x-recorder-signature', 'x-meet-signature'] as const;

/** Reads the whole body (the signature covers its exact bytes), refusing more than `limit` bytes. */
async function readBody(payload: NodeJS.ReadableStream, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of payload as AsyncIterable<Buffer | string>) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += buf.length;
    if (size > limit) throw new AppError('PAYLOAD_TOO_LARGE', `Body larger than ${limit} bytes`);
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

/** Spec 4.5 and 4.9: live session lifecycle, participation, attendance, calendar and cloud recording. */
const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);
  const ctxOf = (req: FastifyRequest) => requestContext(deps, req);
  const byIdRoute = (summary: string, description: string, operationId: string) => ({ tags, operationId, summary, description, params: idParams });

  r.get(
    '/api/live-sessions',
    {
      schema: {
        tags,
        operationId: 'listLiveSessions',
        summary: 'Live sessions, by scheduled time',
        description:
          'Filters: `courseId`, `status`, `from` (scheduled at or after) and `to` (before). Course managers see every session of the institution; ' +
          'anyone else the sessions they host and those of courses where they have an ACTIVE or COMPLETED enrollment. Each with the recording fields of spec 2.7. ' +
          'Any signed-in user. 400 VALIDATION_ERROR for an unknown status, a bad time or date, `from` after `to`, or a bad page value.',
        querystring: listSessionsQuery,
        response: { 200: pagedEnvelope(sessionSchema) },
      },
    },
    async (req) => {
      const { rows, meta } = await service.listSessions(ctxOf(req), req.query);
      return paged(rows, meta);
    },
  );

  r.post(
    '/api/live-sessions',
    {
      config: { errors: ['BAD_GATEWAY'] },
      schema: {
        tags,
        operationId: 'createLiveSession',
        summary: 'Schedule a live session in a course (canManageCourses)',
        description:
          'Answers 201 with the session: `status` SCHEDULED, `hostId` the caller unless given, recording fields null. Every ACTIVE enrollment of the course gets LIVE_CLASS_SCHEDULED. A course of another institution → 404. ' +
          'canManageCourses only (403 FORBIDDEN otherwise). An ARCHIVED course 409 CONFLICT. A `hostId` must be a staff user of the institution in the CRM or a learner ACTIVE in the course (else 400 VALIDATION_ERROR naming body.hostId); 502 BAD_GATEWAY when the CRM cannot answer that check.',
        body: createSessionBody,
        response: { 201: envelope(sessionSchema) },
      },
    },
    async (req, reply) => reply.code(201).send(ok(await service.createSession(ctxOf(req), req.body))),
  );

  r.get(
    '/api/live-sessions/attendance-summary',
    {
      schema: {
        tags,
        operationId: 'liveSessionCourseAttendance',
        summary: 'Attendance totals of a course’s live sessions, per student',
        description:
          'Only COMPLETED sessions count (spec 3.3). Course managers get every student with an ACTIVE or COMPLETED enrollment (or the one `studentId`); ' +
          'a learner gets their own row (another `studentId` → 404), and needs an enrollment in the course (any status; else 404 NOT_FOUND). An unknown course 404 NOT_FOUND; ' +
          'a missing courseId or a bad page value 400 VALIDATION_ERROR.',
        querystring: courseAttendanceQuery,
        response: { 200: courseAttendanceEnvelope },
      },
    },
    async (req) => {
      const { data, meta } = await service.courseAttendance(ctxOf(req), req.query);
      return { data, error: null, meta };
    },
  );

  r.get(
    '/api/live-sessions/:id',
    {
      config: { recordScope: 'institution' },
      schema: {
        ...byIdRoute(
          'A live session',
          'Managers, the host and learners with an ACTIVE or COMPLETED enrollment in its course; anyone else 404 NOT_FOUND, as for an unknown session.',
          'getLiveSession',
        ),
        response: { 200: envelope(sessionSchema) },
      },
    },
    async (req) => ok(await service.getSession(ctxOf(req), req.params.id)),
  );

  r.post(
    '/api/live-sessions/:id/start',
    {
      config: { recordScope: 'owner-edit' },
      schema: {
        ...byIdRoute(
          'Start a live session (host or ADMIN)',
          'SCHEDULED → LIVE with `startedAt` and `roomName` = `<RECORDING_ROOM_PREFIX>-<institution slug>-<id>`. A LIVE session is answered unchanged; a COMPLETED one → 409 CONFLICT.' +
            'The host or an ADMIN only (anyone else of the institution 403 FORBIDDEN); an unknown session 404 NOT_FOUND.',
          'startLiveSession',
        ),
        response: { 200: envelope(sessionSchema) },
      },
    },
    async (req) => ok(await service.startSession(ctxOf(req), req.params.id)),
  );

  r.post(
    '/api/live-sessions/:id/end',
    {
      config: { recordScope: 'owner-edit' },
      schema: {
        ...byIdRoute(
          'End a live session (host or ADMIN)',
          'LIVE → COMPLETED with `endedAt`; a running recording is stopped as by recording/stop (if the recorder cannot be told, the recording is FAILED and the end still succeeds). ' +
            'A COMPLETED session is answered unchanged; a SCHEDULED one → 409 CONFLICT. The host or an ADMIN only (anyone else of the institution 403 FORBIDDEN); an unknown session 404 NOT_FOUND.',
          'endLiveSession',
        ),
        response: { 200: envelope(sessionSchema) },
      },
    },
    async (req) => ok(await service.endSession(ctxOf(req), req.params.id)),
  );

  r.post(
    '/api/live-sessions/:id/join',
    {
      config: { recordScope: 'institution' },
      schema: {
        ...byIdRoute(
          'Join a LIVE session',
          'The host or ADMIN (role HOST) and students with an ACTIVE enrollment (role PARTICIPANT); a COMPLETED enrollment → 403 ENROLLMENT_REQUIRED, other staff → 403. ' +
            'Not LIVE → 409 CONFLICT. Records the join (first time, last time, count), from which attendance is derived. Anyone else, or an unknown session, 404 NOT_FOUND.',
          'joinLiveSession',
        ),
        response: { 200: envelope(joinSchema) },
      },
    },
    async (req) => ok(await service.joinSession(ctxOf(req), req.params.id)),
  );

  r.post(
    '/api/live-sessions/:id/register',
    {
      config: { recordScope: 'institution' },
      schema: {
        ...byIdRoute(
          'Sign up for a live session ahead',
          'A student with an ACTIVE enrollment, before the session is COMPLETED (then 409 CONFLICT). Idempotent: again → 200 with the first `registeredAt` and `alreadyRegistered: true`. ' +
            'Staff and the host 403 FORBIDDEN; a learner with a COMPLETED enrollment 403 ENROLLMENT_REQUIRED; anyone else, or an unknown session, 404 NOT_FOUND.',
          'registerForLiveSession',
        ),
        response: { 200: envelope(registrationSchema) },
      },
    },
    async (req) => ok(await service.registerForSession(ctxOf(req), req.params.id)),
  );

  r.get(
    '/api/live-sessions/:id/attendance',
    {
      config: { recordScope: 'owner-edit' },
      schema: {
        ...byIdRoute(
          'Attendance of a live session (course managers and the host)',
          'The roster (ACTIVE and COMPLETED enrollments, by student id, paginated, default 50) with registration, joins and the host’s mark. ' +
            'Once COMPLETED each student is `attended` (marked PRESENT, or unmarked and joined) or `missed`; `totals` counts the whole roster. ' +
            'Course managers and the host; learners who may see the session 403 FORBIDDEN; anyone else, or an unknown session, 404 NOT_FOUND. 400 VALIDATION_ERROR for a bad page value.',
          'getLiveSessionAttendance',
        ),
        querystring: attendanceQuery,
        response: { 200: attendanceListEnvelope },
      },
    },
    async (req) => {
      const { data, meta } = await service.getAttendance(ctxOf(req), req.params.id, req.query);
      return { data, error: null, meta };
    },
  );

  r.post(
    '/api/live-sessions/:id/attendance',
    {
      config: { recordScope: 'owner-edit' },
      schema: {
        ...byIdRoute(
          'Record attendance (host or ADMIN)',
          '`records`: up to 500 `{studentId, status: PRESENT|ABSENT}`, each a student on the roster (else 400). Allowed once the session is LIVE or COMPLETED (before: 409). ' +
            'A mark overrides the joins; unmarked students count by their joins. Answers the totals. The host or an ADMIN only (anyone else of the institution 403 FORBIDDEN); an unknown session 404 NOT_FOUND.',
          'recordLiveSessionAttendance',
        ),
        body: attendanceBody,
        response: { 200: envelope(attendanceUpdateSchema) },
      },
    },
    async (req) => ok(await service.markAttendance(ctxOf(req), req.params.id, req.body)),
  );

  r.get(
    '/api/live-sessions/:id/ics',
    {
      config: { recordScope: 'institution' },
      schema: {
        ...byIdRoute(
          'The session as an iCalendar file',
          'RFC 5545 (`text/calendar; charset=utf-8`, attachment `live-session-<id>.ics`): start, end (start + duration), title, URL and a UID that stays the same for the session. ' +
            'Who may see the session: managers, the host, learners with an ACTIVE or COMPLETED enrollment in its course; anyone else, or an unknown session, 404 NOT_FOUND.',
          'getLiveSessionCalendar',
        ),
        response: { 200: { description: 'an iCalendar file', content: { 'text/calendar': { schema: icsSchema } } } },
      },
    },
    async (req, reply) => {
      const { fileName, body } = await service.sessionIcs(ctxOf(req), req.params.id);
      return reply.header('content-type', 'text/calendar; charset=utf-8').header('content-disposition', `attachment; filename="${fileName}"`).send(body);
    },
  );

  r.post(
    '/api/live-sessions/:id/recording/start',
    {
      config: { recordScope: 'owner-edit' },
      schema: {
        tags: recordingTags,
        operationId: 'startLiveSessionRecording',
        summary: 'Start the cloud recording (host or ADMIN)',
        description:
          '404 unknown; 403 not the host or ADMIN; 409 CONFLICT when the session is not LIVE or has no roomName; 200 `alreadyRecording: true` while PENDING or RECORDING. ' +
          'PENDING is committed before the recorder is called (two rapid starts make one recording); success → RECORDING with `recordingStartedAt`. ' +
          'A start made while a stop is still waiting for the recorder waits for that stop (at most RECORDING_TIMEOUT_MS and 2 s), then starts a new recording. ' +
          '503 SERVICE_UNAVAILABLE with a friendly message when recording is not configured or the recorder answers 404 or fails (the prior status is put back).',
        params: idParams,
        response: {
          200: envelope(recordingStartSchema),
          503: errorResponse(503, 'recording is not configured, or the recorder refused or could not be reached (`details.reason`)'),
        },
      },
    },
    async (req) => ok(await startRecording(ctxOf(req), req.params.id)),
  );

  r.post(
    '/api/live-sessions/:id/recording/stop',
    {
      config: { recordScope: 'owner-edit' },
      schema: {
        tags: recordingTags,
        operationId: 'stopLiveSessionRecording',
        summary: 'Stop the cloud recording (host or ADMIN)',
        description:
          'PENDING or RECORDING → PROCESSING with `recordingStoppedAt`, and the recorder is told to stop; when it cannot be reached the recording is FAILED and the answer 503. ' +
          'Any other status changes nothing: `alreadyStopped: true`. The recorder then calls the webhook (READY or FAILED). The host or an ADMIN only (anyone else of the institution 403 FORBIDDEN); an unknown session 404 NOT_FOUND.',
        params: idParams,
        response: { 200: envelope(recordingStopSchema), 503: errorResponse(503, 'the recorder could not be told to stop (the recording is FAILED)') },
      },
    },
    async (req) => ok(await stopRecording(ctxOf(req), req.params.id)),
  );

  // In a scope of its own: the signature vouches for the bytes, so a signed body is read as JSON
  // whatever Content-Type the recorder declares (or none), not refused with 415.
  await app.register(async (scope) => {
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, parseJsonBody);
    webhookRoute(typed(scope), deps);
  });
};

/** POST /api/webhooks/meet-recording (spec 4.5, 5.4): the recorder's signed callback. */
function webhookRoute(r: ReturnType<typeof typed>, deps: Deps) {
  const webhookLimit = Math.min(deps.config.BODY_LIMIT_BYTES, 64 * 1024);
  r.post(
    WEBHOOK_PATH,
    {
      config: { auth: 'public', rateLimit: routeRateLimits(deps.config).webhook },
      // 1. The webhook secret or the recorder's token not configured (spec 5.4 wants both for
      // recording to work): 503 to everything, before the body is read.
      onRequest: async () => {
        if (!deps.config.RECORDING_WEBHOOK_SECRET || !deps.config.RECORDING_API_TOKEN) {
          throw new AppError('SERVICE_UNAVAILABLE', 'Recording webhooks are not configured on this service');
        }
      },
      // 2. HMAC-SHA256 of the exact body bytes, before the body is parsed or validated: 401.
      preParsing: async (req, reply, payload) => {
        const raw = await readBody(payload, webhookLimit).catch((err: unknown) => {
          // Refused before the whole body was read: the rest of it must not be taken for the
          // next request on this keep-alive connection, so the connection closes.
          if (!req.raw.readableEnded) reply.header('connection', 'close');
          throw err;
        });
        const secret = deps.config.RECORDING_WEBHOOK_SECRET!;
        const given = SIGNATURE_HEADERS.map((h) => req.headers[h]).filter((v): v is string => typeof v === 'string');
        if (!given.some((sig) => verifyWebhookSignature(secret, raw, sig))) {
          throw new AppError('AUTH_REQUIRED', 'Missing or invalid webhook signature');
        }
        return Readable.from([raw], { objectMode: false });
      },
      schema: {
        tags: recordingTags,
        operationId: 'meetRecordingWebhook',
        summary: 'Recording webhook (public, signed by the recorder)',
        description:
          'Signed with HMAC-SHA256 of the raw body and RECORDING_WEBHOOK_SECRET, as hex (bare or `sha256=`-prefixed) in `X-Recorder-Signature` or `X-Meet-Signature`. ' +
          'RECORDING_WEBHOOK_SECRET or RECORDING_API_TOKEN not configured → 503; bad signature → 401; roomName not the session’s → 400 (nothing changed); unknown session → 200 `ignored`. ' +
          '`recording_failed` → FAILED (from RECORDING or PROCESSING); `recording_uploaded` → READY with `recordingUrl` and `recordingDuration`, then LIVE_CLASS_RECORDING_READY to every ACTIVE or COMPLETED ' +
          'enrollment, sent by the worker (the answer does not wait). Only a PROCESSING recording changes: a replay is 200 `ignored` and sends nothing.',
        body: webhookBody,
        response: {
          200: envelope(webhookResultSchema),
          401: errorResponse(401, 'missing or invalid webhook signature'),
          503: errorResponse(503, 'RECORDING_WEBHOOK_SECRET or RECORDING_API_TOKEN not configured'),
        },
      },
    },
    async (req) => ok(await handleRecordingWebhook({ db: deps.database.db, clock: deps.clock, log: req.log, config: deps.config }, req.body)),
  );
}

export const liveSessionsModule: AppModule = { name: 'live-sessions', routes, jobs: liveSessionsJobs };
