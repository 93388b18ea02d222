import { DateTime, Duration } from 'luxon';
import { parse as parseLanguageTag } from 'bcp-47';
import { AppError } from '../../platform/http/errors.js';
import { isValidContentType } from '../../platform/storage/keys.js';
import { isObject, VOIDED_VERB, type Json, type JsonObject } from './xapi.keys.js';

/**
 * The statement format of xAPI 1.0.3 (Data part 2.4), checked rule by rule. Every refusal is a
 * 400 naming the property (`statement.context.team: must be a Group`). Validation also
 * normalises what the LRS must return in one form: single context activities become arrays of
 * one, UUIDs are lower-cased.
 */

export const invalid = (path: string, message: string) => new AppError('VALIDATION_ERROR', `${path}: ${message}`);

/** The longest IRI accepted (index keys are digests, but a whole statement still has to fit a request). */
const MAX_IRI_LENGTH = 4096;
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s]+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const MBOX = /^mailto:[^@\s:/]+@[^@\s/]+\.[^@\s/]+$/i;
const SHA1 = /^[0-9a-f]{40}$/i;
/** SHA-224, -256, -384 or -512 as hex. */
const SHA2 = /^(?:[0-9a-f]{56}|[0-9a-f]{64}|[0-9a-f]{96}|[0-9a-f]{128})$/i;
/** ISO 8601 date and time with a time zone (Z or an offset). */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)$/;
const VERSION = /^1\.0(?:\.\d+)?$/;

export const INTERACTION_TYPES = ['true-false', 'choice', 'fill-in', 'long-fill-in', 'matching', 'performance', 'sequencing', 'likert', 'numeric', 'other'] as const;
/** Which interaction component lists each interaction type may carry. */
const COMPONENTS_OF: Record<string, string[]> = { choice: ['choices'], sequencing: ['choices'], likert: ['scale'], matching: ['source', 'target'], performance: ['steps'] };
const COMPONENT_LISTS = ['choices', 'scale', 'source', 'target', 'steps'];

// ── scalar rules ──────────────────────────────────────────────────────────────

export function isIri(v: unknown): v is string {
  if (typeof v !== 'string' || v.length > MAX_IRI_LENGTH || !SCHEME.test(v)) return false;
  return URL.canParse(v);
}

export const isUuid = (v: unknown): v is string => typeof v === 'string' && UUID.test(v);

export function isLanguageTag(v: unknown): v is string {
  if (typeof v !== 'string' || v.length === 0 || v.length > 100) return false;
  let warned = false;
  const tag = parseLanguageTag(v, {
    warning: () => {
      warned = true;
    },
  });
  return !warned && Boolean(tag.language || tag.privateuse.length > 0 || tag.irregular || tag.regular);
}

/** An ISO 8601 timestamp with a time zone; `-00:00` (an unknown offset in RFC 3339) is refused. */
export function isTimestamp(v: unknown): v is string {
  if (typeof v !== 'string' || !TIMESTAMP.test(v) || /-00(?::?00)?$/.test(v)) return false;
  return DateTime.fromISO(v, { setZone: true }).isValid;
}

export function isDuration(v: unknown): v is string {
  if (typeof v !== 'string' || !/^P(?!$)(?:\d|T\d)/.test(v) || v.endsWith('T')) return false;
  return Duration.fromISO(v).isValid;
}

function iri(v: Json | undefined, path: string): string {
  if (!isIri(v)) throw invalid(path, 'must be an absolute IRI');
  return v;
}

function uuid(v: Json | undefined, path: string): string {
  if (!isUuid(v)) throw invalid(path, 'must be a UUID');
  return v.toLowerCase();
}

function str(v: Json | undefined, path: string): string {
  if (typeof v !== 'string') throw invalid(path, 'must be a string');
  return v;
}

function bool(v: Json | undefined, path: string): boolean {
  if (typeof v !== 'boolean') throw invalid(path, 'must be true or false');
  return v;
}

function num(v: Json | undefined, path: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(path, 'must be a number');
  return v;
}

