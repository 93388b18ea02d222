/**
 * CPU profile of one bench target under load: `npm run bench:profile -- <target> <path> [options]`.
 *
 * Starts `bench/server.ts <target>` (pinned to CPU 1 as in bench/run.ts when it can), warms it
 * up, then loads `<path>` with autocannon for BENCH_DURATION seconds (10) at BENCH_CONNECTIONS
 * (10) with the server's V8 CPU profiler on for exactly that window (start-up is not in it), and
 * prints the top frames by self time and the self time by where the code lives (our src/, each
 * package, Node's internals, native, GC). The `.cpuprofile` is kept in bench/results/profiles/
 * (open it in Chrome DevTools or speedscope for the flame graph).
 *
 * Options: `--bearer` sends a student HS256 token (bench/run.ts's DEMO_STUDENT, or the notes
 * scenario's student on app-pg), `--top N` frames (30).
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import os from 'node:os';
import autocannon from 'autocannon';
import { mintToken } from '../src/platform/auth/tokens.js';
import { DEMO_STUDENT_ID } from '../src/dev/crm-sim/fixtures.js';
import { PROFILE_PREFIX, READY_PREFIX } from './server.js';
import { studentClaims } from './claims.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const AUTH_SECRET = 'bench-auth-secret-0123456789abcdef';
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SERVER_FILE = fileURLToPath(new URL('./server.ts', import.meta.url));
const OUT_DIR = fileURLToPath(new URL('./results/profiles/', import.meta.url));

/** Where a frame's code lives: `src/…`, a package name, `node:internal`, `(native)` or a V8 pseudo-frame. */
export function placeOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node:internal';
  const path = url.replace(/^file:\/\//, '');
  const nm = path.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = path.slice(nm + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (path.startsWith(ROOT)) return path.slice(ROOT.length).split('/').slice(0, 3).join('/');
  return path;
}

/** Self time per frame and per place, in microseconds, from a V8 .cpuprofile. */
export function summarize(profile: CpuProfile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const frames = new Map<string, number>();
  const places = new Map<string, number>();
  let total = 0;
  for (const [id, us] of selfUs) {
    const f = byId.get(id)!.callFrame;
    const file = f.url ? `${f.url.replace(/^file:\/\//, '').replace(ROOT, '')}:${f.lineNumber + 1}` : '';
    const key = `${f.functionName || '(anonymous)'} ${file}`.trim();
    frames.set(key, (frames.get(key) ?? 0) + us);
    const place = placeOf(f.url, f.functionName);
    places.set(place, (places.get(place) ?? 0) + us);
    total += us;
  }
  const sorted = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]);
  return { totalUs: total, frames: sorted(frames), places: sorted(places) };
}

async function main() {
  const [target, path] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  if (!target || !path) {
    console.error('usage: npm run bench:profile -- <target> <path> [--bearer] [--top N]');
    process.exit(2);
  }
  const topArg = process.argv.indexOf('--top');
  const top = topArg > 0 ? Number(process.argv[topArg + 1]) : 30;
  const duration = Number(process.env.BENCH_DURATION ?? 10);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
  const dataDir = join(os.tmpdir(), `lms-profile-data-${process.pid}`);
  await mkdir(OUT_DIR, { recursive: true });

  let pin = os.availableParallelism() >= 2 && process.env.BENCH_PIN !== '0';
  try {
    if (pin) execFileSync('taskset', ['-V'], { stdio: 'ignore' });
  } catch {
    pin = false;
  }
  const nodeArgs = ['--import', 'tsx', SERVER_FILE, target];
  const [cmd, args] = pin ? ['taskset', ['-c', '1', process.execPath, ...nodeArgs]] : [process.execPath, nodeArgs];
  if (pin) execFileSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
  const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, BENCH_AUTH_SECRET: AUTH_SECRET, BENCH_DATA_DIR: dataDir } });
  const lines = createInterface({ input: child.stdout! });
  const profileEvents: Array<(line: string) => void> = [];
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    lines.on('line', (line) => {
      if (line.startsWith(READY_PREFIX)) resolve((JSON.parse(line.slice(READY_PREFIX.length)) as { url: string }).url);
      else if (line.startsWith(PROFILE_PREFIX)) profileEvents.shift()?.(line.slice(PROFILE_PREFIX.length));
      else process.stderr.write(`[${target}] ${line}\n`);
    });
  });
  const command = (text: string) =>
    new Promise<string>((resolve) => {
      profileEvents.push(resolve);
      child.stdin!.write(`${text}\n`);
    });
  const headers: Record<string, string> = {};
  if (process.argv.includes('--bearer')) {
    const student = process.env.BENCH_STUDENT_ID ?? DEMO_STUDENT_ID;
    const token = await mintToken(AUTH_SECRET, studentClaims(student));
    headers.authorization = `Bearer ${token}`;
  }
  const full = new URL(path, url).toString();
  const probe = await fetch(full, { headers });
  console.log(`probe: ${probe.status} ${(await probe.text()).slice(0, 200)}`);
  await autocannon({ url: full, headers, connections, duration: 3 }); // warm-up, not profiled
  const kept = join(OUT_DIR, `${target}-${path.replace(/[^\w]+/g, '_')}-${new Date().toISOString().replace(/[:.]/g, '-')}.cpuprofile`);
  await command('profile-start');
  const result = await autocannon({ url: full, headers, connections, duration });
  await command(`profile-stop ${kept}`);
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
  await rm(dataDir, { recursive: true, force: true });

  const profile = JSON.parse(await readFile(kept, 'utf8')) as CpuProfile;
  const s = summarize(profile);
  const busyUs = s.totalUs - (s.places.find(([p]) => p === '(idle)')?.[1] ?? 0);
  const pct = (us: number) => `${((us / s.totalUs) * 100).toFixed(1).padStart(5)} %`;
  const perReq = (us: number) => `${(us / result.requests.total).toFixed(1).padStart(6)} µs/req`;
  console.log(
    `\n${target} ${path}: ${result.requests.average.toFixed(0)} req/s over ${duration} s (${result.requests.total} requests), load average ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );
  console.log(`profile: ${(s.totalUs / 1e6).toFixed(1)} s sampled, ${(busyUs / 1e6).toFixed(1)} s not idle: ${perReq(busyUs)}`);
  console.log('\nself time by place:');
  for (const [place, us] of s.places.slice(0, 25)) console.log(`  ${pct(us)} ${perReq(us)}  ${place}`);
  console.log(`\ntop ${top} frames by self time:`);
  for (const [frame, us] of s.frames.slice(0, top)) console.log(`  ${pct(us)} ${perReq(us)}  ${frame}`);
  console.log(`\nprofile: ${kept}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
