import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { envelope, errorResponse, ok, paged, pagedEnvelope } from '../../platform/http/envelope.js';
import type { Deps } from '../../platform/context.js';
import { requestContext } from '../../platform/auth/auth-plugin.js';
import { DOWNLOAD_PATH_PREFIX, UPLOAD_PATH_PREFIX } from '../../platform/storage/signed-urls.js';
import {
  binarySchema,
  fileSchema,
  listFilesQuery,
  objectKeyParams as keyParams,
  presignBody,
  presignSchema,
  registerFileBody,
  signedQuery,
  type SignedQuery,
  storedObjectSchema,
} from './files.schemas.js';
import * as filesService from './files.service.js';
import { filesJobs } from './files.jobs.js';

const tags = ['files'];

const contentLengthOf = (req: FastifyRequest) => {
  const v = req.headers['content-length'];
  return typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : undefined;
};

/**
 * Keys from `newObjectKey` have three segments (`<tenant>/<kind>/<object>`): the documented
 * routes name them, so OpenAPI shows real path parameters. A hidden wildcard twin of each route
 * serves any other key depth the storage layer allows (the signature still decides).
 */
const KEY_PATH = ':tenant/:kind/:object';

function keyOf(req: FastifyRequest): string {
  const p = req.params as Record<string, string | undefined>;
  if (p['*'] !== undefined) return p['*'];
  return [p.tenant, p.kind, p.object].join('/');
}

/**
 * The signed local-storage routes are public (the signature is the credential) and live in
 * their own scope, where every body is left unparsed so the upload handler can stream it.
 */
async function signedRoutes(scope: FastifyInstance, deps: Deps) {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
  const r = typed(scope);

  const uploadHandler = async (req: FastifyRequest<{ Querystring: SignedQuery }>, reply: FastifyReply) => {
    try {
      const stored = await filesService.acceptSignedUpload(deps, {
        key: keyOf(req),
        query: req.query,
        contentType: req.headers['content-type'],
        contentLength: contentLengthOf(req),
        body: req.raw,
      });
      return reply.code(201).send(ok(stored));
    } catch (err) {
      // Refused before the whole body was read: the connection is not reused, so a client
      // still sending cannot leave it in the middle of a body for the next request.
      if (!req.raw.readableEnded) reply.header('connection', 'close');
      throw err;
    }
  };

  const downloadHandler = async (req: FastifyRequest<{ Querystring: SignedQuery }>, reply: FastifyReply) => {
    const { object, body, maxAgeSeconds } = await filesService.readSignedDownload(deps, { key: keyOf(req), query: req.query });
    const inline = /^(image|video|audio)\/|^application\/pdf$|^text\/(plain|vtt|csv|markdown)$/.test(object.contentType);
    return reply
      .header('content-type', object.contentType)
      .header('cache-control', `private, max-age=${maxAgeSeconds}`)
      .header('content-disposition', inline ? 'inline' : 'attachment')
      .header('content-security-policy', "default-src 'none'; sandbox")
      .header('content-length', object.size)
      .send(body);
  };

  const uploadSchema = {
    tags,
    operationId: 'putSignedUpload',
    summary: 'Upload the bytes of a file to a presigned URL (local storage)',
    description:
      'The URL comes from POST /api/upload; its signature grants one key, one Content-Type (else 415) and a size ' +
      'limit (else 413) until it expires (expired or altered → 403 FORBIDDEN). An existing object is never ' +
      'replaced (409 CONFLICT). The body is the raw file, at least 1 byte (an empty one is 400); a storage ' +
      'failure is 503 SERVICE_UNAVAILABLE (retry). Public: the signature, not a session, grants access (no 401).',
    querystring: signedQuery,
    response: {
      201: envelope(storedObjectSchema),
      400: errorResponse(400, 'an empty body (the file must have at least 1 byte)', ['VALIDATION_ERROR']),
      403: errorResponse(403, 'the signature has expired or was altered', ['FORBIDDEN']),
      409: errorResponse(409, 'an object is already stored under the key', ['CONFLICT']),
      413: errorResponse(413, 'over the size the signature grants'),
      415: errorResponse(415, 'not the Content-Type the signature grants'),
      503: errorResponse(503, 'file storage is unavailable; retry shortly', ['SERVICE_UNAVAILABLE']),
    },
  };

  const downloadSchema = {
    tags,
    operationId: 'getSignedFile',
    summary: 'Download a stored object through a signed URL (local storage)',
    description:
      'Signed URLs come from file rows (`url`) and caption tracks (`vttUrl`). Expired or altered → 403 FORBIDDEN. Public: the signature, not a session, grants access (no 401); no object under the key 404 NOT_FOUND.',
    querystring: signedQuery,
    response: {
      200: {
        description: 'the object bytes, with its stored Content-Type',
        content: { 'application/octet-stream': { schema: binarySchema } },
      },
      403: errorResponse(403, 'the signature has expired or was altered', ['FORBIDDEN']),
      404: errorResponse(404, 'no object under the key'),
    },
  };

  // The object key names its institution; the signature, not a session, grants access.
  const config = { auth: 'public' as const, recordScope: 'institution' as const };
  r.put(`${UPLOAD_PATH_PREFIX}${KEY_PATH}`, { config, schema: { ...uploadSchema, params: keyParams } }, uploadHandler);
  r.put(`${UPLOAD_PATH_PREFIX}*`, { config, schema: { ...uploadSchema, hide: true } }, uploadHandler);
  r.get(`${DOWNLOAD_PATH_PREFIX}${KEY_PATH}`, { config, schema: { ...downloadSchema, params: keyParams } }, downloadHandler);
  r.get(`${DOWNLOAD_PATH_PREFIX}*`, { config, schema: { ...downloadSchema, hide: true } }, downloadHandler);
}

