import { createHash } from 'node:crypto';
import { and, asc, eq, gt, isNull, type SQL } from 'drizzle-orm';
import { AppError, notFound } from '../../platform/http/errors.js';
import { newId } from '../../platform/ids.js';
import { inTenant } from '../../platform/db/tenancy.js';
import { assertCleanInput, jsonDepthExceeds, MAX_JSON_DEPTH } from '../../platform/http/input-guard.js';
import { assertSelf, forbidden, lrsTx, type LrsContext } from './xapi.context.js';
import { activityKey, agentKey, digestKey, isObject, type Json } from './xapi.keys.js';
import { agentParameter, isIri, isTimestamp, isUuid } from './xapi.validation.js';
import { xapiDocuments, type XapiDocument, type XapiDocumentKind } from './xapi.tables.js';

/**
 * The document resources (xAPI 1.0.3 Communication 2.3–2.6): activities/state,
 * activities/profile and agents/profile. A document is stored as the bytes sent, with its
 * Content-Type, an ETag (SHA-1 of the bytes, quoted) and its last change. PUT replaces, POST
 * merges two JSON objects (top-level keys of the new one win), DELETE removes. Concurrency:
 * `If-Match` (an ETag, or `*`: it must exist) and `If-None-Match: *` (it must not) answer 412
 * when they do not hold; a PUT of a profile document that exists without either header is 409.
 * Without the id parameter, GET lists the ids (changed after `since`) and state DELETE removes
 * every state of the activity and agent (and registration, when given).
 */

export interface DocumentRequest {
  kind: XapiDocumentKind;
  params: Record<string, string>;
  headers: Record<string, string | undefined>;
}

interface Address {
  kind: XapiDocumentKind;
  activityKey: string | null;
  agentKey: string | null;
  registration: string | null;
  /** The stateId or profileId, or null for the multiple-document forms. */
  documentId: string | null;
}

const bad = (message: string) => new AppError('VALIDATION_ERROR', message);
const ID_PARAM: Record<XapiDocumentKind, string> = { state: 'stateId', activity_profile: 'profileId', agent_profile: 'profileId' };
const PARAMS: Record<XapiDocumentKind, string[]> = {
  state: ['activityId', 'agent', 'registration', 'stateId', 'since'],
  activity_profile: ['activityId', 'profileId', 'since'],
  agent_profile: ['agent', 'profileId', 'since'],
};

function addressOf(ctx: LrsContext, req: DocumentRequest, method: string): Address {
  const p = req.params;
  for (const k of Object.keys(p)) if (!PARAMS[req.kind].includes(k)) throw bad(`Unknown parameter ${k}`);
  const idParam = ID_PARAM[req.kind];
  const documentId = p[idParam] ?? null;
  if (documentId !== null && documentId.length === 0) throw bad(`${idParam} must not be empty`);
  if (p.since !== undefined) {
    if (method !== 'GET' || documentId !== null) throw bad(`since is only for listing ids (GET without ${idParam})`);
    if (!isTimestamp(p.since)) throw bad('since must be an ISO 8601 timestamp with a time zone');
  }
  const needsActivity = req.kind !== 'agent_profile';
  const needsAgent = req.kind !== 'activity_profile';
  if (needsActivity && (p.activityId === undefined || !isIri(p.activityId))) throw bad('activityId is required and must be an IRI');
  let agent = null;
  if (needsAgent) {
    if (p.agent === undefined) throw bad('agent is required');
    agent = agentParameter(p.agent, 'agent');
    assertSelf(ctx, agent, 'use the documents of');
  }
  if (p.registration !== undefined && !isUuid(p.registration)) throw bad('registration must be a UUID');
  if (documentId === null && method !== 'GET' && !(req.kind === 'state' && method === 'DELETE')) throw bad(`${idParam} is required`);
  return {
    kind: req.kind,
    activityKey: needsActivity ? activityKey(p.activityId!) : null,
    agentKey: agent ? agentKey(agent) : null,
    registration: p.registration?.toLowerCase() ?? null,
    documentId,
  };
}

const scopeKeyOf = (a: Address) => digestKey(JSON.stringify(['document', a.kind, a.activityKey, a.agentKey, a.registration, a.documentId]));

/** The rows of the address's activity and agent (and registration, when given). */
function collection(ctx: LrsContext, a: Address): SQL {
  const parts: SQL[] = [inTenant(ctx, xapiDocuments), eq(xapiDocuments.kind, a.kind)];
  parts.push(a.activityKey ? eq(xapiDocuments.activityKey, a.activityKey) : isNull(xapiDocuments.activityKey));
  parts.push(a.agentKey ? eq(xapiDocuments.agentKey, a.agentKey) : isNull(xapiDocuments.agentKey));
  if (a.registration) parts.push(eq(xapiDocuments.registration, a.registration));
  return and(...parts)!;
}

async function findDocument(ctx: LrsContext, a: Address, lock = false): Promise<XapiDocument | null> {
  const q = ctx.db
    .select()
    .from(xapiDocuments)
    .where(and(inTenant(ctx, xapiDocuments), eq(xapiDocuments.scopeKey, scopeKeyOf(a))))
    .limit(1);
  const [row] = lock ? await q.for('update') : await q;
  return row ?? null;
}

const etagOf = (content: Buffer) => createHash('sha1').update(content).digest('hex');
export const quotedEtag = (etag: string) => `"${etag}"`;

