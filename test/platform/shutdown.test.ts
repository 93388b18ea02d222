/**
 * Graceful shutdown of the real process (`lms start`): on SIGTERM /readyz turns 503 while
 * requests are still served for SHUTDOWN_DELAY_MS, a request in flight is answered, then the
 * process closes the database and exits 0. Also the SMTP sink `lms start`
 * runs without SMTP_URL: announced in the banner, storing mail in DATA_DIR/mailbox, closed on
 * shutdown.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdir } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCrmSim, type CrmSim } from '../../src/dev/crm-sim/server.js';
import { mintToken } from '../../src/platform/auth/tokens.js';
import { createMailer } from '../../src/platform/mail/mailer.js';
import { startLms, stopLms, type StartedLms } from '../helpers/lms-start.js';

const SECRET = 'shutdown-test-secret-0123456789abcdef';
let sim: CrmSim;
let lms: StartedLms;
let dataDir: string;
let child: ChildProcess;
let baseUrl: string;
let banner = '';

beforeAll(async () => {
  sim = await startCrmSim({ port: 0 });
  lms = await startLms(
    sim,
    SECRET,
    {
      LOG_LEVEL: process.env.SHUTDOWN_TEST_LOG ?? 'silent',
      // Unready, still serving, this long after SIGTERM (a load balancer's drain time).
      SHUTDOWN_DELAY_MS: '4000',
    },
    Boolean(process.env.SHUTDOWN_TEST_LOG),
  );
  ({ dataDir, child, baseUrl, banner } = lms);
}, 300_000);

afterAll(async () => {
  await stopLms(lms);
  await sim?.close();
});

async function refused(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), done(false)));
    socket.once('error', () => done(true));
  });
}

let sinkPort = 0;

describe('mail without SMTP_URL', () => {
  it('lms start runs an SMTP sink on loopback that stores mail in DATA_DIR/mailbox, and says so', async () => {
    const m = /Mail: sent e-mail is stored in (\S+) \(SMTP sink smtp:\/\/127\.0\.0\.1:(\d+)\)/.exec(banner);
    expect(m, banner).not.toBeNull();
    expect(m![1]).toBe(join(dataDir, 'mailbox'));
    sinkPort = Number(m![2]);
    const mailer = createMailer({ SMTP_URL: `smtp://127.0.0.1:${sinkPort}`, MAIL_FROM: 'LMS <no-reply@lms.test>', DATA_DIR: dataDir }, console);
    try {
      await mailer.send({ to: 'ada@school.test', subject: 'Through the sink', text: 'Hello' });
    } finally {
      await mailer.close();
    }
    expect(await readdir(join(dataDir, 'mailbox'))).toEqual([expect.stringMatching(/^\d{8}T\d{9}Z-\d+\.eml$/)]);
  });
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

    // During the shutdown delay /readyz turns 503 (the load balancer takes the replica out)
    // while requests are still served.
    let ready = await fetch(`${baseUrl}/readyz`);
    for (let i = 0; i < 50 && ready.status === 200; i++) {
      await new Promise((r) => setTimeout(r, 20));
      ready = await fetch(`${baseUrl}/readyz`);
    }
    expect(ready.status).toBe(503);
    expect((await ready.json()).error.code).toBe('SERVICE_UNAVAILABLE');
    expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200);

    const res = await inFlight;
    if (process.env.SHUTDOWN_TEST_LOG) console.error('[test] response', res.status);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.error).toBeNull();
    expect(body.data.length).toBeGreaterThan(0);
    const [code] = await exited;
    expect(code).toBe(0);
    // Nothing listens any more: neither the API nor the SMTP sink.
    await expect(fetch(`${baseUrl}/healthz`)).rejects.toThrow();
    if (sinkPort) expect(await refused(sinkPort)).toBe(true);
  }, 60_000);
});
