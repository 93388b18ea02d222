import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'fastify/types/logger.js';

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
    // Through the app's logger with the request id in the line (the same JSON as the request's
    // child logger writes), so a request that logs nothing else never builds that child.
    const log = request.server.log;
    const line = { reqId: request.id, req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime };
    if (error) log.error({ ...line, err: error }, 'request errored');
    else log.info(line, 'request completed');
  }
}

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type PinoLike = FastifyBaseLogger & { isLevelEnabled?(level: string): boolean; bindings?(): Bindings };

/**
 * A request's logger, made on first use. Fastify gives every request a pino child carrying its
 * `reqId`, and pino serializes that binding when the child is made (~1.5 µs a request); most
 * requests log nothing but the completed line, which OneLineRequestLog writes without it. A
 * call at a level the app's logger has off costs nothing; any other builds the child once.
 */
class LazyRequestLogger {
  #child: FastifyBaseLogger | undefined;
  constructor(
    private readonly parent: PinoLike,
    private readonly own: Bindings,
  ) {}

  private get real(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.own));
  }

  private logAt(level: Level, args: unknown[]) {
    if (this.#child === undefined && this.parent.isLevelEnabled?.(level) === false) return;
    (this.real[level] as (...a: unknown[]) => void)(...args);
  }

  get level() {
    return this.#child?.level ?? this.parent.level;
  }
  set level(level: string) {
    this.real.level = level;
  }
  /** The parent's bindings and the request id, without making the child. */
  bindings(): Bindings {
    return this.#child ? ((this.#child as PinoLike).bindings?.() ?? this.own) : { ...this.parent.bindings?.(), ...this.own };
  }
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real.child(bindings, options);
  }
  fatal(...args: unknown[]) {
    this.logAt('fatal', args);
  }
  error(...args: unknown[]) {
    this.logAt('error', args);
  }
  warn(...args: unknown[]) {
    this.logAt('warn', args);
  }
  info(...args: unknown[]) {
    this.logAt('info', args);
  }
  debug(...args: unknown[]) {
    this.logAt('debug', args);
  }
  trace(...args: unknown[]) {
    this.logAt('trace', args);
  }
  silent() {}
}

/**
 * Fastify's `childLoggerFactory`: the lazy request logger above, or pino's child right away when
 * the route sets its own log level or serializers.
 */
export function lazyRequestLogger(logger: FastifyBaseLogger, bindings: Bindings, opts: ChildLoggerOptions): FastifyBaseLogger {
  if (opts.level !== undefined || opts.serializers !== undefined) return logger.child(bindings, opts);
  return new LazyRequestLogger(logger as PinoLike, bindings) as unknown as FastifyBaseLogger;
}
