/**
 * Child processes of the cluster harness: each one logged to a file of its own, started,
 * signalled and restarted by name, and every one of them stopped when the harness exits
 * (normally, on failure, on Ctrl-C).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';

export interface ProcSpec {
  name: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  cwd?: string;
}

/** One supervised child process; `start()` again after it exited restarts it with the same spec. */
export class Proc {
  child: ChildProcess | undefined;
  /** Every line the process wrote (stdout and stderr), for callers that wait for one. */
  private listeners = new Set<(line: string) => void>();
  private log: WriteStream;
  private buffered = '';
  starts = 0;

  constructor(
    readonly spec: ProcSpec,
    logDir: string,
  ) {
    this.log = createWriteStream(join(logDir, `${spec.name}.log`), { flags: 'a' });
  }

  get name() {
    return this.spec.name;
  }

  get pid(): number | undefined {
    return this.child && this.child.exitCode === null && this.child.signalCode === null ? this.child.pid : undefined;
  }

  get running(): boolean {
    return this.pid !== undefined;
  }

  start(): this {
    if (this.running) throw new Error(`${this.name} is already running`);
    this.starts++;
    this.log.write(`\n===== start #${this.starts} at ${new Date().toISOString()} =====\n`);
    const child = spawn(this.spec.command, this.spec.args, {
      cwd: this.spec.cwd,
      env: { ...process.env, ...this.spec.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const onData = (chunk: Buffer) => {
      this.log.write(chunk);
      this.buffered += chunk.toString('utf8');
      let nl: number;
      while ((nl = this.buffered.indexOf('\n')) >= 0) {
        const line = this.buffered.slice(0, nl);
        this.buffered = this.buffered.slice(nl + 1);
        for (const l of this.listeners) l(line);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code, signal) => this.log.write(`===== exited (${signal ?? code}) at ${new Date().toISOString()} =====\n`));
    return this;
  }

  /** Resolves with the first output line matching `re` (of this start), or rejects when the process exits first or after `timeoutMs`. */
  waitForLine(re: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
    const child = this.child;
    if (!child) return Promise.reject(new Error(`${this.name} was never started`));
    return new Promise((resolve, reject) => {
      const done = () => {
        this.listeners.delete(onLine);
        child.off('exit', onExit);
        clearTimeout(timer);
      };
      const onLine = (line: string) => {
        const m = re.exec(line);
        if (m) {
          done();
          resolve(m);
        }
      };
      const onExit = (code: number | null, signal: string | null) => {
        done();
        reject(new Error(`${this.name} exited (${signal ?? code}) before printing ${re}`));
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${this.name} did not print ${re} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.listeners.add(onLine);
      child.on('exit', onExit);
    });
  }

  onLine(fn: (line: string) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Sends `signal` and waits for the exit (SIGKILL after `graceMs`). */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 30_000): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }

  kill9(): void {
    this.child?.kill('SIGKILL');
  }

  async exited(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await once(child, 'exit');
  }

  close() {
    this.log.end();
  }
}

/** Every process the harness started, and the clean-up steps of the servers it runs as daemons. */
export class Supervisor {
  readonly procs: Proc[] = [];
  private readonly cleanups: Array<{ name: string; fn: () => void }> = [];
  private stopping = false;

  constructor(readonly logDir: string) {}

  add(spec: ProcSpec): Proc {
    const proc = new Proc(spec, this.logDir);
    this.procs.push(proc);
    return proc;
  }

  /** A synchronous clean-up step (stopping PostgreSQL), run last-registered first. */
  onCleanup(name: string, fn: () => void) {
    this.cleanups.push({ name, fn });
  }

  /** Stops everything: SIGTERM to each child, SIGKILL to those still up after `graceMs`, then the clean-ups. */
  async stopAll(graceMs = 10_000): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    await Promise.all(this.procs.map((p) => p.stop('SIGTERM', graceMs).catch(() => undefined)));
    this.runCleanupsSync();
    for (const p of this.procs) p.close();
  }

  /** For `process.on('exit')`: no awaiting there, so SIGKILL whatever still runs. */
  killAllSync() {
    for (const p of this.procs) if (p.running) p.kill9();
    this.runCleanupsSync();
  }

  private runCleanupsSync() {
    while (this.cleanups.length > 0) {
      const { name, fn } = this.cleanups.pop()!;
      try {
        fn();
      } catch (err) {
        console.error(`[cluster] clean-up of ${name} failed: ${(err as Error).message}`);
      }
    }
  }
}

export { freePort } from '../../test/helpers/ports.js';

/** Runs a command to completion; throws with its output when it fails. */
export function run(command: string, args: string[], opts: { env?: Record<string, string>; cwd?: string; input?: string } = {}): string {
  const res = spawnSync(command, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, input: opts.input, encoding: 'utf8' });
  if (res.error) throw res.error;
  if (res.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${res.status}):\n${res.stdout}\n${res.stderr}`);
  return res.stdout;
}

/** `run` without blocking the event loop (the workload keeps running meanwhile). */
export function runAsync(command: string, args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${command} ${args.join(' ')} failed (${code}):\n${out}`))));
  });
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