function object(v: Json | undefined, path: string, allowed: readonly string[]): JsonObject {
  if (!isObject(v)) throw invalid(path, 'must be an object');
  for (const [key, value] of Object.entries(v)) {
    if (!allowed.includes(key)) throw invalid(`${path}.${key}`, 'is not a property of this object');
    if (value === null) throw invalid(`${path}.${key}`, 'must not be null');
  }
  return v;
}

export function languageMap(v: Json | undefined, path: string): JsonObject {
  if (!isObject(v)) throw invalid(path, 'must be a language map');
  for (const [tag, text] of Object.entries(v)) {
    if (!isLanguageTag(tag)) throw invalid(`${path}.${tag}`, 'is not an RFC 5646 language tag');
    if (typeof text !== 'string') throw invalid(`${path}.${tag}`, 'must be a string');
  }
  return v;
}

export function extensions(v: Json | undefined, path: string): JsonObject {
  if (!isObject(v)) throw invalid(path, 'must be an object');
  for (const key of Object.keys(v)) if (!isIri(key)) throw invalid(`${path}.${key}`, 'extension keys must be absolute IRIs');
  return v;
}

/** Copies `src` into a new object, replacing the properties given. */
const withProps = (src: JsonObject, changes: JsonObject): JsonObject => ({ ...src, ...changes });

// ── agents and groups ─────────────────────────────────────────────────────────

const AGENT_PROPS = ['objectType', 'name', 'mbox', 'mbox_sha1sum', 'openid', 'account'];
const GROUP_PROPS = [...AGENT_PROPS, 'member'];

function ifiCount(v: JsonObject, path: string): number {
  let n = 0;
  if (v.mbox !== undefined) {
    if (typeof v.mbox !== 'string' || !MBOX.test(v.mbox)) throw invalid(`${path}.mbox`, 'must be a mailto: IRI of an e-mail address');
    n++;
  }
  if (v.mbox_sha1sum !== undefined) {
    if (typeof v.mbox_sha1sum !== 'string' || !SHA1.test(v.mbox_sha1sum)) throw invalid(`${path}.mbox_sha1sum`, 'must be the hex SHA-1 of a mailto: IRI');
    n++;
  }
  if (v.openid !== undefined) {
    iri(v.openid, `${path}.openid`);
    n++;
  }
  if (v.account !== undefined) {
    const a = object(v.account, `${path}.account`, ['homePage', 'name']);
    iri(a.homePage, `${path}.account.homePage`);
    if (typeof a.name !== 'string' || a.name.length === 0) throw invalid(`${path}.account.name`, 'must be a non-empty string');
    n++;
  }
  return n;
}

export function agent(v: Json | undefined, path: string): JsonObject {
  const a = object(v, path, AGENT_PROPS);
  if (a.objectType !== undefined && a.objectType !== 'Agent') throw invalid(`${path}.objectType`, 'must be "Agent"');
  if (a.name !== undefined) str(a.name, `${path}.name`);
  if (ifiCount(a, path) !== 1) throw invalid(path, 'an Agent must have exactly one of mbox, mbox_sha1sum, openid, account');
  return a;
}

export function group(v: Json | undefined, path: string): JsonObject {
  const g = object(v, path, GROUP_PROPS);
  if (g.objectType !== 'Group') throw invalid(`${path}.objectType`, 'must be "Group"');
  if (g.name !== undefined) str(g.name, `${path}.name`);
  const ifis = ifiCount(g, path);
  if (ifis > 1) throw invalid(path, 'a Group may have at most one of mbox, mbox_sha1sum, openid, account');
  if (g.member !== undefined) {
    if (!Array.isArray(g.member)) throw invalid(`${path}.member`, 'must be an array of Agents');
    g.member.forEach((m, i) => agent(m, `${path}.member.${i}`));
  } else if (ifis === 0) {
    throw invalid(`${path}.member`, 'an anonymous Group must list its members');
  }
  return g;
}

/** An actor, instructor or object that is an Agent (objectType optional) or a Group. */
export function agentOrGroup(v: Json | undefined, path: string): JsonObject {
  if (isObject(v) && v.objectType === 'Group') return group(v, path);
  return agent(v, path);
}

