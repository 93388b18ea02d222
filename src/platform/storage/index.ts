import path from 'node:path';
import { ConfigError, type Config } from '../../config.js';
import type { Clock } from '../clock.js';
import { isValidKey } from './keys.js';
import { LocalStorage } from './local.js';
import { LazyS3Storage } from './lazy-s3.js';
import type { Storage } from './types.js';

export { newObjectKey, isValidKey, isValidContentType } from './keys.js';
export { LocalStorage } from './local.js';
// The S3 driver is imported from './s3.js' directly: re-exporting it here would load the AWS SDK
// into every process that touches storage keys.
export { LazyS3Storage } from './lazy-s3.js';
export { StorageError, isStorageError } from './types.js';
export type { PresignedUpload, Storage, StoredObject } from './types.js';

type StorageTarget = { driver: 'file'; root: string } | { driver: 's3'; bucket: string; prefix: string | undefined };

// S3 bucket naming rules (lower case, digits, dots, hyphens; 3 to 63 characters).
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/**
 * `file://<dir>` (relative to the working directory unless absolute: `file://.data/files`,
 * `file:///var/lms/files`) or `s3://<bucket>[/<prefix>]`.
 */
export function parseStorageUrl(url: string, cwd = process.cwd()): StorageTarget {
  if (url.startsWith('file://')) {
    const dir = decodeURIComponent(url.slice('file://'.length));
    if (!dir) throw new ConfigError('STORAGE_URL: file:// needs a directory, e.g. file://.data/files');
    return { driver: 'file', root: path.resolve(cwd, dir) };
  }
  if (url.startsWith('s3://')) {
    const rest = url.slice('s3://'.length);
    const slash = rest.indexOf('/');
    const bucket = slash === -1 ? rest : rest.slice(0, slash);
    const prefix = slash === -1 ? '' : rest.slice(slash + 1).replace(/\/+$/, '');
    if (!BUCKET.test(bucket)) throw new ConfigError(`STORAGE_URL: invalid S3 bucket name ${JSON.stringify(bucket)}`);
    // The prefix joins every key, so it obeys the key alphabet too.
    if (prefix && !isValidKey(prefix)) {
      throw new ConfigError(`STORAGE_URL: invalid S3 key prefix ${JSON.stringify(prefix)} (use a-z, 0-9, / _ . -)`);
    }
    return { driver: 's3', bucket, prefix: prefix || undefined };
  }
  throw new ConfigError('STORAGE_URL must start with file:// or s3://');
}

/** The storage driver STORAGE_URL names (DESIGN.md §4). Throws ConfigError on a bad setting. */
export function createStorage(config: Config, clock: Clock): Storage {
  const target = parseStorageUrl(config.storageUrl);
  if (target.driver === 'file') {
    return new LocalStorage({ root: target.root, publicBaseUrl: config.publicBaseUrl, authSecret: config.AUTH_SECRET, clock });
  }
  const { S3_ACCESS_KEY_ID: accessKeyId, S3_SECRET_ACCESS_KEY: secretAccessKey } = config;
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey)) {
    throw new ConfigError('Set both S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY, or neither (to use the default AWS credential chain)');
  }
  return new LazyS3Storage({
    bucket: target.bucket,
    prefix: target.prefix,
    endpoint: config.S3_ENDPOINT,
    region: config.S3_REGION,
    forcePathStyle: config.S3_FORCE_PATH_STYLE === 'true',
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined,
    clock,
  });
}
