/**
 * The cloud-recording state machine of spec 3.1 and 4.5:
 *
 *   null/PROCESSING/READY/FAILED --start--> PENDING --recorder ok--> RECORDING --stop--> PROCESSING --webhook--> READY | FAILED
 *                                              └──recorder fails──> (the prior status)      └──recorder unreachable──> FAILED
 *
 * A stop while the recorder is still starting (PENDING) finds nothing to stop and marks it
 * FAILED; the start, when the recorder answers, sees the row is no longer PENDING and tells the
 * recorder to stop, so no recording is left running (and it becomes PROCESSING after all).
 *
 * A start made while a stop's call to the recorder is in flight waits for that call
 * (`recordingStopUntil`), so it cannot reach the recorder first and be handed the recording the
 * stop then ends.
 *
 * Every transition is one conditional UPDATE (or a row lock), so concurrent calls and replayed
 * webhooks apply at most once. No transaction is held open across a call to the recorder.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { and, count, eq, inArray } from 'drizzle-orm';
import type { Config } from '../../config.js';
import type { Clock } from '../../platform/clock.js';
import { withTx, type Logger, type ServiceContext } from '../../platform/context.js';
import type { DbOrTx } from '../../platform/db/client.js';
import { byId, inTenant, sameTenantRef, type TenantScope } from '../../platform/db/tenancy.js';
import { iso } from '../../platform/dto.js';
import { AppError, conflict, notFound, validationError } from '../../platform/http/errors.js';
import { enqueue } from '../../platform/queue/queue.js';
import { RecorderError } from '../../platform/recorder/client.js';
import { requireAccess } from '../access/access.service.js';
import { courses } from '../courses/courses.tables.js';
import { enrollments } from '../enrollments/enrollments.tables.js';
import { notify } from '../notifications/notify.js';
import { auditUpdate } from '../audit/audit.js';
import { sessionPath } from './live-sessions.calendar.js';
import type { WebhookInput } from './live-sessions.schemas.js';
import { liveSessions, ROSTER_STATUSES, type LiveSession, type RecordingStatus } from './live-sessions.tables.js';

/** Spec 4.5: the recorder calls this back; built from PUBLIC_BASE_URL. */
export const WEBHOOK_PATH = '/api/webhooks/meet-recording';
export const recordingCallbackUrl = (config: Pick<Config, 'publicBaseUrl'>) => `${config.publicBaseUrl}${WEBHOOK_PATH}`;

/** Recording works only with the recorder's address and token and the webhook secret (spec 5.4). */
export const recordingConfigured = (ctx: Pick<ServiceContext, 'recorder' | 'config'>) => ctx.recorder.configured && Boolean(ctx.config.RECORDING_WEBHOOK_SECRET);

const NOT_PROVISIONED = 'Recording is not available for this class right now: the recording service is not set up. Please ask an administrator.';
const START_FAILED = 'The recording service could not start the recording. Please try again in a moment.';
const STOP_FAILED = 'The recording service could not be reached to stop the recording, so the recording was marked as failed.';

/** A recorder failure as the spec's 503, with a friendly message; the detail goes to the log. */
function unavailable(log: Logger, err: unknown, message: string, sessionId: string): AppError {
  const reason = err instanceof RecorderError ? err.reason : 'error';
  log.warn({ sessionId, reason, detail: (err as Error)?.message }, 'recorder call failed');
  return new AppError('SERVICE_UNAVAILABLE', message, { reason });
}

const isActive = (s: RecordingStatus | null) => s === 'PENDING' || s === 'RECORDING';

/** How long a stop may keep its claim on the recorder: its call's timeout, and a margin for the database writes around it. */
const stopClaimMs = (config: Pick<Config, 'RECORDING_TIMEOUT_MS'>) => config.RECORDING_TIMEOUT_MS + 2_000;
const STOP_POLL_MS = 25;
const stopInFlight = (s: LiveSession, now: Date) => s.recordingStopUntil !== null && s.recordingStopUntil > now;

