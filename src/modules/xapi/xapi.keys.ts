import { createHash } from 'node:crypto';

/**
 * Index keys of the LRS. IRIs and agent identifiers can be long (an account name on a long
 * home page), longer than a btree entry may be, so the indexed columns hold a digest: the first
 * 128 bits of SHA-256 of the value, written as a UUID (16 bytes in PostgreSQL).
 */
export function digestKey(value: string): string {
  const h = createHash('sha256').update(value).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v) && !Buffer.isBuffer(v);

const IFI_PROPERTIES = ['mbox', 'mbox_sha1sum', 'openid', 'account'] as const;

/**
 * The identity of an agent or identified group: its objectType and its one inverse functional
 * identifier (xAPI: two agents are the same when both match). Null for an anonymous group.
 */
export function agentIdentity(agent: JsonObject): string | null {
  const type = agent.objectType === 'Group' ? 'Group' : 'Agent';
  for (const p of IFI_PROPERTIES) {
    const v = agent[p];
    if (v === undefined) continue;
    if (p === 'account' && isObject(v)) return JSON.stringify([type, p, v.homePage, v.name]);
    if (p === 'mbox_sha1sum' && typeof v === 'string') return JSON.stringify([type, p, v.toLowerCase()]);
    return JSON.stringify([type, p, v]);
  }
  return null;
}

/** The index key of an agent or identified group, or null for an anonymous group. */
export function agentKey(agent: JsonObject): string | null {
  const id = agentIdentity(agent);
  return id === null ? null : digestKey(`agent:${id}`);
}

export const activityKey = (activityId: string) => digestKey(`activity:${activityId}`);
export const verbKey = (verbId: string) => digestKey(`verb:${verbId}`);

/** The verb of voiding statements. */
export const VOIDED_VERB = 'http://adlnet.gov/expapi/verbs/voided';
/** Verbs that complete a lesson (deliverable 3). */
export const COMPLETING_VERBS = new Set(['http://adlnet.gov/expapi/verbs/completed', 'http://adlnet.gov/expapi/verbs/passed']);
/** The attachment usage type of a statement signature (a JWS). */
export const SIGNATURE_USAGE = 'http://adlnet.gov/expapi/attachments/signature';

/**
 * How the service's own people appear in statements: an account on the service's home page
 * (`PUBLIC_BASE_URL`) named by their person id (the CRM Contact id for contacts).
 */
export const learnerAgent = (publicBaseUrl: string, personId: string): JsonObject => ({
  objectType: 'Agent',
  account: { homePage: publicBaseUrl, name: personId },
});

/** The person id of an agent that is one of the service's people, or null. */
export function personIdOf(agent: Json | undefined, publicBaseUrl: string): string | null {
  if (!isObject(agent) || (agent.objectType !== undefined && agent.objectType !== 'Agent')) return null;
  const account = agent.account;
  if (!isObject(account) || typeof account.name !== 'string' || typeof account.homePage !== 'string') return null;
  return account.homePage.replace(/\/+$/, '') === publicBaseUrl ? account.name : null;
}

/** The activity IRI of a lesson: `{PUBLIC_BASE_URL}/xapi/activities/lesson/{lessonId}`. */
export const lessonActivityId = (publicBaseUrl: string, lessonId: string) => `${publicBaseUrl}/xapi/activities/lesson/${encodeURIComponent(lessonId)}`;

/** The lesson id of a lesson activity IRI, or null. */
export function lessonIdOf(activityId: string, publicBaseUrl: string): string | null {
  const prefix = `${publicBaseUrl}/xapi/activities/lesson/`;
  if (!activityId.startsWith(prefix)) return null;
  const rest = activityId.slice(prefix.length);
  if (!rest || rest.includes('/') || rest.includes('?') || rest.includes('#')) return null;
  try {
    return decodeURIComponent(rest);
  } catch {
    return null;
  }
}
