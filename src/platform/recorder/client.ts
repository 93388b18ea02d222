import { Agent, request, type Dispatcher } from 'undici';

/**
 * HTTP client of the external cloud recorder (spec 4.5, 5.4), modelled on the CRM client:
 * bearer `RECORDING_API_TOKEN`, a JSON body, connect/headers/body timeouts and a cap on the
 * answer. The recorder's API, as this service uses it (and the simulator implements it):
 *
 *   POST {RECORDING_API_URL}/recordings/start  {roomName, sessionId, callbackUrl}  → 2xx {recordingId?}
 *   POST {RECORDING_API_URL}/recordings/stop   {roomName, sessionId}               → 2xx
 *
 * After a stop the recorder uploads the file and calls `callbackUrl` with a signed webhook.
 */

export type RecorderErrorReason =
  | 'not_configured' // RECORDING_API_URL or RECORDING_API_TOKEN missing
  | 'not_found' // the recorder answered 404: the room or the recording is not provisioned
  | 'unauthorized' // 401/403: the token is refused
  | 'timeout'
  | 'unreachable' // DNS, refused, reset
  | 'http_error'; // any other non-2xx

/** A failed recorder call; the services turn it into the spec's 503 with a friendly message. */
export class RecorderError extends Error {
  constructor(
    readonly reason: RecorderErrorReason,
    message: string,
    readonly upstreamStatus: number | null = null,
  ) {
    super(message);
    this.name = 'RecorderError';
  }
}

export interface StartRecordingInput {
  roomName: string;
  sessionId: string;
  /** `{PUBLIC_BASE_URL}/api/webhooks/meet-recording`. */
  callbackUrl: string;
}

export interface RecorderClient {
  /** True when both the API address and the token are set. */
  readonly configured: boolean;
  startRecording(input: StartRecordingInput): Promise<{ recordingId: string | null }>;
  stopRecording(input: { roomName: string; sessionId: string }): Promise<void>;
  close(): Promise<void>;
}

export interface RecorderClientOptions {
  apiUrl: string | undefined;
  token: string | undefined;
  timeoutMs: number;
  connectTimeoutMs: number;
}

const MAX_RESPONSE_BYTES = 64 * 1024;

export function createRecorderClient(opts: RecorderClientOptions): RecorderClient {
  const base = opts.apiUrl?.replace(/\/+$/, '');
  const configured = Boolean(base && opts.token);
  let agent: Agent | undefined;
  const dispatcher = () =>
    (agent ??= new Agent({
      keepAliveTimeout: 10_000,
      connections: 16,
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
      connect: { timeout: opts.connectTimeoutMs },
    }));

  async function call(path: string, body: unknown): Promise<unknown> {
    if (!base || !opts.token) {
      throw new RecorderError('not_configured', `The recorder is not configured (${!base ? 'RECORDING_API_URL' : 'RECORDING_API_TOKEN'} is not set)`);
    }
    const url = `${base}${path}`;
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        dispatcher: dispatcher(),
        method: 'POST',
        headers: { authorization: `Bearer ${opts.token}`, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(opts.timeoutMs),
      });
    } catch (err) {
      throw networkError(err, url);
    }
    let text: string;
    try {
      text = await readCapped(res.body);
    } catch (err) {
      throw networkError(err, url);
    }
    const status = res.statusCode;
    if (status < 200 || status > 299) {
      const reason: RecorderErrorReason = status === 404 ? 'not_found' : status === 401 || status === 403 ? 'unauthorized' : 'http_error';
      throw new RecorderError(reason, `Recorder POST ${path} answered ${status}`, status);
    }
    try {
      return text ? JSON.parse(text) : null;
    } catch {
      return null; // a 2xx is what counts; the answer's shape is the recorder's business
    }
  }

  return {
    configured,
    async startRecording(input) {
      const answer = (await call('/recordings/start', { roomName: input.roomName, sessionId: input.sessionId, callbackUrl: input.callbackUrl })) as {
        recordingId?: unknown;
      } | null;
      return { recordingId: typeof answer?.recordingId === 'string' ? answer.recordingId : null };
    },
    async stopRecording(input) {
      await call('/recordings/stop', { roomName: input.roomName, sessionId: input.sessionId });
    },
    async close() {
      await agent?.close();
      agent = undefined;
    },
  };
}

function networkError(err: unknown, url: string): RecorderError {
  if (err instanceof RecorderError) return err;
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string } };
  const target = `${new URL(url).host}${new URL(url).pathname}`;
  const timeoutCodes = ['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'];
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError' || timeoutCodes.includes(e?.code ?? '')) {
    return new RecorderError('timeout', `Recorder ${target} timed out`);
  }
  return new RecorderError('unreachable', `Recorder ${target} unreachable: ${e?.code ?? e?.cause?.code ?? e?.message ?? String(err)}`);
}

async function readCapped(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_RESPONSE_BYTES) {
      body.destroy();
      break; // the status is what counts; a huge answer is cut, not an error
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