/** Spec 4.9: presigned uploads, registered files, and the local-storage signed URLs. */
const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);
  const ctxOf = (req: FastifyRequest) => requestContext(deps, req);

  r.post(
    '/api/upload',
    {
      schema: {
        tags,
        operationId: 'createUploadUrl',
        summary: 'Obtain a presigned upload address for a new file',
        description:
          'Returns a URL to PUT the bytes to (with `headers`), valid for 15 minutes, under a server-generated key. ' +
          'Then register the key with POST /api/files. 400 for a disallowed content type or a size over its limit; ' +
          '413 PAYLOAD_TOO_LARGE (details: scope `user` or `institution`, quota, used, requested) when the upload ' +
          "would exceed the caller's or the institution's quota (registered files plus pending uploads). An upload " +
          'not registered within 24 hours is removed from storage.',
        body: presignBody,
        response: {
          200: envelope(presignSchema),
          413: errorResponse(413, 'the upload would exceed the caller’s or the institution’s quota (`details`: scope, quota, used, requested)'),
        },
      },
    },
    async (req) => ok(await filesService.presignUpload(ctxOf(req), req.body)),
  );

  r.get(
    '/api/files',
    {
      schema: {
        tags,
        operationId: 'listFiles',
        summary: "Files of the caller's institution, newest first",
        description:
          'Course managers see every file of the institution; other users see the files they registered. Any signed-in user. 400 VALIDATION_ERROR for a bad filter or page value.',
        querystring: listFilesQuery,
        response: { 200: pagedEnvelope(fileSchema) },
      },
    },
    async (req) => {
      const { rows, meta } = await filesService.listFiles(ctxOf(req), req.query);
      return paged(rows, meta);
    },
  );

  r.post(
    '/api/files',
    {
      schema: {
        tags,
        operationId: 'registerFile',
        summary: 'Register an uploaded object as a file',
        description:
          "The key must come from POST /api/upload by the caller (another person's or another institution's, or an expired, removed upload → " +
          '404 NOT_FOUND) and the object must exist (else 400); the size is read from storage. 409 when the key is ' +
          'already registered. `courseId`/`lessonId` must name a course the caller may see (a learner: published or their own), else 404.',
        body: registerFileBody,
        response: {
          201: envelope(fileSchema),
          409: errorResponse(409, 'the key is already registered', ['CONFLICT']),
          413: errorResponse(413, 'the stored object is larger than its type allows (it is removed)'),
        },
      },
    },
    async (req, reply) => reply.code(201).send(ok(await filesService.registerFile(ctxOf(req), req.body))),
  );

  await app.register(async (scope) => signedRoutes(scope, deps));
};

export const filesModule: AppModule = { name: 'files', routes, jobs: filesJobs };
