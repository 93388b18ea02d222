import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { ManualClock } from '../../src/platform/clock.js';
import type { Deps } from '../../src/platform/context.js';
import { createDeps } from '../../src/platform/bootstrap.js';
import type { Db } from '../../src/platform/db/client.js';
import { mintToken, type MintInput, type Role } from '../../src/platform/auth/tokens.js';
import type { CrmClient } from '../../src/platform/crm/types.js';
import type { Storage } from '../../src/platform/storage/types.js';
import type { Mailer } from '../../src/platform/mail/mailer.js';
import type { PushSender } from '../../src/platform/push/push.js';
import type { Worker } from '../../src/platform/queue/queue.js';
import { createWorker } from '../../src/worker/worker.js';
import { startCrmSim, type CrmSim } from '../../src/dev/crm-sim/server.js';
import { startRecorderSim, type RecorderSim } from '../../src/dev/recorder-sim/server.js';
import { DEMO_INSTITUTION } from '../../src/dev/crm-sim/fixtures.js';
import { freshDatabase } from './database.js';
import { RecordingMailer } from './mail.js';

export interface ApiResponse<T = any> {
  status: number;
  headers: Record<string, any>;
  body: { data: T; error: any; meta?: any };
  raw: string;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
  query?: Record<string, string | number | boolean>;
}

export interface TokenInput {
  role: Role;
  /** The person id (stored as studentId, ownerId…); a contact for STUDENT and PARENT. */
  id: string;
  institutionId?: string;
  permissions?: string[];
  contact?: boolean;
  expiresIn?: number;
}

export interface TestApp {
  app: FastifyInstance;
  deps: Deps;
  config: Config;
  db: Db;
  clock: ManualClock;
  crmSim: CrmSim;
  /** The recorder the app is configured with (unless `env` names another): callbacks wait for `flushCallbacks()` and go into the app. */
  recorderSim: RecorderSim;
  worker: Worker;
  /** The app's mailer: the one the test passed, else a RecordingMailer. */
  mailer: Mailer;
  /** The messages a RecordingMailer (the default one, or the test's) kept; throws for another mailer. */
  sentMail(): RecordingMailer['sent'];
  token(input: TokenInput): Promise<string>;
  request<T = any>(method: string, url: string, opts?: RequestOptions): Promise<ApiResponse<T>>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  clock?: ManualClock;
  crm?: CrmClient;
  storage?: Storage;
  /** Default: a RecordingMailer (in memory, nothing is sent or written). */
  mailer?: Mailer;
  /** Default: the real push sender from the config (web push needs `VAPID_*` in `env`; mobile push only logs, silently). */
  push?: PushSender;
  /** Fastify's logger option (default off), e.g. `{ level: 'info', stream }` to capture log lines. */
  logger?: boolean | object;
  /** Routes a test adds before the app is sealed (for example one that throws). */
  extraRoutes?: (app: FastifyInstance) => void;
}

/**
 * A real app on a fresh migrated database, with a CRM simulator over real HTTP, a manual clock,
 * and local storage in a temp directory. Rate limits and the token lifetime cap are raised
 * unless `env` sets them. Mail goes to an in-memory RecordingMailer (`sentMail()`) unless the
 * test passes its own `mailer`; push is the real sender from the config unless it passes `push`.
 */
