#!/usr/bin/env node
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { ConfigError, loadConfig, type Config } from './config.js';
import { buildApp } from './app.js';
import { createDeps } from './platform/bootstrap.js';
import { openDatabase } from './platform/db/client.js';
import { mintToken, ROLES, type Role } from './platform/auth/tokens.js';
import { createWorker } from './worker/worker.js';
import { jobsCommand, JobsCliError } from './platform/queue/cli.js';
import { systemClock } from './platform/clock.js';
import { startCrmSim } from './dev/crm-sim/server.js';
import { runCrmSimCli } from './dev/crm-sim/main.js';
import { startRecorderSim, type RecorderSim } from './dev/recorder-sim/server.js';
import { demoLogins } from './dev/demo.js';
import { startSmtpSink, type SmtpSink } from './dev/smtp-sink.js';
import { describeSmtpUrl } from './platform/mail/mailer.js';
import { newVapidKeys, vapidKeyLines } from './platform/push/push.js';

const USAGE = `usage: lms <command>
  serve      run the HTTP API (no worker)
  worker     run the background worker alone
  start      all-in-one for development: migrate, CRM simulator, seed, API + worker
  migrate    apply database migrations
  seed       seed the demo institution (development only)
  token      print a signed dev token: --role STUDENT --institution <id> --contact <id> [--sub <id>] [--permissions a,b]
  jobs       list background jobs (dead by default): [--status dead|queued|running|done|all] [--name <job>] [--limit N]
             jobs retry <id>: queue a dead job again
  crm-sim    run the CRM simulator alone
  recorder-sim  run the recorder simulator alone (calls back the callbackUrl each recording was started with)
  smtp-sink  run the development SMTP sink alone (SMTP_SINK_PORT, default 2525; SMTP_SINK_DIR, default DATA_DIR/mailbox)
  vapid      print a fresh VAPID key pair for web push (VAPID_PUBLIC_KEY=… / VAPID_PRIVATE_KEY=…)`;

const TOKEN_USAGE = `usage: lms token --institution <id> (--contact <id> | --sub <id>) [--role STUDENT|TEACHER|ADMIN|PARENT]
                 [--contact-type <type>] [--permissions a,b] [--expires-in <seconds>]
  contacts (students, parents) take --contact; staff take --sub`;

function onShutdown(fn: () => Promise<void>) {
  let closing = false;
  const handler = (signal: string) => {
    if (closing) return;
    closing = true;
    console.log(`[lms] ${signal} received, shutting down`);
    fn()
      .then(() => process.exit(0))
      .catch((err) => {
        console.error('[lms] shutdown failed', err);
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => handler('SIGTERM'));
  process.on('SIGINT', () => handler('SIGINT'));
}

async function migrate(config: Config) {
  const database = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
  await database.migrate();
  await database.close();
  console.log(`[lms] migrations applied (${database.driver})`);
}

async function jobs(config: Config, args: string[]) {
  const database = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, poolSize: 1 });
  try {
    const { output, exitCode } = await jobsCommand(database.db, systemClock, args);
    console.log(output);
    process.exitCode = exitCode;
  } catch (err) {
    if (!(err instanceof JobsCliError)) throw err;
    console.error(`[lms] ${err.message}`);
    process.exitCode = 1;
  } finally {
    await database.close();
  }
}

function warnOpenCron(config: Config) {
  if (!config.CRON_SECRET) console.warn('[lms] CRON_SECRET is not set: cron endpoints are open (development only)');
}

async function serve(config: Config, withWorker: boolean, banner?: () => Promise<string>, closeLast?: () => Promise<void>) {
  warnOpenCron(config);
  const deps = await createDeps(config);
  if (withWorker) {
    // All-in-one development mode: migrate and seed the simulator's institutions on first run.
    await deps.database.migrate();
    const { seedDemo } = await import('./dev/seed.js');
    const { seedScormPackages } = await import('./dev/scorm-demo.js');
    for (const r of await seedDemo(deps.database.db, deps.clock, { storage: deps.storage, baseUrl: config.publicBaseUrl })) {
      await seedScormPackages(deps, r.institutionId);
    }
  }
  const app = await buildApp(deps);
  const worker = withWorker ? createWorker(deps) : undefined;
  await app.listen({ port: config.PORT, host: config.HOST });
  worker?.start();
  if (banner) console.log(await banner());
  onShutdown(async () => {
    // Unready first, still serving: the load balancer's health checks take this replica out
    // before it stops accepting connections.
    app.draining = true;
    if (config.SHUTDOWN_DELAY_MS > 0) {
      console.log(`[lms] /readyz answers 503; serving ${config.SHUTDOWN_DELAY_MS} ms more before closing`);
      await new Promise((resolve) => setTimeout(resolve, config.SHUTDOWN_DELAY_MS));
    }
    await app.close(); // finishes in-flight requests
    console.log('[lms] HTTP server closed');
    if (worker) {
      await worker.stop();
      console.log('[lms] worker stopped');
    }
    await deps.mailer.close();
    await deps.cache.close?.();
    await deps.database.close();
    console.log('[lms] database closed');
    await closeLast?.();
  });
}