/** An Agent or identified Group as a query or document parameter (`agent=`). */
export function agentParameter(text: string, path: string): JsonObject {
  let parsed: Json;
  try {
    parsed = JSON.parse(text) as Json;
  } catch {
    throw invalid(path, 'must be an Agent or identified Group as JSON');
  }
  const a = agentOrGroup(parsed, path);
  if (a.objectType === 'Group' && ifiCount(a, path) === 0) throw invalid(path, 'an anonymous Group cannot be used here');
  return a;
}

// ── verbs, activities, objects ────────────────────────────────────────────────

function verb(v: Json | undefined, path: string): JsonObject {
  const vb = object(v, path, ['id', 'display']);
  iri(vb.id, `${path}.id`);
  if (vb.display !== undefined) languageMap(vb.display, `${path}.display`);
  return vb;
}

function components(v: Json | undefined, path: string) {
  if (!Array.isArray(v)) throw invalid(path, 'must be an array of interaction components');
  const ids = new Set<string>();
  v.forEach((c, i) => {
    const comp = object(c, `${path}.${i}`, ['id', 'description']);
    const id = str(comp.id, `${path}.${i}.id`);
    if (id.length === 0) throw invalid(`${path}.${i}.id`, 'must not be empty');
    if (ids.has(id)) throw invalid(`${path}.${i}.id`, 'interaction component ids must be distinct');
    ids.add(id);
    if (comp.description !== undefined) languageMap(comp.description, `${path}.${i}.description`);
  });
}

function activityDefinition(v: Json | undefined, path: string): JsonObject {
  const d = object(v, path, ['name', 'description', 'type', 'moreInfo', 'extensions', 'interactionType', 'correctResponsesPattern', ...COMPONENT_LISTS]);
  if (d.name !== undefined) languageMap(d.name, `${path}.name`);
  if (d.description !== undefined) languageMap(d.description, `${path}.description`);
  if (d.type !== undefined) iri(d.type, `${path}.type`);
  if (d.moreInfo !== undefined) iri(d.moreInfo, `${path}.moreInfo`);
  if (d.extensions !== undefined) extensions(d.extensions, `${path}.extensions`);
  const lists = COMPONENT_LISTS.filter((k) => d[k] !== undefined);
  if (d.interactionType === undefined) {
    if (d.correctResponsesPattern !== undefined || lists.length > 0) throw invalid(`${path}.interactionType`, 'is required with correctResponsesPattern or interaction components');
    return d;
  }
  if (!INTERACTION_TYPES.includes(d.interactionType as never)) throw invalid(`${path}.interactionType`, `must be one of ${INTERACTION_TYPES.join(', ')}`);
  if (d.correctResponsesPattern !== undefined) {
    if (!Array.isArray(d.correctResponsesPattern) || d.correctResponsesPattern.some((p) => typeof p !== 'string')) {
      throw invalid(`${path}.correctResponsesPattern`, 'must be an array of strings');
    }
  }
  const allowed = COMPONENTS_OF[d.interactionType as string] ?? [];
  for (const list of lists) {
    if (!allowed.includes(list)) throw invalid(`${path}.${list}`, `is not a component list of a ${d.interactionType as string} interaction`);
    components(d[list], `${path}.${list}`);
  }
  return d;
}

export function activity(v: Json | undefined, path: string): JsonObject {
  const a = object(v, path, ['objectType', 'id', 'definition']);
  if (a.objectType !== undefined && a.objectType !== 'Activity') throw invalid(`${path}.objectType`, 'must be "Activity"');
  iri(a.id, `${path}.id`);
  if (a.definition !== undefined) activityDefinition(a.definition, `${path}.definition`);
  return a;
}

function statementRef(v: Json | undefined, path: string): JsonObject {
  const r = object(v, path, ['objectType', 'id']);
  if (r.objectType !== 'StatementRef') throw invalid(`${path}.objectType`, 'must be "StatementRef"');
  return withProps(r, { id: uuid(r.id, `${path}.id`) });
}

/** The kind of a statement's object, as the context rules need it. */
export type ObjectKind = 'Activity' | 'Agent' | 'Group' | 'StatementRef' | 'SubStatement';

