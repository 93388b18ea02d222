/**
 * The cluster: PostgreSQL and Redis (Debian), the CRM and recorder simulators, an SMTP sink,
 * two `lms serve` replicas behind HAProxy and two `lms worker` replicas, everything on
 * loopback, every process under one supervisor.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { ensureDebianPackages, haproxyProc, haproxyServerStates, Postgres, REDIS_READY, redisProc, waitFor } from './infra.js';
import { freePort, run, type Proc, Supervisor } from './procs.js';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));

export interface ClusterOptions {
  workDir: string;
  /** Students the CRM simulator knows per institution (the fan-out course takes most of them). */
  crmStudents: number;
  /**
   * Where `bin/lms.js` runs from: a deployment built by `buildDeployment` (compiled `dist/`, as
   * production runs), or the checkout itself (the sources through tsx).
   */
  deployDir: string;
  /** The deployment runs compiled JavaScript (`LMS_DIST=1`), not the sources. */
  compiled: boolean;
  pgPort?: number;
  redisPort?: number;
  log: (line: string) => void;
}

/** What the harness tunes on every replica (the rest is the production default). */
export const REPLICA_SETTINGS = {
  webPoolSize: 10,
  workerPoolSize: 5,
  workerConcurrency: 4,
  workerLeaseMs: 8000,
  workerPollMs: 500,
  shutdownDelayMs: 3000,
  rateLimitRead: 300,
  rateLimitWrite: 120,
  crmTimeoutMs: 5000,
};

export interface Replica {
  name: string;
  port: number;
  proc: Proc;
}

export interface WorkerReplica {
  name: string;
  proc: Proc;
  /** The worker id of each start (jobs.locked_by), newest last. */
  ids: string[];
}

export class Cluster {
  readonly supervisor: Supervisor;
  readonly secrets = {
    auth: randomBytes(24).toString('hex'),
    crm: randomBytes(16).toString('hex'),
    cron: randomBytes(16).toString('hex'),
    recordingToken: randomBytes(16).toString('hex'),
    recordingWebhook: randomBytes(16).toString('hex'),
    pg: randomBytes(12).toString('hex'),
  };
  pg!: Postgres;
  redis!: Proc;
  redisPort = 0;
  haproxy!: Proc;
  lbPort = 0;
  crmSim!: Proc;
  crmPort = 0;
  recorderSim!: Proc;
  recorderPort = 0;
  smtpSink!: Proc;
  smtpPort = 0;
  readonly mailDir: string;
  readonly web: Replica[] = [];
  readonly workers: WorkerReplica[] = [];

  constructor(readonly opts: ClusterOptions) {
    mkdirSync(join(opts.workDir, 'logs'), { recursive: true });
    this.supervisor = new Supervisor(join(opts.workDir, 'logs'));
    this.mailDir = join(opts.workDir, 'mailbox');
  }

  get lbUrl() {
    return `http://127.0.0.1:${this.lbPort}`;
  }

  get crmBaseDomain() {
    return `crm.localhost:${this.crmPort}`;
  }

  get haproxyDir() {
    return this.opts.workDir;
  }

  private lms(name: string, command: string, env: Record<string, string>): Proc {
    const dir = this.opts.deployDir;
    return this.supervisor.add({ name, command: process.execPath, args: [join(dir, 'bin/lms.js'), command], env: { LMS_DIST: this.opts.compiled ? '1' : '0', ...env }, cwd: dir });
  }

  /** The environment of `lms serve` and `lms worker`: production settings, from the sources (tsx). */
  replicaEnv(extra: Record<string, string>): Record<string, string> {
    const s = REPLICA_SETTINGS;
    return {
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      DATABASE_URL: this.pg.url,
      REDIS_URL: `redis://127.0.0.1:${this.redisPort}`,
      AUTH_SECRET: this.secrets.auth,
      CRM_API_KEY: this.secrets.crm,
      CRM_BASE_DOMAIN: this.crmBaseDomain,
      CRM_PROTOCOL: 'http',
      CRM_TIMEOUT_MS: String(s.crmTimeoutMs),
      CRON_SECRET: this.secrets.cron,
      RECORDING_API_URL: `http://127.0.0.1:${this.recorderPort}`,
      RECORDING_API_TOKEN: this.secrets.recordingToken,
      RECORDING_WEBHOOK_SECRET: this.secrets.recordingWebhook,
      PUBLIC_BASE_URL: this.lbUrl,
      SMTP_URL: `smtp://127.0.0.1:${this.smtpPort}`,
      MAIL_FROM: 'LMS cluster <no-reply@lms.localhost>',
      STORAGE_URL: `file://${join(this.opts.workDir, 'files')}`,
      RATE_LIMIT_READ: String(s.rateLimitRead),
      RATE_LIMIT_WRITE: String(s.rateLimitWrite),
      TRUST_PROXY: 'loopback',
      LOG_LEVEL: 'warn',
      ...extra,
    };
  }

