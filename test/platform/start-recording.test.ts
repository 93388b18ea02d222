/**
 * `lms start` (what `npm start` runs) with no recorder configured (its address and token set
 * empty, which counts as unset): it runs the recorder simulator, says so in the banner, and a
 * recording started and stopped by hand ends in READY because the simulator calls the webhook
 * back with a correct signature. The simulator closes on SIGTERM.
 *
 * With RECORDING_WEBHOOK_SECRET set explicitly empty (issue 12: it counts as unset, also under
 * `npm start`) no simulator fills a secret in: the webhook answers 503 to everything and
 * recording/start 503.
 */
import { once } from 'node:events';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCrmSim, type CrmSim } from '../../src/dev/crm-sim/server.js';
import { mintToken } from '../../src/platform/auth/tokens.js';
import { startLms, stopLms, type StartedLms } from '../helpers/lms-start.js';

const SECRET = 'start-recording-test-secret-0123456789';
let sim: CrmSim;
let main: StartedLms;
let off: StartedLms | undefined;
let baseUrl: string;

beforeAll(async () => {
  sim = await startCrmSim({ port: 0 });
  // The recorder's address and token set empty (they count as unset), the webhook secret not set at all.
  main = await startLms(sim, SECRET, { RECORDING_API_URL: '', RECORDING_API_TOKEN: '', RECORDING_WEBHOOK_SECRET: undefined });
  baseUrl = main.baseUrl;
}, 300_000);

afterAll(async () => {
  await stopLms(main);
  await stopLms(off);
  await sim?.close();
});

async function request(base: string, method: string, path: string, token: string | undefined, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { data: any; error: any } };
}

async function call(method: string, path: string, token: string, body?: unknown, base = baseUrl) {
  const res = await request(base, method, path, token, body);
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return res.body.data;
}

const teacherToken = () => mintToken(SECRET, { sub: 'u_demo_teacher', institutionId: 'inst_demo', role: 'TEACHER' });

/** A live session of the demo course, started (LIVE, with its room name). */
async function liveSession(base: string) {
  const teacher = await teacherToken();
  const session = await call(
    'POST',
    '/api/live-sessions',
    teacher,
    { courseId: 'seed_inst_demo_algebra', title: 'Demo class', scheduledAt: new Date().toISOString(), durationMinutes: 30 },
    base,
  );
  const started = await call('POST', `/api/live-sessions/${session.id}/start`, teacher, undefined, base);
  expect(started.roomName).toBe(`lms-demo-${session.id}`);
  return { teacher, session: started };
}

describe('recording under lms start', () => {
  let recorderPort = 0;

  it('runs the recorder simulator although its address and token are set empty, and says so', () => {
    const m = /Recorder simulator: http:\/\/127\.0\.0\.1:(\d+)/.exec(main.banner);
    expect(m, main.banner).not.toBeNull();
    recorderPort = Number(m![1]);
  });

  it('a recording started and stopped by hand ends in READY: the simulator calls the signed webhook back', async () => {
    const { teacher, session } = await liveSession(baseUrl);
    expect((await call('POST', `/api/live-sessions/${session.id}/recording/start`, teacher)).recordingStatus).toBe('RECORDING');
    expect((await call('POST', `/api/live-sessions/${session.id}/recording/stop`, teacher)).recordingStatus).toBe('PROCESSING');
    const deadline = Date.now() + 30_000;
    let current = await call('GET', `/api/live-sessions/${session.id}`, teacher);
    while (current.recordingStatus !== 'READY') {
      expect(current.recordingStatus).toBe('PROCESSING');
      if (Date.now() > deadline) throw new Error('the recording never became READY');
      await new Promise((r) => setTimeout(r, 200));
      current = await call('GET', `/api/live-sessions/${session.id}`, teacher);
    }
    expect(current.recordingUrl).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${recorderPort}/recordings/`));
    expect(current.recordingDuration).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it('closes the simulator on SIGTERM', async () => {
    const exited = once(main.child, 'exit');
    main.child.kill('SIGTERM');
    const [code] = await exited;
    expect(code).toBe(0);
    const refused = await new Promise<boolean>((done) => {
      const socket = connect(recorderPort, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), done(false)));
      socket.once('error', () => done(true));
    });
    expect(refused).toBe(true);
  }, 60_000);
});

describe('lms start with RECORDING_WEBHOOK_SECRET set empty', () => {
  beforeAll(async () => {
    off = await startLms(sim, SECRET, { RECORDING_WEBHOOK_SECRET: '' });
  }, 300_000);

  it('runs no recorder simulator and says recording is off', () => {
    expect(off!.banner).not.toMatch(/Recorder simulator:/);
    expect(off!.banner).toMatch(/Recording: off \(RECORDING_WEBHOOK_SECRET is set empty/);
  });

  it('the webhook answers 503 to everything, signed or not, and recording/start answers 503 leaving the session unrecorded', async () => {
    const { teacher, session } = await liveSession(off!.baseUrl);
    const event = { event: 'recording_uploaded', roomName: session.roomName, sessionId: session.id, recordingUrl: 'https://rec.example/x.mp4', duration: 60 };
    for (const headers of [{}, { 'x-recorder-signature': 'sha256=' + '0'.repeat(64) }] as Array<Record<string, string>>) {
      const res = await request(off!.baseUrl, 'POST', '/api/webhooks/meet-recording', undefined, event, headers);
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('SERVICE_UNAVAILABLE');
    }
    const start = await request(off!.baseUrl, 'POST', `/api/live-sessions/${session.id}/recording/start`, teacher);
    expect(start.status).toBe(503);
    expect(start.body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect((await call('GET', `/api/live-sessions/${session.id}`, teacher, undefined, off!.baseUrl)).recordingStatus).toBeNull();
  }, 60_000);
});