function statementObject(v: Json | undefined, path: string, inSubStatement: boolean): { value: JsonObject; kind: ObjectKind } {
  if (!isObject(v)) throw invalid(path, 'must be an object');
  const type = v.objectType ?? 'Activity';
  switch (type) {
    case 'Activity':
      return { value: activity(v, path), kind: 'Activity' };
    case 'Agent':
      return { value: agent(v, path), kind: 'Agent' };
    case 'Group':
      return { value: group(v, path), kind: 'Group' };
    case 'StatementRef':
      return { value: statementRef(v, path), kind: 'StatementRef' };
    case 'SubStatement':
      if (inSubStatement) throw invalid(`${path}.objectType`, 'a SubStatement cannot contain a SubStatement');
      return { value: subStatement(v, path), kind: 'SubStatement' };
    default:
      throw invalid(`${path}.objectType`, 'must be Activity, Agent, Group, StatementRef or SubStatement');
  }
}

// ── result, context, attachments ──────────────────────────────────────────────

function result(v: Json | undefined, path: string): JsonObject {
  const r = object(v, path, ['score', 'success', 'completion', 'response', 'duration', 'extensions']);
  if (r.score !== undefined) {
    const s = object(r.score, `${path}.score`, ['scaled', 'raw', 'min', 'max']);
    const scaled = s.scaled === undefined ? undefined : num(s.scaled, `${path}.score.scaled`);
    const raw = s.raw === undefined ? undefined : num(s.raw, `${path}.score.raw`);
    const min = s.min === undefined ? undefined : num(s.min, `${path}.score.min`);
    const max = s.max === undefined ? undefined : num(s.max, `${path}.score.max`);
    if (scaled !== undefined && (scaled < -1 || scaled > 1)) throw invalid(`${path}.score.scaled`, 'must be between -1 and 1');
    if (min !== undefined && max !== undefined && min >= max) throw invalid(`${path}.score.min`, 'must be less than max');
    if (raw !== undefined && min !== undefined && raw < min) throw invalid(`${path}.score.raw`, 'must not be less than min');
    if (raw !== undefined && max !== undefined && raw > max) throw invalid(`${path}.score.raw`, 'must not be more than max');
  }
  if (r.success !== undefined) bool(r.success, `${path}.success`);
  if (r.completion !== undefined) bool(r.completion, `${path}.completion`);
  if (r.response !== undefined) str(r.response, `${path}.response`);
  if (r.duration !== undefined && !isDuration(r.duration)) throw invalid(`${path}.duration`, 'must be an ISO 8601 duration');
  if (r.extensions !== undefined) extensions(r.extensions, `${path}.extensions`);
  return r;
}

const CONTEXT_ACTIVITY_KINDS = ['parent', 'grouping', 'category', 'other'];

function context(v: Json | undefined, path: string, objectKind: ObjectKind): JsonObject {
  const c = object(v, path, ['registration', 'instructor', 'team', 'contextActivities', 'revision', 'platform', 'language', 'statement', 'extensions']);
  const out: JsonObject = { ...c };
  if (c.registration !== undefined) out.registration = uuid(c.registration, `${path}.registration`);
  if (c.instructor !== undefined) agentOrGroup(c.instructor, `${path}.instructor`);
  if (c.team !== undefined) {
    if (!isObject(c.team) || c.team.objectType !== 'Group') throw invalid(`${path}.team`, 'must be a Group');
    group(c.team, `${path}.team`);
  }
  if (c.contextActivities !== undefined) {
    const ca = object(c.contextActivities, `${path}.contextActivities`, CONTEXT_ACTIVITY_KINDS);
    const normal: JsonObject = {};
    for (const [kind, list] of Object.entries(ca)) {
      const items = Array.isArray(list) ? list : [list];
      normal[kind] = items.map((a, i) => activity(a, `${path}.contextActivities.${kind}${Array.isArray(list) ? `.${i}` : ''}`));
    }
    out.contextActivities = normal;
  }
  for (const p of ['revision', 'platform'] as const) {
    if (c[p] === undefined) continue;
    str(c[p], `${path}.${p}`);
    if (objectKind !== 'Activity') throw invalid(`${path}.${p}`, 'may only be used when the object is an Activity');
  }
  if (c.language !== undefined && !isLanguageTag(c.language)) throw invalid(`${path}.language`, 'must be an RFC 5646 language tag');
  if (c.statement !== undefined) out.statement = statementRef(c.statement, `${path}.statement`);
  if (c.extensions !== undefined) extensions(c.extensions, `${path}.extensions`);
  return out;
}

