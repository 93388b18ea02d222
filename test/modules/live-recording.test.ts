/**
 * Cloud recording of live sessions (spec 3.1, 4.5, 5.4, 6.2, 6.3): every transition and failure
 * row of 3.1, every webhook rule of 4.5, concurrent starts, replayed webhooks, the
 * LIVE_CLASS_RECORDING_READY fan-out, and the whole cycle through the recorder simulator (in the
 * app, and over real HTTP with the app listening on a port).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, enroll } from '../helpers/factories.js';
import { expectError, expectOk } from '../helpers/expect.js';
import { hmacSha256Hex } from '../../src/platform/auth/signatures.js';
import { rawRows } from '../../src/platform/db/client.js';
import { liveSessions } from '../../src/modules/live-sessions/live-sessions.tables.js';
import { notifications } from '../../src/modules/notifications/notifications.tables.js';
import { jobs } from '../../src/platform/queue/queue.tables.js';
import { sendRecordingReady } from '../../src/modules/live-sessions/live-sessions.recording.js';
import { startRecorderSim } from '../../src/dev/recorder-sim/server.js';
import { DEMO_ADMIN_ID, DEMO_PARENT_ID, DEMO_TEACHER2_ID, DEMO_TEACHER_ID, NORTH_ADMIN_ID, SECOND_INSTITUTION } from '../../src/dev/crm-sim/fixtures.js';
import { freePort } from '../helpers/ports.js';

let t: TestApp;
let teacher: string;
let admin: string;
const SECRET = 'test-recording-webhook-secret';
const WEBHOOK = '/api/webhooks/meet-recording';
const stu = (n: number) => `c_demo_stu_${String(n).padStart(2, '0')}`;

beforeAll(async () => {
  // A short recorder timeout so the `slow` fault times out quickly.
  // A course of up to 3 learners hears of its recording in the webhook's transaction; more go through the worker.
  t = await createTestApp({ env: { RECORDING_TIMEOUT_MS: '800', DB_POOL_SIZE: '20', RECORDING_READY_INLINE_MAX: '3' } });
  teacher = await t.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
  admin = await t.token({ role: 'ADMIN', id: DEMO_ADMIN_ID });
});
afterAll(async () => t?.close());

/** A LIVE session (hosted by the teacher) of a new course with these enrollments. */
async function liveSession(app: TestApp = t, students: Array<{ n: number; status?: 'ACTIVE' | 'COMPLETED' | 'DROPPED' }> = []) {
  const course = await createCourse(app, { title: 'Recorded course' });
  for (const s of students) await enroll(app, { courseId: course.id, studentId: stu(s.n), status: s.status ?? 'ACTIVE' });
  const host = await app.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
  const created = expectOk(
    await app.request('POST', '/api/live-sessions', {
      token: host,
      body: { courseId: course.id, title: 'Recorded class', scheduledAt: '2026-03-02T09:00:00Z', durationMinutes: 60 },
    }),
    201,
  );
  const started = expectOk(await app.request('POST', `/api/live-sessions/${created.id}/start`, { token: host }));
  return { id: created.id as string, roomName: started.roomName as string, courseId: course.id };
}

const row = async (id: string, app: TestApp = t) => (await app.db.select().from(liveSessions).where(eq(liveSessions.id, id)))[0]!;
const setRow = (id: string, values: Partial<typeof liveSessions.$inferInsert>) => t.db.update(liveSessions).set(values).where(eq(liveSessions.id, id));
const startRec = (id: string, token = teacher, app: TestApp = t) => app.request('POST', `/api/live-sessions/${id}/recording/start`, { token });
const stopRec = (id: string, token = teacher, app: TestApp = t) => app.request('POST', `/api/live-sessions/${id}/recording/stop`, { token });
const recorderCalls = (path: string, sessionId: string) => t.recorderSim.requests.filter((r) => r.path === path && (r.body as { sessionId?: string })?.sessionId === sessionId);

/** POST the webhook with `body` signed (or as `headers` say). */
async function webhook(body: unknown, opts: { headers?: Record<string, string>; secret?: string; app?: TestApp } = {}) {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const signature = `sha256=${hmacSha256Hex(opts.secret ?? SECRET, text)}`;
  const res = await (opts.app ?? t).app.inject({
    method: 'POST',
    url: WEBHOOK,
    // A `content-type` of undefined in opts.headers sends none.
    headers: Object.fromEntries(
      Object.entries({ 'content-type': 'application/json', ...(opts.headers ?? { 'x-recorder-signature': signature }) }).filter(([, v]) => v !== undefined),
    ) as Record<string, string>,
    payload: text,
  });
  let json: any;
  try {
    json = res.json();
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, body: json, raw: res.body };
}

/** A session whose recording was started and stopped: PROCESSING, waiting for the webhook. */
async function processingSession(students: Array<{ n: number; status?: 'ACTIVE' | 'COMPLETED' | 'DROPPED' }> = []) {
  const s = await liveSession(t, students);
  expectOk(await startRec(s.id));
  expectOk(await stopRec(s.id));
  expect((await row(s.id)).recordingStatus).toBe('PROCESSING');
  return s;
}