/** The ETags of an If-Match / If-None-Match header (`*` stays `*`; weak marks are ignored). */
const etagsOf = (header: string) =>
  header
    .split(',')
    .map((t) =>
      t
        .trim()
        .replace(/^W\//, '')
        .replace(/^"(.*)"$/, '$1'),
    )
    .filter(Boolean);

function checkPreconditions(req: DocumentRequest, current: XapiDocument | null, method: string) {
  const ifMatch = req.headers['if-match'];
  const ifNoneMatch = req.headers['if-none-match'];
  if (ifMatch !== undefined) {
    const tags = etagsOf(ifMatch);
    const ok = current !== null && (tags.includes('*') || tags.includes(current.etag));
    if (!ok) throw new AppError('PRECONDITION_FAILED', current ? 'If-Match does not match the document’s ETag' : 'If-Match: the document does not exist');
  }
  if (ifNoneMatch !== undefined) {
    const tags = etagsOf(ifNoneMatch);
    if (current !== null && (tags.includes('*') || tags.includes(current.etag))) throw new AppError('PRECONDITION_FAILED', 'If-None-Match: the document exists');
  }
  if (method === 'PUT' && req.kind !== 'state' && current !== null && ifMatch === undefined && ifNoneMatch === undefined) {
    throw new AppError('CONFLICT', 'The document exists: send If-Match with its ETag (or If-None-Match: *) to change it');
  }
}

export interface DocumentResult {
  status: number;
  body?: Buffer | string;
  contentType?: string;
  etag?: string;
  lastModified?: Date;
}

/** GET: one document, or the ids of the collection. */
export async function getDocument(ctx: LrsContext, req: DocumentRequest): Promise<DocumentResult> {
  const a = addressOf(ctx, req, 'GET');
  if (a.documentId !== null) {
    const doc = await findDocument(ctx, a);
    if (!doc) throw notFound('Document');
    return { status: 200, body: doc.content, contentType: doc.contentType, etag: quotedEtag(doc.etag), lastModified: doc.updatedAt };
  }
  const since = req.params.since;
  const rows = await ctx.db
    .select({ documentId: xapiDocuments.documentId, updatedAt: xapiDocuments.updatedAt })
    .from(xapiDocuments)
    .where(and(collection(ctx, a), ...(since ? [gt(xapiDocuments.updatedAt, new Date(since))] : [])))
    .orderBy(asc(xapiDocuments.documentId));
  const ids = [...new Set(rows.map((r) => r.documentId))];
  const last = rows.reduce<Date | undefined>((m, r) => (!m || r.updatedAt > m ? r.updatedAt : m), undefined);
  return { status: 200, body: JSON.stringify(ids), contentType: 'application/json', lastModified: last };
}

const isJsonType = (t: string | undefined) => /^application\/json\b/i.test(t ?? '');

function jsonObjectOf(content: Buffer, what: string): Record<string, Json> {
  let parsed: Json;
  try {
    parsed = JSON.parse(content.toString('utf8')) as Json;
  } catch {
    throw bad(`${what} is not valid JSON`);
  }
  if (!isObject(parsed)) throw bad(`${what} is not a JSON object, so they cannot be merged`);
  return parsed;
}

/** PUT (replace) or POST (merge JSON objects; store when absent). */
export async function writeDocument(ctx: LrsContext, req: DocumentRequest, method: 'PUT' | 'POST', body: Buffer): Promise<DocumentResult> {
  if (ctx.principal.self && req.kind === 'activity_profile') throw forbidden('A session may not change activity profiles');
  const a = addressOf(ctx, req, method);
  const contentType = req.headers['content-type']?.trim() || 'application/octet-stream';
  if (isJsonType(contentType)) {
    if (jsonDepthExceeds(body.toString('utf8'))) throw bad(`The document nests deeper than ${MAX_JSON_DEPTH} levels`);
    try {
      assertCleanInput(JSON.parse(body.toString('utf8')), 'body');
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw bad('The document is sent as application/json but is not valid JSON');
    }
  }
  return lrsTx(ctx, async (tx) => {
    const current = await findDocument(tx, a, true);
    checkPreconditions(req, current, method);
    let content = body;
    let type = contentType;
    if (method === 'POST' && current) {
      if (!isJsonType(current.contentType) || !isJsonType(contentType))
        throw bad('POST merges JSON documents: both the stored and the sent document must be application/json objects');
      const merged = { ...jsonObjectOf(current.content, 'The stored document'), ...jsonObjectOf(body, 'The sent document') };
      content = Buffer.from(JSON.stringify(merged));
      type = 'application/json';
    }
    const now = tx.deps.clock.now();
    const etag = etagOf(content);
    await tx.db
      .insert(xapiDocuments)
      .values({
        id: newId(),
        institutionId: tx.institutionId,
        kind: a.kind,
        scopeKey: scopeKeyOf(a),
        activityKey: a.activityKey,
        agentKey: a.agentKey,
        registration: a.registration,
        documentId: a.documentId!,
        contentType: type,
        content,
        etag,
        updatedAt: now,
      })
      .onConflictDoUpdate({ target: [xapiDocuments.institutionId, xapiDocuments.scopeKey], set: { contentType: type, content, etag, updatedAt: now } });
    return { status: 204, etag: quotedEtag(etag) };
  });
}

/** DELETE: one document (If-Match honoured), or every state of the activity and agent. */
export async function deleteDocument(ctx: LrsContext, req: DocumentRequest): Promise<DocumentResult> {
  if (ctx.principal.self && req.kind === 'activity_profile') throw forbidden('A session may not change activity profiles');
  const a = addressOf(ctx, req, 'DELETE');
  return lrsTx(ctx, async (tx) => {
    if (a.documentId === null) {
      await tx.db.delete(xapiDocuments).where(collection(tx, a));
      return { status: 204 };
    }
    const current = await findDocument(tx, a, true);
    checkPreconditions(req, current, 'DELETE');
    if (current) await tx.db.delete(xapiDocuments).where(and(inTenant(tx, xapiDocuments), eq(xapiDocuments.id, current.id)));
    return { status: 204 };
  });
}
