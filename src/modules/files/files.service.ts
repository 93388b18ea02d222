import type { Readable } from 'node:stream';
import { and, count, desc, eq, ilike, sql, type SQL } from 'drizzle-orm';
import { withTx, type Deps, type ServiceContext } from '../../platform/context.js';
import { isUniqueViolation } from '../../platform/db/errors.js';
import { containsPattern } from '../../platform/db/like.js';
import { iso } from '../../platform/dto.js';
import { canManageCourses } from '../../platform/auth/permissions.js';
import { AppError, conflict, notFound, validationError } from '../../platform/http/errors.js';
import type { PageMeta } from '../../platform/http/envelope.js';
import { pageMeta, pageOffset, toPage } from '../../platform/http/pagination.js';
import { newId } from '../../platform/ids.js';
import { isStorageError, isValidKey, newObjectKey, type StoredObject } from '../../platform/storage/index.js';
import { verifySignedUrl, type VerifyFailure } from '../../platform/storage/signed-urls.js';
import { requireAccess } from '../access/access.service.js';
import { files, uploads, type FileRow } from './files.tables.js';
import { enqueue } from '../../platform/queue/queue.js';
import { baseContentType, uploadTypeOf, type FileDto, type ListFilesQuery, type PresignDto, type PresignInput, type RegisterFileInput } from './files.schemas.js';
import { inTenant, byId, byIdForJob } from '../../platform/db/tenancy.js';

/** How long a presigned upload URL stays valid. */
export const UPLOAD_URL_EXPIRY_SECONDS = 15 * 60;
/** An upload not registered this long after its presign is removed by the worker. */
export const UNREGISTERED_UPLOAD_TTL_MS = 24 * 3600 * 1000;
const KEY_KIND = 'uploads';

/**
 * Keys a caller of `institutionId` may register: `<tenant>/uploads/…`, the prefix
 * `newObjectKey` gives the uploads of that institution (derived from it, not re-implemented).
 */
export function uploadPrefixOf(institutionId: string): string {
  const sample = newObjectKey(institutionId, KEY_KIND, 'bin');
  return sample.slice(0, sample.lastIndexOf('/') + 1);
}

async function toDto(ctx: Pick<ServiceContext, 'storage'>, f: FileRow): Promise<FileDto> {
  return {
    id: f.id,
    key: f.key,
    name: f.name,
    contentType: f.contentType,
    size: f.size,
    courseId: f.courseId,
    lessonId: f.lessonId,
    uploadedBy: f.uploadedBy,
    createdAt: iso(f.createdAt),
    url: await ctx.storage.urlFor(f.key),
  };
}

// ── presign ────────────────────────────────────────────────────────────────────

/** A presigned PUT for a new server-generated key of the caller's institution. */
export async function presignUpload(ctx: ServiceContext, input: PresignInput): Promise<PresignDto> {
  const type = uploadTypeOf(input.contentType);
  if (!type) {
    throw validationError('This content type may not be uploaded', [{ field: 'body.contentType', message: `content type ${JSON.stringify(input.contentType)} is not allowed` }]);
  }
  if (input.size > type.maxBytes) {
    throw validationError('The file is too large for its type', [{ field: 'body.size', message: `${type.category} files may be at most ${type.maxBytes} bytes` }]);
  }
  const key = newObjectKey(ctx.institutionId, KEY_KIND, type.ext);
  const signed = await ctx.storage.presignUpload(key, type.contentType, input.size, UPLOAD_URL_EXPIRY_SECONDS);
  const now = ctx.clock.now();
  await withTx(ctx, async (tx) => {
    // One presign at a time per institution, so two racing presigns cannot both fit the quota.
    await tx.db.execute(sql`select pg_advisory_xact_lock(hashtext(${`uploads:${tx.institutionId}`}))`);
    await assertWithinQuotas(tx, input.size);
    const [upload] = await tx.db
      .insert(uploads)
      .values({
        id: newId(),
        institutionId: tx.institutionId,
        key,
        presignedBy: tx.actor.personId,
        contentType: type.contentType,
        size: input.size,
        expiresAt: new Date(signed.expiresAt),
        createdAt: now,
        updatedAt: now,
      })
      .returning({ id: uploads.id });
    await enqueue(
      tx.db,
      tx.clock,
      'files.removeUnregistered',
      { uploadId: upload.id, institutionId: tx.institutionId },
      {
        institutionId: tx.institutionId,
        runAt: new Date(now.getTime() + UNREGISTERED_UPLOAD_TTL_MS),
      },
    );
  });
  return {
    uploadUrl: signed.url,
    method: 'PUT',
    key: signed.key,
    headers: signed.headers,
    contentType: type.contentType,
    maxBytes: signed.maxBytes,
    expiresAt: signed.expiresAt,
  };
}

