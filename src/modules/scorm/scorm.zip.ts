import path from 'node:path';
import type { Readable } from 'node:stream';
import yauzl from 'yauzl';
import { AppError } from '../../platform/http/errors.js';

/** The zip safety bounds (README "SCORM", `SCORM_*` settings). */
export interface ZipLimits {
  /** Entries in the central directory, directories included. */
  maxEntries: number;
  /** Sum of the declared uncompressed sizes. */
  maxTotalBytes: number;
  /** Declared uncompressed size of one entry. */
  maxEntryBytes: number;
  /** Uncompressed ÷ compressed size of one entry, checked for entries over 1 MiB. */
  maxRatio: number;
}

/** Small entries compress far beyond any sane ratio (a page of spaces) and can do no harm. */
const RATIO_FLOOR_BYTES = 1024 * 1024;
const MAX_NAME_LENGTH = 1024;

export type PackageProblem =
  | 'not_a_zip'
  | 'too_many_entries'
  | 'path_traversal'
  | 'absolute_path'
  | 'backslash'
  | 'bad_name'
  | 'symlink'
  | 'encrypted'
  | 'unsupported_compression'
  | 'duplicate_entry'
  | 'entry_too_large'
  | 'total_too_large'
  | 'compression_ratio'
  | 'size_mismatch'
  | 'no_manifest'
  | 'bad_manifest'
  | 'missing_file';

/** A refused package: 400 VALIDATION_ERROR naming the problem (and the entry, when there is one). */
export function refusePackage(problem: PackageProblem, message: string, extra: Record<string, unknown> = {}): AppError {
  return new AppError('VALIDATION_ERROR', message, { problem, ...extra, fields: [{ field: 'body', message }] });
}

export interface PackageEntry {
  /** The path inside the package (forward slashes, no leading `./`). */
  name: string;
  size: number;
  compressedSize: number;
  raw: yauzl.Entry;
}

/**
 * An opened, inspected package zip. Every entry was checked against the bounds and the path rules
 * before anything is read, from the central directory alone, so a refused zip stores nothing.
 */
export interface PackageZip {
  files: PackageEntry[];
  totalBytes: number;
  get(name: string): PackageEntry | undefined;
  /** The bytes of one entry, at most `maxBytes` (an entry whose data inflates past its declared size fails). */
  read(entry: PackageEntry, maxBytes: number): Promise<Buffer>;
  /** A stream of one entry's bytes; yauzl fails it when the data does not match the declared size. */
  stream(entry: PackageEntry): Promise<Readable>;
  close(): void;
}

const openZip = (file: string) =>
  new Promise<yauzl.ZipFile>((resolve, reject) =>
    // strictFileNames: a backslash is an error, never silently turned into a separator.
    yauzl.open(file, { lazyEntries: true, autoClose: false, decodeStrings: true, strictFileNames: true, validateEntrySizes: true }, (err, zip) =>
      err || !zip ? reject(err ?? new Error('no zip')) : resolve(zip),
    ),
  );

