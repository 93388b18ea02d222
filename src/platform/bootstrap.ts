import { pino } from 'pino';
import type { Config } from '../config.js';
import { systemClock, type Clock } from './clock.js';
import type { Deps } from './context.js';
import { openDatabase, type Database } from './db/client.js';
import { createCrmClient } from './crm/client.js';
import { createCrmCache, type CrmCache } from './crm/cache.js';
import type { CrmClient } from './crm/types.js';
import { createStorage } from './storage/index.js';
import { STORAGE_URL_KEY_INFO } from './storage/signed-urls.js';
import { derivedKey } from './auth/signatures.js';
import type { Storage } from './storage/types.js';
import { createMailer, type Mailer } from './mail/mailer.js';
import { createPushSender, type PushSender } from './push/push.js';
import { createRecorderClient, type RecorderClient } from './recorder/client.js';

export interface DepsOverrides {
  clock?: Clock;
  database?: Database;
  crm?: CrmClient;
  storage?: Storage;
  log?: Deps['log'];
  mailer?: Mailer;
  push?: PushSender;
  recorder?: RecorderClient;
  cache?: CrmCache;
}

/** Opens the database and builds every collaborator from configuration. */
export async function createDeps(config: Config, overrides: DepsOverrides = {}): Promise<Deps> {
  const clock = overrides.clock ?? systemClock;
  const log = overrides.log ?? pino({ level: config.LOG_LEVEL });
  const database =
    overrides.database ??
    (await openDatabase({
      databaseUrl: config.DATABASE_URL,
      dataDir: config.DATA_DIR,
      poolSize: config.DB_POOL_SIZE,
      statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
    }));
  const crm =
    overrides.crm ??
    createCrmClient({
      addressing: config.crm,
      apiKey: config.CRM_API_KEY,
      timeoutMs: config.CRM_TIMEOUT_MS,
      connectTimeoutMs: config.CRM_CONNECT_TIMEOUT_MS,
      cache: createCrmCache({ redisUrl: config.REDIS_URL, clock }),
      clock,
      log,
    });
  // Purpose keys derived from AUTH_SECRET: once, here, not on a request.
  derivedKey(config.AUTH_SECRET, STORAGE_URL_KEY_INFO);
  const storage = overrides.storage ?? createStorage(config, clock);
  const mailer = overrides.mailer ?? createMailer(config, log);
  const push = overrides.push ?? createPushSender(config, log);
  const recorder =
    overrides.recorder ??
    createRecorderClient({
      apiUrl: config.RECORDING_API_URL,
      token: config.RECORDING_API_TOKEN,
      timeoutMs: config.RECORDING_TIMEOUT_MS,
      connectTimeoutMs: config.RECORDING_CONNECT_TIMEOUT_MS,
    });
  const cache = overrides.cache ?? createCrmCache({ redisUrl: config.REDIS_URL, clock, prefix: 'lms:cache:', log });
  return { config, database, clock, crm, storage, log, mailer, push, recorder, cache };
}
