/**
 * One benchmark target, run as a child process of bench/run.ts so the load generator does
 * not share the server's event loop:
 *
 *   node --import tsx bench/server.ts <target>
 *
 * Listens on 127.0.0.1, port 0, prints one line `BENCH_READY {"url": …}` on stdout when it
 * accepts requests, and shuts down cleanly on SIGTERM or when its stdin closes. Logs go to
 * stderr. Commands on stdin, one a line:
 *   reset   start a measurement window (CPU time, event-loop delay)
 *   stats   print `BENCH_STATS {…}`: the window's CPU time, event-loop delay and memory
 *   profile-start          start the V8 CPU profiler (node:inspector)
 *   profile-stop <file>    stop it, write the .cpuprofile to <file>, print `BENCH_PROFILE <file>`
 */
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import Fastify from 'fastify';
import { keepTickObjectMaps } from '../src/platform/runtime/tick-object-maps.js';

export const READY_PREFIX = 'BENCH_READY ';
export const STATS_PREFIX = 'BENCH_STATS ';
export const PROFILE_PREFIX = 'BENCH_PROFILE ';

/** What the server reports for one measurement window. */
export interface ServerStats {
  /** User + system CPU time of the server process in the window. */
  cpuMs: number;
  eventLoopDelayMs: { p50: number; p99: number; max: number };
  /** process.memoryUsage() at the end of the window: RSS, and the parts of it Node accounts for. */
  rssMiB: number;
  heapTotalMiB: number;
  heapUsedMiB: number;
  /** Memory of C++ objects bound to JS, including ArrayBuffers (PGlite's WASM memory is one). */
  externalMiB: number;
  arrayBuffersMiB: number;
}

interface Started {
  url: string;
  close(): Promise<void>;
}

type TargetStarter = () => Promise<Started>;

/** The targets a scenario can name. Add new ones here. */
export const TARGETS: Record<string, TargetStarter> = {
  /** The baseline: bare Fastify with one JSON route, no plugins, no logger. */
  async hello() {
    const app = Fastify({ logger: false });
    app.get('/', async () => ({ hello: 'world' }));
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    return { url, close: () => app.close() };
  },

  /**
   * The floor of GET /healthz: bare Fastify answering with the same bytes as our /healthz (the
   * envelope through a response schema, the x-request-id of a random UUID and the four API
   * security headers, set in one onRequest hook) and nothing else: no socket idle timeout, no
   * input guard, no onSend hook. Our /healthz against it is what our pipeline costs beyond the
   * answer it sends.
   */
  async 'hello-headers'() {
    const { API_HEADERS } = await import('../src/platform/http/response-headers.js');
    const app = Fastify({ logger: false, genReqId: () => randomUUID() });
    app.addHook('onRequest', (req, reply, done) => {
      reply.headers(API_HEADERS);
      reply.header('x-request-id', req.id);
      done();
    });
    const envelope = {
      type: 'object',
      properties: { data: { type: 'object', properties: { status: { type: 'string' } } }, error: { type: 'null' } },
    };
    app.get('/healthz', { schema: { response: { 200: envelope } } }, async () => ({ data: { status: 'ok' }, error: null }));
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    return { url, close: () => app.close() };
  },

  /**
   * This service as `npm start` builds it (minus the worker): embedded PGlite in
   * BENCH_DATA_DIR (a temp directory bench/run.ts creates and removes), the CRM simulator
   * on loopback, rate limits on (in memory, never reached), logging off.
   */
  app: () => startApp(undefined),

  /** The same app on the PostgreSQL of BENCH_DATABASE_URL (the notes scenario fills it). */
  'app-pg': () => {
    const url = process.env.BENCH_DATABASE_URL;
    if (!url) throw new Error('BENCH_DATABASE_URL is not set');
    return startApp(url);
  },

  /**
   * The same, with no cache of filtered totals (FILTERED_TOTALS_CACHE_SIZE=0): every search
   * counts its matches, as a search of a term nobody paged through before does.
   */
  'app-pg-uncached': () => {
    const url = process.env.BENCH_DATABASE_URL;
    if (!url) throw new Error('BENCH_DATABASE_URL is not set');
    return startApp(url, { FILTERED_TOTALS_CACHE_SIZE: '0' });
  },

  /** The hand-written floor of GET /api/me/notes (bench/floor.ts) on BENCH_DATABASE_URL. */
  floor: async () => {
    const url = process.env.BENCH_DATABASE_URL;
    if (!url) throw new Error('BENCH_DATABASE_URL is not set');
    const { startFloor } = await import('./floor.js');
    return startFloor(url, process.env.BENCH_AUTH_SECRET!);
  },
};

