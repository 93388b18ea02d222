import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { AppError, type ErrorCode } from './errors.js';
import { isDatabaseUnavailable, isForeignKeyViolation, isTransactionConflict } from '../db/errors.js';
import { API_HEADERS, requestIdOf } from './response-headers.js';
import { isStorageError } from '../storage/types.js';

const FASTIFY_CODE_MAP: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_REQ_FILE_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_FILES_LIMIT: 'PAYLOAD_TOO_LARGE',
  FST_PARTS_LIMIT: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_INVALID_MULTIPART_CONTENT_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
};

const STATUS_CODE_MAP: Record<number, ErrorCode> = {
  401: 'AUTH_REQUIRED',
  412: 'PRECONDITION_FAILED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
};

export function sendError(reply: FastifyReply, status: number, code: string, message: string, details?: Record<string, unknown>) {
  return reply
    .code(status)
    .type('application/json; charset=utf-8')
    .serializer(JSON.stringify)
    .send({ data: null, error: details ? { code, message, details } : { code, message } });
}

/** Parse errors of a malformed multipart body (busboy throws plain errors). */
const MULTIPART_PARSE_ERROR =
  /^(Multipart: Boundary not found|Boundary required|Unexpected end of multipart data|\w+ terminated early due to unexpected end of multipart data|Malformed part header)/;

/**
 * Database refusals of the caller's data that the input guard (input-guard.ts) and the schemas
 * should already have stopped: invalid byte sequence (NUL), untranslatable character, datetime
 * out of range, time zone displacement out of range, numeric value out of range.
 */
const DB_INPUT_ERRORS = new Set(['22021', '22P05', '22008', '22009', '22003']);

/** Node's error for a request body whose connection closed before it ended. */
export const isClientAbort = (err: Error & { code?: unknown }) => err.message === 'aborted' && err.code === 'ECONNRESET';

/** Any error as the AppError the client is told about (logged when it is a bug). */
export function toAppError(err: FastifyError | Error, req: FastifyRequest): AppError {
  if (err instanceof AppError) return err;
  // The body stream of a client that went away (or was cut off by REQUEST_TIMEOUT_MS): Node's
  // "aborted", whose ECONNRESET would otherwise read as a lost database connection.
  if (isClientAbort(err)) return new AppError('VALIDATION_ERROR', 'The request body was not received completely');
  if (!(err as FastifyError).code && !(err as FastifyError).statusCode && MULTIPART_PARSE_ERROR.test(err.message)) {
    return new AppError('VALIDATION_ERROR', `Malformed multipart body: ${err.message}`);
  }
  const pgCode = (err as { code?: unknown; cause?: { code?: unknown } }).cause?.code ?? (err as { code?: unknown }).code;
  if (typeof pgCode === 'string' && DB_INPUT_ERRORS.has(pgCode)) {
    req.log.warn({ err, reqId: req.id }, 'database refused input the guard let through');
    return new AppError('VALIDATION_ERROR', 'The request contains a value the service cannot store');
  }
  if (hasZodFastifySchemaValidationErrors(err)) {
    const fields = err.validation.map((v) => ({
      field: [
        err.validationContext,
        ...String(v.instancePath ?? '')
          .split('/')
          .filter(Boolean),
      ]
        .filter(Boolean)
        .join('.'),
      message: v.message ?? 'invalid',
    }));
    return new AppError('VALIDATION_ERROR', 'The request is not valid', { fields });
  }
  // A referenced record deleted while the request ran: it does not exist any more.
  if (isForeignKeyViolation(err)) return new AppError('NOT_FOUND', 'A record this request refers to no longer exists');
  // Rolled back to let a concurrent transaction through: nothing was written. Logged as an error
  // (it means two services lock in different orders), answered as worth retrying.
  if (isTransactionConflict(err)) {
    req.log.error({ err, reqId: req.id }, 'transaction conflict (deadlock or serialization failure)');
    return new AppError('SERVICE_UNAVAILABLE', 'The request collided with a concurrent one and changed nothing; retry it');
  }
  // The disk or the bucket failed (storage/types.ts): not the caller's fault and worth retrying;
  // the cause, with its paths, stays in the log.
  if (isStorageError(err, 'UNAVAILABLE')) {
    req.log.error({ err, reqId: req.id }, 'file storage unavailable');
    return new AppError('SERVICE_UNAVAILABLE', 'File storage is unavailable; retry shortly');
  }
  // PostgreSQL restarting or unreachable: not a bug, and worth retrying shortly.
  if (isDatabaseUnavailable(err)) {
    req.log.warn({ reqId: req.id, err: err.message }, 'database unavailable');
    return new AppError('SERVICE_UNAVAILABLE', 'The database is unavailable; retry shortly');
  }
  const fe = err as FastifyError;
  const mapped = fe.code ? FASTIFY_CODE_MAP[fe.code] : undefined;
  if (mapped) return new AppError(mapped, fe.message);
  const status = fe.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    // Malformed JSON, bad content length, multipart trouble: the caller's input.
    return new AppError(STATUS_CODE_MAP[status] ?? 'VALIDATION_ERROR', fe.message, undefined, status);
  }
  req.log.error({ err, reqId: req.id }, 'unhandled error');
  return new AppError('INTERNAL_ERROR', `Internal error (request ${req.id})`);
}

/** Router errors (bad percent-encoding, path parameter too long): 400 in the envelope. */
export function sendFrameworkError(err: FastifyError, req: FastifyRequest, reply: FastifyReply) {
  // No hook runs for a request refused before routing: its request id and headers are set here.
  reply.headers(API_HEADERS);
  reply.header('x-request-id', req.id);
  return sendError(reply, 400, 'VALIDATION_ERROR', err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'A path parameter is too long' : 'The URL is not valid');
}