/** The session row as it is now (after a conditional update found it changed). */
export async function reload(scope: { db: ServiceContext['db'] } & TenantScope, id: string): Promise<LiveSession> {
  const [row] = await scope.db
    .select()
    .from(liveSessions)
    .where(byId(scope, liveSessions, id))
    .limit(1);
  if (!row) throw notFound('Live session');
  return row;
}

const startResult = (s: LiveSession, alreadyRecording: boolean) => ({
  recordingStatus: s.recordingStatus,
  recordingStartedAt: iso(s.recordingStartedAt),
  alreadyRecording,
});

/**
 * POST /{id}/recording/start (spec 4.5): 404, 403 (not host or ADMIN), 409 not LIVE, 409 no room,
 * 200 `alreadyRecording` when PENDING or RECORDING, 503 when recording is not configured. Then
 * PENDING is written and committed under the row lock before the recorder is called, so two
 * rapid starts make one recorder call; success stamps RECORDING and `recordingStartedAt` and
 * clears `recordingStoppedAt`; failure puts back the prior status and answers 503.
 */
export async function startRecording(ctx: ServiceContext, id: string) {
  const { session } = await requireAccess(ctx, 'liveSession.manage', id);
  const preconditions = (s: LiveSession) => {
    if (s.status !== 'LIVE') throw conflict('Recording can start only while the live session is LIVE', { status: s.status });
    if (!s.roomName) throw conflict('The live session has no room to record');
  };
  preconditions(session);
  if (isActive(session.recordingStatus)) return startResult(session, true);
  if (!recordingConfigured(ctx)) throw unavailable(ctx.log, new RecorderError('not_configured', 'recording is not configured'), NOT_PROVISIONED, id);

  type Claim = { already: LiveSession } | { stopping: true } | { prior: RecordingStatus | null; roomName: string };
  // Past this (real time, whatever the clock says), a stop's claim is stale: its call has timed out.
  const waitForStopUntil = Date.now() + stopClaimMs(ctx.config);
  const claimOnce = () =>
    withTx(ctx, async (tx): Promise<Claim> => {
      const [row] = await tx.db
        .select()
        .from(liveSessions)
        .where(byId(tx, liveSessions, id))
        .for('update');
      if (!row) throw notFound('Live session');
      preconditions(row);
      if (isActive(row.recordingStatus)) return { already: row };
      if (stopInFlight(row, tx.clock.now()) && Date.now() < waitForStopUntil) return { stopping: true };
      await tx.db
        .update(liveSessions)
        .set({ recordingStatus: 'PENDING', updatedAt: tx.clock.now() })
        .where(byId(tx, liveSessions, id));
      return { prior: row.recordingStatus, roomName: row.roomName! };
    });
  let claim = await claimOnce();
  while ('stopping' in claim) {
    await sleep(STOP_POLL_MS);
    claim = await claimOnce();
  }
  if ('already' in claim) return startResult(claim.already, true);

  try {
    await ctx.recorder.startRecording({ roomName: claim.roomName, sessionId: id, callbackUrl: recordingCallbackUrl(ctx.config) });
  } catch (err) {
    // Only if still PENDING: a stop that came in meanwhile has moved it on.
    await ctx.db
      .update(liveSessions)
      .set({ recordingStatus: claim.prior, updatedAt: ctx.clock.now() })
      .where(and(byId(ctx, liveSessions, id), eq(liveSessions.recordingStatus, 'PENDING')));
    const notProvisioned = err instanceof RecorderError && (err.reason === 'not_found' || err.reason === 'not_configured' || err.reason === 'unauthorized');
    throw unavailable(ctx.log, err, notProvisioned ? NOT_PROVISIONED : START_FAILED, id);
  }
  const now = ctx.clock.now();
  const recording = await withTx(ctx, async (tx) => {
    const [row] = await tx.db
      .update(liveSessions)
      // The stale fields of an earlier recording go: its stop time, and the URL and duration its upload set.
      .set({ recordingStatus: 'RECORDING', recordingStartedAt: now, recordingStoppedAt: null, recordingUrl: null, recordingDuration: null, updatedAt: now })
      .where(and(byId(tx, liveSessions, id), eq(liveSessions.recordingStatus, 'PENDING')))
      .returning();
    if (row)
      await auditUpdate(
        tx,
        'live_session',
        id,
        { ...session, recordingStatus: claim.prior },
        row,
        ['recordingStatus', 'recordingStartedAt', 'recordingStoppedAt', 'recordingUrl', 'recordingDuration'],
        'recording_start',
      );
    return row;
  });
  if (recording) return startResult(recording, false);
  return startResult(await stopUnwantedStart(ctx, id, claim.roomName, now), false);
}

