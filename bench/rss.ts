/**
 * Memory of `npm start` (the all-in-one `lms start`: API, worker, simulators, embedded PGlite):
 * `npm run bench:rss`.
 *
 * Starts `node bin/lms.js start` on an empty temp DATA_DIR (so it migrates and seeds like a first
 * start) with bench/memory-probe.mjs preloaded, which samples process.memoryUsage() every 250 ms.
 * Then: BENCH_IDLE seconds (15) idle, and under load the read scenarios of bench/run.ts on PGlite
 * (/healthz, /api/auth/session, /api/notifications/unread-count, /api/me/notes of the demo
 * student), then a write phase (POST a note to one of the demo student's lessons), each for
 * BENCH_DURATION seconds (10) at BENCH_CONNECTIONS (10). Prints RSS and what it is made of (V8
 * heap, external, ArrayBuffers: PGlite's WASM memory is one ArrayBuffer) idle, at the peak of the
 * load and after it.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { mintToken } from '../src/platform/auth/tokens.js';
import { freePort } from './cluster/procs.js';
import { studentClaims } from './claims.js';

const IDLE = Number(process.env.BENCH_IDLE ?? 15);
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const AUTH_SECRET = 'bench-auth-secret-0123456789abcdef';
const ROOT = fileURLToPath(new URL('../', import.meta.url));

interface Sample {
  t: number;
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

const mib = (n: number) => (n / 2 ** 20).toFixed(0);
const describe = (s: Sample | undefined) =>
  s
    ? `RSS ${mib(s.rss)} MiB: V8 heap ${mib(s.heapTotal)} (used ${mib(s.heapUsed)}), external ${mib(s.external)} (ArrayBuffers ${mib(s.arrayBuffers)}), the rest ${mib(s.rss - s.heapTotal - s.external)} (code, stacks, native allocations)`
    : '—';

async function main() {
  const dataDir = await mkdtemp(join(os.tmpdir(), 'lms-rss-'));
  const probe = join(dataDir, 'memory.jsonl');
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ['bin/lms.js', 'start'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      NODE_OPTIONS: `--import ${fileURLToPath(new URL('./memory-probe.mjs', import.meta.url))}`,
      LMS_MEMORY_PROBE: probe,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      AUTH_SECRET,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_READ: '1000000000',
      RATE_LIMIT_WRITE: '1000000000',
    },
  });
  child.stdout!.resume();
  const samples = async (): Promise<Sample[]> =>
    (await readFile(probe, 'utf8').catch(() => ''))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Sample);
  try {
    const startedAt = Date.now();
    for (;;) {
      if (child.exitCode !== null) throw new Error(`lms start exited with ${child.exitCode}`);
      const ok = await fetch(`${base}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (Date.now() - startedAt > 300_000) throw new Error('lms start did not answer /healthz within 300 s');
      await new Promise((r) => setTimeout(r, 500));
    }
    console.log(`lms start answered in ${((Date.now() - startedAt) / 1000).toFixed(1)} s; idle for ${IDLE} s…`);
    await new Promise((r) => setTimeout(r, IDLE * 1000));
    const idle = (await samples()).at(-1);

    const authorization = `Bearer ${await mintToken(AUTH_SECRET, studentClaims())}`;
    // A lesson of one of the demo student's courses, for the write phase.
    const getData = async (path: string) => ((await (await fetch(`${base}${path}`, { headers: { authorization } })).json()) as { data: Array<{ id: string }> | null }).data ?? [];
    let lessonId: string | undefined;
    for (const course of await getData('/api/courses')) {
      const modules = (await getData(`/api/courses/${course.id}/modules`)) as Array<{ lessons?: Array<{ id: string }> }>;
      lessonId = modules.flatMap((m) => m.lessons ?? [])[0]?.id;
      if (lessonId) break;
    }
    if (!lessonId) console.warn('no lesson of the demo student found: no write phase');
    const loadFrom = Date.now();
    const phases: Array<{ path: string; method?: 'POST'; body?: string }> = [
      { path: '/healthz' },
      { path: '/api/auth/session' },
      { path: '/api/notifications/unread-count' },
      { path: '/api/me/notes' },
      ...(lessonId ? [{ path: `/api/lessons/${lessonId}/notes`, method: 'POST' as const, body: JSON.stringify({ content: 'Bench note about mitochondria' }) }] : []),
    ];
    for (const phase of phases) {
      const r = await autocannon({
        url: `${base}${phase.path}`,
        method: phase.method ?? 'GET',
        headers: { authorization, ...(phase.body ? { 'content-type': 'application/json' } : {}) },
        body: phase.body,
        connections: CONNECTIONS,
        duration: DURATION,
      });
      console.log(`  ${phase.method ?? 'GET'} ${phase.path}: ${r.requests.average.toFixed(0)} req/s, ${r.non2xx} non-2xx, ${r.errors} errors`);
    }
    const loaded = (await samples()).filter((s) => s.t >= loadFrom);
    const peak = loaded.reduce<Sample | undefined>((a, s) => (!a || s.rss > a.rss ? s : a), undefined);
    await new Promise((r) => setTimeout(r, 5000));
    const after = (await samples()).at(-1);
    console.log(
      `\nmemory of lms start (PGlite), ${os.availableParallelism()} CPUs, load average ${os
        .loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')}:`,
    );
    console.log(`  idle:           ${describe(idle)}`);
    console.log(`  peak under load: ${describe(peak)}`);
    console.log(`  5 s after load: ${describe(after)}`);
  } finally {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    if (child.exitCode === null) await once(child, 'exit');
    clearTimeout(timer);
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