async function startApp(databaseUrl: string | undefined, env: Record<string, string> = {}): Promise<Started> {
  const { loadConfig } = await import('../src/config.js');
  const { createDeps } = await import('../src/platform/bootstrap.js');
  const { buildApp } = await import('../src/app.js');
  const { startCrmSim } = await import('../src/dev/crm-sim/server.js');

  const dataDir = process.env.BENCH_DATA_DIR;
  if (!dataDir) throw new Error('BENCH_DATA_DIR is not set');
  const sim = await startCrmSim({ port: 0 });
  const config = loadConfig({
    NODE_ENV: 'development',
    HOST: '127.0.0.1',
    PORT: '0',
    DATA_DIR: dataDir,
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    AUTH_SECRET: process.env.BENCH_AUTH_SECRET,
    CRM_BASE_DOMAIN: sim.baseDomain,
    CRM_PROTOCOL: sim.protocol,
    CRM_API_KEY: sim.apiKey,
    // As in production: the limiter runs (in memory) on every /api request, with limits no
    // bench reaches. BENCH_RATE_LIMITS=off takes it out, as bench runs before 2026-11-24 did.
    ...(process.env.BENCH_RATE_LIMITS === 'off'
      ? { RATE_LIMIT_DISABLED: 'true' }
      : { RATE_LIMIT_READ: '1000000000', RATE_LIMIT_WRITE: '1000000000', RATE_LIMIT_XAPI: '1000000000' }),
    LOG_LEVEL: 'silent',
    ...env,
  });
  const deps = await createDeps(config, { log: { info: () => undefined, warn: console.warn, error: console.error } });
  await deps.database.migrate();
  const app = await buildApp(deps);
  const url = await app.listen({ host: config.HOST, port: config.PORT });
  return {
    url,
    close: async () => {
      await app.close();
      await deps.database.close();
      await sim.close();
    },
  };
}

async function main() {
  // As bin/lms.js does for `npm start`, before any target starts.
  if (process.env.BENCH_KEEP_TICK_MAPS !== 'off') keepTickObjectMaps();
  const name = process.argv[2] ?? '';
  const start = TARGETS[name];
  if (!start) {
    console.error(`usage: bench/server.ts <${Object.keys(TARGETS).join('|')}>`);
    process.exit(2);
  }
  const server = await start();
  let closing = false;
  const shutdown = () => {
    if (closing) return;
    closing = true;
    server.close().then(
      () => process.exit(0),
      (err) => {
        console.error('[bench] close failed', err);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);

  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  let cpuStart = process.cpuUsage();
  const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
  const ms = (ns: number) => Math.round(ns / 1e4) / 100;
  const commands = createInterface({ input: process.stdin });
  let profiler: Session | undefined;
  commands.on('line', (line) => {
    if (line === 'profile-start') {
      profiler = new Session();
      profiler.connect();
      void profiler
        .post('Profiler.enable')
        .then(() => profiler!.post('Profiler.setSamplingInterval', { interval: 100 }))
        .then(() => profiler!.post('Profiler.start'))
        .then(() => process.stdout.write(`${PROFILE_PREFIX}started\n`));
    } else if (line.startsWith('profile-stop ')) {
      const file = line.slice('profile-stop '.length);
      void profiler!
        .post('Profiler.stop')
        .then(({ profile }) => writeFile(file, JSON.stringify(profile)))
        .then(() => {
          profiler!.disconnect();
          process.stdout.write(`${PROFILE_PREFIX}${file}\n`);
        });
    } else if (line === 'reset') {
      cpuStart = process.cpuUsage();
      loopDelay.reset();
    } else if (line === 'stats') {
      const cpu = process.cpuUsage(cpuStart);
      const mem = process.memoryUsage();
      const stats: ServerStats = {
        cpuMs: Math.round((cpu.user + cpu.system) / 1000),
        eventLoopDelayMs: { p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max) },
        rssMiB: mib(mem.rss),
        heapTotalMiB: mib(mem.heapTotal),
        heapUsedMiB: mib(mem.heapUsed),
        externalMiB: mib(mem.external),
        arrayBuffersMiB: mib(mem.arrayBuffers),
      };
      process.stdout.write(`${STATS_PREFIX}${JSON.stringify(stats)}\n`);
    }
  });
  // The parent going away must not leave this server running.
  commands.on('close', shutdown);
  process.stdout.write(`${READY_PREFIX}${JSON.stringify({ url: server.url, pid: process.pid })}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err) => {
    console.error('[bench] server failed to start', err);
    process.exit(1);
  });
}