const readyJobs = (sessionId: string) =>
  rawRows<{ id: string }>(t.db, sql`select id from jobs where name = 'liveSessions.recordingReady' and payload->>'sessionId' = ${sessionId}`);
const readyRows = (sessionId: string) =>
  t.db
    .select()
    .from(notifications)
    .where(and(eq(notifications.key, 'LIVE_CLASS_RECORDING_READY'), sql`${notifications.metadata}->>'sessionId' = ${sessionId}`));

describe('recording/start (spec 4.5 pre-conditions, 3.1 rows 1–3)', () => {
  it('404 for another institution or no such session; 403 for anyone but the host or ADMIN', async () => {
    const s = await liveSession();
    const north = await t.token({ role: 'ADMIN', id: NORTH_ADMIN_ID, institutionId: SECOND_INSTITUTION.id });
    expectError(await startRec(s.id, north), 404, 'NOT_FOUND');
    expectError(await startRec('00000000-0000-7000-8000-000000000000'), 404, 'NOT_FOUND');
    expectError(await startRec(s.id, await t.token({ role: 'TEACHER', id: DEMO_TEACHER2_ID })), 403, 'FORBIDDEN');
    // Spec 4.5's order: the session is in the caller's institution, so not the host is 403, also
    // for a student without an enrollment and for a parent.
    expectError(await startRec(s.id, await t.token({ role: 'STUDENT', id: stu(28) })), 403, 'FORBIDDEN');
    expectError(await startRec(s.id, await t.token({ role: 'PARENT', id: DEMO_PARENT_ID })), 403, 'FORBIDDEN');
    expect((await row(s.id)).recordingStatus).toBeNull();
    expect(recorderCalls('/recordings/start', s.id)).toHaveLength(0);
  });

  it('409 when the session is not LIVE, 409 when it has no roomName', async () => {
    const course = await createCourse(t, {});
    const scheduled = expectOk(
      await t.request('POST', '/api/live-sessions', { token: teacher, body: { courseId: course.id, title: 'x', scheduledAt: '2026-03-02T09:00:00Z', durationMinutes: 30 } }),
      201,
    );
    expectError(await startRec(scheduled.id), 409, 'CONFLICT');
    const s = await liveSession();
    await setRow(s.id, { roomName: null });
    const noRoom = await startRec(s.id);
    expectError(noRoom, 409, 'CONFLICT');
    expect(noRoom.body.error.message).toMatch(/room/);
    const ended = await liveSession();
    expectOk(await t.request('POST', `/api/live-sessions/${ended.id}/end`, { token: teacher }));
    expectError(await startRec(ended.id), 409, 'CONFLICT');
  });

  it('null → PENDING → RECORDING: the recorder gets roomName, sessionId and the callback URL; recordingStartedAt stamped, stale stop fields cleared', async () => {
    const s = await liveSession();
    await setRow(s.id, { recordingStatus: 'READY', recordingStoppedAt: new Date('2026-03-01T10:00:00Z'), recordingUrl: 'https://rec.example/old.mp4', recordingDuration: 1800 });
    t.clock.advance(1000);
    const res = expectOk(await startRec(s.id, admin));
    expect(res).toEqual({ recordingStatus: 'RECORDING', recordingStartedAt: t.clock.now().toISOString(), alreadyRecording: false });
    const after = await row(s.id);
    expect(after).toMatchObject({ recordingStatus: 'RECORDING', recordingStartedAt: t.clock.now(), recordingStoppedAt: null, recordingUrl: null, recordingDuration: null });
    expect(expectOk(await t.request('GET', `/api/live-sessions/${s.id}`, { token: admin }))).toMatchObject({
      recordingStatus: 'RECORDING',
      recordingStoppedAt: null,
      recordingUrl: null,
      recordingDuration: null,
    });
    const [call] = recorderCalls('/recordings/start', s.id);
    expect(call!.body).toEqual({ roomName: `lms-demo-${s.id}`, sessionId: s.id, callbackUrl: 'http://lms.test/api/webhooks/meet-recording' });
    expect(call!.headers.authorization).toBe('Bearer test-recording-token');
  });

  it('while PENDING or RECORDING: 200 alreadyRecording, nothing changes, the recorder is not called', async () => {
    const s = await liveSession();
    await setRow(s.id, { recordingStatus: 'PENDING' });
    expect(expectOk(await startRec(s.id))).toEqual({ recordingStatus: 'PENDING', recordingStartedAt: null, alreadyRecording: true });
    await setRow(s.id, { recordingStatus: 'RECORDING', recordingStartedAt: new Date('2026-03-02T09:01:00Z') });
    expect(expectOk(await startRec(s.id))).toEqual({ recordingStatus: 'RECORDING', recordingStartedAt: '2026-03-02T09:01:00.000Z', alreadyRecording: true });
    expect(recorderCalls('/recordings/start', s.id)).toHaveLength(0);
  });

  it('starts again from PROCESSING, READY and FAILED', async () => {
    for (const prior of ['PROCESSING', 'READY', 'FAILED'] as const) {
      const s = await liveSession();
      await setRow(s.id, { recordingStatus: prior });
      expect(expectOk(await startRec(s.id)).recordingStatus).toBe('RECORDING');
    }
  });

  it('recorder answers 404 (not provisioned): 503 with a friendly message, prior status restored', async () => {
    for (const prior of [null, 'READY'] as const) {
      const s = await liveSession();
      await setRow(s.id, { recordingStatus: prior });
      t.recorderSim.setFault('notFound');
      try {
        const res = await startRec(s.id);
        expectError(res, 503, 'SERVICE_UNAVAILABLE');
        expect(res.body.error.message).toMatch(/not set up/);
        expect(res.body.error.message).not.toMatch(/127\.0\.0\.1|recordings/);
      } finally {
        t.recorderSim.setFault(null);
      }
      expect((await row(s.id)).recordingStatus).toBe(prior);
    }
  });

  it('recorder down, slow past the timeout, or failing: 503 and the prior status restored', async () => {
    for (const fault of ['down', 'slow', 'error500'] as const) {
      const s = await liveSession();
      await setRow(s.id, { recordingStatus: 'FAILED' });
      t.recorderSim.setFault(fault, { delayMs: 2000 });
      try {
        expectError(await startRec(s.id), 503, 'SERVICE_UNAVAILABLE');
      } finally {
        t.recorderSim.setFault(null);
      }
      expect((await row(s.id)).recordingStatus, fault).toBe('FAILED');
      // and it can be started once the recorder is back
      expect(expectOk(await startRec(s.id)).recordingStatus).toBe('RECORDING');
    }
  });

  it('PENDING is committed before the recorder is called: concurrent starts make one recording', async () => {
    const s = await liveSession();
    t.recorderSim.setFault('slow', { delayMs: 300 });
    let results;
    try {
      results = await Promise.all(Array.from({ length: 6 }, (_, i) => startRec(s.id, i % 2 ? admin : teacher)));
    } finally {
      t.recorderSim.setFault(null);
    }
    const data = results.map((r) => expectOk(r));
    expect(data.filter((d) => !d.alreadyRecording)).toHaveLength(1);
    expect(data.filter((d) => d.alreadyRecording)).toHaveLength(5);
    expect(recorderCalls('/recordings/start', s.id)).toHaveLength(1);
    expect((await row(s.id)).recordingStatus).toBe('RECORDING');
  });
});

