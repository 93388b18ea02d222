/**
 * The servers the cluster harness takes from Debian: PostgreSQL, Redis and HAProxy, installed
 * with apt when missing (as .ci/run does) and run on loopback from a temp directory.
 */
import { existsSync, readdirSync, writeFileSync, chmodSync, mkdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { run, runAsync, sleep, type Proc, type Supervisor } from './procs.js';

const isRoot = () => process.getuid?.() === 0;
const asRoot = (args: string[]) => (isRoot() ? args : ['sudo', ...args]);

function have(binary: string): boolean {
  try {
    run('sh', ['-c', `command -v ${binary}`]);
    return true;
  } catch {
    return false;
  }
}

function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(a) - Number(b));
  return versions.length > 0 ? join(root, versions[versions.length - 1], 'bin') : undefined;
}

/** Installs the Debian packages of whatever is missing (non-interactive, no recommended packages). */
export function ensureDebianPackages(log: (line: string) => void) {
  const missing: string[] = [];
  if (!postgresBinDir()) missing.push('postgresql');
  if (!have('redis-server')) missing.push('redis-server');
  if (!have('haproxy')) missing.push('haproxy');
  if (missing.length === 0) return;
  log(`installing ${missing.join(', ')} with apt`);
  const env = { DEBIAN_FRONTEND: 'noninteractive' };
  const [cmd, ...args] = asRoot(['apt-get', 'update', '-qq']);
  run(cmd, args, { env });
  const [icmd, ...iargs] = asRoot([
    'apt-get',
    'install',
    '-y',
    '-qq',
    '--no-install-recommends',
    '-o',
    'Dpkg::Options::=--force-confdef',
    '-o',
    'Dpkg::Options::=--force-confold',
    ...missing,
  ]);
  run(icmd, iargs, { env });
}

export interface PostgresOptions {
  dir: string;
  port: number;
  password: string;
  maxConnections: number;
}

/**
 * A throw-away PostgreSQL cluster (initdb + pg_ctl, as the `postgres` user when the harness
 * runs as root), password authentication on 127.0.0.1. Durability settings are left at their
 * defaults: this is the production shape, not the test suite's fsync=off cluster.
 */
export class Postgres {
  readonly bin: string;
  readonly data: string;
  private readonly asUser: string[];

  constructor(
    private readonly opts: PostgresOptions,
    supervisor: Supervisor,
  ) {
    const bin = postgresBinDir();
    if (!bin) throw new Error('PostgreSQL is not installed');
    this.bin = bin;
    this.data = join(opts.dir, 'pg');
    this.asUser = isRoot() ? ['runuser', '-u', 'postgres', '--'] : [];
    supervisor.onCleanup('PostgreSQL', () => {
      if (existsSync(join(this.data, 'postmaster.pid'))) this.pgctl(['-m', 'immediate', '-w', 'stop']);
    });
  }

  get url() {
    return `postgres://postgres:${this.opts.password}@127.0.0.1:${this.opts.port}/postgres`;
  }

  get version() {
    return run(join(this.bin, 'postgres'), ['--version']).trim();
  }

  private exec(binary: string, args: string[]) {
    const [cmd, ...rest] = [...this.asUser, join(this.bin, binary), ...args];
    return run(cmd, rest);
  }

  private pgctl(args: string[]) {
    return this.exec('pg_ctl', ['-D', this.data, ...args]);
  }

  private settings() {
    return [`-p ${this.opts.port}`, '-c listen_addresses=127.0.0.1', `-c unix_socket_directories=${this.data}`, `-c max_connections=${this.opts.maxConnections}`].join(' ');
  }

  private pgctlAsync(args: string[]) {
    const [cmd, ...rest] = [...this.asUser, join(this.bin, 'pg_ctl'), '-D', this.data, ...args];
    return runAsync(cmd, rest);
  }

