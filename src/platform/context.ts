import type { Config } from '../config.js';
import type { Clock } from './clock.js';
import type { Database, Db } from './db/client.js';
import type { CrmClient } from './crm/types.js';
import type { Storage } from './storage/types.js';
import type { Session } from './auth/tokens.js';

/** The logging the services use: a pino logger (the request's `req.log` in a request), or console. */
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

/**
 * The context of one service call. `log` is the request's logger (`req.log`) in a route, so
 * every line a service logs carries the request id; `deps.log` outside a request.
 */
export function serviceContext(deps: Deps, actor: Session, log: Logger): ServiceContext {
  return {
    db: deps.database.db,
    clock: deps.clock,
    crm: deps.crm,
    storage: deps.storage,
    config: deps.config,
    log,
    actor,
    institutionId: actor.institutionId,
  };
}
