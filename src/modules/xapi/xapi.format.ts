import { isDeepStrictEqual } from 'node:util';
import { lookup } from 'bcp-47-match';
import { isObject, type Json, type JsonObject } from './xapi.keys.js';

/**
 * How statements leave the LRS (the `format` parameter) and when two statements are the same.
 */

export type StatementFormat = 'exact' | 'ids' | 'canonical';

// ── equivalence ───────────────────────────────────────────────────────────────

/** Properties the LRS sets or may fill in: not part of what a client said. */
const LRS_PROPERTIES = ['stored', 'authority'];

function comparable(s: JsonObject, ignore: Set<string>): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(s)) if (!LRS_PROPERTIES.includes(k) && !ignore.has(k)) out[k] = v;
  return strip(out) as JsonObject;
}

/** Drops the objectTypes that are defaults (`Agent` actors, `Activity` objects) so both spellings compare equal. */
function strip(v: Json): Json {
  if (Array.isArray(v)) return v.map(strip);
  if (!isObject(v)) return v;
  const out: JsonObject = {};
  for (const [k, item] of Object.entries(v)) {
    if (k === 'objectType' && (item === 'Agent' || item === 'Activity')) continue;
    out[k] = strip(item);
  }
  return out;
}

const instant = (v: Json | undefined) => (typeof v === 'string' ? Date.parse(v) : NaN);

/**
 * Whether `incoming` (as validated) says the same as `stored`: the properties the LRS set
 * (stored, authority) are ignored, and so are the ones it filled in because `incoming` left
 * them out (id, version, timestamp). Timestamps compare as instants.
 */
export function sameStatement(incoming: JsonObject, stored: JsonObject): boolean {
  const ignore = new Set<string>(['timestamp']);
  for (const k of ['id', 'version']) if (incoming[k] === undefined) ignore.add(k);
  if (incoming.version !== undefined && stored.version !== undefined && incoming.version !== stored.version) return false;
  ignore.add('version');
  if (incoming.timestamp !== undefined && instant(incoming.timestamp) !== instant(stored.timestamp)) return false;
  return isDeepStrictEqual(sortKeys(comparable(incoming, ignore)), sortKeys(comparable(stored, ignore)));
}

function sortKeys(v: Json): Json {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (!isObject(v)) return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, sortKeys(v[k]!)]),
  );
}

// ── the ids format ────────────────────────────────────────────────────────────

const IFI = ['mbox', 'mbox_sha1sum', 'openid', 'account'];

function idsAgent(a: Json | undefined): Json | undefined {
  if (!isObject(a)) return a;
  const out: JsonObject = {};
  if (a.objectType !== undefined) out.objectType = a.objectType;
  for (const k of IFI) if (a[k] !== undefined) out[k] = a[k]!;
  // An anonymous group is identified by its members.
  if (a.objectType === 'Group' && !IFI.some((k) => a[k] !== undefined) && Array.isArray(a.member)) out.member = a.member.map((m) => idsAgent(m) as Json);
  return out;
}

const idsActivity = (a: Json): Json => (isObject(a) ? { objectType: 'Activity', id: a.id! } : a);

function idsObject(o: Json | undefined): Json | undefined {
  if (!isObject(o)) return o;
  switch (o.objectType ?? 'Activity') {
    case 'Activity':
      return idsActivity(o);
    case 'Agent':
    case 'Group':
      return idsAgent(o);
    case 'SubStatement':
      return idsStatement(o);
    default:
      return o;
  }
}

function idsContext(c: Json | undefined): Json | undefined {
  if (!isObject(c)) return c;
  const out: JsonObject = { ...c };
  if (c.instructor !== undefined) out.instructor = idsAgent(c.instructor)!;
  if (c.team !== undefined) out.team = idsAgent(c.team)!;
  if (isObject(c.contextActivities)) {
    out.contextActivities = Object.fromEntries(Object.entries(c.contextActivities).map(([k, list]) => [k, Array.isArray(list) ? list.map(idsActivity) : list]));
  }
  return out;
}

