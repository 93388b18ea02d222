/**
 * `lms vapid`: the real binary prints a fresh VAPID key pair as env lines the configuration accepts.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

const run = promisify(execFile);

describe('lms vapid', () => {
  it('prints VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY lines of a matching pair', async () => {
    const { stdout } = await run(process.execPath, ['bin/lms.js', 'vapid'], { env: { ...process.env, NODE_ENV: 'development', LMS_DIST: '0' } });
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    const env = Object.fromEntries(lines.map((l) => l.split('=', 2) as [string, string]));
    expect(Object.keys(env)).toEqual(['VAPID_PUBLIC_KEY', 'VAPID_PRIVATE_KEY']);
    expect(Buffer.from(env.VAPID_PUBLIC_KEY, 'base64url')).toHaveLength(65);
    expect(Buffer.from(env.VAPID_PRIVATE_KEY, 'base64url')).toHaveLength(32);
    // loadConfig checks that the public key is the private key's.
    expect(loadConfig(env).VAPID_PUBLIC_KEY).toBe(env.VAPID_PUBLIC_KEY);
  });
});
