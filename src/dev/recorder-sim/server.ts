import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { z } from 'zod';
import { DEV_RECORDING_API_TOKEN, DEV_RECORDING_WEBHOOK_SECRET } from '../../config.js';
import { hmacSha256Hex, safeEqual } from '../../platform/auth/signatures.js';

/**
 * Recorder simulator (development and tests): the recorder API of `platform/recorder/client.ts`
 * over real HTTP, and the other half of the cycle: after a stop it "processes" the recording
 * and calls the service's webhook back (the `callbackUrl` of the start) with a body signed by
 * HMAC-SHA256 of the webhook secret in `X-Recorder-Signature: sha256=<hex>`, retrying on any
 * non-2xx like a real recorder. `npm start` runs it when RECORDING_API_URL is unset, so a
 * recording started and stopped by hand ends in READY.
 *
 *   POST /recordings/start {roomName, sessionId, callbackUrl} → 201 {recordingId, status: "RECORDING", startedAt}
 *   POST /recordings/stop  {roomName, sessionId}              → 200 {recordingId, status: "PROCESSING", duration}
 *   GET  /recordings/<recordingId>.mp4                         → the "uploaded" file (a few placeholder bytes)
 */

/**
 * - `down`: destroy the socket without answering (the client sees a connection reset);
 * - `notFound`: answer 404 to every API call (a recorder that has no such room provisioned);
 * - `slow`: answer after `delayMs` (default 3000);
 * - `error500`: answer 500;
 * - `failRecording`: recordings stopped from now on call back `recording_failed`.
 */
export type RecorderSimFault = 'down' | 'notFound' | 'slow' | 'error500' | 'failRecording';

export interface RecorderSimRecording {
  recordingId: string;
  roomName: string;
  sessionId: string;
  callbackUrl: string;
  startedAt: Date;
  stoppedAt: Date | null;
  status: 'RECORDING' | 'PROCESSING' | 'DELIVERED';
}

export interface RecorderSimCallback {
  recordingId: string;
  url: string;
  body: string;
  signature: string;
  event: 'recording_uploaded' | 'recording_failed';
  attempts: number;
  /** HTTP status of the last attempt; null before the first or when the request failed. */
  lastStatus: number | null;
  lastError: string | null;
  delivered: boolean;
}

export interface RecorderSimRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** How a callback reaches the service: real HTTP by default; a test may route it into its app. */
export type CallbackTransport = (url: string, init: { headers: Record<string, string>; body: string }) => Promise<{ status: number }>;

export interface RecorderSimOptions {
  port?: number;
  host?: string;
  token?: string;
  webhookSecret?: string;
  /**
   * Milliseconds of "processing" between a stop and its webhook (default 2000). `null`: hold
   * callbacks until `flushCallbacks()` (tests).
   */
  processingMs?: number | null;
  /** Delivery attempts of one callback in automatic mode (default 6; 1 s, 2 s, 4 s… apart). */
  maxAttempts?: number;
  transport?: CallbackTransport;
  log?: Pick<Console, 'info' | 'warn'>;
}

export interface RecorderSim {
  port: number;
  /** Base URL of the API, e.g. `http://127.0.0.1:4020`: the service's RECORDING_API_URL. */
  url: string;
  token: string;
  webhookSecret: string;
  recordings: RecorderSimRecording[];
  callbacks: RecorderSimCallback[];
  requests: RecorderSimRequest[];
  /** `path` limits the fault to requests of that path (e.g. only `/recordings/start` is slow). */
  setFault(fault: RecorderSimFault | null, opts?: { delayMs?: number; path?: string }): void;
  /** Sends every callback not yet delivered once, now; answers what each attempt got. */
  flushCallbacks(): Promise<RecorderSimCallback[]>;
  /** Clears records of requests, recordings and callbacks (not the fault). */
  resetRecords(): void;
  close(): Promise<void>;
}

const DEFAULT_SLOW_MS = 3000;
const MAX_BODY_BYTES = 64 * 1024;
/** The "uploaded recording": not a real video, enough for a link that answers. */
const PLACEHOLDER_MP4 = Buffer.from('00000018667479706d703432000000006d70343269736f6d', 'hex');