  async start() {
    const { workDir, log } = this.opts;
    ensureDebianPackages(log);
    const [pgPort, redisPort, lbPort, crmPort, recorderPort, smtpPort, web1, web2] = await Promise.all([
      this.opts.pgPort ?? freePort(),
      this.opts.redisPort ?? freePort(),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
    ]);
    Object.assign(this, { redisPort, lbPort, crmPort, recorderPort, smtpPort });

    this.pg = new Postgres({ dir: workDir, port: pgPort, password: this.secrets.pg, maxConnections: 100 }, this.supervisor);
    this.pg.init();
    this.pg.start();
    log(`${this.pg.version} on 127.0.0.1:${pgPort}`);

    this.redis = redisProc(this.supervisor, workDir, redisPort);
    await this.restartRedisStartOnly();
    log(`${run('redis-server', ['--version']).trim().split(' ').slice(0, 3).join(' ')} on 127.0.0.1:${redisPort}`);

    this.smtpSink = this.lms('smtp-sink', 'smtp-sink', { SMTP_SINK_PORT: String(smtpPort), SMTP_SINK_DIR: this.mailDir });
    this.crmSim = this.lms('crm-sim', 'crm-sim', { CRM_SIM_PORT: String(crmPort), CRM_SIM_API_KEY: this.secrets.crm, CRM_SIM_STUDENTS: String(this.opts.crmStudents) });
    this.recorderSim = this.lms('recorder-sim', 'recorder-sim', {
      RECORDER_SIM_PORT: String(recorderPort),
      RECORDING_API_TOKEN: this.secrets.recordingToken,
      RECORDING_WEBHOOK_SECRET: this.secrets.recordingWebhook,
    });
    this.smtpSink.start();
    this.crmSim.start();
    this.recorderSim.start();
    await Promise.all([this.smtpSink.waitForLine(/SMTP sink on/), this.crmSim.waitForLine(/CRM simulator listening/), this.recorderSim.waitForLine(/Recorder simulator on/)]);
    log(`simulators: CRM http://${this.crmBaseDomain} (${this.opts.crmStudents} students per institution), recorder :${recorderPort}, SMTP sink :${smtpPort}`);

    run(process.execPath, [join(this.opts.deployDir, 'bin/lms.js'), 'migrate'], {
      env: { LMS_DIST: this.opts.compiled ? '1' : '0', ...this.replicaEnv({}) },
      cwd: this.opts.deployDir,
    });

    for (const [i, port] of [web1, web2].entries()) {
      const name = `web${i + 1}`;
      const proc = this.lms(
        name,
        'serve',
        this.replicaEnv({
          PORT: String(port),
          DB_POOL_SIZE: String(REPLICA_SETTINGS.webPoolSize),
          SHUTDOWN_DELAY_MS: String(REPLICA_SETTINGS.shutdownDelayMs),
          DATA_DIR: join(workDir, name),
        }),
      );
      this.web.push({ name, port, proc });
    }
    for (let i = 1; i <= 2; i++) {
      const name = `worker${i}`;
      const proc = this.lms(
        name,
        'worker',
        this.replicaEnv({
          DB_POOL_SIZE: String(REPLICA_SETTINGS.workerPoolSize),
          WORKER_CONCURRENCY: String(REPLICA_SETTINGS.workerConcurrency),
          WORKER_LEASE_MS: String(REPLICA_SETTINGS.workerLeaseMs),
          WORKER_POLL_MS: String(REPLICA_SETTINGS.workerPollMs),
          DATA_DIR: join(workDir, name),
          LOG_LEVEL: 'info',
        }),
      );
      this.workers.push({ name, proc, ids: [] });
    }
    await Promise.all([...this.web.map((w) => this.startWeb(w)), ...this.workers.map((w) => this.startWorker(w))]);

    this.haproxy = haproxyProc(this.supervisor, { dir: workDir, port: lbPort, servers: this.web.map((w) => ({ name: w.name, port: w.port })) }).start();
    await this.waitLbUp(this.web.map((w) => w.name));
    log(`HAProxy on ${this.lbUrl} in front of ${this.web.map((w) => `${w.name} :${w.port}`).join(', ')}; workers ${this.workers.map((w) => `${w.name} (${w.ids[0]})`).join(', ')}`);
  }

  /** Starts a web replica and waits until it answers /readyz 200 on its own port. */
  async startWeb(w: Replica): Promise<number> {
    const started = Date.now();
    w.proc.start();
    await waitFor(`${w.name} /readyz`, async () => (await this.readyz(w)) === 200, 120_000);
    return Date.now() - started;
  }

  async startWorker(w: WorkerReplica): Promise<number> {
    const started = Date.now();
    w.proc.start();
    w.ids.push((await w.proc.waitForLine(/"workerId":"(worker-[^"]+)"/, 120_000))[1]);
    return Date.now() - started;
  }

  /** The status /readyz answers on the replica's own port, or 0 when it cannot be reached. */
  async readyz(w: Replica): Promise<number> {
    try {
      const res = await request(`http://127.0.0.1:${w.port}/readyz`, { headersTimeout: 2000, bodyTimeout: 2000 });
      await res.body.dump();
      return res.statusCode;
    } catch {
      return 0;
    }
  }

  async waitLbUp(names: string[], timeoutMs = 60_000) {
    return waitFor(
      `HAProxy to see ${names.join(', ')} UP`,
      async () => {
        const states = await haproxyServerStates(this.haproxyDir);
        return names.every((n) => states[n] === 'UP');
      },
      timeoutMs,
    );
  }

  async crmFault(fault: null | 'slow' | 'down', delayMs?: number) {
    const res = await request(`http://127.0.0.1:${this.crmPort}/_sim/fault`, {
      method: 'PUT',
      headers: { host: this.crmBaseDomain, authorization: `Bearer ${this.secrets.crm}`, 'content-type': 'application/json' },
      body: JSON.stringify({ fault, delayMs }),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`CRM simulator refused the fault switch (${res.statusCode}): ${text}`);
  }

  async restartRedisStartOnly() {
    this.redis.start();
    await this.redis.waitForLine(REDIS_READY);
  }

  async stop() {
    await this.supervisor.stopAll();
  }
}
