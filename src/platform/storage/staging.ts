import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { StorageError } from './types.js';

/**
 * Streams `body` into a new file under `dir`, refusing more than `maxBytes` while it flows
 * (StorageError('TOO_LARGE')). Memory stays at one chunk whatever the size. On any failure
 * the partial file is removed.
 */
export async function stageToFile(body: Readable, dir: string, maxBytes: number): Promise<{ file: string; size: number }> {
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, randomUUID());
  let size = 0;
  const limiter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > maxBytes) done(new StorageError('TOO_LARGE', `The object exceeds ${maxBytes} bytes`));
      else done(null, chunk);
    },
  });
  try {
    await pipeline(body, limiter, createWriteStream(file, { flags: 'wx' }));
  } catch (err) {
    await unlink(file).catch(() => undefined);
    // Leave the client's stream drained, so the response can still be sent.
    body.resume();
    throw err;
  }
  return { file, size };
}
