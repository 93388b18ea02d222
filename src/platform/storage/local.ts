import { randomUUID } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { copyFile, link, mkdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { stageToFile } from './staging.js';
import path from 'node:path';
import type { Clock } from '../clock.js';
import { assertExpiry, assertMaxBytes, assertValidContentType, assertValidKey } from './keys.js';
import { signUrl } from './signed-urls.js';
import { StorageError, storageUnavailable, type PresignedUpload, type Storage, type StoredObject } from './types.js';

export interface LocalStorageOptions {
  /** Directory holding the objects; created on first write. */
  root: string;
  /** The service's public address: download and upload URLs point back at it. */
  publicBaseUrl: string;
  /** Signs those URLs (through a derived key, see signed-urls.ts). */
  authSecret: string;
  clock: Clock;
}

const DEFAULT_URL_EXPIRY_SECONDS = 3600;
const FALLBACK_CONTENT_TYPE = 'application/octet-stream';

/**
 * Objects as files under one root directory (the embedded default, `file://DATA_DIR/files`).
 *
 * Layout: `<root>/<key>` holds the bytes, `<root>/.meta/<key>.json` the content type, and
 * `<root>/.tmp/` half-written files. Keys start with a letter or digit, so they can never
 * name the two dot-directories.
 */
export class LocalStorage implements Storage {
  readonly driver = 'file' as const;
  readonly root: string;
  private readonly metaRoot: string;
  private readonly tmpRoot: string;

  constructor(private readonly options: LocalStorageOptions) {
    this.root = path.resolve(options.root);
    this.metaRoot = path.join(this.root, '.meta');
    this.tmpRoot = path.join(this.root, '.tmp');
  }

  async put(key: string, body: Buffer, contentType: string): Promise<StoredObject> {
    this.pathFor(key);
    assertValidContentType(contentType);
    return diskOp('put', async () => {
      await mkdir(this.tmpRoot, { recursive: true });
      const tmp = path.join(this.tmpRoot, randomUUID());
      await writeFile(tmp, body, { flag: 'wx' });
      return this.publishStaged(key, tmp, body.length, contentType);
    });
  }

  async putStream(key: string, body: Readable, contentType: string, maxBytes: number, minBytes = 0): Promise<StoredObject> {
    this.pathFor(key);
    assertValidContentType(contentType);
    // Outside diskOp: staging tells the client's failures from the disk's itself.
    const { file: tmp, size } = await stageToFile(body, this.tmpRoot, maxBytes, minBytes);
    return diskOp('put', () => this.publishStaged(key, tmp, size, contentType));
  }

  /** Publish a staged file under `key` (removing the staged file either way), then its metadata. */
  private async publishStaged(key: string, tmp: string, size: number, contentType: string): Promise<StoredObject> {
    const file = this.pathFor(key);
    await mkdir(path.dirname(file), { recursive: true });
    // Publish with link(): it fails with EEXIST instead of replacing, so the write-once rule
    // holds even for two concurrent puts, and a reader never sees a half-written file.
    try {
      await publish(tmp, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new StorageError('ALREADY_EXISTS', `Object already exists: ${key}`);
      }
      throw err;
    } finally {
      await unlink(tmp).catch(() => undefined);
    }

    // The metadata follows the bytes; if the process dies in between, stat() falls back
    // to a generic type rather than losing the object.
    const meta = this.metaPathFor(key);
    await mkdir(path.dirname(meta), { recursive: true });
    const metaTmp = path.join(this.tmpRoot, `${randomUUID()}.json`);
    await writeFile(metaTmp, JSON.stringify({ contentType }), { flag: 'wx' });
    await rename(metaTmp, meta);
    return { key, size, contentType };
  }

  async get(key: string): Promise<Buffer> {
    const file = this.pathFor(key);
    try {
      return await readFile(file);
    } catch (err) {
      if (isMissing(err)) throw new StorageError('NOT_FOUND', `No object: ${key}`, { cause: err });
      throw asUnavailable(err, 'get');
    }
  }

  async getStream(key: string): Promise<Readable> {
    if (!(await this.stat(key))) throw new StorageError('NOT_FOUND', `No object: ${key}`);
    return createReadStream(this.pathFor(key));
  }

  async stat(key: string): Promise<StoredObject | null> {
    const file = this.pathFor(key);
    let size: number;
    try {
      const info = await stat(file);
      if (!info.isFile()) return null;
      size = info.size;
    } catch (err) {
      if (isMissing(err)) return null;
      throw asUnavailable(err, 'stat');
    }
    return { key, size, contentType: await this.readContentType(key) };
  }

  async exists(key: string): Promise<boolean> {
    return (await this.stat(key)) !== null;
  }

  async delete(key: string): Promise<void> {
    const file = this.pathFor(key);
    await diskOp('delete', async () => {
      await unlinkIfPresent(file);
      await unlinkIfPresent(this.metaPathFor(key));
    });
  }

  async urlFor(key: string, expiresInSeconds = DEFAULT_URL_EXPIRY_SECONDS): Promise<string> {
    assertValidKey(key);
    assertExpiry(expiresInSeconds);
    return signUrl({
      authSecret: this.options.authSecret,
      baseUrl: this.options.publicBaseUrl,
      request: { method: 'GET', key },
      expiresAt: this.nowSeconds() + expiresInSeconds,
    });
  }

  async presignUpload(key: string, contentType: string, maxBytes: number, expiresInSeconds: number): Promise<PresignedUpload> {
    assertValidKey(key);
    assertValidContentType(contentType);
    assertMaxBytes(maxBytes);
    assertExpiry(expiresInSeconds);
    const expiresAt = this.nowSeconds() + expiresInSeconds;
    const url = signUrl({
      authSecret: this.options.authSecret,
      baseUrl: this.options.publicBaseUrl,
      request: { method: 'PUT', key, contentType, maxBytes },
      expiresAt,
    });
    return {
      url,
      method: 'PUT',
      key,
      headers: { 'Content-Type': contentType },
      expiresAt: new Date(expiresAt * 1000).toISOString(),
      maxBytes,
    };
  }

  /** The file for a key; refuses any key outside the strict pattern, and checks containment again. */
  private pathFor(key: string): string {
    assertValidKey(key);
    const file = path.resolve(this.root, key);
    // Defence in depth: the pattern already rules out `..`, but never trust one check alone.
    const rel = path.relative(this.root, file);
    if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) {
      throw new StorageError('INVALID_KEY', `Storage key escapes the root: ${key}`);
    }
    return file;
  }

  private metaPathFor(key: string): string {
    return path.join(this.metaRoot, `${key}.json`);
  }

  private async readContentType(key: string): Promise<string> {
    try {
      const meta = JSON.parse(await readFile(this.metaPathFor(key), 'utf8')) as { contentType?: unknown };
      return typeof meta.contentType === 'string' ? meta.contentType : FALLBACK_CONTENT_TYPE;
    } catch {
      return FALLBACK_CONTENT_TYPE;
    }
  }

  private nowSeconds(): number {
    return Math.floor(this.options.clock.now().getTime() / 1000);
  }
}