describe('recording/stop (3.1 rows 4–5)', () => {
  it('RECORDING → PROCESSING with recordingStoppedAt, the recorder told to stop; again → alreadyStopped', async () => {
    const s = await liveSession();
    expectOk(await startRec(s.id));
    t.clock.advance(10 * 60_000);
    expect(expectOk(await stopRec(s.id))).toEqual({ recordingStatus: 'PROCESSING', recordingStoppedAt: t.clock.now().toISOString(), alreadyStopped: false });
    expect(recorderCalls('/recordings/stop', s.id)).toHaveLength(1);
    expect(recorderCalls('/recordings/stop', s.id)[0]!.body).toEqual({ roomName: s.roomName, sessionId: s.id });
    const stoppedAt = t.clock.now().toISOString();
    t.clock.advance(1000);
    expect(expectOk(await stopRec(s.id, admin))).toEqual({ recordingStatus: 'PROCESSING', recordingStoppedAt: stoppedAt, alreadyStopped: true });
    expect(recorderCalls('/recordings/stop', s.id)).toHaveLength(1);
  });

  it('PENDING → PROCESSING too; never recorded, READY or FAILED → alreadyStopped, nothing changed', async () => {
    const pending = await liveSession();
    await setRow(pending.id, { recordingStatus: 'PENDING' });
    const res = await stopRec(pending.id);
    // The simulator has no recording in that room: the recorder cannot stop it, so FAILED and 503.
    expectError(res, 503, 'SERVICE_UNAVAILABLE');
    expect((await row(pending.id)).recordingStatus).toBe('FAILED');

    for (const status of [null, 'READY', 'FAILED'] as const) {
      const s = await liveSession();
      await setRow(s.id, { recordingStatus: status });
      expect(expectOk(await stopRec(s.id))).toMatchObject({ recordingStatus: status, alreadyStopped: true });
      expect((await row(s.id)).recordingStatus).toBe(status);
    }
  });

  it('PENDING → PROCESSING when the recorder knows the recording', async () => {
    const s = await liveSession();
    expectOk(await startRec(s.id));
    await setRow(s.id, { recordingStatus: 'PENDING' });
    expect(expectOk(await stopRec(s.id)).recordingStatus).toBe('PROCESSING');
  });

  it('a stop while the recorder is still starting: the start then tells the recorder to stop, so nothing records on, and the recording ends READY', async () => {
    // An app whose recorder calls may take long, so the slow start is still in flight when the stop comes.
    const app = await createTestApp({ env: { RECORDING_TIMEOUT_MS: '15000' } });
    try {
      const s = await liveSession(app);
      const host = await app.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
      app.recorderSim.setFault('slow', { delayMs: 3000, path: '/recordings/start' });
      const starting = startRec(s.id, host, app);
      for (let i = 0; i < 1000 && (await row(s.id, app)).recordingStatus !== 'PENDING'; i++) await new Promise((r) => setTimeout(r, 5));
      expect((await row(s.id, app)).recordingStatus).toBe('PENDING');
      // The recorder has nothing to stop yet: the stop marks the recording FAILED (spec 3.1).
      expectError(await stopRec(s.id, host, app), 503, 'SERVICE_UNAVAILABLE');
      expect((await row(s.id, app)).recordingStatus).toBe('FAILED');

      // The start returns: the recorder did start, and is told to stop at once.
      const started = expectOk(await starting);
      app.recorderSim.setFault(null);
      expect(started).toMatchObject({ recordingStatus: 'PROCESSING', alreadyRecording: false });
      const mine = app.recorderSim.recordings.filter((r) => r.sessionId === s.id);
      expect(mine.map((r) => r.status)).toEqual(['PROCESSING']);
      expect(app.recorderSim.requests.filter((r) => r.path === '/recordings/stop').map((r) => r.body)).toEqual([
        { roomName: s.roomName, sessionId: s.id },
        { roomName: s.roomName, sessionId: s.id },
      ]);
      expect((await row(s.id, app)).recordingStatus).toBe('PROCESSING');
      await app.recorderSim.flushCallbacks();
      expect(await row(s.id, app)).toMatchObject({ recordingStatus: 'READY', recordingUrl: expect.stringContaining('.mp4') });
    } finally {
      app.recorderSim.setFault(null);
      await app.close();
    }
  });

  it('a start while a stop is still reaching the recorder waits for it: the stop ends the old recording, the start makes a new one that a later stop ends', async () => {
    const s = await liveSession();
    expectOk(await startRec(s.id));
    t.recorderSim.setFault('slow', { delayMs: 400, path: '/recordings/stop' });
    let stopped, restarted;
    try {
      const stopping = stopRec(s.id);
      for (let i = 0; i < 1000 && (await row(s.id)).recordingStatus !== 'PROCESSING'; i++) await new Promise((r) => setTimeout(r, 5));
      [stopped, restarted] = await Promise.all([stopping, startRec(s.id)]);
    } finally {
      t.recorderSim.setFault(null);
    }
    expect(expectOk(stopped)).toMatchObject({ recordingStatus: 'PROCESSING', alreadyStopped: false });
    expect(expectOk(restarted)).toMatchObject({ recordingStatus: 'RECORDING', alreadyRecording: false });
    // Two recordings: the stopped one, and the new one the start made after it (not the old one handed back).
    const mine = () => t.recorderSim.recordings.filter((r) => r.sessionId === s.id).map((r) => r.status);
    expect(mine()).toEqual(['PROCESSING', 'RECORDING']);
    expect(await row(s.id)).toMatchObject({ recordingStatus: 'RECORDING', recordingStopUntil: null });
    // So the next stop finds the new recording running, rather than a 404 that would mark it FAILED.
    expect(expectOk(await stopRec(s.id))).toMatchObject({ recordingStatus: 'PROCESSING', alreadyStopped: false });
    expect(mine()).toEqual(['PROCESSING', 'PROCESSING']);
  });

  it('recorder unreachable on stop: FAILED and 503 with a friendly message', async () => {
    const s = await liveSession();
    expectOk(await startRec(s.id));
    t.recorderSim.setFault('down');
    let res;
    try {
      res = await stopRec(s.id);
    } finally {
      t.recorderSim.setFault(null);
    }
    expectError(res, 503, 'SERVICE_UNAVAILABLE');
    expect(res.body.error.message).toMatch(/marked as failed/);
    expect(await row(s.id)).toMatchObject({ recordingStatus: 'FAILED', recordingStoppedAt: t.clock.now() });
  });

  it('403 for anyone of the institution but the host or ADMIN, also one who cannot see the session; 404 for another institution', async () => {
    const s = await liveSession(t, [{ n: 5 }]);
    expectOk(await startRec(s.id));
    expectError(await stopRec(s.id, await t.token({ role: 'TEACHER', id: DEMO_TEACHER2_ID })), 403, 'FORBIDDEN');
    expectError(await stopRec(s.id, await t.token({ role: 'STUDENT', id: stu(29) })), 403, 'FORBIDDEN');
    const north = await t.token({ role: 'ADMIN', id: NORTH_ADMIN_ID, institutionId: SECOND_INSTITUTION.id });
    expectError(await stopRec(s.id, north), 404, 'NOT_FOUND');
    expect((await row(s.id)).recordingStatus).toBe('RECORDING');
  });

  it('ending the session stops a running recording; a recorder that cannot be told leaves it FAILED and the end succeeds', async () => {
    const s = await liveSession();
    expectOk(await startRec(s.id));
    const ended = expectOk(await t.request('POST', `/api/live-sessions/${s.id}/end`, { token: teacher }));
    expect(ended).toMatchObject({ status: 'COMPLETED', recordingStatus: 'PROCESSING', recordingStoppedAt: t.clock.now().toISOString() });
    expect(recorderCalls('/recordings/stop', s.id)).toHaveLength(1);

    const other = await liveSession();
    expectOk(await startRec(other.id));
    t.recorderSim.setFault('down');
    try {
      const res = expectOk(await t.request('POST', `/api/live-sessions/${other.id}/end`, { token: teacher }));
      expect(res).toMatchObject({ status: 'COMPLETED', recordingStatus: 'FAILED' });
    } finally {
      t.recorderSim.setFault(null);
    }
  });
});

