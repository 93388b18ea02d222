import { createReadStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { stageToFile } from './staging.js';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, S3ServiceException, type S3ClientConfig } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Clock } from '../clock.js';
import { assertExpiry, assertMaxBytes, assertValidContentType, assertValidKey } from './keys.js';
import { StorageError, storageUnavailable, type PresignedUpload, type Storage, type StoredObject } from './types.js';

export interface S3StorageOptions {
  bucket: string;
  /** Optional key prefix inside the bucket (no leading or trailing slash). */
  prefix?: string;
  /** For S3-compatible servers (MinIO, R2, …); absent → AWS. */
  endpoint?: string;
  region: string;
  forcePathStyle: boolean;
  /** Static credentials; absent → the SDK's default chain (environment, instance role, …). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  clock: Clock;
}

const DEFAULT_URL_EXPIRY_SECONDS = 3600;

/**
 * Objects in an S3-compatible bucket. Downloads and uploads go straight to the bucket
 * through presigned URLs; the service never proxies the bytes.
 */
export class S3Storage implements Storage {
  readonly driver = 's3' as const;
  readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly clock: Clock;
  /** Cleared when the server answers 501 to `If-None-Match` (see put). */
  private conditionalPuts = true;

  constructor(options: S3StorageOptions) {
    this.bucket = options.bucket;
    this.prefix = options.prefix ? `${options.prefix.replace(/^\/+|\/+$/g, '')}/` : '';
    this.clock = options.clock;
    const config: S3ClientConfig = {
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle,
      credentials: options.credentials,
      // Only send checksums when an operation requires them. The default (since SDK 3.729)
      // bakes the CRC32 of an empty body into presigned PUT URLs, which real S3 then
      // refuses for any non-empty upload, and several S3-compatible servers reject the
      // checksum headers outright.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // The SDK waits forever by default; a stuck storage server must not hang a request.
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000 },
    };
    this.client = new S3Client(config);
  }

  /**
   * Write-once. A HEAD first refuses an existing key on every server; `If-None-Match: *`
   * then makes the write itself conditional where the server supports it (AWS S3 since
   * 2024, MinIO, R2), closing the race between two concurrent puts. Servers that ignore
   * the header (s3rver) are left with the HEAD check, which is enough for UUIDv7 keys;
   * servers that answer 501 to it get plain puts from then on.
   */
  async put(key: string, body: Buffer, contentType: string): Promise<StoredObject> {
    return this.putObject(key, () => body, body.length, contentType);
  }

  /**
   * S3 needs the length of a streamed body up front: the stream is staged in a temporary
   * file (counted and bounded as it flows), then sent from that file.
   */
  async putStream(key: string, body: Readable, contentType: string, maxBytes: number, minBytes = 0): Promise<StoredObject> {
    assertValidKey(key);
    assertValidContentType(contentType);
    const { file, size } = await stageToFile(body, path.join(tmpdir(), 'lms-s3-staging'), maxBytes, minBytes);
    try {
      return await this.putObject(key, () => createReadStream(file), size, contentType);
    } finally {
      await unlink(file).catch(() => undefined);
    }
  }

