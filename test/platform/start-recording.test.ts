/**
 * `lms start` (what `npm start` runs) with no recorder configured, and the recording variables
 * set explicitly empty (an empty value counts as unset): it runs the recorder simulator, says so
 * in the banner, and a recording started and stopped by hand ends in READY because the
 * simulator calls the webhook back with a correct signature. The simulator closes on SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCrmSim, type CrmSim } from '../../src/dev/crm-sim/server.js';
import { mintToken } from '../../src/platform/auth/tokens.js';
import { freePort } from '../helpers/ports.js';

const SECRET = 'start-recording-test-secret-0123456789';
let sim: CrmSim;
let dataDir: string;
let child: ChildProcess;
let baseUrl: string;
let banner = '';

beforeAll(async () => {
  sim = await startCrmSim({ port: 0 });
  dataDir = await mkdtemp(join(tmpdir(), 'lms-start-recording-'));
  const port = await freePort();
  child = spawn(process.execPath, ['bin/lms.js', 'start'], {
    env: {
      ...process.env,
      NODE_ENV: 'development',
      DATABASE_URL: '',
      REDIS_URL: '',
      SMTP_URL: '',
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
      AUTH_SECRET: SECRET,
      CRM_BASE_DOMAIN: sim.baseDomain,
      CRM_PROTOCOL: sim.protocol,
      CRM_API_KEY: sim.apiKey,
      RECORDING_API_URL: '',
      RECORDING_API_TOKEN: '',
      RECORDING_WEBHOOK_SECRET: '',
      LOG_LEVEL: 'silent',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr!.on('data', (d) => (output += d));
  baseUrl = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      output += d;
      const m = /LMS service running at (http:\/\/\S+)/.exec(output);
      if (m && /Demo tokens/.test(output)) {
        banner = output;
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`lms start exited early (${code}):\n${output}`)));
  });
}, 300_000);

afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await sim?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function call(method: string, path: string, token: string, body?: unknown) {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as { data: any; error: any };
  expect(res.status, JSON.stringify(json)).toBeLessThan(300);
  return json.data;
}

describe('recording under lms start', () => {
  let recorderPort = 0;

  it('runs the recorder simulator although the recording variables are set empty, and says so', () => {
    const m = /Recorder simulator: http:\/\/127\.0\.0\.1:(\d+)/.exec(banner);
    expect(m, banner).not.toBeNull();
    recorderPort = Number(m![1]);
  });

  it('a recording started and stopped by hand ends in READY: the simulator calls the signed webhook back', async () => {
    const teacher = await mintToken(SECRET, { sub: 'u_demo_teacher', institutionId: 'inst_demo', role: 'TEACHER' });
    const session = await call('POST', '/api/live-sessions', teacher, {
      courseId: 'seed_inst_demo_algebra',
      title: 'Demo class',
      scheduledAt: new Date().toISOString(),
      durationMinutes: 30,
    });
    const started = await call('POST', `/api/live-sessions/${session.id}/start`, teacher);
    expect(started.roomName).toBe(`lms-demo-${session.id}`);
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
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
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
