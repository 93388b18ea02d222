import { createHash, randomBytes } from 'node:crypto';
import { and, inArray } from 'drizzle-orm';
import { getMultipartBoundary, MultipartParseError, parseMultipart } from '@remix-run/multipart-parser';
import { AppError } from '../../platform/http/errors.js';
import { newId } from '../../platform/ids.js';
import { tenantSegment } from '../../platform/storage/keys.js';
import { isStorageError } from '../../platform/storage/types.js';
import { inTenant } from '../../platform/db/tenancy.js';
import type { LrsContext } from './xapi.context.js';
import { xapiAttachments } from './xapi.tables.js';

/**
 * Attachments travel in multipart/mixed bodies (xAPI 1.0.3 Data 2.4.11): the first part is the
 * statement(s) as JSON, every further part one attachment's bytes with `Content-Type`,
 * `Content-Transfer-Encoding: binary` and `X-Experience-API-Hash` (its SHA-2, which must equal
 * both the hash of the bytes and an attachment's `sha2`). Parsing is @remix-run/multipart-parser.
 * Contents are stored once per institution and hash, through the storage module.
 */

export interface AttachmentPart {
  sha2: string;
  contentType: string;
  bytes: Buffer;
}

const bad = (message: string) => new AppError('VALIDATION_ERROR', message);

const HASH_BY_LENGTH: Record<number, string> = { 56: 'sha224', 64: 'sha256', 96: 'sha384', 128: 'sha512' };

/** The hex SHA-2 of `bytes` with the algorithm whose length `like` has (SHA-256 by default). */
export function sha2Of(bytes: Buffer, like?: string): string {
  return createHash(HASH_BY_LENGTH[like?.length ?? 64] ?? 'sha256')
    .update(bytes)
    .digest('hex');
}

export const isMultipartMixed = (contentType: string | undefined) => /^multipart\/mixed\b/i.test(contentType ?? '');

/** Splits a multipart/mixed body into the statements JSON text and the attachment parts. */
export function parseMixed(body: Buffer, contentType: string, maxParts: number): { json: string; parts: AttachmentPart[] } {
  const boundary = getMultipartBoundary(contentType);
  if (!boundary) throw bad('multipart/mixed requires a boundary');
  const parts: AttachmentPart[] = [];
  let json: string | null = null;
  try {
    for (const part of parseMultipart(body, { boundary, maxParts: maxParts + 1, maxFileSize: body.length + 1, maxTotalSize: body.length + 1 })) {
      const type = part.headers['content-type'] ?? '';
      const bytes = Buffer.from(part.bytes);
      if (json === null) {
        if (!/^application\/json\b/i.test(type)) throw bad('The first part of a multipart/mixed request must be the statements as application/json');
        json = bytes.toString('utf8');
        continue;
      }
      const hash = part.headers['x-experience-api-hash'];
      if (!hash) throw bad('Every attachment part needs an X-Experience-API-Hash header');
      if ((part.headers['content-transfer-encoding'] ?? '').toLowerCase() !== 'binary') throw bad('Every attachment part needs Content-Transfer-Encoding: binary');
      if (!type) throw bad('Every attachment part needs a Content-Type');
      const sha2 = hash.trim().toLowerCase();
      if (sha2Of(bytes, sha2) !== sha2) throw bad(`The attachment part with hash ${sha2} does not have that SHA-2 hash`);
      parts.push({ sha2, contentType: type, bytes });
    }
  } catch (err) {
    if (err instanceof MultipartParseError) throw bad(`Malformed multipart/mixed body: ${err.message}`);
    throw err;
  }
  if (json === null) throw bad('The multipart/mixed body has no statements part');
  return { json, parts };
}

const storageKeyOf = (institutionId: string, sha2: string) => `${tenantSegment(institutionId)}/xapi-attachments/${sha2}`;

/**
 * Writes the parts' bytes to storage (before the statements' transaction: an object whose
 * statement then fails stays, content-addressed, for the next try). Existing objects are kept.
 */
export async function storeAttachmentBytes(ctx: LrsContext, parts: AttachmentPart[]): Promise<void> {
  for (const p of parts) {
    const key = storageKeyOf(ctx.institutionId, p.sha2);
    try {
      await ctx.deps.storage.put(key, p.bytes, safeContentType(p.contentType));
    } catch (err) {
      if (!isStorageError(err, 'ALREADY_EXISTS')) throw err;
    }
  }
}

const safeContentType = (t: string) => (/^[\w.+-]+\/[\w.+-]+$/.test(t.split(';')[0]!.trim()) ? t.split(';')[0]!.trim() : 'application/octet-stream');

/** Records the parts (in the statements' transaction); a hash already known is left as it is. */
export async function recordAttachments(tx: LrsContext, parts: AttachmentPart[]): Promise<void> {
  if (parts.length === 0) return;
  const unique = new Map(parts.map((p) => [p.sha2, p]));
  await tx.db
    .insert(xapiAttachments)
    .values(
      [...unique.values()].map((p) => ({
        id: newId(),
        institutionId: tx.institutionId,
        sha2: p.sha2,
        contentType: safeContentType(p.contentType),
        length: p.bytes.length,
        storageKey: storageKeyOf(tx.institutionId, p.sha2),
        createdAt: tx.deps.clock.now(),
      })),
    )
    .onConflictDoNothing();
}

/** Which of these hashes the institution already has stored. */
export async function knownHashes(ctx: LrsContext, hashes: string[]): Promise<Set<string>> {
  if (hashes.length === 0) return new Set();
  const rows = await ctx.db
    .select({ sha2: xapiAttachments.sha2 })
    .from(xapiAttachments)
    .where(and(inTenant(ctx, xapiAttachments), inArray(xapiAttachments.sha2, hashes)));
  return new Set(rows.map((r) => r.sha2));
}

/** The stored attachments of these hashes, with their bytes. */
export async function loadAttachments(ctx: LrsContext, hashes: string[]): Promise<AttachmentPart[]> {
  if (hashes.length === 0) return [];
  const rows = await ctx.db
    .select()
    .from(xapiAttachments)
    .where(and(inTenant(ctx, xapiAttachments), inArray(xapiAttachments.sha2, [...new Set(hashes)])));
  const out: AttachmentPart[] = [];
  for (const r of rows) {
    try {
      out.push({ sha2: r.sha2, contentType: r.contentType, bytes: await ctx.deps.storage.get(r.storageKey) });
    } catch (err) {
      if (!isStorageError(err, 'NOT_FOUND')) throw err;
      ctx.log.warn({ sha2: r.sha2 }, 'xapi: a stored attachment is missing from storage');
    }
  }
  return out;
}

/** A multipart/mixed answer: the JSON first, then each attachment. */
export function buildMixed(json: string, parts: AttachmentPart[]): { body: Buffer; contentType: string } {
  const boundary = `xapi-${randomBytes(12).toString('hex')}`;
  const chunks: Buffer[] = [Buffer.from(`--${boundary}\r\nContent-Type: application/json\r\n\r\n${json}\r\n`)];
  for (const p of parts) {
    chunks.push(
      Buffer.from(`--${boundary}\r\nContent-Type: ${p.contentType}\r\nContent-Transfer-Encoding: binary\r\nX-Experience-API-Hash: ${p.sha2}\r\n\r\n`),
      p.bytes,
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/mixed; boundary=${boundary}` };
}