// ── quotas ─────────────────────────────────────────────────────────────────────

/**
 * Bytes in use: registered files plus uploads still pending (reserved at their declared size
 * until registered or removed), for the institution and for the caller.
 */
async function bytesInUse(ctx: ServiceContext) {
  const me = ctx.actor.personId;
  const [[registered], [pending]] = await Promise.all([
    ctx.db
      .select({
        institution: sql<string>`coalesce(sum(${files.size}), 0)`,
        mine: sql<string>`coalesce(sum(${files.size}) filter (where ${files.uploadedBy} = ${me}), 0)`,
      })
      .from(files)
      .where(inTenant(ctx, files)),
    ctx.db
      .select({
        institution: sql<string>`coalesce(sum(${uploads.size}), 0)`,
        mine: sql<string>`coalesce(sum(${uploads.size}) filter (where ${uploads.presignedBy} = ${me}), 0)`,
      })
      .from(uploads)
      .where(and(inTenant(ctx, uploads), eq(uploads.status, 'PENDING'))),
  ]);
  return { institution: Number(registered.institution) + Number(pending.institution), mine: Number(registered.mine) + Number(pending.mine) };
}

/** 413 PAYLOAD_TOO_LARGE when `size` more bytes would pass the caller's or the institution's quota. */
async function assertWithinQuotas(ctx: ServiceContext, size: number) {
  const used = await bytesInUse(ctx);
  const { UPLOAD_QUOTA_USER_BYTES: userQuota, UPLOAD_QUOTA_INSTITUTION_BYTES: institutionQuota } = ctx.config;
  if (used.mine + size > userQuota) {
    throw new AppError('PAYLOAD_TOO_LARGE', 'Your upload quota would be exceeded', { scope: 'user', quota: userQuota, used: used.mine, requested: size });
  }
  if (used.institution + size > institutionQuota) {
    throw new AppError('PAYLOAD_TOO_LARGE', "The institution's upload quota would be exceeded", {
      scope: 'institution',
      quota: institutionQuota,
      used: used.institution,
      requested: size,
    });
  }
}

// ── register, list ─────────────────────────────────────────────────────────────

async function assertCourseAndLesson(ctx: ServiceContext, courseId?: string, lessonId?: string) {
  // Only a course the caller may see (a learner: a published one or their own): a draft is 404
  // to them here as everywhere, so linking a file cannot tell that it exists.
  if (courseId) await requireAccess(ctx, 'course.view', courseId);
  if (!lessonId) return { courseId: courseId ?? null, lessonId: null };
  const { lesson } = await requireAccess(ctx, 'lesson.view', lessonId);
  if (courseId && lesson.courseId !== courseId) {
    throw validationError('The lesson is not part of this course', [{ field: 'body.lessonId', message: 'lesson of another course' }]);
  }
  if (!courseId) await requireAccess(ctx, 'course.view', lesson.courseId);
  return { courseId: lesson.courseId, lessonId };
}

/**
 * Register an uploaded object as a file of the caller's institution. The key must be one of
 * this institution's upload keys and the object must exist; its size comes from storage.
 */
