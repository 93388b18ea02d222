import type { Deps, Logger } from '../../platform/context.js';
import type { DbOrTx } from '../../platform/db/client.js';
import type { Session } from '../../platform/auth/tokens.js';
import { AppError } from '../../platform/http/errors.js';
import { agentKey, type JsonObject } from './xapi.keys.js';

/**
 * Who is calling the LRS. An HTTP Basic credential of an institution may do anything within
 * it; a session (one of the service's own people, by bearer token) acts as their own agent:
 * they write and read only statements they are the actor of, and only their own documents.
 */
export interface Principal {
  institutionId: string;
  /** The `authority` the LRS puts on statements this caller stores. */
  authority: JsonObject;
  /** The caller's own agent when it is a session, else null (a credential). */
  self: { agent: JsonObject; key: string; session: Session } | null;
  /** The credential's id, when it is one. */
  credentialId: string | null;
}

/** What an LRS service call gets (a service context without a session actor). */
export interface LrsContext {
  deps: Deps;
  db: DbOrTx;
  inTx: boolean;
  log: Logger;
  requestId: string | null;
  institutionId: string;
  principal: Principal;
}

export function lrsContext(deps: Deps, principal: Principal, log: Logger, requestId: string | null): LrsContext {
  return { deps, db: deps.database.db, inTx: false, log, requestId, institutionId: principal.institutionId, principal };
}

/** One transaction (nested calls join it), as `withTx` does for service contexts. */
export async function lrsTx<T>(ctx: LrsContext, fn: (tx: LrsContext) => Promise<T>): Promise<T> {
  if (ctx.inTx) return fn(ctx);
  return ctx.db.transaction((tx) => fn({ ...ctx, db: tx, inTx: true }));
}

export const forbidden = (message: string) => new AppError('FORBIDDEN', message);

/** A session may only act as its own agent: 403 for any other agent. */
export function assertSelf(ctx: LrsContext, agent: JsonObject, what: string) {
  const self = ctx.principal.self;
  if (self && agentKey(agent) !== self.key) throw forbidden(`A session may only ${what} its own agent`);
}