/**
 * The recorder started recording, but the row left PENDING while it did: a stop (or the end of
 * the session) came in during the start, when the recorder had nothing to stop yet, so it
 * marked the recording FAILED. The recorder is recording now and nobody will stop it: tell it
 * to stop here, so no recording runs on unseen. When that works the recording is on its way
 * like any stopped one: FAILED becomes PROCESSING (the stop's `recordingStoppedAt` kept) and
 * the webhook makes it READY. A row that is PENDING or RECORDING again belongs to a later start
 * (the recorder reuses the running recording of the room): it is left alone.
 */
async function stopUnwantedStart(ctx: ServiceContext, id: string, roomName: string, startedAt: Date): Promise<LiveSession> {
  const current = await reload(ctx, id);
  if (current.recordingStatus !== 'PROCESSING' && current.recordingStatus !== 'FAILED') return current;
  try {
    await ctx.recorder.stopRecording({ roomName, sessionId: id });
  } catch (err) {
    // The stop reached the recording after all (it is PROCESSING), or the recorder cannot be told: nothing more to do.
    ctx.log.warn({ sessionId: id, reason: err instanceof RecorderError ? err.reason : 'error' }, 'could not stop a recording started after its stop');
    return current;
  }
  if (current.recordingStatus !== 'FAILED') return current;
  const now = ctx.clock.now();
  const [processing] = await ctx.db
    .update(liveSessions)
    .set({ recordingStatus: 'PROCESSING', recordingStartedAt: startedAt, recordingStoppedAt: current.recordingStoppedAt ?? now, updatedAt: now })
    .where(and(byId(ctx, liveSessions, id), eq(liveSessions.recordingStatus, 'FAILED')))
    .returning();
  return processing ?? (await reload(ctx, id));
}

/** POST /{id}/recording/stop (spec 4.5): host or ADMIN. */
export async function stopRecording(ctx: ServiceContext, id: string) {
  await requireAccess(ctx, 'liveSession.manage', id);
  return stopActiveRecording(ctx, id, { failQuietly: false });
}

/**
 * PENDING or RECORDING → PROCESSING with `recordingStoppedAt` and the stop's claim on the
 * recorder (`recordingStopUntil`, released when the call is over), then the recorder is told to
 * stop; when it cannot be (unreachable, or any other failure) the recording is FAILED and the
 * answer 503 (or, with `failQuietly`, as the end of a session wants it, the FAILED state).
 * Any other status changes nothing: `alreadyStopped`.
 */
