/**
 * The recorder client against the recorder simulator over real HTTP: the calls it makes, and
 * each failure as its reason (not configured, 404, refused token, unreachable, timeout, 5xx).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRecorderClient, RecorderError } from '../../../src/platform/recorder/client.js';
import { startRecorderSim, type RecorderSim } from '../../../src/dev/recorder-sim/server.js';

let sim: RecorderSim;
beforeAll(async () => {
  sim = await startRecorderSim({ port: 0, token: 'unit-token', webhookSecret: 'unit-secret', processingMs: null });
});
afterAll(async () => sim?.close());

const client = (over: Partial<Parameters<typeof createRecorderClient>[0]> = {}) =>
  createRecorderClient({ apiUrl: sim.url, token: 'unit-token', timeoutMs: 500, connectTimeoutMs: 500, ...over });

async function reasonOf(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
  } catch (err) {
    expect(err).toBeInstanceOf(RecorderError);
    return (err as RecorderError).reason;
  }
  throw new Error('the call succeeded');
}

describe('recorder client', () => {
  it('starts and stops a recording with the bearer token; the simulator holds the signed callback', async () => {
    const c = client();
    expect(c.configured).toBe(true);
    const { recordingId } = await c.startRecording({ roomName: 'lms-demo-s1', sessionId: 's1', callbackUrl: 'http://lms.test/api/webhooks/meet-recording' });
    expect(recordingId).toEqual(expect.any(String));
    await c.stopRecording({ roomName: 'lms-demo-s1', sessionId: 's1' });
    expect(sim.requests.map((r) => [r.path, r.headers.authorization])).toEqual([
      ['/recordings/start', 'Bearer unit-token'],
      ['/recordings/stop', 'Bearer unit-token'],
    ]);
    const [cb] = sim.callbacks;
    expect(JSON.parse(cb!.body)).toMatchObject({ event: 'recording_uploaded', sessionId: 's1', roomName: 'lms-demo-s1', recordingUrl: expect.stringContaining('/recordings/') });
    expect(cb!.signature).toMatch(/^sha256=[0-9a-f]{64}$/);
    await c.close();
  });

  it('names each failure', async () => {
    const start =
      (c = client()) =>
      () =>
        c.startRecording({ roomName: 'lms-demo-s2', sessionId: 's2', callbackUrl: 'http://lms.test/cb' });
    expect(await reasonOf(start(client({ apiUrl: undefined })))).toBe('not_configured');
    expect(await reasonOf(start(client({ token: undefined })))).toBe('not_configured');
    expect(client({ token: undefined }).configured).toBe(false);
    expect(await reasonOf(start(client({ token: 'wrong' })))).toBe('unauthorized');
    expect(await reasonOf(() => client().stopRecording({ roomName: 'no-such-room', sessionId: 'x' }))).toBe('not_found');
    const cases = [
      ['notFound', 'not_found'],
      ['down', 'unreachable'],
      ['slow', 'timeout'],
      ['error500', 'http_error'],
    ] as const;
    for (const [fault, reason] of cases) {
      sim.setFault(fault, { delayMs: 1500 });
      try {
        expect(await reasonOf(start()), fault).toBe(reason);
      } finally {
        sim.setFault(null);
      }
    }
    const closed = await startRecorderSim({ port: 0 });
    const url = closed.url;
    await closed.close();
    expect(await reasonOf(start(client({ apiUrl: url })))).toBe('unreachable');
  });
});
