import { isDeepStrictEqual } from 'node:util';
import { and, desc, inArray, sql } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/http/errors.js';
import { newId } from '../../platform/ids.js';
import { inTenant } from '../../platform/db/tenancy.js';
import { assertCleanInput, jsonDepthExceeds, MAX_JSON_DEPTH } from '../../platform/http/input-guard.js';
import { assertSelf, lrsTx, type LrsContext } from './xapi.context.js';
import { activityKey, agentKey, isObject, verbKey, VOIDED_VERB, type Json, type JsonObject } from './xapi.keys.js';
import { invalid, validateStatement } from './xapi.validation.js';
import { activitiesOf, mergeDefinitions, sameStatement } from './xapi.format.js';
import { knownHashes, recordAttachments, storeAttachmentBytes, type AttachmentPart } from './xapi.attachments.js';
import { checkSignature, signatureAttachments } from './xapi.signature.js';
import { applyLessonCompletions, planLessonCompletions } from './xapi.lessons.js';
import { xapiActivities, xapiStatementActivities, xapiStatementAgents, xapiStatements } from './xapi.tables.js';

/**
 * Storing statements (POST and PUT of the statements resource). Every statement of a request
 * is checked before anything is written; then one transaction, under the institution's write
 * lock, stores them all or none: the statements, their index rows, voids, activity
 * definitions, attachment records and any lesson completions (xapi.lessons.ts).
 */

export const MAX_BATCH = 500;

/** The lock key of an institution's statement writes (readers take it shared: xapi.query.ts). */
export const writeLockSql = (institutionId: string) => sql`hashtextextended(${`xapi:statements:${institutionId}`}, 0)`;

/**
 * `X-Experience-API-Consistent-Through` taken while holding that lock (shared or not): now less
 * 1 ms. No write is in flight, and any later one stores at or after now.
 */
export const consistentThroughAt = (clock: Clock) => new Date(clock.now().getTime() - 1).toISOString();

