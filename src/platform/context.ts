import type { Config } from '../config.js';
import type { Clock } from './clock.js';
import type { Database, Db } from './db/client.js';
import type { CrmClient } from './crm/types.js';
import type { Storage } from './storage/types.js';
import type { Session } from './auth/tokens.js';

/** The logging the services use: console or Fastify's logger both fit. */
export interface Logger {
  info(...args: any[]): void;
  warn(...args: any[]): void;
  error(...args: any[]): void;
}

/** Long-lived collaborators, built once by main.ts (or by a test) and handed to the app. */
export interface Deps {
  config: Config;
  database: Database;
  clock: Clock;
  crm: CrmClient;
  storage: Storage;
  log: Logger;
}

/** What a service call gets: the collaborators plus who is asking, in which tenant. */
export interface ServiceContext {
  db: Db;
  clock: Clock;
  crm: CrmClient;
  storage: Storage;
  config: Config;
  log: Logger;
  actor: Session;
  institutionId: string;
}

export function serviceContext(deps: Deps, actor: Session): ServiceContext {
  return {
    db: deps.database.db,
    clock: deps.clock,
    crm: deps.crm,
    storage: deps.storage,
    config: deps.config,
    log: deps.log,
    actor,
    institutionId: actor.institutionId,
  };
}