const UPSTREAM_MESSAGES: Record<string, string> = { crm: 'The CRM is unavailable' };

/**
 * Upstream failures (the CRM's: details.upstream) carry the upstream host and path in their
 * message: that stays in the log, the caller gets a generic message.
 */
export function forClient(appErr: AppError, req: FastifyRequest): AppError {
  const upstream = appErr.details?.upstream;
  if (typeof upstream !== 'string') return appErr;
  req.log.warn({ reqId: req.id, upstream, code: appErr.code, detail: appErr.message }, 'upstream failure');
  const reason = appErr.details?.reason;
  return new AppError(
    appErr.code,
    UPSTREAM_MESSAGES[upstream] ?? 'An upstream service is unavailable',
    { upstream, ...(typeof reason === 'string' ? { reason } : {}) },
    appErr.status,
  );
}

/** Every error, ours or the framework's, leaves in the envelope; never with a stack. */
export interface ErrorHandlingOptions {
  /** Answers an unknown page path (the web app's client-side routes) before the 404; true when it did. */
  pageFallback?: (req: FastifyRequest, reply: FastifyReply) => boolean;
}

export function registerErrorHandling(app: FastifyInstance, opts: ErrorHandlingOptions = {}) {
  app.setErrorHandler((err, req, reply) => {
    const appErr = forClient(toAppError(err as Error, req), req);
    if (appErr.status >= 500 && !(err instanceof AppError)) {
      // already logged in toAppError
    } else if (appErr.status >= 500) {
      req.log.error({ err, reqId: req.id }, appErr.message);
    }
    return sendError(reply, appErr.status, appErr.code, appErr.message, appErr.details);
  });
  const allowedMethods = knownMethodsByPath(app);
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? '/';
    // Messages name the path the client sent (/api/v1/… before the rewrite to /api/…).
    const asked = req.originalUrl.split('?')[0] ?? path;
    // A known path asked with a method it does not take: 405 with the methods it does take.
    const allow = allowedMethods(path);
    if (allow.length > 0 && !allow.includes(req.method)) {
      reply.header('allow', allow.join(', '));
      return sendError(reply, 405, 'METHOD_NOT_ALLOWED', `Method ${req.method} is not allowed on ${asked}`, { allow });
    }
    if (opts.pageFallback?.(req, reply)) return reply;
    return sendError(reply, 404, 'NOT_FOUND', `Route ${req.method} ${asked} not found`);
  });
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A route pattern (`/api/courses/:id`, `/x/:opt?`, `/files/*`) as a regular expression. */
function patternToRegExp(url: string): RegExp {
  const segments = url.replace(/\/+$/, '').split('/').slice(1);
  let source = '';
  for (const segment of segments) {
    if (segment === '*') source += '(?:/.*)?';
    else if (/^:[^/]+\?$/.test(segment)) source += '(?:/[^/]+)?';
    else if (segment.startsWith(':')) source += '/[^/]+';
    else
      source += `/${segment
        .split(/:[A-Za-z_]\w*/)
        .map(escapeRegExp)
        .join('[^/]+')}`;
  }
  return new RegExp(`^${source}/?$`);
}

/**
 * Collects every route's pattern and methods as routes are added (so register this before
 * the routes), and answers which methods a concrete path takes. Catch-all patterns (the CORS
 * preflight's `*`) say nothing about a path and are left out.
 */
function knownMethodsByPath(app: FastifyInstance): (path: string) => string[] {
  const routes = new Map<string, { re: RegExp; methods: Set<string> }>();
  app.addHook('onRoute', (route) => {
    const url = route.url ?? route.path;
    if (!url || url === '*' || url === '/*') return;
    let entry = routes.get(url);
    if (!entry) {
      entry = { re: patternToRegExp(url), methods: new Set() };
      routes.set(url, entry);
    }
    for (const m of Array.isArray(route.method) ? route.method : [route.method]) {
      entry.methods.add(m);
      if (m === 'GET') entry.methods.add('HEAD');
    }
  });
  return (path) => {
    const found = new Set<string>();
    for (const { re, methods } of routes.values()) if (re.test(path)) for (const m of methods) found.add(m);
    return [...found].sort();
  };
}

/** The API security headers as raw header lines, for answers written straight to the socket. */
const API_HEADER_LINES = Object.entries(API_HEADERS)
  .map(([name, value]) => `${name}: ${value}\r\n`)
  .join('');

/**
 * Errors the HTTP server meets before Fastify sees a request (a body or headers not received
 * within REQUEST_TIMEOUT_MS / HEADERS_TIMEOUT_MS, oversized headers, unparsable HTTP): answered
 * in the envelope where the socket can still take it, then closed.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket) {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  // A request whose headers were read (its body too slow) has its answer object on the socket:
  // a sent x-request-id is echoed; otherwise (or for headers never read) a fresh id.
  const pending = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  const requestId = requestIdOf(pending?.req?.headers['x-request-id']);
  const [status, code, message] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'REQUEST_TIMEOUT', 'The request was not received in time']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'REQUEST_HEADER_FIELDS_TOO_LARGE', 'Request headers too large']
        : [400, 'VALIDATION_ERROR', 'Malformed HTTP request'];
  const body = JSON.stringify({ data: null, error: { code, message } });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${code.replace(/_/g, ' ')}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\n${API_HEADER_LINES}\r\n${body}`,
    );
  }
  socket.destroy();
}