/** Parses a JSON text of the LRS (a statements body, or the first multipart part) under the platform's input rules. */
export function parseStatementsJson(text: string): Json {
  if (jsonDepthExceeds(text)) throw new AppError('VALIDATION_ERROR', `JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  let parsed: Json;
  try {
    parsed = JSON.parse(text) as Json;
  } catch {
    throw new AppError('VALIDATION_ERROR', 'Malformed JSON body');
  }
  // The same input rules as every route (no NUL, no lone surrogates, real dates).
  assertCleanInput(parsed, 'body');
  return parsed;
}

interface Incoming {
  statement: JsonObject;
  /** What the client said, before the LRS filled anything in (compared on conflicts). */
  sent: JsonObject;
}

function agentsOf(s: JsonObject): Array<{ key: string; asActor: boolean; direct: boolean }> {
  const out: Array<{ key: string; asActor: boolean; direct: boolean }> = [];
  const add = (a: Json | undefined, asActor: boolean, direct: boolean) => {
    if (!isObject(a)) return;
    const key = agentKey(a);
    if (key) out.push({ key, asActor, direct });
  };
  add(s.actor, true, true);
  const o = s.object;
  if (isObject(o) && (o.objectType === 'Agent' || o.objectType === 'Group')) add(o, false, true);
  add(s.authority, false, false);
  const visitContext = (c: Json | undefined) => {
    if (!isObject(c)) return;
    add(c.instructor, false, false);
    add(c.team, false, false);
  };
  visitContext(s.context);
  if (isObject(o) && o.objectType === 'SubStatement') {
    add(o.actor, false, false);
    const so = o.object;
    if (isObject(so) && (so.objectType === 'Agent' || so.objectType === 'Group')) add(so, false, false);
    visitContext(o.context);
  }
  return out;
}

function activityKeysOf(s: JsonObject): Array<{ key: string; direct: boolean }> {
  const o = s.object;
  const direct = isObject(o) && (o.objectType ?? 'Activity') === 'Activity' && typeof o.id === 'string' ? o.id : null;
  return activitiesOf(s)
    .filter((a) => typeof a.id === 'string')
    .map((a) => ({ key: activityKey(a.id as string), direct: a === o && direct !== null }));
}

/** Per key, one row: `direct`/`asActor` if any occurrence is. */
function dedupe<T extends { key: string; direct: boolean; asActor?: boolean }>(rows: T[]): T[] {
  const by = new Map<string, T>();
  for (const r of rows) {
    const seen = by.get(r.key);
    if (!seen) by.set(r.key, { ...r });
    else {
      seen.direct ||= r.direct;
      if (r.asActor) seen.asActor = true;
    }
  }
  return [...by.values()];
}

const refTargetOf = (s: JsonObject): string | null => (isObject(s.object) && s.object.objectType === 'StatementRef' ? (s.object.id as string) : null);
const voidsOf = (s: JsonObject): string | null => (isObject(s.verb) && s.verb.id === VOIDED_VERB ? refTargetOf(s) : null);

/** Checks each statement and gives it an id; one id twice in the request is 400 (xAPI 1.0.3 Communication 2.1.1), equivalent statements or not. */
function prepare(ctx: LrsContext, input: Json[]): Incoming[] {
  const seen = new Set<string>();
  return input.map((raw, i) => {
    const sent = validateStatement(raw, input.length > 1 ? `statements.${i}` : 'statement');
    assertSelf(ctx, sent.actor as JsonObject, 'store statements whose actor is');
    const id = (sent.id as string | undefined) ?? newId();
    if (seen.has(id)) throw new AppError('VALIDATION_ERROR', `Statement ${id} appears more than once in the request`);
    seen.add(id);
    return { statement: { ...sent, id }, sent };
  });
}

/**
 * Attachments: every attachment without a `fileUrl` needs its bytes, from a part of this
 * request or already stored; every part must belong to an attachment. Signatures are checked.
 */
async function checkAttachments(ctx: LrsContext, items: Incoming[], parts: AttachmentPart[]): Promise<void> {
  const byHash = new Map(parts.map((p) => [p.sha2, p]));
  const needed = new Set<string>();
  for (const { statement } of items) {
    for (const a of Array.isArray(statement.attachments) ? statement.attachments : []) {
      if (isObject(a) && a.fileUrl === undefined) needed.add(a.sha2 as string);
    }
  }
  for (const p of parts) if (!needed.has(p.sha2)) throw new AppError('VALIDATION_ERROR', `The attachment part with hash ${p.sha2} belongs to no attachment of the statements`);
  const missing = [...needed].filter((h) => !byHash.has(h));
  const known = await knownHashes(ctx, missing);
  const absent = missing.filter((h) => !known.has(h));
  if (absent.length > 0) throw new AppError('VALIDATION_ERROR', `Attachment content missing for hash ${absent[0]}: send it as a part of a multipart/mixed request`);
  for (const { statement } of items) {
    for (const sig of signatureAttachments(statement)) {
      if (sig.contentType !== 'application/octet-stream') throw invalid('statement.attachments', 'a signature attachment must have contentType application/octet-stream');
      const part = byHash.get(sig.sha2 as string);
      if (!part) throw new AppError('VALIDATION_ERROR', 'Signed statement: the signature must be sent as a part of the request');
      await checkSignature(statement, part.bytes);
    }
  }
}

/** The answer of a write: the statement ids in request order and the consistency time taken under the write lock. */
export interface StoreResult {
  ids: string[];
  consistentThrough: string;
}

/** Stores statements; returns the ids in request order. */
export async function storeStatements(ctx: LrsContext, input: Json[], parts: AttachmentPart[] = []): Promise<StoreResult> {
  if (input.length === 0) throw new AppError('VALIDATION_ERROR', 'No statements given');
  if (input.length > MAX_BATCH) throw new AppError('PAYLOAD_TOO_LARGE', `At most ${MAX_BATCH} statements per request`);
  const items = prepare(ctx, input);
  await checkAttachments(ctx, items, parts);
  await storeAttachmentBytes(ctx, parts);
  const lessons = await planLessonCompletions(
    ctx,
    items.map((x) => x.statement),
  );

  return lrsTx(ctx, async (tx) => {
    await tx.db.execute(sql`select pg_advisory_xact_lock(${writeLockSql(tx.institutionId)})`);
    const consistentThrough = consistentThroughAt(tx.deps.clock);
    const ids = items.map((x) => x.statement.id as string);
    const existing = await tx.db
      .select({ id: xapiStatements.id, statement: xapiStatements.statement })
      .from(xapiStatements)
      .where(and(inTenant(tx, xapiStatements), inArray(xapiStatements.id, ids)));
    const existingById = new Map(existing.map((r) => [r.id, r.statement as JsonObject]));
    const fresh = items.filter(({ statement, sent }) => {
      const old = existingById.get(statement.id as string);
      if (!old) return true;
      if (!sameStatement(sent, old)) throw new AppError('CONFLICT', `A different statement with id ${String(statement.id)} is already stored`);
      return false;
    });
    if (fresh.length === 0) return { ids, consistentThrough };

    await checkVoids(tx, fresh);
    const stored = await nextStored(tx);
    const storedIso = stored.toISOString();
    const rows = fresh.map(({ statement }) => {
      const s: JsonObject = {
        ...statement,
        timestamp: statement.timestamp ?? storedIso,
        stored: storedIso,
        authority: tx.principal.authority,
        version: statement.version ?? '1.0.0',
      };
      const registration = isObject(s.context) && typeof s.context.registration === 'string' ? s.context.registration : null;
      return {
        institutionId: tx.institutionId,
        id: s.id as string,
        stored,
        verbKey: verbKey((s.verb as JsonObject).id as string),
        registration,
        refTarget: refTargetOf(s),
        voidsId: voidsOf(s),
        statement: s,
      };
    });
    // A voiding statement may have arrived before the statement it voids.
    const voidedEarly = await tx.db
      .select({ id: xapiStatements.voidsId })
      .from(xapiStatements)
      .where(
        and(
          inTenant(tx, xapiStatements),
          inArray(
            xapiStatements.voidsId,
            rows.map((r) => r.id),
          ),
        ),
      );
    const voidedIds = new Set(voidedEarly.map((r) => r.id));
    const inserted = await tx.db
      .insert(xapiStatements)
      .values(rows.map((r) => ({ ...r, voided: voidedIds.has(r.id) })))
      .returning({ id: xapiStatements.id, seq: xapiStatements.seq });
    const seqOf = new Map(inserted.map((r) => [r.id, r.seq]));

    const agentRows = rows.flatMap((r) =>
      dedupe(agentsOf(r.statement)).map((a) => ({ institutionId: tx.institutionId, statementSeq: seqOf.get(r.id)!, agentKey: a.key, asActor: a.asActor, direct: a.direct })),
    );
    if (agentRows.length > 0) await tx.db.insert(xapiStatementAgents).values(agentRows);
    const activityRows = rows.flatMap((r) =>
      dedupe(activityKeysOf(r.statement)).map((a) => ({ institutionId: tx.institutionId, statementSeq: seqOf.get(r.id)!, activityKey: a.key, direct: a.direct })),
    );
    if (activityRows.length > 0) await tx.db.insert(xapiStatementActivities).values(activityRows);

    const voids = rows.map((r) => r.voidsId).filter((v): v is string => v !== null);
    if (voids.length > 0) {
      await tx.db
        .update(xapiStatements)
        .set({ voided: true })
        .where(and(inTenant(tx, xapiStatements), inArray(xapiStatements.id, voids), sql`${xapiStatements.voidsId} is null`));
    }
    await mergeActivityDefinitions(
      tx,
      rows.map((r) => r.statement),
    );
    await recordAttachments(tx, parts);
    await applyLessonCompletions(tx, lessons);
    return { ids, consistentThrough };
  });
}

/** A voiding statement may not void a voiding statement (one stored, or one of this request). */
async function checkVoids(tx: LrsContext, fresh: Incoming[]) {
  const targets = fresh.map((x) => voidsOf(x.statement)).filter((v): v is string => v !== null);
  if (targets.length === 0) return;
  const voidingHere = new Set(fresh.filter((x) => voidsOf(x.statement) !== null).map((x) => x.statement.id as string));
  const stored = await tx.db
    .select({ id: xapiStatements.id })
    .from(xapiStatements)
    .where(and(inTenant(tx, xapiStatements), inArray(xapiStatements.id, targets), sql`${xapiStatements.voidsId} is not null`));
  for (const t of targets) {
    if (voidingHere.has(t) || stored.some((r) => r.id === t)) throw new AppError('VALIDATION_ERROR', `Statement ${t} is a voiding statement and cannot be voided`);
  }
}

/** `stored` of this write: now, but never before the institution's latest (clocks of replicas differ a little). */
async function nextStored(tx: LrsContext): Promise<Date> {
  const now = tx.deps.clock.now();
  const [last] = await tx.db.select({ stored: xapiStatements.stored }).from(xapiStatements).where(inTenant(tx, xapiStatements)).orderBy(desc(xapiStatements.seq)).limit(1);
  return last && last.stored.getTime() > now.getTime() ? last.stored : now;
}

/** The canonical definitions of the activities these statements define, merged in (xapi.format.ts). */
async function mergeActivityDefinitions(tx: LrsContext, statements: JsonObject[]) {
  const defined = new Map<string, JsonObject>();
  for (const s of statements) {
    for (const a of activitiesOf(s)) {
      if (typeof a.id === 'string' && isObject(a.definition)) defined.set(a.id, mergeDefinitions(defined.get(a.id), a.definition));
    }
  }
  if (defined.size === 0) return;
  const keys = [...defined.keys()].map(activityKey);
  const current = await tx.db
    .select({ activityId: xapiActivities.activityId, definition: xapiActivities.definition })
    .from(xapiActivities)
    .where(and(inTenant(tx, xapiActivities), inArray(xapiActivities.activityKey, keys)));
  const currentById = new Map(current.map((r) => [r.activityId, r.definition as JsonObject]));
  const now = tx.deps.clock.now();
  // Only definitions that change are written (content tools repeat the same definition in every statement).
  const changed = [...defined]
    .map(([activityId, def]) => ({ activityId, before: currentById.get(activityId), after: mergeDefinitions(currentById.get(activityId), def) }))
    .filter((d) => !d.before || !isDeepStrictEqual(d.before, d.after));
  if (changed.length === 0) return;
  await tx.db
    .insert(xapiActivities)
    .values(
      changed.map(({ activityId, after }) => ({
        id: newId(),
        institutionId: tx.institutionId,
        activityKey: activityKey(activityId),
        activityId,
        definition: after,
        updatedAt: now,
      })),
    )
    .onConflictDoUpdate({
      target: [xapiActivities.institutionId, xapiActivities.activityKey],
      set: { definition: sql`excluded.definition`, updatedAt: now },
    });
}

/** PUT /statements?statementId=…: one statement with that id (the body's id, if any, must be the same). */
export async function putStatement(ctx: LrsContext, statementId: string, body: Json, parts: AttachmentPart[]): Promise<StoreResult> {
  if (!isObject(body)) throw new AppError('VALIDATION_ERROR', 'PUT takes one statement (an object)');
  if (body.id !== undefined && (typeof body.id !== 'string' || body.id.toLowerCase() !== statementId)) {
    throw new AppError('VALIDATION_ERROR', 'The statement id differs from the statementId parameter');
  }
  return storeStatements(ctx, [{ ...body, id: statementId }], parts);
}