  init() {
    mkdirSync(this.data, { recursive: true });
    if (isRoot()) run('chown', ['postgres:', this.data]);
    const pwfile = join(this.opts.dir, 'pwfile');
    writeFileSync(pwfile, `${this.opts.password}\n`);
    chmodSync(pwfile, 0o644);
    this.exec('initdb', ['-D', this.data, '-U', 'postgres', `--pwfile=${pwfile}`, '--auth-local=trust', '--auth-host=scram-sha-256', '--encoding=UTF8', '--locale=C.UTF-8']);
  }

  start() {
    this.pgctl(['-l', join(this.data, 'server.log'), '-w', '-t', '60', '-o', this.settings(), 'start']);
  }

  async startAsync() {
    await this.pgctlAsync(['-l', join(this.data, 'server.log'), '-w', '-t', '60', '-o', this.settings(), 'start']);
  }

  /** Fast shutdown: open transactions roll back, every connection is closed. */
  async stopFast() {
    await this.pgctlAsync(['-m', 'fast', '-w', '-t', '60', 'stop']);
  }
}

/** Redis without persistence (counters and caches only), in the foreground under the supervisor. */
export function redisProc(supervisor: Supervisor, dir: string, port: number): Proc {
  return supervisor.add({
    name: 'redis',
    command: 'redis-server',
    args: ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
  });
}

export const REDIS_READY = /Ready to accept connections/;

export interface HaproxyOptions {
  dir: string;
  port: number;
  servers: Array<{ name: string; port: number }>;
}

/**
 * HAProxy in front of the web replicas: round robin, health checks on /readyz every 500 ms
 * (down after 2 failures, up after 2 successes), a connection refused is retried on the other
 * replica (`retry-on conn-failure` is safe for every method: the request was never sent).
 * The runtime API listens on a Unix socket in the harness directory.
 */
export function haproxyConfig(opts: HaproxyOptions): string {
  return `global
  maxconn 4096
  stats socket ${join(opts.dir, 'haproxy.sock')} mode 600 level admin
  log stderr format raw local0 info

defaults
  mode http
  log global
  option httplog
  option dontlognull
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  timeout http-request 10s
  timeout http-keep-alive 10s
  timeout queue 10s
  timeout check 2s
  retries 3
  retry-on conn-failure
  option redispatch 1

frontend lms
  bind 127.0.0.1:${opts.port}
  option forwardfor
  default_backend web

backend web
  balance roundrobin
  option httpchk
  http-check send meth GET uri /readyz
  http-check expect status 200
  default-server check inter 500ms fastinter 250ms downinter 500ms fall 2 rise 2
${opts.servers.map((s) => `  server ${s.name} 127.0.0.1:${s.port}`).join('\n')}
`;
}

export function haproxyProc(supervisor: Supervisor, opts: HaproxyOptions): Proc {
  const cfg = join(opts.dir, 'haproxy.cfg');
  writeFileSync(cfg, haproxyConfig(opts));
  run('haproxy', ['-c', '-q', '-f', cfg]);
  return supervisor.add({ name: 'haproxy', command: 'haproxy', args: ['-f', cfg, '-db'] });
}

/** One command on HAProxy's runtime API. */
export function haproxyCommand(dir: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(join(dir, 'haproxy.sock'));
    let out = '';
    socket.on('connect', () => socket.end(`${command}\n`));
    socket.on('data', (d) => (out += d));
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
}

/** Each server's operational state in HAProxy (`UP`, `DOWN`, `UP 1/2`, `MAINT`, …). */
export async function haproxyServerStates(dir: string): Promise<Record<string, string>> {
  const csv = await haproxyCommand(dir, 'show stat');
  const [header, ...rows] = csv.replace(/^# /, '').trim().split('\n');
  const cols = header.split(',');
  const px = cols.indexOf('pxname');
  const sv = cols.indexOf('svname');
  const status = cols.indexOf('status');
  const states: Record<string, string> = {};
  for (const row of rows) {
    const f = row.split(',');
    if (f[px] === 'web' && f[sv] !== 'BACKEND' && f[sv] !== 'FRONTEND') states[f[sv]] = f[status];
  }
  return states;
}

export async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 60_000, everyMs = 100): Promise<number> {
  const started = Date.now();
  for (;;) {
    try {
      if (await check()) return Date.now() - started;
    } catch {
      // not yet
    }
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}