function attachments(v: Json | undefined, path: string): Json[] {
  if (!Array.isArray(v)) throw invalid(path, 'must be an array of attachments');
  return v.map((item, i) => {
    const p = `${path}.${i}`;
    const a = object(item, p, ['usageType', 'display', 'description', 'contentType', 'length', 'sha2', 'fileUrl']);
    iri(a.usageType, `${p}.usageType`);
    if (a.display === undefined) throw invalid(`${p}.display`, 'is required');
    languageMap(a.display, `${p}.display`);
    if (a.description !== undefined) languageMap(a.description, `${p}.description`);
    if (!isValidContentType(a.contentType)) throw invalid(`${p}.contentType`, 'must be an Internet media type');
    if (typeof a.length !== 'number' || !Number.isInteger(a.length) || a.length < 0) throw invalid(`${p}.length`, 'must be a non-negative integer');
    if (typeof a.sha2 !== 'string' || !SHA2.test(a.sha2)) throw invalid(`${p}.sha2`, 'must be the hex SHA-2 hash of the attachment');
    if (a.fileUrl !== undefined) iri(a.fileUrl, `${p}.fileUrl`);
    return withProps(a, { sha2: a.sha2.toLowerCase() });
  });
}

// ── statements ────────────────────────────────────────────────────────────────

function subStatement(v: JsonObject, path: string): JsonObject {
  const s = object(v, path, ['objectType', 'actor', 'verb', 'object', 'result', 'context', 'timestamp', 'attachments']);
  return statementBody(s, path, true);
}

function statementBody(s: JsonObject, path: string, inSubStatement: boolean): JsonObject {
  if (s.actor === undefined) throw invalid(`${path}.actor`, 'is required');
  if (s.verb === undefined) throw invalid(`${path}.verb`, 'is required');
  if (s.object === undefined) throw invalid(`${path}.object`, 'is required');
  agentOrGroup(s.actor, `${path}.actor`);
  verb(s.verb, `${path}.verb`);
  const obj = statementObject(s.object, `${path}.object`, inSubStatement);
  const out: JsonObject = { ...s, object: obj.value };
  if (s.result !== undefined) result(s.result, `${path}.result`);
  if (s.context !== undefined) out.context = context(s.context, `${path}.context`, obj.kind);
  if (s.timestamp !== undefined && !isTimestamp(s.timestamp)) throw invalid(`${path}.timestamp`, 'must be an ISO 8601 timestamp with a time zone');
  if (s.attachments !== undefined) out.attachments = attachments(s.attachments, `${path}.attachments`);
  const verbId = (s.verb as JsonObject).id;
  if (verbId === VOIDED_VERB && obj.kind !== 'StatementRef') throw invalid(`${path}.object`, 'a voiding statement must have a StatementRef object');
  return out;
}

const STATEMENT_PROPS = ['id', 'actor', 'verb', 'object', 'result', 'context', 'timestamp', 'stored', 'authority', 'version', 'attachments'];

/**
 * One statement as sent to the LRS, checked and normalised. `stored` and `authority` may be
 * sent (they are checked, then replaced by the LRS).
 */
export function validateStatement(v: Json, path = 'statement'): JsonObject {
  const s = object(v, path, STATEMENT_PROPS);
  const out = statementBody(s, path, false);
  if (s.id !== undefined) out.id = uuid(s.id, `${path}.id`);
  if (s.stored !== undefined && !isTimestamp(s.stored)) throw invalid(`${path}.stored`, 'must be an ISO 8601 timestamp with a time zone');
  if (s.version !== undefined && (typeof s.version !== 'string' || !VERSION.test(s.version))) throw invalid(`${path}.version`, 'must be 1.0.x');
  if (s.authority !== undefined) {
    const a = agentOrGroup(s.authority, `${path}.authority`);
    if (a.objectType === 'Group' && (!Array.isArray(a.member) || a.member.length !== 2)) throw invalid(`${path}.authority`, 'a Group authority must have exactly two members');
  }
  return out;
}