  private async putObject(key: string, body: () => Buffer | Readable, length: number, contentType: string): Promise<StoredObject> {
    assertValidKey(key);
    assertValidContentType(contentType);
    if (await this.exists(key)) throw new StorageError('ALREADY_EXISTS', `Object already exists: ${key}`);
    const send = (conditional: boolean) =>
      this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: this.objectKey(key),
          Body: body(),
          ContentType: contentType,
          ContentLength: length,
          ...(conditional ? { IfNoneMatch: '*' } : {}),
        }),
      );
    try {
      await send(this.conditionalPuts);
    } catch (err) {
      if (this.conditionalPuts && httpStatus(err) === 501) {
        this.conditionalPuts = false;
        await send(false).catch((e: unknown) => {
          throw storageUnavailable(e, 'put');
        });
      } else if (httpStatus(err) === 412 || (err as Error).name === 'ConditionalRequestConflict') {
        // 412 PreconditionFailed: the key appeared since the HEAD; 409 ConditionalRequestConflict:
        // a concurrent conditional write to the same key is in progress.
        throw new StorageError('ALREADY_EXISTS', `Object already exists: ${key}`, { cause: err });
      } else {
        throw storageUnavailable(err, 'put');
      }
    }
    return { key, size: length, contentType };
  }

  async get(key: string): Promise<Buffer> {
    assertValidKey(key);
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      if (!out.Body) return Buffer.alloc(0);
      return Buffer.from(await out.Body.transformToByteArray());
    } catch (err) {
      if (isNotFound(err)) throw new StorageError('NOT_FOUND', `No object: ${key}`, { cause: err });
      throw storageUnavailable(err, 'get');
    }
  }

  async getStream(key: string): Promise<Readable> {
    assertValidKey(key);
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      // In Node the SDK's body is an http.IncomingMessage, a Readable.
      return (out.Body as Readable | undefined) ?? Readable.from([]);
    } catch (err) {
      if (isNotFound(err)) throw new StorageError('NOT_FOUND', `No object: ${key}`, { cause: err });
      throw storageUnavailable(err, 'get');
    }
  }

  async stat(key: string): Promise<StoredObject | null> {
    assertValidKey(key);
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      return { key, size: out.ContentLength ?? 0, contentType: out.ContentType ?? 'application/octet-stream' };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw storageUnavailable(err, 'stat');
    }
  }

  async exists(key: string): Promise<boolean> {
    return (await this.stat(key)) !== null;
  }

  /** S3 deletes are idempotent: a missing key is not an error. */
  async delete(key: string): Promise<void> {
    assertValidKey(key);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) })).catch((err: unknown) => {
      throw storageUnavailable(err, 'delete');
    });
  }

  async urlFor(key: string, expiresInSeconds = DEFAULT_URL_EXPIRY_SECONDS): Promise<string> {
    assertValidKey(key);
    assertExpiry(expiresInSeconds);
    // Signing resolves the credentials, which can fail (an instance role not reachable).
    return getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }), {
      expiresIn: expiresInSeconds,
      signingDate: this.clock.now(),
    }).catch((err: unknown) => {
      throw storageUnavailable(err, 'signing');
    });
  }

  /**
   * A presigned PUT. The Content-Type is a signed header, so the client must send exactly
   * `headers['Content-Type']`. A presigned PUT cannot limit the body size (that needs a
   * presigned POST policy): `maxBytes` is returned for the caller, and the size is checked
   * with `stat()` when the uploaded file is registered, where an oversized object is
   * refused and deleted.
   */
  async presignUpload(key: string, contentType: string, maxBytes: number, expiresInSeconds: number): Promise<PresignedUpload> {
    assertValidKey(key);
    assertValidContentType(contentType);
    assertMaxBytes(maxBytes);
    assertExpiry(expiresInSeconds);
    const signingDate = this.clock.now();
    const url = await getSignedUrl(this.client, new PutObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key), ContentType: contentType }), {
      expiresIn: expiresInSeconds,
      signingDate,
      signableHeaders: new Set(['content-type']),
    }).catch((err: unknown) => {
      throw storageUnavailable(err, 'signing');
    });
    return {
      url,
      method: 'PUT',
      key,
      headers: { 'Content-Type': contentType },
      expiresAt: new Date(signingDate.getTime() + expiresInSeconds * 1000).toISOString(),
      maxBytes,
    };
  }

  private objectKey(key: string): string {
    return this.prefix + key;
  }
}

const httpStatus = (err: unknown): number | undefined => (err as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;

// GetObject says NoSuchKey; HeadObject has no body, so only its 404 tells. A missing
// bucket is a configuration error, not a missing object.
const isNotFound = (err: unknown): boolean => {
  const name = err instanceof S3ServiceException ? err.name : undefined;
  return name === 'NoSuchKey' || name === 'NotFound' || (httpStatus(err) === 404 && name !== 'NoSuchBucket');
};
