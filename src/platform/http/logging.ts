import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * What the logs may carry. Signed URLs (`sig=`) are bearer credentials until they expire, and
 * the parameters of a failed query are user data (note text, student ids): neither is logged.
 */

const SIG_PARAM = /([?&](?:sig|signature|x-amz-signature)=)[^&#\s"]*/gi;

/** The URL with the value of every signature parameter replaced by `[redacted]`. */
export const redactUrl = (url: string): string => url.replace(SIG_PARAM, '$1[redacted]');

/** A drizzle DrizzleQueryError's message ends in `params: …`: keep the query text only. */
const redactMessage = (message: string): string => redactUrl(message.replace(/\nparams: [\s\S]*$/, '\nparams: [redacted]'));

/** Keys of an error (or its causes) never logged: query parameters and PostgreSQL's `detail` (key values). */
const DROPPED_ERROR_KEYS = new Set(['params', 'parameters', 'detail']);

interface SerializedError {
  type: string;
  message: string;
  stack?: string;
  [key: string]: unknown;
}

/** pino's error serializer, minus query parameters and signatures, with causes, bounded. */
export function serializeError(err: unknown, depth = 0): unknown {
  if (!(err instanceof Error)) return err;
  const out: SerializedError = { type: err.constructor?.name ?? err.name, message: redactMessage(err.message) };
  if (err.stack) out.stack = redactUrl(err.stack.replace(/\nparams: [\s\S]*?(\n\s+at |$)/, '\nparams: [redacted]$1'));
  for (const [key, value] of Object.entries(err)) {
    if (DROPPED_ERROR_KEYS.has(key) || key === 'cause' || key === 'message' || key === 'stack') continue;
    out[key] = typeof value === 'string' ? redactUrl(value) : value;
  }
  if (err.cause !== undefined && depth < 4) out.cause = serializeError(err.cause, depth + 1);
  return out;
}

/** The request as Fastify logs it by default, with signatures redacted from the URL. */
export function serializeRequest(req: FastifyRequest) {
  return {
    method: req.method,
    url: redactUrl(req.url),
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

/** Fastify logger options: level plus the redacting serializers. */
export function loggerOptions(level: string, extra: Record<string, unknown> = {}) {
  return {
    level,
    ...extra,
    serializers: { req: serializeRequest, err: serializeError, error: serializeError, ...(extra.serializers as object | undefined) },
  };
}

/**
 * Fastify's per-request log lines, one a request instead of two: no "incoming request" line,
 * and the "request completed" line (at its end) carries the request (method, redacted URL,
 * caller) as well as the status and time.
 */
export class OneLineRequestLog extends LogController {
  override incomingRequest() {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply) {
    if (this.isLogDisabled(request)) return;
    const line = { req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}
