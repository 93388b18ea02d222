import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { StorageError, storageUnavailable } from './types.js';

/**
 * Streams `body` into a new file under `dir`, refusing more than `maxBytes` while it flows
 * (StorageError('TOO_LARGE')), and fewer than `minBytes` once it ended (StorageError('TOO_SMALL')). Memory stays at one chunk whatever the size. On any failure
 * the partial file is removed. A failure of the disk (the directory, the file, a write) is
 * StorageError('UNAVAILABLE'); a failure of `body` (the client stopped sending, a damaged zip
 * entry) is thrown as it is, so callers can tell the caller's fault from the server's.
 */
export async function stageToFile(body: Readable, dir: string, maxBytes: number, minBytes = 0): Promise<{ file: string; size: number }> {
  try {
    await mkdir(dir, { recursive: true });
  } catch (err) {
    body.resume();
    throw storageUnavailable(err, 'staging');
  }
  const file = path.join(dir, randomUUID());
  let size = 0;
  const limiter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > maxBytes) done(new StorageError('TOO_LARGE', `The object exceeds ${maxBytes} bytes`));
      else done(null, chunk);
    },
  });
  const sink = createWriteStream(file, { flags: 'wx' });
  // The side that failed first: pipeline then destroys the others with the same error.
  let first: 'body' | 'disk' | undefined;
  body.once('error', () => (first ??= 'body'));
  sink.once('error', () => (first ??= 'disk'));
  try {
    await pipeline(body, limiter, sink);
  } catch (err) {
    await unlink(file).catch(() => undefined);
    // Leave the client's stream drained, so the response can still be sent.
    body.resume();
    throw first === 'disk' ? storageUnavailable(err, 'staging') : err;
  }
  if (size < minBytes) {
    await unlink(file).catch(() => undefined);
    throw new StorageError('TOO_SMALL', `The object has ${size} bytes, fewer than ${minBytes}`);
  }
  return { file, size };
}