export async function stopActiveRecording(ctx: ServiceContext, id: string, opts: { failQuietly: boolean }) {
  const now = ctx.clock.now();
  const stopped = await withTx(ctx, async (tx) => {
    const [before] = await tx.db
      .select()
      .from(liveSessions)
      .where(byId(tx, liveSessions, id))
      .for('update');
    const [row] = await tx.db
      .update(liveSessions)
      .set({ recordingStatus: 'PROCESSING', recordingStoppedAt: now, recordingStopUntil: new Date(now.getTime() + stopClaimMs(ctx.config)), updatedAt: now })
      .where(and(byId(tx, liveSessions, id), inArray(liveSessions.recordingStatus, ['PENDING', 'RECORDING'])))
      .returning();
    if (row && before) await auditUpdate(tx, 'live_session', id, before, row, ['recordingStatus', 'recordingStoppedAt'], 'recording_stop');
    return row;
  });
  if (!stopped) {
    const current = await reload(ctx, id);
    return { recordingStatus: current.recordingStatus, recordingStoppedAt: iso(current.recordingStoppedAt), alreadyStopped: true };
  }
  try {
    if (!stopped.roomName) throw new RecorderError('not_found', 'the session has no room name');
    await ctx.recorder.stopRecording({ roomName: stopped.roomName, sessionId: id });
  } catch (err) {
    const [failed] = await ctx.db
      .update(liveSessions)
      .set({ recordingStatus: 'FAILED', updatedAt: ctx.clock.now() })
      .where(and(byId(ctx, liveSessions, id), eq(liveSessions.recordingStatus, 'PROCESSING')))
      .returning();
    const error = unavailable(ctx.log, err, STOP_FAILED, id);
    if (!opts.failQuietly) throw error;
    const current = failed ?? (await reload(ctx, id));
    return { recordingStatus: current.recordingStatus, recordingStoppedAt: iso(current.recordingStoppedAt), alreadyStopped: false };
  } finally {
    // The recorder has answered (or will not): a waiting start may go ahead. Should this write
    // fail, the claim runs out by itself; the stop has happened either way.
    await ctx.db
      .update(liveSessions)
      .set({ recordingStopUntil: null })
      .where(byId(ctx, liveSessions, id))
      .catch((err: unknown) => ctx.log.warn({ sessionId: id, err }, 'could not release the recording stop claim'));
  }
  return { recordingStatus: stopped.recordingStatus, recordingStoppedAt: iso(stopped.recordingStoppedAt), alreadyStopped: false };
}

// ── webhook ──────────────────────────────────────────────────────────────────

export interface WebhookScope {
  db: DbOrTx;
  clock: Clock;
  log: Logger;
  config: Pick<Config, 'publicBaseUrl' | 'RECORDING_READY_INLINE_MAX'>;
}

export interface WebhookResult {
  ok: true;
  status: RecordingStatus | null;
  ignored: boolean;
  reason: 'unknown_session' | 'unknown_event' | 'not_applicable' | null;
}

const ignored = (status: RecordingStatus | null, reason: NonNullable<WebhookResult['reason']>): WebhookResult => ({ ok: true, status, ignored: true, reason });

/**
 * POST /api/webhooks/meet-recording, after the route checked the secret (503) and the signature
 * (401). The session is found by id alone (the webhook carries no institution; ids are unique)
 * and its row's institution scopes the rest. Rules (spec 4.5): an unknown session → 200
 * `ignored`; a roomName that is not the session's → 400, nothing changed; `recording_failed` →
 * FAILED with `recordingStoppedAt` now; `recording_uploaded` → READY with the URL and duration,
 * and, in the same transaction, LIVE_CLASS_RECORDING_READY to the course: one bulk notify() for
 * a course of at most RECORDING_READY_INLINE_MAX learners, else a `liveSessions.recordingReady`
 * job that makes it (a fan-out of 5,000 takes longer than the answer may; the answer never
 * waits for delivery). An upload applies only to a PROCESSING recording, a failure to a
 * RECORDING or PROCESSING one: a replayed or late event changes nothing and enqueues nothing (200
 * `ignored`, `not_applicable`).
 */