/** Only what identifies each Agent, Group, Activity and Verb (format=ids). */
export function idsStatement(s: JsonObject): JsonObject {
  const out: JsonObject = { ...s };
  if (s.actor !== undefined) out.actor = idsAgent(s.actor)!;
  if (isObject(s.verb)) out.verb = { id: s.verb.id! };
  if (s.object !== undefined) out.object = idsObject(s.object)!;
  if (s.context !== undefined) out.context = idsContext(s.context)!;
  if (s.authority !== undefined) out.authority = idsAgent(s.authority)!;
  return out;
}

// ── the canonical format ──────────────────────────────────────────────────────

/** Language ranges of an Accept-Language header, best first (`*` and q=0 left out). */
export function acceptedLanguages(header: string | undefined): string[] {
  if (!header) return [];
  return header
    .split(',')
    .map((part, i) => {
      const [range, ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((x) => x !== undefined);
      return { range: (range ?? '').trim(), q: q === undefined ? 1 : Number(q), i };
    })
    .filter((r) => r.range && r.range !== '*' && r.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i)
    .map((r) => r.range);
}

/** One entry of a language map: the best match for the accepted languages (RFC 4647 lookup), else `und`, else the first. */
function pickLanguage(map: JsonObject, accepted: string[]): JsonObject {
  const tags = Object.keys(map);
  if (tags.length <= 1) return map;
  const chosen = (accepted.length > 0 ? lookup(tags, accepted) : undefined) ?? (map.und !== undefined ? 'und' : tags[0]!);
  return { [chosen]: map[chosen]! };
}

const LANGUAGE_MAPS = new Set(['display', 'name', 'description']);

/** Every language map in `v` (verb displays, activity names and descriptions, attachment displays) cut to one language. */
function filterLanguages(v: Json, accepted: string[], key = ''): Json {
  if (Array.isArray(v)) return v.map((x) => filterLanguages(x, accepted));
  if (!isObject(v)) return v;
  if (LANGUAGE_MAPS.has(key) && Object.values(v).every((x) => typeof x === 'string')) return pickLanguage(v, accepted);
  const out: JsonObject = {};
  for (const [k, item] of Object.entries(v)) out[k] = k === 'extensions' ? item : filterLanguages(item, accepted, k);
  return out;
}

/** Every activity object in a statement, wherever it is (object, context activities, SubStatement). */
export function activitiesOf(s: JsonObject): JsonObject[] {
  const found: JsonObject[] = [];
  const visit = (st: JsonObject) => {
    const o = st.object;
    if (isObject(o) && (o.objectType ?? 'Activity') === 'Activity') found.push(o);
    if (isObject(o) && o.objectType === 'SubStatement') visit(o);
    const ca = isObject(st.context) ? st.context.contextActivities : undefined;
    if (isObject(ca)) for (const list of Object.values(ca)) if (Array.isArray(list)) for (const a of list) if (isObject(a)) found.push(a);
  };
  visit(s);
  return found;
}

/**
 * format=canonical: each activity carries the LRS's canonical definition (`definitions`, by
 * activity id), and every language map keeps the one language that best fits Accept-Language.
 */
export function canonicalStatement(s: JsonObject, definitions: Map<string, JsonObject>, accepted: string[]): JsonObject {
  const copy = structuredClone(s);
  for (const a of activitiesOf(copy)) {
    const def = typeof a.id === 'string' ? definitions.get(a.id) : undefined;
    if (def) a.definition = structuredClone(def);
  }
  return filterLanguages(copy, accepted) as JsonObject;
}

export function formatStatement(s: JsonObject, format: StatementFormat, definitions: Map<string, JsonObject>, accepted: string[]): JsonObject {
  if (format === 'ids') return idsStatement(s);
  if (format === 'canonical') return canonicalStatement(s, definitions, accepted);
  return s;
}

// ── activity definitions ──────────────────────────────────────────────────────

/**
 * The canonical definition after a statement defines the activity again: the new definition's
 * properties replace the old ones, except language maps and extensions, which merge key by key.
 */
export function mergeDefinitions(current: JsonObject | undefined, incoming: JsonObject): JsonObject {
  if (!current) return incoming;
  const out: JsonObject = { ...current };
  for (const [k, v] of Object.entries(incoming)) {
    const old = current[k];
    out[k] = (k === 'name' || k === 'description' || k === 'extensions') && isObject(old) && isObject(v) ? { ...old, ...v } : v;
  }
  return out;
}
