/**
 * Slow and malformed clients against a real listening server: a body trickled slower than
 * REQUEST_TIMEOUT_MS allows, or headers slower than HEADERS_TIMEOUT_MS, get 408 in the
 * envelope and a closed connection; a request Node's HTTP parser refuses gets 400.
 */
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { API_HEADERS } from '../../src/platform/http/response-headers.js';

/** The header lines of a raw answer, by lower-case name. */
function headersOf(answer: string): Record<string, string> {
  const lines = answer.slice(0, answer.indexOf('\r\n\r\n')).split('\r\n').slice(1);
  return Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
}

/** Answers written before routing still carry the request id and the API security headers. */
function expectAnswerHeaders(answer: string, requestId?: string) {
  const headers = headersOf(answer);
  if (requestId) expect(headers['x-request-id']).toBe(requestId);
  else expect(headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  for (const [name, value] of Object.entries(API_HEADERS)) expect(headers[name], name).toBe(value);
}

let t: TestApp;
let port: number;
const logLines: string[] = [];
beforeAll(async () => {
  t = await createTestApp({
    env: { REQUEST_TIMEOUT_MS: '1500', HEADERS_TIMEOUT_MS: '1000' },
    logger: { level: 'info', stream: new Writable({ write: (chunk, _enc, done) => void (logLines.push(String(chunk)), done()) }) },
    extraRoutes: (app) => void app.post('/api/test/echo', { config: { auth: 'public' } }, async () => ({ data: 1, error: null })),
  });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as { port: number }).port;
});
afterAll(() => t.close());

async function trickle(first: string, next: string, everyMs: number): Promise<{ answer: string; elapsedMs: number }> {
  const socket: Socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  const started = Date.now();
  let answer = '';
  socket.on('data', (d) => (answer += d));
  socket.on('error', () => undefined);
  socket.write(first);
  const timer = setInterval(() => socket.writable && socket.write(next), everyMs);
  const guard = setTimeout(() => socket.destroy(), 15_000);
  await once(socket, 'close');
  clearInterval(timer);
  clearTimeout(guard);
  return { answer, elapsedMs: Date.now() - started };
}

describe('request timeouts', () => {
  it('closes a connection whose body trickles in too slowly, with 408 in the envelope', async () => {
    const head = `POST /api/test/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: slow-body-1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`;
    const { answer, elapsedMs } = await trickle(head, ' ', 200);
    expect(elapsedMs).toBeLessThan(8000);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
      data: null,
      error: { code: 'REQUEST_TIMEOUT', message: expect.any(String) },
    });
    expectAnswerHeaders(answer, 'slow-body-1');
    // The cut-off body is the client's doing, not a lost database connection (that warning came
    // about 10 ms after the answer; a second is ample).
    await new Promise((r) => setTimeout(r, 1000));
    expect(logLines.join('')).not.toContain('database unavailable');
  }, 20_000);

  it('closes a connection whose headers trickle in too slowly', async () => {
    const { answer, elapsedMs } = await trickle('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n', 'X-A: b\r\n', 200);
    expect(elapsedMs).toBeLessThan(8000);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expectAnswerHeaders(answer);
  }, 20_000);

  it('answers a prompt request as usual', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/api/test/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(200);
  });
});

describe('requests the HTTP parser refuses', () => {
  // The input guard does not look at headers: this is what keeps NUL out of them.
  it.each([
    ['a NUL in a header value', 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Note: a\u0000b\r\n\r\n'],
    ['a NUL in a header name', 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-N\u0000te: ab\r\n\r\n'],
    ['a malformed request line', 'GET /healthz HTTX/1.1\r\nHost: 127.0.0.1\r\n\r\n'],
  ])('answers %s with 400 in the envelope and closes the connection', async (_what, request) => {
    const { answer } = await trickle(request, '', 60_000);
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
      data: null,
      error: { code: 'VALIDATION_ERROR', message: 'Malformed HTTP request' },
    });
    expectAnswerHeaders(answer);
  });

  it('answers headers over the limit with 431 in the envelope, with the API headers', async () => {
    const { answer } = await trickle(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, '', 60_000);
    expect(answer).toMatch(/^HTTP\/1\.1 431/);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).error.code).toBe('REQUEST_HEADER_FIELDS_TOO_LARGE');
    expectAnswerHeaders(answer);
  });
});
