import { and, eq, inArray, sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { Deps } from '../../platform/context.js';
import { AppError, notFound } from '../../platform/http/errors.js';
import { rawRows } from '../../platform/db/client.js';
import { inTenant } from '../../platform/db/tenancy.js';
import { lrsTx, forbidden, type LrsContext } from './xapi.context.js';
import { activityKey, agentKey, isObject, verbKey, type JsonObject } from './xapi.keys.js';
import { agentParameter, isIri, isTimestamp, isUuid } from './xapi.validation.js';
import { activitiesOf, formatStatement, type StatementFormat } from './xapi.format.js';
import { loadAttachments, type AttachmentPart } from './xapi.attachments.js';
import { consistentThroughAt, writeLockSql } from './xapi.statements.js';
import { xapiActivities, xapiStatements } from './xapi.tables.js';

/**
 * Reading statements: one by id (statementId, voidedStatementId) or a filtered, paged query.
 *
 * Order and paging: statements come in `seq` order (newest first, or oldest first with
 * `ascending`), which per institution is commit order (writes take the institution's lock). A
 * page's `more` is an opaque token holding the query and the last `seq` sent, so the next page
 * continues strictly after it: statements stored meanwhile neither repeat nor shift a page.
 *
 * Consistency: a read takes the same lock shared, so no write of the institution is in flight
 * while it reads; `X-Experience-API-Consistent-Through` is the time it took the lock (less 1 ms):
 * every statement stored at or before it is in the answer's view.
 *
 * StatementRef filter rule (xAPI 1.0.3 Communication 2.1.3): with any of agent, verb, activity
 * or registration, a statement whose object refers (directly or through a chain of references)
 * to a statement that matches those filters is returned too, within since, until and limit.
 */

export const MAX_LIMIT = 100;

const QUERY_PARAMS = ['agent', 'verb', 'activity', 'registration', 'related_activities', 'related_agents', 'since', 'until', 'limit', 'format', 'attachments', 'ascending'];
const SINGLE_PARAMS = ['statementId', 'voidedStatementId', 'format', 'attachments'];

export interface StatementQuery {
  agent: string | null;
  relatedAgents: boolean;
  verb: string | null;
  activity: string | null;
  relatedActivities: boolean;
  registration: string | null;
  since: string | null;
  until: string | null;
  limit: number;
  format: StatementFormat;
  attachments: boolean;
  ascending: boolean;
  /** The last seq of the previous page (from `more`). */
  after: number | null;
}

const tokenSchema = z.object({
  q: z.object({
    agent: z.string().nullable(),
    relatedAgents: z.boolean(),
    verb: z.string().nullable(),
    activity: z.string().nullable(),
    relatedActivities: z.boolean(),
    registration: z.string().nullable(),
    since: z.string().nullable(),
    until: z.string().nullable(),
    limit: z.number().int().min(1).max(MAX_LIMIT),
    format: z.enum(['exact', 'ids', 'canonical']),
    attachments: z.boolean(),
    ascending: z.boolean(),
  }),
  after: z.number().int(),
});

const bad = (message: string) => new AppError('VALIDATION_ERROR', message);

function boolParam(v: string | undefined, name: string): boolean {
  if (v === undefined) return false;
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw bad(`${name} must be true or false`);
}

function formatParam(v: string | undefined): StatementFormat {
  if (v === undefined) return 'exact';
  if (v === 'exact' || v === 'ids' || v === 'canonical') return v;
  throw bad('format must be ids, exact or canonical');
}

const encodeToken = (q: StatementQuery, after: number) => {
  const { after: _after, ...rest } = q;
  return Buffer.from(JSON.stringify({ q: rest, after })).toString('base64url');
};

function decodeToken(token: string): StatementQuery {
  try {
    const parsed = tokenSchema.parse(JSON.parse(Buffer.from(token, 'base64url').toString('utf8')));
    return { ...parsed.q, after: parsed.after };
  } catch {
    throw bad('more is not a continuation token of this LRS');
  }
}

/** The query of GET /statements from its parameters (unknown or misplaced parameters are 400). */
export function parseQuery(params: Record<string, string>): StatementQuery {
  if (params.more !== undefined) return decodeToken(params.more);
  for (const k of Object.keys(params)) if (!QUERY_PARAMS.includes(k)) throw bad(`Unknown parameter ${k}`);
  if (params.agent !== undefined) agentParameter(params.agent, 'agent');
  if (params.verb !== undefined && !isIri(params.verb)) throw bad('verb must be an IRI');
  if (params.activity !== undefined && !isIri(params.activity)) throw bad('activity must be an IRI');
  if (params.registration !== undefined && !isUuid(params.registration)) throw bad('registration must be a UUID');
  for (const k of ['since', 'until'] as const) if (params[k] !== undefined && !isTimestamp(params[k])) throw bad(`${k} must be an ISO 8601 timestamp with a time zone`);
  let limit = MAX_LIMIT;
  if (params.limit !== undefined) {
    if (!/^\d{1,9}$/.test(params.limit)) throw bad('limit must be a non-negative integer');
    const n = Number(params.limit);
    limit = n === 0 ? MAX_LIMIT : Math.min(n, MAX_LIMIT);
  }
  return {
    agent: params.agent ?? null,
    relatedAgents: boolParam(params.related_agents, 'related_agents'),
    verb: params.verb ?? null,
    activity: params.activity ?? null,
    relatedActivities: boolParam(params.related_activities, 'related_activities'),
    registration: params.registration?.toLowerCase() ?? null,
    since: params.since ?? null,
    until: params.until ?? null,
    limit,
    format: formatParam(params.format),
    attachments: boolParam(params.attachments, 'attachments'),
    ascending: boolParam(params.ascending, 'ascending'),
    after: null,
  };
}

/** The result of a read: the JSON, the attachments when asked for, and the headers' values. */
export interface ReadResult {
  json: string;
  attachments: AttachmentPart[] | null;
  consistentThrough: string;
  lastModified: Date | null;
}

/** Within a read transaction holding the institution's lock shared: the consistency time. */
async function consistentRead<T>(ctx: LrsContext, fn: (tx: LrsContext, consistentThrough: string) => Promise<T>): Promise<T> {
  return lrsTx(ctx, async (tx) => {
    await tx.db.execute(sql`select pg_advisory_xact_lock_shared(${writeLockSql(tx.institutionId)})`);
    return fn(tx, consistentThroughAt(tx.deps.clock));
  });
}

/**
 * The consistency time of an answer that read no statements (an error of the statements
 * resource): taken under the institution's lock shared, as a read does. Without an institution
 * (an unauthenticated request sees no statement; a rate-limited or failed one is not worth a
 * database round trip), or when the database does not answer, it is simply now less 1 ms.
 */
export async function consistentThroughNow(deps: Deps, institutionId: string | null): Promise<string> {
  if (institutionId === null) return consistentThroughAt(deps.clock);
  try {
    return await deps.database.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock_shared(${writeLockSql(institutionId)})`);
      return consistentThroughAt(deps.clock);
    });
  } catch {
    return consistentThroughAt(deps.clock);
  }
}

/** A learner session sees only statements they are the actor of. */
function selfPredicate(ctx: LrsContext, s: string): SQL {
  const self = ctx.principal.self;
  if (!self) return sql`true`;
  return sql`exists (select 1 from xapi_statement_agents ag where ag.institution_id = ${sql.raw(s)}.institution_id and ag.statement_seq = ${sql.raw(s)}.seq and ag.agent_key = ${self.key} and ag.as_actor)`;
}

/** The filters the StatementRef rule carries over (agent, verb, activity, registration) on statement alias `s`, or null when none is set. */
function matchPredicate(q: StatementQuery, s: string): SQL | null {
  const parts: SQL[] = [];
  const t = sql.raw(s);
  if (q.verb) parts.push(sql`${t}.verb_key = ${verbKey(q.verb)}`);
  if (q.registration) parts.push(sql`${t}.registration = ${q.registration}`);
  if (q.agent) {
    const key = agentKey(agentParameter(q.agent, 'agent'))!;
    parts.push(
      sql`exists (select 1 from xapi_statement_agents ma where ma.institution_id = ${t}.institution_id and ma.statement_seq = ${t}.seq and ma.agent_key = ${key}${q.relatedAgents ? sql`` : sql` and ma.direct`})`,
    );
  }
  if (q.activity) {
    parts.push(
      sql`exists (select 1 from xapi_statement_activities mx where mx.institution_id = ${t}.institution_id and mx.statement_seq = ${t}.seq and mx.activity_key = ${activityKey(q.activity)}${q.relatedActivities ? sql`` : sql` and mx.direct`})`,
    );
  }
  return parts.length === 0 ? null : sql.join(parts, sql` and `);
}

/** The window every returned statement is in: tenant, not voided, since/until, after the cursor, visible to the caller. */
function windowPredicate(ctx: LrsContext, q: StatementQuery, s: string): SQL {
  const t = sql.raw(s);
  const parts: SQL[] = [sql`${t}.institution_id = ${ctx.institutionId}`, sql`not ${t}.voided`, selfPredicate(ctx, s)];
  if (q.since) parts.push(sql`${t}.stored > ${new Date(q.since).toISOString()}::timestamptz`);
  if (q.until) parts.push(sql`${t}.stored <= ${new Date(q.until).toISOString()}::timestamptz`);
  if (q.after !== null) parts.push(q.ascending ? sql`${t}.seq > ${q.after}` : sql`${t}.seq < ${q.after}`);
  return sql.join(parts, sql` and `);
}

async function findStatements(ctx: LrsContext, q: StatementQuery): Promise<Array<{ seq: number; statement: JsonObject }>> {
  const dir = sql.raw(q.ascending ? 'asc' : 'desc');
  const take = q.limit + 1;
  const match = matchPredicate(q, 's');
  const direct = sql`select s.seq from xapi_statements s where ${windowPredicate(ctx, q, 's')}${match ? sql` and ${match}` : sql``} order by s.seq ${dir} limit ${take}`;
  let seqs: SQL = direct;
  if (match) {
    // Statements referring (through any chain of StatementRefs) to one that matches.
    const targetMatch = matchPredicate(q, 't')!;
    const viaRef = sql`select s.seq from xapi_statements s where ${windowPredicate(ctx, q, 's')} and s.ref_target is not null and exists (
        with recursive chain(id, depth) as (
          select s.ref_target, 1
          union all
          select c2.ref_target, chain.depth + 1 from xapi_statements c2 join chain on c2.institution_id = ${ctx.institutionId} and c2.id = chain.id
          where c2.ref_target is not null and chain.depth < 16
        )
        select 1 from chain join xapi_statements t on t.institution_id = ${ctx.institutionId} and t.id = chain.id where ${targetMatch}
      ) order by s.seq ${dir} limit ${take}`;
    seqs = sql`(${direct}) union (${viaRef})`;
  }
  const rows = await rawRows<{ seq: string | number; statement: JsonObject | string }>(
    ctx.db,
    sql`select x.seq, x.statement from xapi_statements x where x.institution_id = ${ctx.institutionId} and x.seq in (${seqs}) order by x.seq ${dir} limit ${take}`,
  );
  return rows.map((r) => ({ seq: Number(r.seq), statement: typeof r.statement === 'string' ? (JSON.parse(r.statement) as JsonObject) : r.statement }));
}

/** Canonical definitions of the activities in these statements (format=canonical). */
async function definitionsFor(ctx: LrsContext, statements: JsonObject[]): Promise<Map<string, JsonObject>> {
  const ids = [...new Set(statements.flatMap((s) => activitiesOf(s).map((a) => a.id as string)))];
  if (ids.length === 0) return new Map();
  const rows = await ctx.db
    .select({ activityId: xapiActivities.activityId, definition: xapiActivities.definition })
    .from(xapiActivities)
    .where(and(inTenant(ctx, xapiActivities), inArray(xapiActivities.activityKey, ids.map(activityKey))));
  return new Map(rows.map((r) => [r.activityId, r.definition as JsonObject]));
}

const attachmentHashes = (statements: JsonObject[]) =>
  statements.flatMap((s) => {
    const own = Array.isArray(s.attachments) ? s.attachments : [];
    const sub = isObject(s.object) && s.object.objectType === 'SubStatement' && Array.isArray(s.object.attachments) ? s.object.attachments : [];
    return [...own, ...sub].filter((a): a is JsonObject => isObject(a) && a.fileUrl === undefined).map((a) => a.sha2 as string);
  });

async function render(ctx: LrsContext, statements: JsonObject[], format: StatementFormat, withAttachments: boolean, languages: string[]) {
  const defs = format === 'canonical' ? await definitionsFor(ctx, statements) : new Map<string, JsonObject>();
  const out = statements.map((s) => formatStatement(s, format, defs, languages));
  const attachments = withAttachments ? await loadAttachments(ctx, attachmentHashes(statements)) : null;
  return { out, attachments };
}

/** GET /statements with statementId or voidedStatementId. */
export async function getOneStatement(ctx: LrsContext, params: Record<string, string>, languages: string[]): Promise<ReadResult> {
  for (const k of Object.keys(params)) if (!SINGLE_PARAMS.includes(k)) throw bad(`${k} cannot be used with statementId or voidedStatementId`);
  if (params.statementId !== undefined && params.voidedStatementId !== undefined) throw bad('Give statementId or voidedStatementId, not both');
  const wantVoided = params.voidedStatementId !== undefined;
  const id = params.statementId ?? params.voidedStatementId!;
  if (!isUuid(id)) throw bad(`${wantVoided ? 'voidedStatementId' : 'statementId'} must be a UUID`);
  const format = formatParam(params.format);
  const withAttachments = boolParam(params.attachments, 'attachments');
  return consistentRead(ctx, async (tx, consistentThrough) => {
    const [row] = await tx.db
      .select()
      .from(xapiStatements)
      .where(and(inTenant(tx, xapiStatements), eq(xapiStatements.id, id.toLowerCase())))
      .limit(1);
    if (!row || row.voided !== wantVoided) throw notFound('Statement');
    const self = tx.principal.self;
    if (self && agentKey(row.statement.actor as JsonObject) !== self.key) throw notFound('Statement');
    const { out, attachments } = await render(tx, [row.statement as JsonObject], format, withAttachments, languages);
    return { json: JSON.stringify(out[0]), attachments, consistentThrough, lastModified: row.stored };
  });
}

/** GET /statements: a page of the query, with `more` when there is a next one. */
export async function queryStatements(ctx: LrsContext, params: Record<string, string>, languages: string[]): Promise<ReadResult> {
  const q = parseQuery(params);
  if (ctx.principal.self && q.agent) {
    // A session reads its own statements; asking for another agent's is refused outright.
    const key = agentKey(agentParameter(q.agent, 'agent'));
    if (key !== ctx.principal.self.key) throw forbidden('A session may only read its own statements');
  }
  return consistentRead(ctx, async (tx, consistentThrough) => {
    const found = await findStatements(tx, q);
    const page = found.slice(0, q.limit);
    const more = found.length > q.limit ? `/api/xapi/statements?more=${encodeToken(q, page[page.length - 1]!.seq)}` : '';
    const { out, attachments } = await render(
      tx,
      page.map((r) => r.statement),
      q.format,
      q.attachments,
      languages,
    );
    return { json: JSON.stringify({ statements: out, more }), attachments, consistentThrough, lastModified: null };
  });
}