export async function registerFile(ctx: ServiceContext, input: RegisterFileInput): Promise<FileDto> {
  const keyIssue = (message: string) => validationError(message, [{ field: 'body.key', message }]);
  if (!isValidKey(input.key) || input.key.split('/')[1] !== KEY_KIND) throw keyIssue('key is not an upload key');
  // Another institution's upload is someone else's record: 404 like another person's, below.
  if (!input.key.startsWith(uploadPrefixOf(ctx.institutionId))) throw notFound('Upload');
  const type = uploadTypeOf(input.contentType);
  if (!type) {
    throw validationError('This content type may not be uploaded', [{ field: 'body.contentType', message: `content type ${JSON.stringify(input.contentType)} is not allowed` }]);
  }
  // Only the person who presigned an upload may register it (anyone else: 404, nothing leaks).
  const [upload] = await ctx.db
    .select({ id: uploads.id, status: uploads.status })
    .from(uploads)
    .where(and(inTenant(ctx, uploads), eq(uploads.key, input.key), eq(uploads.presignedBy, ctx.actor.personId)))
    .limit(1);
  if (!upload || upload.status === 'REMOVED') throw notFound('Upload');
  const { courseId, lessonId } = await assertCourseAndLesson(ctx, input.courseId, input.lessonId);

  const stored: StoredObject | null = await ctx.storage.stat(input.key);
  if (!stored) throw keyIssue('no uploaded object under this key');
  if (baseContentType(stored.contentType) !== type.contentType) {
    throw validationError('The content type does not match the upload', [{ field: 'body.contentType', message: `the object was uploaded as ${stored.contentType}` }]);
  }
  if (stored.size > type.maxBytes) {
    // A presigned S3 PUT cannot limit the size: refuse and remove an oversized object here.
    await ctx.storage.delete(input.key).catch((e: unknown) => {
      ctx.log.warn(`[lms] oversized upload ${input.key} not removed: ${(e as Error)?.message ?? e}`);
    });
    throw new AppError('PAYLOAD_TOO_LARGE', `${type.category} files may be at most ${type.maxBytes} bytes`);
  }
  if (stored.size === 0) {
    // An empty S3 PUT (the local one is refused): removed, so the real file can still be sent.
    await ctx.storage.delete(input.key).catch((e: unknown) => {
      ctx.log.warn(`[lms] empty upload ${input.key} not removed: ${(e as Error)?.message ?? e}`);
    });
    throw emptyUpload('body.key');
  }
  if (input.size !== undefined && input.size !== stored.size) {
    throw validationError('The size does not match the upload', [{ field: 'body.size', message: `the uploaded object has ${stored.size} bytes` }]);
  }

  let row: FileRow;
  try {
    [row] = await withTx(ctx, async (tx) => {
      // PENDING → REGISTERED, once: the clean-up job claims PENDING rows the same way.
      const [claimed] = await tx.db
        .update(uploads)
        .set({ status: 'REGISTERED', updatedAt: tx.clock.now() })
        .where(and(byId(tx, uploads, upload.id), eq(uploads.status, 'PENDING')))
        .returning({ id: uploads.id });
      if (!claimed) {
        const [current] = await tx.db
          .select({ status: uploads.status })
          .from(uploads)
          .where(byId(tx, uploads, upload.id));
        throw current?.status === 'REGISTERED' ? conflict('This upload is already registered') : notFound('Upload');
      }
      return (await tx.db
        .insert(files)
        .values({
          id: newId(),
          institutionId: ctx.institutionId,
          key: input.key,
          name: input.name,
          contentType: type.contentType,
          size: stored.size,
          courseId,
          lessonId,
          uploadedBy: ctx.actor.personId,
          createdAt: ctx.clock.now(),
        })
        .returning()) as [FileRow];
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict('This upload is already registered');
    throw err;
  }
  return toDto(ctx, row);
}

/**
 * Files of the caller's institution, newest first. Course managers see every file; anyone
 * else sees the files they registered.
 */
export async function listFiles(ctx: ServiceContext, query: ListFilesQuery): Promise<{ rows: FileDto[]; meta: PageMeta }> {
  const page = toPage(query);
  const where = and(
    inTenant(ctx, files),
    canManageCourses(ctx.actor) ? undefined : eq(files.uploadedBy, ctx.actor.personId),
    query.search ? ilike(files.name, containsPattern(query.search)) : undefined,
    query.courseId ? eq(files.courseId, query.courseId) : undefined,
    query.lessonId ? eq(files.lessonId, query.lessonId) : undefined,
  ) as SQL;
  const [rows, [total]] = await Promise.all([
    ctx.db.select().from(files).where(where).orderBy(desc(files.createdAt), desc(files.id)).limit(page.perPage).offset(pageOffset(page)),
    ctx.db.select({ n: count() }).from(files).where(where),
  ]);
  return { rows: await Promise.all(rows.map((r) => toDto(ctx, r))), meta: pageMeta(page, total?.n ?? 0) };
}

/** Uploads are presigned for at least 1 byte (POST /api/upload). */
const emptyUpload = (field: string) => validationError('The upload is empty', [{ field, message: 'the upload has 0 bytes; size must be at least 1' }]);

// ── signed local-storage URLs (public routes) ──────────────────────────────────

export type SignedDeps = Pick<Deps, 'storage' | 'clock' | 'config' | 'log'>;

function refuse(reason: VerifyFailure, what: 'upload' | 'download'): AppError {
  return new AppError('FORBIDDEN', reason === 'expired' ? `The ${what} URL has expired` : `The ${what} URL is not valid`, { reason });
}

export interface SignedUploadRequest {
  key: string;
  query: Record<string, unknown>;
  contentType: string | undefined;
  contentLength: number | undefined;
  /** The request body, streamed to storage (never held in memory). */
  body: Readable;
}

/**
 * `PUT /api/upload/<key>` for the local driver: the URL's signature grants one key, one
 * content type (else 415) and a size limit (else 413); an existing object is never replaced.
 */
export async function acceptSignedUpload(deps: SignedDeps, req: SignedUploadRequest): Promise<StoredObject> {
  const verified = verifySignedUrl({
    authSecret: deps.config.AUTH_SECRET,
    method: 'PUT',
    key: req.key,
    query: req.query,
    now: deps.clock.now(),
  });
  if (!verified.ok) throw refuse(verified.reason, 'upload');
  if (verified.method !== 'PUT') throw refuse('malformed', 'upload');
  if (baseContentType(req.contentType) !== baseContentType(verified.contentType)) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', `This upload URL accepts Content-Type ${verified.contentType} only`);
  }
  if (req.contentLength !== undefined && req.contentLength > verified.maxBytes) {
    throw new AppError('PAYLOAD_TOO_LARGE', `This upload URL accepts at most ${verified.maxBytes} bytes`);
  }
  if (await deps.storage.exists(verified.key)) throw conflict('An object already exists under this key');
  try {
    // POST /api/upload presigns at least 1 byte: an empty object would only block the real one (409).
    return await deps.storage.putStream(verified.key, req.body, verified.contentType, verified.maxBytes, 1);
  } catch (err) {
    if (isStorageError(err, 'TOO_SMALL')) throw emptyUpload('body');
    if (isStorageError(err, 'ALREADY_EXISTS')) throw conflict('An object already exists under this key');
    if (isStorageError(err, 'TOO_LARGE')) throw new AppError('PAYLOAD_TOO_LARGE', `This upload URL accepts at most ${verified.maxBytes} bytes`);
    // Storage's own failures (UNAVAILABLE is a 503) are not the client's.
    if (isStorageError(err)) throw err;
    // The client went away or sent a broken body: nothing was stored.
    throw new AppError('VALIDATION_ERROR', 'Upload interrupted: the request body was not received completely');
  }
}

/** `GET /api/files/raw/<key>` for the local driver: the object's bytes for a signed URL. */
export async function readSignedDownload(
  deps: SignedDeps,
  req: { key: string; query: Record<string, unknown> },
): Promise<{ object: StoredObject; body: Readable; maxAgeSeconds: number }> {
  const now = deps.clock.now();
  const verified = verifySignedUrl({ authSecret: deps.config.AUTH_SECRET, method: 'GET', key: req.key, query: req.query, now });
  if (!verified.ok) throw refuse(verified.reason, 'download');
  const object = await deps.storage.stat(verified.key);
  if (!object) throw notFound('File');
  // Streamed: a 100 MB video is not read into memory per download.
  let body: Readable;
  try {
    body = await deps.storage.getStream(verified.key);
  } catch (err) {
    if (isStorageError(err, 'NOT_FOUND')) throw notFound('File');
    throw err;
  }
  const maxAgeSeconds = Math.max(0, Math.min(3600, verified.expiresAt - Math.floor(now.getTime() / 1000)));
  return { object, body, maxAgeSeconds };
}

// ── unregistered uploads ───────────────────────────────────────────────────────

/**
 * Worker job, a day after a presign: an upload still PENDING is removed from storage and
 * marked REMOVED (freeing its quota). A registered one is left alone.
 */
export async function removeUnregisteredUpload(deps: Pick<Deps, 'database' | 'storage' | 'clock'>, uploadId: string, institutionId: string | null): Promise<'removed' | 'kept'> {
  // Claim the row first (PENDING → REMOVED): a registration racing this job then finds it
  // REMOVED and is refused, instead of registering an object that is about to go.
  const [upload] = await deps.database.db
    .update(uploads)
    .set({ status: 'REMOVED', updatedAt: deps.clock.now() })
    .where(and(byIdForJob(institutionId, uploads, uploadId), eq(uploads.status, 'PENDING')))
    .returning();
  if (!upload) return 'kept';
  await deps.storage.delete(upload.key);
  return 'removed';
}