/** yauzl's file-name refusals, by the start of its message. */
function nameProblem(message: string): PackageProblem | null {
  if (message.startsWith('invalid relative path')) return 'path_traversal';
  if (message.startsWith('absolute path')) return 'absolute_path';
  if (message.startsWith('invalid characters in fileName')) return 'backslash';
  return null;
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const UNIX = 3;

const isSymlink = (e: yauzl.Entry) => e.versionMadeBy >> 8 === UNIX && ((e.externalFileAttributes >>> 16) & S_IFMT) === S_IFLNK;

function checkName(name: string) {
  // Control characters (NUL included) have no place in a file path a browser will request.
  // eslint-disable-next-line no-control-regex
  if (name.length > MAX_NAME_LENGTH || /[\u0000-\u001f\u007f]/.test(name)) {
    throw refusePackage('bad_name', `Entry name not allowed: ${JSON.stringify(name.slice(0, 200))}`, { entry: name.slice(0, 200) });
  }
  // yauzl refuses `..` segments; a normalised path that still climbs (or is absolute) is refused too.
  const normal = path.posix.normalize(name);
  if (normal.startsWith('../') || normal === '..' || path.posix.isAbsolute(normal)) {
    throw refusePackage('path_traversal', `Entry path escapes the package: ${name}`, { entry: name });
  }
}

/** Reads the whole central directory of `file` and checks every entry; throws a refusal on the first problem. */
export async function openPackageZip(file: string, limits: ZipLimits): Promise<PackageZip> {
  let zip: yauzl.ZipFile;
  try {
    zip = await openZip(file);
  } catch (err) {
    throw refusePackage('not_a_zip', `The package is not a readable zip file: ${(err as Error).message}`);
  }
  try {
    if (zip.entryCount > limits.maxEntries) {
      throw refusePackage('too_many_entries', `The package has ${zip.entryCount} entries; at most ${limits.maxEntries} are allowed`, {
        entries: zip.entryCount,
        limit: limits.maxEntries,
      });
    }
    const entries = await readCentralDirectory(zip);
    const files: PackageEntry[] = [];
    const byName = new Map<string, PackageEntry>();
    let totalBytes = 0;
    for (const e of entries) {
      const name = e.fileName.replace(/^(\.\/)+/, '');
      checkName(name);
      if (isSymlink(e)) throw refusePackage('symlink', `Symbolic links are not allowed: ${name}`, { entry: name });
      if (name.endsWith('/')) continue; // a directory: nothing to store
      if (e.isEncrypted()) throw refusePackage('encrypted', `Encrypted entries are not supported: ${name}`, { entry: name });
      if (e.compressionMethod !== 0 && e.compressionMethod !== 8) {
        throw refusePackage('unsupported_compression', `Entry ${name} uses compression method ${e.compressionMethod}; only stored and deflated entries are supported`, {
          entry: name,
        });
      }
      const normal = path.posix.normalize(name);
      if (byName.has(normal)) throw refusePackage('duplicate_entry', `The package holds ${name} twice`, { entry: name });
      if (e.uncompressedSize > limits.maxEntryBytes) {
        throw refusePackage('entry_too_large', `Entry ${name} would uncompress to ${e.uncompressedSize} bytes; at most ${limits.maxEntryBytes} are allowed per file`, {
          entry: name,
          size: e.uncompressedSize,
          limit: limits.maxEntryBytes,
        });
      }
      if (e.uncompressedSize > RATIO_FLOOR_BYTES && e.uncompressedSize > limits.maxRatio * Math.max(1, e.compressedSize)) {
        throw refusePackage('compression_ratio', `Entry ${name} is compressed more than ${limits.maxRatio}:1 (a zip bomb?)`, {
          entry: name,
          size: e.uncompressedSize,
          compressedSize: e.compressedSize,
          limit: limits.maxRatio,
        });
      }
      totalBytes += e.uncompressedSize;
      if (totalBytes > limits.maxTotalBytes) {
        throw refusePackage('total_too_large', `The package would uncompress to more than ${limits.maxTotalBytes} bytes`, { limit: limits.maxTotalBytes });
      }
      const entry = { name: normal, size: e.uncompressedSize, compressedSize: e.compressedSize, raw: e };
      byName.set(normal, entry);
      files.push(entry);
    }
    return {
      files,
      totalBytes,
      get: (name) => byName.get(name),
      read: (entry, maxBytes) => readEntry(zip, entry, maxBytes),
      stream: (entry) => openStream(zip, entry),
      close: () => zip.close(),
    };
  } catch (err) {
    zip.close();
    throw err;
  }
}

function readCentralDirectory(zip: yauzl.ZipFile): Promise<yauzl.Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: yauzl.Entry[] = [];
    const fail = (err: Error) => {
      zip.removeAllListeners();
      const problem = nameProblem(err.message);
      reject(
        problem
          ? refusePackage(problem, `Entry path not allowed (${err.message})`, { entry: err.message.replace(/^[^:]*:\s*/, '').slice(0, 200) })
          : refusePackage('not_a_zip', `The zip file is damaged: ${err.message}`),
      );
    };
    zip.on('entry', (e: yauzl.Entry) => {
      entries.push(e);
      zip.readEntry();
    });
    zip.once('end', () => {
      zip.removeAllListeners();
      resolve(entries);
    });
    zip.once('error', fail);
    zip.readEntry();
  });
}

function openStream(zip: yauzl.ZipFile, entry: PackageEntry): Promise<Readable> {
  return new Promise((resolve, reject) =>
    zip.openReadStream(entry.raw, (err, stream) =>
      err || !stream ? reject(refusePackage('not_a_zip', `Entry ${entry.name} cannot be read: ${err?.message}`, { entry: entry.name })) : resolve(stream),
    ),
  );
}

async function readEntry(zip: yauzl.ZipFile, entry: PackageEntry, maxBytes: number): Promise<Buffer> {
  if (entry.size > maxBytes) throw refusePackage('entry_too_large', `Entry ${entry.name} is larger than ${maxBytes} bytes`, { entry: entry.name, limit: maxBytes });
  const stream = await openStream(zip, entry);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) {
        stream.destroy();
        throw refusePackage('size_mismatch', `Entry ${entry.name} inflates past its declared size`, { entry: entry.name });
      }
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw sizeOrDamage(entry, err);
  }
  return Buffer.concat(chunks);
}

/** yauzl's data errors (size checks, bad deflate data) as a refusal naming the entry. */
export function sizeOrDamage(entry: PackageEntry, err: unknown): AppError {
  const message = (err as Error)?.message ?? String(err);
  if (/too many bytes|too few bytes|exceeds/i.test(message)) {
    return refusePackage('size_mismatch', `Entry ${entry.name} does not match its declared size (${message})`, { entry: entry.name });
  }
  return refusePackage('not_a_zip', `Entry ${entry.name} is damaged: ${message}`, { entry: entry.name });
}