export async function handleRecordingWebhook(scope: WebhookScope, input: WebhookInput): Promise<WebhookResult> {
  const [session] = await scope.db.select().from(liveSessions).where(eq(liveSessions.id, input.sessionId)).limit(1);
  if (!session) return ignored(null, 'unknown_session');
  if (session.roomName !== input.roomName) throw validationError('roomName does not match the live session');
  const tenant = { institutionId: session.institutionId };
  const now = scope.clock.now();
  const processing = and(byId(tenant, liveSessions, session.id), eq(liveSessions.recordingStatus, 'PROCESSING'));

  if (input.event === 'recording_failed') {
    // Also while RECORDING: a recorder that fails mid-class would otherwise leave the session
    // recording forever. Not while PENDING: the start call is still deciding that state.
    const failing = and(byId(tenant, liveSessions, session.id), inArray(liveSessions.recordingStatus, ['RECORDING', 'PROCESSING']));
    const [failed] = await scope.db.update(liveSessions).set({ recordingStatus: 'FAILED', recordingStoppedAt: now, updatedAt: now }).where(failing).returning();
    if (!failed) return ignored(session.recordingStatus, 'not_applicable');
    scope.log.warn({ sessionId: session.id }, 'the recorder reported a failed recording');
    return { ok: true, status: 'FAILED', ignored: false, reason: null };
  }
  if (input.event !== 'recording_uploaded') return ignored(session.recordingStatus, 'unknown_event');
  // Checked here, not in the body schema: an unknown session is 200 `ignored` whatever its body.
  const recordingUrl = input.recordingUrl;
  if (!recordingUrl) throw validationError('recording_uploaded needs recordingUrl', [{ field: 'body.recordingUrl', message: 'is required for recording_uploaded' }]);

  const ready = await withTx(scope, async (tx) => {
    const [row] = await tx.db
      .update(liveSessions)
      .set({ recordingStatus: 'READY', recordingUrl, recordingDuration: input.duration == null ? null : Math.round(input.duration), updatedAt: now })
      .where(processing)
      .returning();
    if (!row) return null;
    const payload = { institutionId: row.institutionId, sessionId: row.id, recordingUrl: row.recordingUrl!, recordingStartedAt: iso(row.recordingStartedAt) };
    const [{ learners }] = await tx.db
      .select({ learners: count() })
      .from(enrollments)
      .where(and(inTenant(tenant, enrollments), eq(enrollments.courseId, row.courseId), inArray(enrollments.status, [...ROSTER_STATUSES])));
    if (learners <= scope.config.RECORDING_READY_INLINE_MAX) await sendRecordingReady(tx, payload);
    else await enqueue(tx.db, tx.clock, 'liveSessions.recordingReady', payload, { institutionId: row.institutionId });
    return row;
  });
  if (!ready) return ignored(session.recordingStatus, 'not_applicable');
  return { ok: true, status: 'READY', ignored: false, reason: null };
}

/**
 * The `liveSessions.recordingReady` job: one bulk notify() of LIVE_CLASS_RECORDING_READY to every
 * ACTIVE or COMPLETED enrollment of the session's course, in the job's transaction. The dedupe
 * key names the recording, so a retried job sends nothing twice.
 */
export async function sendRecordingReady(
  scope: { db: DbOrTx; clock: Clock; config: Pick<Config, 'publicBaseUrl'> },
  payload: { institutionId: string; sessionId: string; recordingUrl: string; recordingStartedAt: string | null },
) {
  const tenant = { institutionId: payload.institutionId };
  return withTx(scope, async (tx) => {
    const [row] = await tx.db
      .select({ session: liveSessions, course: courses })
      .from(liveSessions)
      .innerJoin(courses, sameTenantRef(liveSessions.courseId, liveSessions.institutionId, courses))
      .where(byId(tenant, liveSessions, payload.sessionId))
      .limit(1);
    if (!row) return { recipients: 0, rows: 0, newRecipients: 0, batches: 0 }; // deleted since
    const roster = await tx.db
      .select({ studentId: enrollments.studentId })
      .from(enrollments)
      .where(and(inTenant(tenant, enrollments), eq(enrollments.courseId, row.session.courseId), inArray(enrollments.status, [...ROSTER_STATUSES])));
    return notify(tx, {
      institutionId: payload.institutionId,
      key: 'LIVE_CLASS_RECORDING_READY',
      recipients: roster.map((r) => r.studentId),
      metadata: {
        sessionId: row.session.id,
        courseId: row.course.id,
        title: row.session.title,
        courseTitle: row.course.title,
        recordingUrl: payload.recordingUrl,
        recordingDuration: row.session.recordingDuration,
      },
      actionUrl: sessionPath(row.session.id),
      dedupeKey: `live-recording:${row.session.id}:${payload.recordingStartedAt ?? 'none'}`,
    });
  });
}
