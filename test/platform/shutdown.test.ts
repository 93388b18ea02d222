/**
 * Graceful shutdown of the real process (`lms start`): on SIGTERM a request in flight is
 * answered, then the process closes the database and exits 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCrmSim, type CrmSim } from '../../src/dev/crm-sim/server.js';
import { mintToken } from '../../src/platform/auth/tokens.js';

const SECRET = 'shutdown-test-secret-0123456789abcdef';
let sim: CrmSim;
let dataDir: string;
let child: ChildProcess;
let baseUrl: string;

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

beforeAll(async () => {
  sim = await startCrmSim({ port: 0 });
  dataDir = await mkdtemp(join(tmpdir(), 'lms-shutdown-'));
  const port = await freePort();
  child = spawn(process.execPath, ['bin/lms.js', 'start'], {
    env: {
      ...process.env,
      NODE_ENV: 'development',
      DATABASE_URL: '', // always the embedded database here, also when CI sets PostgreSQL
      REDIS_URL: '',
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
      AUTH_SECRET: SECRET,
      CRM_BASE_DOMAIN: sim.baseDomain,
      CRM_PROTOCOL: sim.protocol,
      CRM_API_KEY: sim.apiKey,
      LOG_LEVEL: process.env.SHUTDOWN_TEST_LOG ?? 'silent',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr!.on('data', (d) => (output += d));
  if (process.env.SHUTDOWN_TEST_LOG) {
    child.stdout!.on('data', (d) => process.stderr.write(`[child] ${d}`));
    child.stderr!.on('data', (d) => process.stderr.write(`[child:err] ${d}`));
  }
  baseUrl = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      output += d;
      const m = /LMS service running at (http:\/\/\S+)/.exec(output);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`lms start exited early (${code}):\n${output}`)));
  });
}, 300_000);

afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await sim?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('SIGTERM', () => {
  it('answers the request in flight, then exits 0', async () => {
    const token = await mintToken(SECRET, { sub: 'u_demo_teacher', institutionId: 'inst_demo', role: 'TEACHER' });
    // The enrollment list asks the CRM for names: a slow CRM keeps the request in flight.
    sim.setFault('slow', { delayMs: 1500, pathPrefix: '/api/lms/' });
    sim.resetRecords();
    const inFlight = fetch(`${baseUrl}/api/courses/seed_inst_demo_algebra/enrollments`, { headers: { authorization: `Bearer ${token}` } });
    // Signal only once the server is handling it: the simulator has seen its name lookups.
    const deadline = Date.now() + 30_000;
    while (!sim.requests.some((r) => r.path.startsWith('/api/lms/contact/'))) {
      if (Date.now() > deadline) throw new Error('the request never reached the CRM');
      await new Promise((r) => setTimeout(r, 20));
    }
    const exited = once(child, 'exit');
    child.kill('SIGTERM');

    const res = await inFlight;
    if (process.env.SHUTDOWN_TEST_LOG) console.error('[test] response', res.status);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.error).toBeNull();
    expect(body.data.length).toBeGreaterThan(0);
    const [code] = await exited;
    expect(code).toBe(0);
    // Nothing listens any more.
    await expect(fetch(`${baseUrl}/healthz`)).rejects.toThrow();
  }, 60_000);
});