const startSchema = z.object({ roomName: z.string().min(1).max(300), sessionId: z.string().min(1).max(200), callbackUrl: z.string().url() });
const stopSchema = z.object({ roomName: z.string().min(1).max(300), sessionId: z.string().min(1).max(200) });

class HttpFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export const httpTransport: CallbackTransport = async (url, init) => {
  const res = await request(url, { method: 'POST', headers: init.headers, body: init.body, signal: AbortSignal.timeout(10_000) });
  await res.body.dump();
  return { status: res.statusCode };
};

export async function startRecorderSim(opts: RecorderSimOptions = {}): Promise<RecorderSim> {
  const token = opts.token ?? DEV_RECORDING_API_TOKEN;
  const webhookSecret = opts.webhookSecret ?? DEV_RECORDING_WEBHOOK_SECRET;
  const processingMs = opts.processingMs === undefined ? 2000 : opts.processingMs;
  const maxAttempts = opts.maxAttempts ?? 6;
  const transport = opts.transport ?? httpTransport;
  const host = opts.host ?? '127.0.0.1';
  const recordings: RecorderSimRecording[] = [];
  const callbacks: RecorderSimCallback[] = [];
  const requests: RecorderSimRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const inFlight = new Set<Promise<unknown>>();
  let fault: { kind: RecorderSimFault; delayMs: number; path: string | null } | null = null;
  let closed = false;
  let baseUrl = '';

  const later = (ms: number, fn: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  };

  async function attempt(cb: RecorderSimCallback): Promise<void> {
    cb.attempts++;
    try {
      const { status } = await transport(cb.url, {
        headers: { 'content-type': 'application/json', 'x-recorder-signature': cb.signature, 'user-agent': 'lms-recorder-sim' },
        body: cb.body,
      });
      cb.lastStatus = status;
      cb.lastError = null;
      cb.delivered = status >= 200 && status <= 299;
    } catch (err) {
      cb.lastStatus = null;
      cb.lastError = (err as Error)?.message ?? String(err);
    }
    if (cb.delivered) {
      const rec = recordings.find((r) => r.recordingId === cb.recordingId);
      if (rec) rec.status = 'DELIVERED';
    }
  }

  /** Automatic mode: attempts until delivered, 1 s, 2 s, 4 s… apart, at most `maxAttempts`. */
  function deliverWithRetries(cb: RecorderSimCallback) {
    if (closed) return;
    const p = attempt(cb).then(() => {
      if (cb.delivered || closed) return;
      if (cb.attempts >= maxAttempts) {
        opts.log?.warn(`[recorder-sim] gave up on the ${cb.event} callback of ${cb.recordingId} after ${cb.attempts} attempts (${cb.lastStatus ?? cb.lastError})`);
        return;
      }
      later(1000 * 2 ** (cb.attempts - 1), () => deliverWithRetries(cb));
    });
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  }

  function queueCallback(rec: RecorderSimRecording, failed: boolean) {
    const duration = Math.max(1, Math.round(((rec.stoppedAt ?? new Date()).getTime() - rec.startedAt.getTime()) / 1000));
    const payload = failed
      ? { event: 'recording_failed', sessionId: rec.sessionId, roomName: rec.roomName }
      : { event: 'recording_uploaded', sessionId: rec.sessionId, roomName: rec.roomName, recordingUrl: `${baseUrl}/recordings/${rec.recordingId}.mp4`, duration };
    const body = JSON.stringify(payload);
    const cb: RecorderSimCallback = {
      recordingId: rec.recordingId,
      url: rec.callbackUrl,
      body,
      signature: `sha256=${hmacSha256Hex(webhookSecret, body)}`,
      event: payload.event as RecorderSimCallback['event'],
      attempts: 0,
      lastStatus: null,
      lastError: null,
      delivered: false,
    };
    callbacks.push(cb);
    if (processingMs !== null) later(processingMs, () => deliverWithRetries(cb));
  }

  const server = createServer((req, res) => {
    const active = fault && (fault.path === null || (req.url ?? '/').split('?')[0] === fault.path) ? fault : null;
    if (active?.kind === 'down') {
      req.socket.destroy();
      return;
    }
    const answer = () => {
      handle(req, res, active).catch((err: unknown) => {
        if (err instanceof HttpFailure) return sendJson(res, err.status, { error: err.message });
        sendJson(res, 500, { error: String(err) });
      });
    };
    if (active?.kind === 'slow') later(active.delayMs, answer);
    else answer();
  });

  async function handle(req: IncomingMessage, res: ServerResponse, active: typeof fault): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!;
    const method = req.method ?? 'GET';
    if (method === 'GET' && path === '/healthz') return sendJson(res, 200, { ok: true });
    const file = /^\/recordings\/([\w-]+)\.mp4$/.exec(path);
    if (method === 'GET' && file) {
      if (!recordings.some((r) => r.recordingId === file[1] && r.status !== 'RECORDING')) throw new HttpFailure(404, 'No such recording');
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': PLACEHOLDER_MP4.length });
      res.end(PLACEHOLDER_MP4);
      return;
    }
    const body = method === 'POST' ? await readJson(req) : undefined;
    requests.push({ method, path, headers: { ...req.headers }, body });
    if (!bearerMatches(req.headers.authorization, token)) throw new HttpFailure(401, 'Invalid token');
    if (active?.kind === 'error500') throw new HttpFailure(500, 'Simulated failure');
    if (active?.kind === 'notFound') throw new HttpFailure(404, 'Recording is not provisioned for this room');

    if (method === 'POST' && path === '/recordings/start') {
      const input = startSchema.safeParse(body);
      if (!input.success) throw new HttpFailure(400, input.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
      const running = recordings.find((r) => r.roomName === input.data.roomName && r.status === 'RECORDING');
      if (running) return sendJson(res, 200, { recordingId: running.recordingId, status: 'RECORDING', startedAt: running.startedAt.toISOString() });
      const rec: RecorderSimRecording = { recordingId: randomUUID(), ...input.data, startedAt: new Date(), stoppedAt: null, status: 'RECORDING' };
      recordings.push(rec);
      opts.log?.info(`[recorder-sim] recording ${rec.recordingId} of room ${rec.roomName} started`);
      return sendJson(res, 201, { recordingId: rec.recordingId, status: 'RECORDING', startedAt: rec.startedAt.toISOString() });
    }
    if (method === 'POST' && path === '/recordings/stop') {
      const input = stopSchema.safeParse(body);
      if (!input.success) throw new HttpFailure(400, input.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
      const rec = recordings.find((r) => r.roomName === input.data.roomName && r.status === 'RECORDING');
      if (!rec) throw new HttpFailure(404, 'No recording is running in this room');
      rec.stoppedAt = new Date();
      rec.status = 'PROCESSING';
      queueCallback(rec, active?.kind === 'failRecording');
      opts.log?.info(`[recorder-sim] recording ${rec.recordingId} stopped; calling back ${rec.callbackUrl}${processingMs !== null ? ` in ${processingMs} ms` : ''}`);
      return sendJson(res, 200, { recordingId: rec.recordingId, status: 'PROCESSING' });
    }
    throw new HttpFailure(404, 'Not found');
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  baseUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  return {
    port,
    url: baseUrl,
    token,
    webhookSecret,
    recordings,
    callbacks,
    requests,
    setFault(kind, o = {}) {
      fault = kind ? { kind, delayMs: o.delayMs ?? DEFAULT_SLOW_MS, path: o.path ?? null } : null;
    },
    async flushCallbacks() {
      const due = callbacks.filter((c) => !c.delivered);
      for (const cb of due) await attempt(cb);
      return due;
    },
    resetRecords() {
      recordings.length = 0;
      callbacks.length = 0;
      requests.length = 0;
    },
    async close() {
      closed = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      await Promise.allSettled([...inFlight]);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer (.+)$/.exec(header ?? '');
  return !!match && safeEqual(match[1]!, token);
}

function sendJson(res: ServerResponse, status: number, body: unknown) {
  if (res.destroyed || res.writableEnded) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpFailure(413, 'Body too large');
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpFailure(400, 'Body is not JSON');
  }
}