async function runWorker(config: Config) {
  // The worker process logs through pino, as the API does (JSON lines, LOG_LEVEL).
  const log = pino({ level: config.LOG_LEVEL, name: 'lms-worker' });
  const deps = await createDeps(config, { log });
  if (!config.SMTP_URL) log.warn(`SMTP_URL is not set: e-mail is not sent but written as .eml files to the ${deps.mailer.describe()}`);
  const worker = createWorker(deps);
  worker.start();
  log.info({ workerId: worker.id, driver: deps.database.driver, mail: deps.mailer.describe() }, 'worker started');
  onShutdown(async () => {
    await worker.stop();
    await deps.mailer.close();
    await deps.cache.close?.();
    await deps.database.close();
  });
}

async function start() {
  const env = { ...process.env };
  // With no CRM configured, run the simulator on loopback and point the client at it.
  let simNote = '';
  if (!env.CRM_BASE_DOMAIN && !env.CRM_URL) {
    const sim = await startCrmSim({ port: Number(env.CRM_SIM_PORT ?? 0) });
    env.CRM_BASE_DOMAIN = sim.baseDomain;
    env.CRM_PROTOCOL = sim.protocol;
    env.CRM_API_KEY ??= sim.apiKey;
    simNote = `CRM simulator: http://${sim.baseDomain} (tenant addresses http://<slug>.${sim.baseDomain})`;
  }
  // With no recorder configured, run the recorder simulator on loopback: it calls the webhook back
  // after a stop, signed with the webhook secret, so a recording ends in READY. An empty
  // RECORDING_API_URL or RECORDING_API_TOKEN counts as unset (`||`, not `??`). A webhook secret
  // set explicitly empty is the operator turning recording off (issue 12: it counts as unset,
  // also here): no simulator fills it in, so the webhook answers 503 to everything and
  // recording/start 503, as without a secret in production.
  let recorderSim: RecorderSim | undefined;
  let recorderNote = '';
  if (env.RECORDING_WEBHOOK_SECRET === '') {
    recorderNote = 'Recording: off (RECORDING_WEBHOOK_SECRET is set empty; the webhook and recording/start answer 503)';
  } else if (!env.RECORDING_API_URL) {
    recorderSim = await startRecorderSim({
      port: Number(env.RECORDER_SIM_PORT || 0),
      token: env.RECORDING_API_TOKEN || undefined,
      webhookSecret: env.RECORDING_WEBHOOK_SECRET || undefined,
      log: console,
    });
    env.RECORDING_API_URL = recorderSim.url;
    env.RECORDING_API_TOKEN = recorderSim.token;
    env.RECORDING_WEBHOOK_SECRET = recorderSim.webhookSecret;
    recorderNote = `Recorder simulator: ${recorderSim.url} (calls the webhook back about 2 s after a stop)`;
  }
  // Browser push works out of the box: without a configured pair, a development pair kept in
  // DATA_DIR (browsers' subscriptions are bound to the public key, so it must not change per start).
  let pushNote = 'Web push: VAPID keys from the environment';
  if (!env.VAPID_PUBLIC_KEY && !env.VAPID_PRIVATE_KEY) {
    const file = resolve(env.DATA_DIR || '.data', 'vapid-dev.json');
    let keys: { publicKey: string; privateKey: string };
    try {
      keys = JSON.parse(await readFile(file, 'utf8'));
    } catch {
      keys = newVapidKeys();
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, JSON.stringify(keys), { mode: 0o600 });
    }
    env.VAPID_PUBLIC_KEY = keys.publicKey;
    env.VAPID_PRIVATE_KEY = keys.privateKey;
    pushNote = `Web push: development VAPID keys in ${file}`;
  }
  let config = loadConfig(env, { secrets: 'development', servesCron: true });
  if (config.usingDevSecret) {
    console.warn('[lms] AUTH_SECRET is not set: using the public development secret (lms start only; anyone can forge tokens for it)');
  }
  // With no SMTP server configured, the worker sends real SMTP to a sink on loopback that stores every message as a file.
  let sink: SmtpSink | undefined;
  let mailNote: string;
  if (config.SMTP_URL) {
    mailNote = `Mail: sent over SMTP to ${describeSmtpUrl(config.SMTP_URL)}`;
  } else {
    sink = await startSmtpSink({ dir: resolve(config.DATA_DIR, 'mailbox') });
    config = { ...config, SMTP_URL: sink.url };
    mailNote = `Mail: sent e-mail is stored in ${sink.dir} (SMTP sink ${sink.url})`;
  }
  const base = config.publicBaseUrl;
  const closeSink = async () => {
    await sink?.close();
    await recorderSim?.close();
  };
  await serve(
    config,
    true,
    async () => {
      const logins = await demoLogins(config);
      const lines = [
        '',
        `LMS service running at ${base}`,
        `Web app: ${base}/   (development sign-in: ${base}/sign-in)`,
        `API docs: ${base}/docs   (OpenAPI: ${base}/openapi.json)`,
        simNote,
        ...(recorderNote ? [recorderNote] : []),
        mailNote,
        pushNote,
        '',
        'Demo tokens (send as "Authorization: Bearer <token>"):',
        ...logins.map((l) => `  ${l.label.padEnd(8)} ${l.personId.padEnd(18)} ${l.token}`),
        '',
        `Try: curl -H "Authorization: Bearer ${logins[0]?.token ?? '<token>'}" ${base}/api/auth/session`,
        '',
      ];
      return lines.filter((l) => l !== undefined).join('\n');
    },
    closeSink,
  );
}

