import { z } from 'zod';
import { optionalFilter } from '../../platform/http/query-filters.js';
import { paginationFields } from '../../platform/http/pagination.js';

const MB = 1024 * 1024;

export type UploadCategory = 'document' | 'archive' | 'image' | 'video' | 'audio' | 'caption';

/** Largest object per category (a presigned upload is signed for the declared size, at most this). */
export const UPLOAD_CATEGORY_MAX_BYTES: Record<UploadCategory, number> = {
  document: 25 * MB,
  archive: 100 * MB,
  image: 10 * MB,
  video: 100 * MB,
  audio: 50 * MB,
  caption: 1 * MB,
};

/**
 * Content types a client may upload, with the extension the server gives the key. HTML, SVG,
 * JavaScript and other active content are left out on purpose: with local storage the
 * service serves the bytes from its own origin.
 */
export const UPLOAD_CONTENT_TYPES: Record<string, { category: UploadCategory; ext: string }> = {
  'application/pdf': { category: 'document', ext: 'pdf' },
  'application/msword': { category: 'document', ext: 'doc' },
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': { category: 'document', ext: 'docx' },
  'application/vnd.ms-excel': { category: 'document', ext: 'xls' },
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': { category: 'document', ext: 'xlsx' },
  'application/vnd.ms-powerpoint': { category: 'document', ext: 'ppt' },
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': { category: 'document', ext: 'pptx' },
  'application/vnd.oasis.opendocument.text': { category: 'document', ext: 'odt' },
  'application/vnd.oasis.opendocument.spreadsheet': { category: 'document', ext: 'ods' },
  'application/vnd.oasis.opendocument.presentation': { category: 'document', ext: 'odp' },
  'application/rtf': { category: 'document', ext: 'rtf' },
  'application/epub+zip': { category: 'document', ext: 'epub' },
  'text/plain': { category: 'document', ext: 'txt' },
  'text/csv': { category: 'document', ext: 'csv' },
  'text/markdown': { category: 'document', ext: 'md' },
  'application/zip': { category: 'archive', ext: 'zip' },
  'image/png': { category: 'image', ext: 'png' },
  'image/jpeg': { category: 'image', ext: 'jpg' },
  'image/gif': { category: 'image', ext: 'gif' },
  'image/webp': { category: 'image', ext: 'webp' },
  'image/avif': { category: 'image', ext: 'avif' },
  'video/mp4': { category: 'video', ext: 'mp4' },
  'video/webm': { category: 'video', ext: 'webm' },
  'video/quicktime': { category: 'video', ext: 'mov' },
  'video/ogg': { category: 'video', ext: 'ogv' },
  'audio/mpeg': { category: 'audio', ext: 'mp3' },
  'audio/mp4': { category: 'audio', ext: 'm4a' },
  'audio/aac': { category: 'audio', ext: 'aac' },
  'audio/ogg': { category: 'audio', ext: 'oga' },
  'audio/wav': { category: 'audio', ext: 'wav' },
  'audio/webm': { category: 'audio', ext: 'weba' },
  'audio/flac': { category: 'audio', ext: 'flac' },
  'text/vtt': { category: 'caption', ext: 'vtt' },
};

const ALLOWED_DOC = Object.entries(UPLOAD_CATEGORY_MAX_BYTES)
  .map(([cat, max]) => {
    const types = Object.entries(UPLOAD_CONTENT_TYPES)
      .filter(([, v]) => v.category === cat)
      .map(([t]) => t);
    return `${cat} (max ${max / MB} MB): ${types.join(', ')}`;
  })
  .join('; ');

/** `Type/Sub; charset=x` → `type/sub` (parameters are ignored for the allow-list). */
export const baseContentType = (value: string | undefined | null) => (value ?? '').split(';')[0]!.trim().toLowerCase();

export const uploadTypeOf = (contentType: string) => {
  const base = baseContentType(contentType);
  const entry = Object.hasOwn(UPLOAD_CONTENT_TYPES, base) ? UPLOAD_CONTENT_TYPES[base] : undefined;
  return entry ? { contentType: base, ...entry, maxBytes: UPLOAD_CATEGORY_MAX_BYTES[entry.category] } : null;
};

export const presignBody = z.object({
  fileName: z.string().trim().min(1).max(255).describe('original file name (informational; never used in the key)'),
  contentType: z.string().trim().min(1).max(255).describe(`allowed types and limits: ${ALLOWED_DOC}`),
  size: z.number().int().min(1).describe('size in bytes; the upload is signed for at most this many bytes'),
});
export type PresignInput = z.infer<typeof presignBody>;

export const presignSchema = z.object({
  uploadUrl: z.string().describe('PUT the bytes here before expiresAt'),
  method: z.literal('PUT'),
  key: z.string().describe('server-generated storage key; register it with POST /api/files'),
  headers: z.record(z.string(), z.string()).describe('headers the PUT must carry (Content-Type is signed)'),
  contentType: z.string(),
  maxBytes: z.number().int(),
  expiresAt: z.string().describe('ISO 8601'),
});
export type PresignDto = z.infer<typeof presignSchema>;

export const registerFileBody = z.object({
  key: z.string().min(1).max(512).describe('key returned by POST /api/upload'),
  name: z.string().trim().min(1).max(255).describe('display name'),
  contentType: z.string().trim().min(1).max(255),
  size: z.number().int().min(0).optional().describe('if given, must equal the stored size'),
  courseId: z.string().min(1).optional(),
  lessonId: z.string().min(1).optional(),
});
export type RegisterFileInput = z.infer<typeof registerFileBody>;

export const fileSchema = z.object({
  id: z.string(),
  key: z.string(),
  name: z.string(),
  contentType: z.string(),
  size: z.number().int(),
  courseId: z.string().nullable(),
  lessonId: z.string().nullable(),
  uploadedBy: z.string(),
  createdAt: z.string(),
  url: z.string().describe('signed download URL (valid for one hour)'),
});
export type FileDto = z.infer<typeof fileSchema>;

export const listFilesQuery = z.object({
  ...paginationFields,
  search: z.string().trim().min(1).max(200).optional().describe('case-insensitive match on the file name'),
  courseId: optionalFilter(z.string()),
  lessonId: optionalFilter(z.string()),
});
export type ListFilesQuery = z.infer<typeof listFilesQuery>;

/** Query of a signed local-storage URL (see platform/storage/signed-urls.ts). */
export const signedQuery = z.object({
  expires: z.string().optional().describe('unix seconds'),
  sig: z.string().optional().describe('HMAC-SHA256 signature'),
  ct: z.string().optional().describe('signed content type (uploads)'),
  max: z.string().optional().describe('signed size limit in bytes (uploads)'),
});

export type SignedQuery = z.infer<typeof signedQuery>;

/** Path of a signed local-storage URL: keys from `newObjectKey` have three segments. */
export const objectKeyParams = z.object({ tenant: z.string(), kind: z.string(), object: z.string() });

/** The raw bytes of a downloaded object, for OpenAPI. */
export const binarySchema = z.string().describe('binary');

export const storedObjectSchema = z.object({
  key: z.string(),
  size: z.number().int(),
  contentType: z.string(),
});
