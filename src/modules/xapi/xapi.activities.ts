import { and, eq, sql } from 'drizzle-orm';
import { AppError } from '../../platform/http/errors.js';
import { rawRows } from '../../platform/db/client.js';
import { inTenant } from '../../platform/db/tenancy.js';
import { assertSelf, type LrsContext } from './xapi.context.js';
import { activityKey, agentKey, type JsonObject } from './xapi.keys.js';
import { agentParameter, isIri } from './xapi.validation.js';
import { xapiActivities } from './xapi.tables.js';

/** The activities, agents and about resources (xAPI 1.0.3 Communication 2.5, 2.6, 2.7). */

/** The versions of xAPI this LRS speaks (GET /about). */
export const XAPI_VERSIONS = ['1.0.3', '1.0.2', '1.0.1', '1.0.0'];

const bad = (message: string) => new AppError('VALIDATION_ERROR', message);

function onlyParams(params: Record<string, string>, allowed: string[]) {
  for (const k of Object.keys(params)) if (!allowed.includes(k)) throw bad(`Unknown parameter ${k}`);
}

/**
 * GET /activities?activityId=: the Activity with the LRS's canonical definition, or without one
 * (`{objectType, id}`) when none is stored, also for an activity no statement named: xAPI 1.0.3
 * Communication 2.5 says the LRS SHOULD still return an Activity Object.
 */
export async function getActivity(ctx: LrsContext, params: Record<string, string>): Promise<JsonObject> {
  onlyParams(params, ['activityId']);
  const id = params.activityId;
  if (id === undefined || !isIri(id)) throw bad('activityId is required and must be an IRI');
  const [row] = await ctx.db
    .select({ definition: xapiActivities.definition })
    .from(xapiActivities)
    .where(and(inTenant(ctx, xapiActivities), eq(xapiActivities.activityKey, activityKey(id))))
    .limit(1);
  return row ? { objectType: 'Activity', id, definition: row.definition as JsonObject } : { objectType: 'Activity', id };
}

const IFI = ['mbox', 'mbox_sha1sum', 'openid', 'account'] as const;

/**
 * GET /agents?agent=: the Person object of an agent: its identifier, and the names statements
 * of this institution gave it as their actor (the LRS keeps no other identity data).
 */
export async function getPerson(ctx: LrsContext, params: Record<string, string>): Promise<JsonObject> {
  onlyParams(params, ['agent']);
  if (params.agent === undefined) throw bad('agent is required');
  const agent = agentParameter(params.agent, 'agent');
  if (agent.objectType === 'Group') throw bad('agent must be an Agent, not a Group');
  assertSelf(ctx, agent, 'look up');
  const names = await rawRows<{ name: string }>(
    ctx.db,
    sql`select distinct s.statement->'actor'->>'name' as name
        from xapi_statement_agents a
        join xapi_statements s on s.institution_id = a.institution_id and s.seq = a.statement_seq
        where a.institution_id = ${ctx.institutionId} and a.agent_key = ${agentKey(agent)} and a.as_actor and s.statement->'actor' ? 'name'
        limit 20`,
  );
  const person: JsonObject = { objectType: 'Person' };
  const found = names.map((n) => n.name).filter((n): n is string => typeof n === 'string');
  if (found.length > 0) person.name = found.sort();
  for (const k of IFI) if (agent[k] !== undefined) person[k] = [agent[k]!];
  return person;
}
