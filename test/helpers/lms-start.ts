import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CrmSim } from '../../src/dev/crm-sim/server.js';
import { freePort } from './ports.js';

export interface StartedLms {
  child: ChildProcess;
  baseUrl: string;
  /** Everything it printed up to its banner (the banner included). */
  banner: string;
  dataDir: string;
}

/**
 * Runs `lms start` (what `npm start` runs) as its own process: the embedded database (also when
 * CI sets PostgreSQL), no Redis, the SMTP sink, a fresh DATA_DIR and the given CRM simulator.
 * `env` is laid over that; a variable given as undefined is removed. Resolves once the banner
 * is printed. `echo` copies the child's output to stderr.
 */
export async function startLms(sim: CrmSim, authSecret: string, env: Record<string, string | undefined> = {}, echo = false): Promise<StartedLms> {
  const dataDir = await mkdtemp(join(tmpdir(), 'lms-start-'));
  const port = await freePort();
  const childEnv: Record<string, string | undefined> = {
    ...process.env,
    NODE_ENV: 'development',
    DATABASE_URL: '',
    REDIS_URL: '',
    SMTP_URL: '',
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: String(port),
    AUTH_SECRET: authSecret,
    CRM_BASE_DOMAIN: sim.baseDomain,
    CRM_PROTOCOL: sim.protocol,
    CRM_API_KEY: sim.apiKey,
    LOG_LEVEL: 'silent',
    ...env,
  };
  for (const [name, value] of Object.entries(childEnv)) if (value === undefined) delete childEnv[name];
  const child = spawn(process.execPath, ['bin/lms.js', 'start'], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stderr!.on('data', (d) => (output += d));
  if (echo) {
    child.stdout!.on('data', (d) => process.stderr.write(`[child] ${d}`));
    child.stderr!.on('data', (d) => process.stderr.write(`[child:err] ${d}`));
  }
  const baseUrl = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      output += d;
      const m = /LMS service running at (http:\/\/\S+)/.exec(output);
      if (m && /Demo tokens/.test(output)) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`lms start exited early (${code}):\n${output}`)));
  });
  return { child, baseUrl, banner: output, dataDir };
}

/** Kills it if it still runs and removes its DATA_DIR. */
export async function stopLms(started: StartedLms | undefined): Promise<void> {
  if (!started) return;
  if (started.child.exitCode === null) started.child.kill('SIGKILL');
  await rm(started.dataDir, { recursive: true, force: true });
}
