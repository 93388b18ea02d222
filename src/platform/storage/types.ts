import type { Readable } from 'node:stream';
/** Object storage behind one interface: local disk or S3-compatible (DESIGN.md §4). */
export interface StoredObject {
  key: string;
  size: number;
  contentType: string;
}

export interface PresignedUpload {
  url: string;
  method: 'PUT';
  key: string;
  /** Headers the client must send with the PUT (the Content-Type is part of the signature). */
  headers: Record<string, string>;
  expiresAt: string;
  /**
   * The size limit the upload was signed for. The local driver enforces it on the PUT; a
   * presigned S3 PUT cannot, so whoever registers the uploaded file must `stat` it and
   * refuse (and delete) an object larger than this.
   */
  maxBytes: number;
}

export interface Storage {
  readonly driver: 'file' | 's3';
  /**
   * Write an object under a server-generated key (see `newObjectKey`). Objects are immutable:
   * writing an existing key throws StorageError('ALREADY_EXISTS').
   */
  put(key: string, body: Buffer, contentType: string): Promise<StoredObject>;
  /**
   * Write an object from a stream without holding it in memory: the bytes are staged in a
   * temporary file, counted as they come, and published once complete. More than `maxBytes`
   * throws StorageError('TOO_LARGE') and nothing is stored; so does a stream that fails, and
   * fewer than `minBytes` (default 0) bytes: StorageError('TOO_SMALL').
   */
  putStream(key: string, body: Readable, contentType: string, maxBytes: number, minBytes?: number): Promise<StoredObject>;
  /** The object's bytes; StorageError('NOT_FOUND') when there is none. */
  get(key: string): Promise<Buffer>;
  /** The object's bytes as a stream (large objects are served without holding them in memory); StorageError('NOT_FOUND') when there is none. */
  getStream(key: string): Promise<Readable>;
  /** Size and type of an object, or null when there is none (e.g. to check a presigned upload). */
  stat(key: string): Promise<StoredObject | null>;
  /** Remove an object; removing a missing object is not an error. */
  delete(key: string): Promise<void>;
  exists(key: string): Promise<boolean>;
  /** A signed URL a client can read the object from, valid for `expiresInSeconds` (default 3600). */
  urlFor(key: string, expiresInSeconds?: number): Promise<string>;
  /** A URL a client can PUT the object to, valid until expiresAt. */
  presignUpload(key: string, contentType: string, maxBytes: number, expiresInSeconds: number): Promise<PresignedUpload>;
}

/**
 * `UNAVAILABLE`: the storage itself failed (a local disk error such as ENOTDIR, EACCES, EROFS,
 * ENOSPC or EIO; any S3 SDK error that is not one of the others); the cause is kept for the log.
 */
export type StorageErrorCode = 'NOT_FOUND' | 'ALREADY_EXISTS' | 'INVALID_KEY' | 'INVALID_ARGUMENT' | 'TOO_LARGE' | 'TOO_SMALL' | 'UNAVAILABLE';

/**
 * Storage knows nothing of HTTP: services map these codes to AppErrors (e.g. a missing
 * caption file becomes 502, an invalid key is a bug and becomes 500); `UNAVAILABLE` is mapped
 * once, by the errors plugin, to 503.
 */
export class StorageError extends Error {
  constructor(
    readonly code: StorageErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StorageError';
  }
}

export const isStorageError = (err: unknown, code?: StorageErrorCode): err is StorageError => err instanceof StorageError && (code === undefined || err.code === code);

/** `err` as StorageError('UNAVAILABLE'), unless it is a StorageError already. */
export function storageUnavailable(err: unknown, what: string): StorageError {
  if (err instanceof StorageError) return err;
  return new StorageError('UNAVAILABLE', `Storage ${what} failed: ${(err as Error)?.message ?? String(err)}`, { cause: err });
}
