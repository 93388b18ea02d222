import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

let counter = 0;

/**
 * Stores one raw RFC 5322 message as `<dir>/<timestamp>-<n>.eml` (timestamp like
 * `20260302T090000123Z`, so a directory listing is in arrival order) and returns its path.
 * The file is created exclusively: two processes writing the same directory (say `lms start`'s
 * SMTP sink and an `lms worker` without `SMTP_URL`) never overwrite each other's messages.
 */
export async function storeEml(dir: string, raw: Buffer | string, now: Date = new Date()): Promise<string> {
  await mkdir(dir, { recursive: true });
  const stamp = now.toISOString().replace(/[-:.]/g, '');
  for (;;) {
    const file = join(dir, `${stamp}-${++counter}.eml`);
    try {
      await writeFile(file, raw, { flag: 'wx' });
      return file;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}
