import type { Readable } from 'node:stream';
import type { S3Storage, S3StorageOptions } from './s3.js';
import type { PresignedUpload, Storage, StoredObject } from './types.js';

/**
 * The S3 driver, loaded on first use: the AWS SDK takes a few hundred milliseconds to import,
 * so processes on `file://` storage (development, tests) never load it.
 */
export class LazyS3Storage implements Storage {
  readonly driver = 's3' as const;
  private loading: Promise<S3Storage> | undefined;

  constructor(private readonly options: S3StorageOptions) {}

  /** The real driver (imports the SDK on the first call). */
  load(): Promise<S3Storage> {
    this.loading ??= import('./s3.js').then(({ S3Storage }) => new S3Storage(this.options));
    return this.loading;
  }

  async put(key: string, body: Buffer, contentType: string): Promise<StoredObject> {
    return (await this.load()).put(key, body, contentType);
  }
  async putStream(key: string, body: Readable, contentType: string, maxBytes: number, minBytes?: number): Promise<StoredObject> {
    return (await this.load()).putStream(key, body, contentType, maxBytes, minBytes);
  }
  async get(key: string): Promise<Buffer> {
    return (await this.load()).get(key);
  }
  async getStream(key: string): Promise<Readable> {
    return (await this.load()).getStream(key);
  }
  async stat(key: string): Promise<StoredObject | null> {
    return (await this.load()).stat(key);
  }
  async delete(key: string): Promise<void> {
    return (await this.load()).delete(key);
  }
  async exists(key: string): Promise<boolean> {
    return (await this.load()).exists(key);
  }
  async urlFor(key: string, expiresInSeconds?: number): Promise<string> {
    return (await this.load()).urlFor(key, expiresInSeconds);
  }
  async presignUpload(key: string, contentType: string, maxBytes: number, expiresInSeconds: number): Promise<PresignedUpload> {
    return (await this.load()).presignUpload(key, contentType, maxBytes, expiresInSeconds);
  }
}