/** Hard-link `tmp` to `file` (atomic, never overwrites); copy exclusively where links are unsupported. */
async function publish(tmp: string, file: string): Promise<void> {
  try {
    await link(tmp, file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EXDEV' && code !== 'ENOSYS') throw err;
    await copyFile(tmp, file, constants.COPYFILE_EXCL);
  }
}

// ENOTDIR: a key whose "directory" part is an object (`a/b` when `a` is a file); EISDIR: a
// key that is only a directory of other keys (`a` when `a/b` exists). Neither is an object.
const isMissing = (err: unknown) => {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR';
};

/** A Node system error (it names its syscall): the disk's failure, not the program's. */
const isSystemError = (err: unknown) => typeof (err as NodeJS.ErrnoException | null)?.syscall === 'string';

const asUnavailable = (err: unknown, what: string) => (isSystemError(err) ? storageUnavailable(err, what) : err);

/** Runs file system work; its system errors (ENOTDIR, EACCES, EROFS, ENOSPC, EIO…) become StorageError('UNAVAILABLE'). */
async function diskOp<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw asUnavailable(err, what);
  }
}

async function unlinkIfPresent(file: string): Promise<void> {
  try {
    await unlink(file);
  } catch (err) {
    if (!isMissing(err)) throw err;
  }
}