export async function createTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const crmSim = await startCrmSim({ port: 0 });
  // Callbacks are held until the test flushes them, then delivered into this app (its PUBLIC_BASE_URL is not a real address).
  const built: { app?: FastifyInstance } = {};
  const recorderSim = await startRecorderSim({
    port: 0,
    token: 'test-recording-token',
    webhookSecret: 'test-recording-webhook-secret',
    processingMs: null,
    transport: async (url, init) => {
      if (!built.app) throw new Error('the test app is not built yet');
      const u = new URL(url);
      const res = await built.app.inject({ method: 'POST', url: `${u.pathname}${u.search}`, headers: init.headers, payload: init.body });
      return { status: res.statusCode };
    },
  });
  const filesDir = await mkdtemp(join(tmpdir(), 'lms-files-'));
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    AUTH_SECRET: 'test-secret-0123456789abcdef0123456789',
    CRM_BASE_DOMAIN: crmSim.baseDomain,
    CRM_PROTOCOL: crmSim.protocol,
    CRM_API_KEY: crmSim.apiKey,
    // The simulator runs in the test's own process, beside PGlite: on a loaded machine a long
    // query can hold it for seconds, and a shorter timeout then turned fee checks open (flaky
    // 402 tests). No test waits on this timeout: the faults they use fail at once.
    CRM_TIMEOUT_MS: '10000',
    STORAGE_URL: `file://${filesDir}`,
    PUBLIC_BASE_URL: 'http://lms.test',
    RECORDING_API_URL: recorderSim.url,
    RECORDING_API_TOKEN: recorderSim.token,
    RECORDING_WEBHOOK_SECRET: recorderSim.webhookSecret,
    RATE_LIMIT_READ: '100000',
    RATE_LIMIT_WRITE: '100000',
    RATE_LIMIT_REPORT_RUN: '100000',
    RATE_LIMIT_REPORT_EXPORT: '100000',
    // A response that does not match its schema fails the request (500), so the test fails.
    RESPONSE_VALIDATION: 'strict',
    // Tests mint long-lived tokens and move the clock by years; the lifetime cap has its own test.
    AUTH_MAX_TOKEN_AGE_SECONDS: String(20 * 365 * 86_400),
    ...opts.env,
  });
  const clock = opts.clock ?? new ManualClock('2026-03-02T09:00:00.000Z');
  const database = await freshDatabase();
  const mailer = opts.mailer ?? new RecordingMailer();
  const deps = await createDeps(config, { clock, database, crm: opts.crm, storage: opts.storage, log: silentLog, mailer, push: opts.push });
  const app = await buildApp(deps, { logger: opts.logger ?? false });
  built.app = app;
  opts.extraRoutes?.(app);
  await app.ready();
  const worker = createWorker(deps, { pollMs: 50 });

  const token = (input: TokenInput) => {
    const isContact = input.contact ?? (input.role === 'STUDENT' || input.role === 'PARENT');
    const claims: MintInput = {
      sub: input.id,
      institutionId: input.institutionId ?? DEMO_INSTITUTION.id,
      role: input.role,
      permissions: input.permissions,
      expiresIn: input.expiresIn,
      ...(isContact ? { contactId: input.id, isContact: true, contactType: input.role === 'PARENT' ? 'CONTACT_PARENT' : 'CONTACT_STUDENT' } : {}),
    };
    return mintToken(config.AUTH_SECRET, claims, clock.now());
  };

  const request = async <T>(method: string, url: string, ro: RequestOptions = {}): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = { ...ro.headers };
    if (ro.token) headers.authorization = `Bearer ${ro.token}`;
    const res = await app.inject({
      method: method as never,
      url,
      query: ro.query as Record<string, string> | undefined,
      headers,
      ...(ro.body !== undefined ? { payload: ro.body as object } : {}),
    });
    let body: ApiResponse<T>['body'];
    try {
      body = res.json();
    } catch {
      body = undefined as never;
    }
    return { status: res.statusCode, headers: res.headers, body, raw: res.body };
  };

  return {
    app,
    deps,
    config,
    db: database.db,
    clock,
    crmSim,
    recorderSim,
    worker,
    mailer,
    sentMail: () => {
      if (!(mailer instanceof RecordingMailer)) throw new Error('sentMail(): the mailer of this test app is not a RecordingMailer');
      return mailer.sent;
    },
    token,
    request,
    close: async () => {
      await recorderSim.close();
      await worker.stop();
      await app.close();
      await deps.recorder.close();
      await deps.cache.close?.();
      if (!opts.mailer) await mailer.close();
      await database.close();
      await crmSim.close();
      await rm(filesDir, { recursive: true, force: true });
    },
  };
}

const noop = () => undefined;
export const silentLog = { info: noop, warn: noop, error: noop, debug: noop };
