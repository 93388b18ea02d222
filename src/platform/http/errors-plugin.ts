import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { AppError, type ErrorCode } from './errors.js';
import { isForeignKeyViolation } from '../db/errors.js';

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
const MULTIPART_PARSE_ERROR = /^(Multipart: Boundary not found|Boundary required|Unexpected end of multipart data|\w+ terminated early due to unexpected end of multipart data|Malformed part header)/;

/**
 * Database refusals of the caller's data that the input guard (input-guard.ts) should already
 * have stopped: invalid byte sequence (NUL), untranslatable character, datetime out of range.
 */
const DB_INPUT_ERRORS = new Set(['22021', '22P05', '22008']);

function toAppError(err: FastifyError | Error, req: FastifyRequest): AppError {
  if (err instanceof AppError) return err;
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
      field: [err.validationContext, ...String(v.instancePath ?? '').split('/').filter(Boolean)]
        .filter(Boolean)
        .join('.'),
      message: v.message ?? 'invalid',
    }));
    return new AppError('VALIDATION_ERROR', 'The request is not valid', { fields });
  }
  // A referenced record deleted while the request ran: it does not exist any more.
  if (isForeignKeyViolation(err)) return new AppError('NOT_FOUND', 'A record this request refers to no longer exists');
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
export function sendFrameworkError(err: FastifyError, _req: unknown, reply: FastifyReply) {
  return sendError(reply, 400, 'VALIDATION_ERROR', err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'A path parameter is too long' : 'The URL is not valid');
}

/** Every error, ours or the framework's, leaves in the envelope; never with a stack. */
export function registerErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((err, req, reply) => {
    const appErr = toAppError(err as Error, req);
    if (appErr.status >= 500 && !(err instanceof AppError)) {
      // already logged in toAppError
    } else if (appErr.status >= 500) {
      req.log.error({ err, reqId: req.id }, appErr.message);
    }
    return sendError(reply, appErr.status, appErr.code, appErr.message, appErr.details);
  });
  app.setNotFoundHandler((req, reply) =>
    sendError(reply, 404, 'NOT_FOUND', `Route ${req.method} ${req.url.split('?')[0]} not found`),
  );
}