async function token(config: Config, args: string[]) {
  if (config.isProduction) throw new ConfigError('lms token refuses to run with NODE_ENV=production');
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        role: { type: 'string', default: 'STUDENT' },
        institution: { type: 'string' },
        contact: { type: 'string' },
        sub: { type: 'string' },
        'contact-type': { type: 'string' },
        permissions: { type: 'string' },
        'expires-in': { type: 'string' },
      },
    }));
  } catch (err) {
    // An unknown flag (--help included) gets the usage line, not a stack trace.
    throw new ConfigError(`${(err as Error).message}\n${TOKEN_USAGE}`);
  }
  const role = String(values.role).toUpperCase() as Role;
  if (!ROLES.includes(role)) throw new ConfigError(`--role must be one of ${ROLES.join(', ')}`);
  if (!values.institution) throw new ConfigError(`--institution is required\n${TOKEN_USAGE}`);
  const sub = values.sub ?? values.contact;
  if (!sub) throw new ConfigError(`--contact or --sub is required\n${TOKEN_USAGE}`);
  const expiresIn = values['expires-in'] === undefined ? undefined : Number(values['expires-in']);
  if (expiresIn !== undefined && !(Number.isInteger(expiresIn) && expiresIn > 0)) throw new ConfigError('--expires-in must be a positive whole number of seconds');
  const contactType = values['contact-type'] ?? (values.contact ? (role === 'PARENT' ? 'CONTACT_PARENT' : role === 'STUDENT' ? 'CONTACT_STUDENT' : undefined) : undefined);
  console.log(
    await mintToken(config.AUTH_SECRET, {
      sub,
      institutionId: values.institution,
      role,
      contactId: values.contact,
      isContact: Boolean(values.contact),
      contactType,
      permissions: values.permissions ? values.permissions.split(',') : undefined,
      expiresIn,
    }),
  );
}

export async function main(argv = process.argv.slice(2)) {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'serve':
        return await serve(loadConfig(process.env, { secrets: 'required', servesCron: true }), false);
      case 'worker':
        return await runWorker(loadConfig(process.env, { secrets: 'required' }));
      case 'start':
        return await start();
      case 'migrate':
        return await migrate(loadConfig());
      case 'seed': {
        const { runSeedCli } = await import('./dev/seed.js');
        return await runSeedCli(loadConfig());
      }
      case 'token':
        return await token(loadConfig(), rest);
      case 'jobs':
        return await jobs(loadConfig(), rest);
      case 'recorder-sim': {
        const sim = await startRecorderSim({
          port: Number(process.env.RECORDER_SIM_PORT || 4020),
          token: process.env.RECORDING_API_TOKEN || undefined,
          webhookSecret: process.env.RECORDING_WEBHOOK_SECRET || undefined,
          log: console,
        });
        console.log(`Recorder simulator on ${sim.url}`);
        console.log(`  point the service at it with: RECORDING_API_URL=${sim.url} RECORDING_API_TOKEN=${sim.token} RECORDING_WEBHOOK_SECRET=${sim.webhookSecret}`);
        onShutdown(() => sim.close());
        return;
      }
      case 'vapid':
        console.log(vapidKeyLines());
        return;
      case 'crm-sim': {
        const sim = await runCrmSimCli(process.env, console, { handleSignals: false });
        onShutdown(() => sim.close());
        return;
      }
      case 'smtp-sink': {
        const sink = await startSmtpSink({
          dir: process.env.SMTP_SINK_DIR || resolve(process.env.DATA_DIR || '.data', 'mailbox'),
          port: Number(process.env.SMTP_SINK_PORT || 2525),
        });
        console.log(`SMTP sink on ${sink.url}, storing every message in ${sink.dir}`);
        console.log(`  point the worker at it with: SMTP_URL=${sink.url}`);
        onShutdown(() => sink.close());
        return;
      }
      default:
        console.log(USAGE);
        process.exitCode = command ? 1 : 0;
    }
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`[lms] ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
}

await main();
