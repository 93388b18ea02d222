/**
 * The production build (`npm run build`): the `tsc -p tsconfig.build.json` output and the web app
 * in dist/web run on their own. The build goes to
 * a temp deployment directory holding only what a production install has (bin/, dist/,
 * drizzle/, package.json, node_modules; no src/), and `lms migrate`, `lms serve` and
 * `lms worker` run from there through bin/lms.js's compiled path. With DATABASE_URL set (CI's PostgreSQL run) they
 * run with NODE_ENV=production on a database of their own; otherwise LMS_DIST=1 selects dist/
 * with the embedded PGlite (production mode refuses to start without PostgreSQL).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { withDatabase } from '../helpers/database.js';
import { openDatabase } from '../../src/platform/db/client.js';
import { enqueue } from '../../src/platform/queue/queue.js';
import { jobs } from '../../src/platform/queue/queue.tables.js';
import { systemClock } from '../../src/platform/clock.js';
import { freePort } from '../helpers/ports.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
// Not lms_test_%: test/global-setup.ts drops those at the start of a run, possibly while this file runs.
const PG_DB = 'lms_build_check';
let deployDir: string;
let env: NodeJS.ProcessEnv;
let child: ChildProcess | undefined;

async function adminQuery(sql: string) {
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

beforeAll(async () => {
  deployDir = await mkdtemp(join(tmpdir(), 'lms-build-'));
  await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', join(deployDir, 'dist')], { cwd: ROOT });
  // The second half of `npm run build`: the web app next to the compiled server.
  await run(process.execPath, [join(ROOT, 'scripts/build-web.mjs'), '--out', join(deployDir, 'dist', 'web')], { cwd: ROOT });
  for (const entry of ['bin', 'drizzle', 'package.json']) await cp(join(ROOT, entry), join(deployDir, entry), { recursive: true });
  await symlink(join(ROOT, 'node_modules'), join(deployDir, 'node_modules'), 'dir');
  const common = { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'silent', REDIS_URL: '', RATE_LIMIT_DISABLED: 'true' };
  if (process.env.DATABASE_URL) {
    await adminQuery(`drop database if exists ${PG_DB} with (force)`);
    await adminQuery(`create database ${PG_DB}`);
    env = {
      ...common,
      NODE_ENV: 'production',
      DATABASE_URL: withDatabase(process.env.DATABASE_URL, PG_DB),
      AUTH_SECRET: 'build-test-secret-0123456789abcdef',
      CRM_API_KEY: 'build-test-crm-key',
      CRM_BASE_DOMAIN: 'crm.localhost:9',
      CRON_SECRET: 'build-test-cron',
      DATA_DIR: join(deployDir, '.data'),
    };
  } else {
    // `lms serve` needs a real AUTH_SECRET outside `lms start`, also in development.
    env = { ...common, NODE_ENV: 'development', LMS_DIST: '1', DATABASE_URL: '', AUTH_SECRET: 'build-test-secret-0123456789abcdef', DATA_DIR: join(deployDir, '.data') };
  }
}, 180_000);

afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  if (deployDir) await rm(deployDir, { recursive: true, force: true });
  if (process.env.DATABASE_URL) await adminQuery(`drop database if exists ${PG_DB} with (force)`);
});

describe('compiled build (dist/)', () => {
  it('lms migrate applies the migrations from dist/ (the drizzle/ folder is found)', async () => {
    const { stdout } = await run(process.execPath, ['bin/lms.js', 'migrate'], { cwd: deployDir, env });
    expect(stdout).toMatch(/migrations applied \((pg|pglite)\)/);
  });

  it('lms serve answers the probes, the OpenAPI document, the docs page and the web app, and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const proc = spawn(process.execPath, ['bin/lms.js', 'serve'], { cwd: deployDir, env: { ...env, HOST: '127.0.0.1', PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    let output = '';
    proc.stdout!.on('data', (d) => (output += d));
    proc.stderr!.on('data', (d) => (output += d));
    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 45_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`lms serve exited early (${proc.exitCode}):\n${output}`);
      if (Date.now() > deadline) throw new Error(`lms serve did not come up:\n${output}`);
      const ok = await fetch(`${base}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const openapi = await fetch(`${base}/openapi.json`);
    expect(openapi.status).toBe(200);
    expect((await openapi.json()).openapi).toBe('3.1.0');
    const docs = await fetch(`${base}/docs`, { redirect: 'follow' });
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/text\/html/);
    // The web app from dist/web: its page at / and at a client-side route, and its script.
    for (const path of ['/', '/my-courses']) {
      const page = await fetch(`${base}${path}`);
      expect(page.status, path).toBe(200);
      const html = await page.text();
      expect(html).toContain('<div id="root"></div>');
      const script = /<script type="module" crossorigin src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
      expect(script, html).toBeDefined();
      const js = await fetch(`${base}${script}`);
      expect(js.status).toBe(200);
      expect(js.headers.get('content-type')).toMatch(/javascript/);
      expect((await js.text()).length).toBeGreaterThan(1000); // read whole, so the connection is idle again
    }
    const exited = once(proc, 'exit');
    proc.kill('SIGTERM');
    const [code] = await exited;
    expect(code, output).toBe(0);
  });
  it('lms worker runs a queued job from dist/ and exits 0 on SIGTERM', async () => {
    // A stored object and the job that deletes it, queued before the worker starts.
    const key = 'inst_build/captions/worker-check.vtt';
    const file = join(env.DATA_DIR!, 'files', key);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, 'WEBVTT\n');
    const open = () => openDatabase({ databaseUrl: env.DATABASE_URL || undefined, dataDir: env.DATA_DIR });
    let database = await open();
    let jobId: string;
    try {
      jobId = await enqueue(database.db, systemClock, 'storage.deleteObjects', { keys: [key] });
    } finally {
      await database.close();
    }

    const proc = spawn(process.execPath, ['bin/lms.js', 'worker'], {
      cwd: deployDir,
      env: { ...env, LOG_LEVEL: 'info', WORKER_POLL_MS: '100' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    let output = '';
    proc.stdout!.on('data', (d) => (output += d));
    proc.stderr!.on('data', (d) => (output += d));
    const deadline = Date.now() + 45_000;
    // The job may run before the start-up line is written: wait for both.
    while (existsSync(file) || !/"msg":"worker started"/.test(output)) {
      if (proc.exitCode !== null) throw new Error(`lms worker exited early (${proc.exitCode}):\n${output}`);
      if (Date.now() > deadline) throw new Error(`lms worker did not run the job:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const exited = once(proc, 'exit');
    proc.kill('SIGTERM');
    const [code] = await exited;
    expect(code, output).toBe(0);

    database = await open();
    try {
      const [row] = await database.db.select().from(jobs).where(eq(jobs.id, jobId));
      expect(row).toMatchObject({ name: 'storage.deleteObjects', status: 'done', attempts: 1 });
    } finally {
      await database.close();
    }
  });
});
