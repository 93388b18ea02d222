import type { Config } from '../config.js';
import type { Clock } from './clock.js';
import type { Database, DbOrTx } from './db/client.js';
import type { CrmClient } from './crm/types.js';
import type { Storage } from './storage/types.js';
import type { Session } from './auth/tokens.js';
import type { Logger } from './logger.js';
import type { Mailer } from './mail/mailer.js';
import type { PushSender } from './push/push.js';
import type { RecorderClient } from './recorder/client.js';
import type { CrmCache } from './crm/cache.js';

export type { Logger } from './logger.js';

/** Long-lived collaborators, built once by main.ts (or by a test) and handed to the app. */
export interface Deps {
  config: Config;
  database: Database;
  clock: Clock;
  crm: CrmClient;
  storage: Storage;
  log: Logger;
  /** Outgoing e-mail: SMTP (`SMTP_URL`), or `.eml` files in `DATA_DIR/mailbox`. */
  mailer: Mailer;
  /** Web push (VAPID) and the mobile push provider. */
  push: PushSender;
  /** The external cloud recorder of live sessions (`RECORDING_API_URL`). */
  recorder: RecorderClient;
  /**
   * A read cache of derived data (analytics dashboards): the CRM cache's implementation, in
   * memory per process, or Redis with `REDIS_URL` so replicas share it and its invalidations.
   */
  cache: CrmCache;
}

/** What a service call gets: the collaborators plus who is asking, in which tenant. */
export interface ServiceContext {
  /** The database, or the open transaction inside `withTx`. */
  db: DbOrTx;
  /** True inside `withTx`: nested calls join the open transaction. */
  inTx: boolean;
  clock: Clock;
  crm: CrmClient;
  storage: Storage;
  recorder: RecorderClient;
  cache: CrmCache;
  config: Config;
  log: Logger;
  actor: Session;
  institutionId: string;
  /** The id of the request this call serves (`req.id`, echoed as `x-request-id`), or null outside a request. */
  requestId: string | null;
}

/**
 * The context of one service call. `log` is the request's logger (`req.log`) in a route, so
 * every line a service logs carries the request id; `deps.log` outside a request. `requestId`
 * is `req.id` in a route (what audit rows record), null outside a request: passed explicitly,
 * so it does not depend on whether logging is on.
 */
export function serviceContext(deps: Deps, actor: Session, log: Logger, requestId: string | null): ServiceContext {
  return {
    db: deps.database.db,
    inTx: false,
    clock: deps.clock,
    crm: deps.crm,
    storage: deps.storage,
    recorder: deps.recorder,
    cache: deps.cache,
    config: deps.config,
    log,
    actor,
    institutionId: actor.institutionId,
    requestId,
  };
}

/** What `withTx` needs: a database handle, and whether it is already a transaction. */
export interface TxScope {
  db: DbOrTx;
  inTx?: boolean;
}

/**
 * Runs `fn` in one transaction: the context it gets has the transaction as `db`, so every
 * query, job and outbox row written through it commits or rolls back together. Inside an open
 * transaction it joins it. Services never hold a context and a separate `tx` side by side: on
 * PGlite's single connection a query through the outer `db` inside a transaction would wait for
 * the transaction forever. Any scope with `db` works (a ServiceContext, a job's or a webhook's
 * scope), so there is one way to open a transaction.
 */
export async function withTx<C extends TxScope, T>(ctx: C, fn: (tx: C) => Promise<T>): Promise<T> {
  if (ctx.inTx) return fn(ctx);
  return ctx.db.transaction((tx) => fn({ ...ctx, db: tx, inTx: true } as C));
}
