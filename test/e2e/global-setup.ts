/**
 * The e2e project's set-up: what `npm start` does, for real. The web app is built when stale
 * (scripts/build-web.mjs --if-stale, the first half of `npm start`), then `bin/lms.js start`
 * runs as a child process on a fresh DATA_DIR and a free loopback port, with the embedded
 * database, the CRM, recorder and SMTP simulators and the demo seed, exactly as a newcomer gets
 * it. The tests drive it with Debian's chromium; without one this fails here, by name.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import { CHROMIUM_PATH } from './browser.js';
import { freePort } from '../helpers/ports.js';

declare module 'vitest' {
  export interface ProvidedContext {
    e2eBaseUrl: string;
  }
}

const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

export default async function setup(project: TestProject) {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `The browser tests need Chromium at ${CHROMIUM_PATH} (Debian: apt-get install -y --no-install-recommends chromium; elsewhere set CHROMIUM_PATH). ` +
        '`npm test` does not run them; .ci/run installs chromium and runs `npm run test:e2e`.',
    );
  }
  await run(process.execPath, [join(ROOT, 'scripts/build-web.mjs'), '--if-stale'], { cwd: ROOT });

  const dataDir = await mkdtemp(join(tmpdir(), 'lms-e2e-'));
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, 'bin/lms.js'), 'start'], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'development',
      DATABASE_URL: '', // the embedded database, as `npm start` has it (also when CI sets PostgreSQL)
      REDIS_URL: '',
      SMTP_URL: '',
      CRM_BASE_DOMAIN: '',
      CRM_URL: '',
      RECORDING_API_URL: '',
      VAPID_PUBLIC_KEY: '',
      VAPID_PRIVATE_KEY: '',
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: process.env.E2E_LOG ?? 'warn',
      // Several people act within the same minute from one address; the limits have their own tests.
      RATE_LIMIT_READ: '2000',
      RATE_LIMIT_WRITE: '1000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  if (process.env.E2E_LOG) {
    child.stdout!.on('data', (d) => process.stderr.write(`[lms] ${d}`));
    child.stderr!.on('data', (d) => process.stderr.write(`[lms:err] ${d}`));
  }
  const baseUrl = await new Promise<string>((resolveUrl, reject) => {
    const onData = () => {
      const m = /LMS service running at (http:\/\/\S+)/.exec(output);
      if (m && /Demo tokens/.test(output)) resolveUrl(m[1]);
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`lms start exited early (${code}):\n${output}`)));
  });
  project.provide('e2eBaseUrl', baseUrl);

  return async () => {
    if (child.exitCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    await rm(dataDir, { recursive: true, force: true });
  };
}