describe('webhook (spec 4.5 rules, 5.4 signature)', () => {
  it('accepts the signature bare or sha256=-prefixed, in X-Recorder-Signature or X-Meet-Signature', async () => {
    const variants = [
      (b: string) => ({ 'x-recorder-signature': hmacSha256Hex(SECRET, b) }),
      (b: string) => ({ 'x-recorder-signature': `sha256=${hmacSha256Hex(SECRET, b)}` }),
      (b: string) => ({ 'x-meet-signature': hmacSha256Hex(SECRET, b) }),
      (b: string) => ({ 'x-meet-signature': `sha256=${hmacSha256Hex(SECRET, b).toUpperCase()}` }),
    ];
    for (const headers of variants) {
      const s = await processingSession();
      const body = JSON.stringify({ event: 'recording_failed', sessionId: s.id, roomName: s.roomName });
      const res = await webhook(body, { headers: headers(body) });
      expect(res.status, res.raw).toBe(200);
      expect(res.body.data).toEqual({ ok: true, status: 'FAILED', ignored: false, reason: null });
    }
  });

  it('reads a signed body as JSON whatever Content-Type it declares, or none; unsigned, it is still 401', async () => {
    for (const contentType of ['text/plain', 'application/octet-stream', undefined]) {
      const s = await processingSession();
      const body = JSON.stringify({ event: 'recording_failed', sessionId: s.id, roomName: s.roomName });
      const signed = { 'x-recorder-signature': hmacSha256Hex(SECRET, body) };
      const res = await webhook(body, { headers: { ...signed, 'content-type': contentType as string } });
      expect(res.status, `${contentType}: ${res.raw}`).toBe(200);
      expect(res.body.data).toMatchObject({ ok: true, status: 'FAILED' });
      expect((await row(s.id)).recordingStatus).toBe('FAILED');
    }
    const s = await processingSession();
    const body = JSON.stringify({ event: 'recording_failed', sessionId: s.id, roomName: s.roomName });
    expectError(await webhook(body, { headers: { 'content-type': 'text/plain' } }), 401, 'AUTH_REQUIRED');
    expect((await row(s.id)).recordingStatus).toBe('PROCESSING');
  });

  it('401 for a missing, wrong or other-secret signature, or a signature of other bytes; nothing changes', async () => {
    const s = await processingSession();
    const body = JSON.stringify({ event: 'recording_uploaded', sessionId: s.id, roomName: s.roomName, recordingUrl: 'https://rec.example/1.mp4', duration: 60 });
    const cases: Record<string, string>[] = [
      {},
      { 'x-recorder-signature': 'nope' },
      { 'x-recorder-signature': `sha256=${hmacSha256Hex('another-secret', body)}` },
      { 'x-recorder-signature': hmacSha256Hex(SECRET, `${body} `) },
      { 'x-meet-signature': `sha1=${hmacSha256Hex(SECRET, body)}` },
    ];
    for (const headers of cases) expectError(await webhook(body, { headers }), 401, 'AUTH_REQUIRED');
    // Unsigned garbage is refused for its signature, before it is parsed.
    expectError(await webhook('{"event":', { headers: {} }), 401, 'AUTH_REQUIRED');
    expect((await row(s.id)).recordingStatus).toBe('PROCESSING');
    expect(await readyJobs(s.id)).toHaveLength(0);
  });

  it('400 for a signed body that is not the webhook shape', async () => {
    const s = await processingSession();
    expectError(await webhook('{"event":'), 400, 'VALIDATION_ERROR');
    const noUrl = await webhook({ event: 'recording_uploaded', sessionId: s.id, roomName: s.roomName });
    expectError(noUrl, 400, 'VALIDATION_ERROR');
    expect(noUrl.body.error.details.fields).toEqual([{ field: 'body.recordingUrl', message: expect.any(String) }]);
    expectError(await webhook({ event: 'recording_uploaded', sessionId: s.id, roomName: s.roomName, recordingUrl: null }), 400, 'VALIDATION_ERROR');
    expectError(await webhook({ event: 'recording_uploaded', sessionId: s.id, roomName: s.roomName, recordingUrl: 'javascript:alert(1)' }), 400, 'VALIDATION_ERROR');
    expectError(await webhook({ event: 'recording_failed', roomName: s.roomName }), 400, 'VALIDATION_ERROR');
    expect((await row(s.id)).recordingStatus).toBe('PROCESSING');
  });

  it('a body over 64 KiB: 413, and the connection closes (the unread rest is not the next request)', async () => {
    const text = JSON.stringify({ event: 'recording_failed', sessionId: 'x', roomName: 'y'.repeat(100 * 1024) });
    const res = await t.app.inject({
      method: 'POST',
      url: WEBHOOK,
      headers: { 'content-type': 'application/json', 'x-recorder-signature': hmacSha256Hex(SECRET, text) },
      payload: text,
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(res.headers.connection).toBe('close');
  });

  it('roomName that is not the session’s: 400 and nothing changed', async () => {
    const s = await processingSession();
    const other = await processingSession();
    const res = await webhook({ event: 'recording_uploaded', sessionId: s.id, roomName: other.roomName, recordingUrl: 'https://rec.example/x.mp4', duration: 5 });
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(await row(s.id)).toMatchObject({ recordingStatus: 'PROCESSING', recordingUrl: null, recordingDuration: null });
    expect(await readyJobs(s.id)).toHaveLength(0);
  });

  it('unknown session: 200 ignored (the recorder would retry anything else), whatever the event carries', async () => {
    const bodies = [
      { event: 'recording_uploaded', sessionId: 'no-such-session', roomName: 'lms-demo-no-such-session', recordingUrl: 'https://rec.example/x.mp4' },
      { event: 'recording_uploaded', sessionId: 'no-such-session', roomName: 'lms-demo-no-such-session' },
      { event: 'recording_failed', sessionId: 'no-such-session', roomName: 'lms-demo-no-such-session', recordingUrl: null, duration: null },
    ];
    for (const body of bodies) {
      const res = await webhook(body);
      expect(res.status, res.raw).toBe(200);
      expect(res.body).toEqual({ data: { ok: true, status: null, ignored: true, reason: 'unknown_session' }, error: null });
    }
  });

  it('null for the optional recordingUrl and duration is absent (spec: absent values are null)', async () => {
    const failed = await processingSession();
    const res = await webhook({ event: 'recording_failed', sessionId: failed.id, roomName: failed.roomName, recordingUrl: null, duration: null });
    expect(res.status, res.raw).toBe(200);
    expect(res.body.data).toEqual({ ok: true, status: 'FAILED', ignored: false, reason: null });
    expect(await row(failed.id)).toMatchObject({ recordingStatus: 'FAILED', recordingUrl: null });

    const uploaded = await processingSession();
    const ready = await webhook({ event: 'recording_uploaded', sessionId: uploaded.id, roomName: uploaded.roomName, recordingUrl: 'https://rec.example/n.mp4', duration: null });
    expect(ready.status, ready.raw).toBe(200);
    expect(await row(uploaded.id)).toMatchObject({ recordingStatus: 'READY', recordingUrl: 'https://rec.example/n.mp4', recordingDuration: null });
  });

  it('recording_failed: PROCESSING → FAILED with recordingStoppedAt now; a replay changes nothing', async () => {
    const s = await processingSession();
    t.clock.advance(30_000);
    const res = await webhook({ event: 'recording_failed', sessionId: s.id, roomName: s.roomName });
    expect(res.body.data).toEqual({ ok: true, status: 'FAILED', ignored: false, reason: null });
    const failedAt = t.clock.now();
    expect(await row(s.id)).toMatchObject({ recordingStatus: 'FAILED', recordingStoppedAt: failedAt });
    t.clock.advance(30_000);
    const replay = await webhook({ event: 'recording_failed', sessionId: s.id, roomName: s.roomName });
    expect(replay.body.data).toEqual({ ok: true, status: 'FAILED', ignored: true, reason: 'not_applicable' });
    expect((await row(s.id)).recordingStoppedAt).toEqual(failedAt);
  });

  it('recording_failed while still RECORDING (the recorder failed mid-class): FAILED too, so the session is not left recording', async () => {
    const s = await liveSession(t);
    expectOk(await startRec(s.id));
    expect((await row(s.id)).recordingStatus).toBe('RECORDING');
    const res = await webhook({ event: 'recording_failed', sessionId: s.id, roomName: s.roomName });
    expect(res.body.data).toEqual({ ok: true, status: 'FAILED', ignored: false, reason: null });
    expect(await row(s.id)).toMatchObject({ recordingStatus: 'FAILED', recordingStoppedAt: t.clock.now() });
    // A new recording may start after it.
    expect(expectOk(await startRec(s.id))).toMatchObject({ recordingStatus: 'RECORDING' });
  });

  it('recording_uploaded: PROCESSING → READY with url and duration; LIVE_CLASS_RECORDING_READY to ACTIVE and COMPLETED enrollments, in the same transaction', async () => {
    const s = await processingSession([{ n: 1 }, { n: 2, status: 'COMPLETED' }, { n: 3, status: 'DROPPED' }, { n: 4 }]);
    const body = { event: 'recording_uploaded', sessionId: s.id, roomName: s.roomName, recordingUrl: 'https://rec.example/class-1.mp4', duration: 3605 };
    const res = await webhook(body);
    expect(res.body).toEqual({ data: { ok: true, status: 'READY', ignored: false, reason: null }, error: null });
    expect(await row(s.id)).toMatchObject({ recordingStatus: 'READY', recordingUrl: 'https://rec.example/class-1.mp4', recordingDuration: 3605 });
    // Three learners (at most RECORDING_READY_INLINE_MAX): the rows exist when the answer comes, no worker needed; delivery is queued.
    expect(await readyJobs(s.id)).toHaveLength(0);
    const rows = await readyRows(s.id);
    expect(new Set(rows.map((r) => r.recipientId))).toEqual(new Set([stu(1), stu(2), stu(4)]));
    expect(rows).toHaveLength(3 * 3); // one row per channel
    const inApp = rows.find((r) => r.recipientId === stu(1) && r.channel === 'IN_APP')!;
    expect(inApp).toMatchObject({ title: 'Recording ready: Recorded class', actionUrl: `/live-sessions/${s.id}` });
    expect(inApp.metadata).toMatchObject({ sessionId: s.id, recordingUrl: 'https://rec.example/class-1.mp4', courseTitle: 'Recorded course' });

    // The student sees it in their notifications and the session with its recording.
    const student = await t.token({ role: 'STUDENT', id: stu(1) });
    const list = expectOk(await t.request('GET', '/api/notifications', { token: student }));
    expect(list.notifications.some((n: { key: string }) => n.key === 'LIVE_CLASS_RECORDING_READY')).toBe(true);
    expect(expectOk(await t.request('GET', `/api/live-sessions/${s.id}`, { token: student }))).toMatchObject({
      recordingStatus: 'READY',
      recordingUrl: 'https://rec.example/class-1.mp4',
      recordingDuration: 3605,
    });

    // A replay changes nothing and sends nothing.
    t.clock.advance(60_000);
    const replay = await webhook({ ...body, recordingUrl: 'https://rec.example/other.mp4', duration: 1 });
    expect(replay.body.data).toEqual({ ok: true, status: 'READY', ignored: true, reason: 'not_applicable' });
    expect(await row(s.id)).toMatchObject({ recordingUrl: 'https://rec.example/class-1.mp4', recordingDuration: 3605 });
    expect(await readyJobs(s.id)).toHaveLength(0);
    await t.worker.drain();
    expect(await readyRows(s.id)).toHaveLength(9);
    // A failed event after READY is ignored too.
    expect((await webhook({ event: 'recording_failed', sessionId: s.id, roomName: s.roomName })).body.data.ignored).toBe(true);
    expect((await row(s.id)).recordingStatus).toBe('READY');
  });

  it('a larger course hears through the worker: the answer does not wait for the fan-out, and the job sends once per recording however often it runs', async () => {
    const s = await processingSession([{ n: 6 }, { n: 7 }, { n: 8 }, { n: 9 }]);
    await webhook({ event: 'recording_uploaded', sessionId: s.id, roomName: s.roomName, recordingUrl: 'https://rec.example/2.mp4', duration: 10 });
    // Four learners, more than RECORDING_READY_INLINE_MAX (3): a job, and no notification yet.
    expect(await readyRows(s.id)).toHaveLength(0);
    const [job] = await t.db
      .select()
      .from(jobs)
      .where(sql`${jobs.name} = 'liveSessions.recordingReady' and ${jobs.payload}->>'sessionId' = ${s.id}`);
    const payload = job!.payload as Parameters<typeof sendRecordingReady>[1];
    const scope = { db: t.db, clock: t.clock, config: t.config };
    expect((await sendRecordingReady(scope, payload)).rows).toBe(12);
    expect((await sendRecordingReady(scope, payload)).rows).toBe(0);
    await t.worker.drain();
    expect(await readyRows(s.id)).toHaveLength(12);
  });

  it('events for a recording that is not PROCESSING, and unknown events, are 200 ignored and change nothing', async () => {
    const s = await liveSession();
    expectOk(await startRec(s.id));
    const uploaded = await webhook({ event: 'recording_uploaded', sessionId: s.id, roomName: s.roomName, recordingUrl: 'https://rec.example/3.mp4' });
    expect(uploaded.body.data).toEqual({ ok: true, status: 'RECORDING', ignored: true, reason: 'not_applicable' });
    const unknown = await webhook({ event: 'participant_joined', sessionId: s.id, roomName: s.roomName });
    expect(unknown.body.data).toEqual({ ok: true, status: 'RECORDING', ignored: true, reason: 'unknown_event' });
    expect(await row(s.id)).toMatchObject({ recordingStatus: 'RECORDING', recordingUrl: null });
  });

  it('concurrent identical webhooks apply once', async () => {
    const s = await processingSession([{ n: 8 }]);
    const body = { event: 'recording_uploaded', sessionId: s.id, roomName: s.roomName, recordingUrl: 'https://rec.example/4.mp4', duration: 42 };
    const results = await Promise.all(Array.from({ length: 5 }, () => webhook(body)));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(results.filter((r) => !r.body.data.ignored)).toHaveLength(1);
    expect(await readyRows(s.id)).toHaveLength(3); // one learner, three channels: sent once
  });
});

describe('recording not configured (spec 5.4)', () => {
  it('without the recorder address: start 503; the webhook still works with its secret and the token', async () => {
    const app = await createTestApp({ env: { RECORDING_API_URL: '' } });
    try {
      const s = await liveSession(app);
      const res = await startRec(s.id, await app.token({ role: 'TEACHER', id: DEMO_TEACHER_ID }), app);
      expectError(res, 503, 'SERVICE_UNAVAILABLE');
      expect(res.body.error.message).toMatch(/not set up/);
      expect((await row(s.id, app)).recordingStatus).toBeNull();
      const hook = await webhook({ event: 'recording_failed', sessionId: 'unknown', roomName: 'lms-demo-unknown' }, { app });
      expect(hook.body.data).toEqual({ ok: true, status: null, ignored: true, reason: 'unknown_session' });
    } finally {
      await app.close();
    }
  });

  it('without RECORDING_API_TOKEN: start 503 and the webhook 503 to everything, even correctly signed (spec 5.4)', async () => {
    const app = await createTestApp({ env: { RECORDING_API_TOKEN: '' } });
    try {
      const s = await liveSession(app);
      await app.db.update(liveSessions).set({ recordingStatus: 'PROCESSING' }).where(eq(liveSessions.id, s.id));
      const body = { event: 'recording_uploaded', sessionId: s.id, roomName: s.roomName, recordingUrl: 'https://rec.example/t.mp4', duration: 9 };
      expectError(await webhook(body, { app }), 503, 'SERVICE_UNAVAILABLE');
      expectError(await startRec(s.id, await app.token({ role: 'TEACHER', id: DEMO_TEACHER_ID }), app), 503, 'SERVICE_UNAVAILABLE');
      expect((await row(s.id, app)).recordingStatus).toBe('PROCESSING');
      expect(app.recorderSim.requests).toHaveLength(0);
    } finally {
      await app.close();
    }
  });

  it('an empty RECORDING_WEBHOOK_SECRET counts as unset: the webhook answers 503 to everything, and start 503', async () => {
    const app = await createTestApp({ env: { RECORDING_WEBHOOK_SECRET: '' } });
    try {
      expect(app.config.RECORDING_WEBHOOK_SECRET).toBeUndefined();
      const s = await liveSession(app);
      const body = { event: 'recording_failed', sessionId: s.id, roomName: s.roomName };
      expectError(await webhook(body, { app }), 503, 'SERVICE_UNAVAILABLE');
      expectError(await webhook('{"broken":', { app, headers: {} }), 503, 'SERVICE_UNAVAILABLE');
      expectError(await webhook(body, { app, secret: '' }), 503, 'SERVICE_UNAVAILABLE');
      expectError(await startRec(s.id, await app.token({ role: 'TEACHER', id: DEMO_TEACHER_ID }), app), 503, 'SERVICE_UNAVAILABLE');
      expect(app.recorderSim.requests).toHaveLength(0);
    } finally {
      await app.close();
    }
  });
});

describe('the whole cycle through the recorder simulator', () => {
  it('start → stop → the simulator calls the webhook back → READY (and FAILED with the failRecording switch)', async () => {
    const s = await liveSession(t, [{ n: 9 }]);
    expectOk(await startRec(s.id));
    expectOk(await stopRec(s.id));
    const [cb] = await t.recorderSim.flushCallbacks();
    expect(cb).toMatchObject({ event: 'recording_uploaded', delivered: true, lastStatus: 200, url: 'http://lms.test/api/webhooks/meet-recording' });
    const after = await row(s.id);
    expect(after.recordingStatus).toBe('READY');
    expect(after.recordingUrl).toMatch(new RegExp(`^${t.recorderSim.url}/recordings/[\\w-]+\\.mp4$`));
    expect(after.recordingDuration).toBeGreaterThanOrEqual(1);

    const failing = await liveSession();
    expectOk(await startRec(failing.id));
    t.recorderSim.setFault('failRecording');
    try {
      expectOk(await stopRec(failing.id));
    } finally {
      t.recorderSim.setFault(null);
    }
    const flushed = await t.recorderSim.flushCallbacks();
    expect(flushed.map((c) => c.event)).toEqual(['recording_failed']);
    expect((await row(failing.id)).recordingStatus).toBe('FAILED');
  });

  it('over real HTTP: the app on a port, the simulator calling PUBLIC_BASE_URL back by itself', async () => {
    const sim = await startRecorderSim({ port: 0, token: 'e2e-token', webhookSecret: 'e2e-secret', processingMs: 50 });
    // PUBLIC_BASE_URL names the port before the app listens on it: a port taken meanwhile by
    // another process (CI runs test files in parallel) means another try with another port.
    let port = 0;
    let app: TestApp | undefined;
    for (let attempt = 1; !app; attempt++) {
      port = await freePort();
      const candidate = await createTestApp({
        env: { PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, RECORDING_API_URL: sim.url, RECORDING_API_TOKEN: 'e2e-token', RECORDING_WEBHOOK_SECRET: 'e2e-secret' },
      });
      try {
        await candidate.app.listen({ port, host: '127.0.0.1' });
        app = candidate;
      } catch (err) {
        await candidate.close();
        if ((err as { code?: string }).code !== 'EADDRINUSE' || attempt >= 5) throw err;
      }
    }
    try {
      const s = await liveSession(app, [{ n: 11 }]);
      const host = await app.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
      expectOk(await startRec(s.id, host, app));
      expectOk(await stopRec(s.id, host, app));
      const deadline = Date.now() + 15_000;
      // READY is committed before the simulator has read the answer: wait for both.
      while ((await row(s.id, app)).recordingStatus !== 'READY' || !sim.callbacks[0]?.delivered) {
        if (Date.now() > deadline) throw new Error(`no READY: ${JSON.stringify(sim.callbacks)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(sim.callbacks).toHaveLength(1);
      expect(sim.callbacks[0]).toMatchObject({ delivered: true, lastStatus: 200, url: `http://127.0.0.1:${port}/api/webhooks/meet-recording` });
      const file = await fetch((await row(s.id, app)).recordingUrl!);
      expect(file.status).toBe(200);
      expect(file.headers.get('content-type')).toBe('video/mp4');
    } finally {
      await sim.close();
      await app.close();
    }
  });
});
