import { z } from 'zod';

/**
 * OpenAPI descriptions of the LRS routes (documentation only: inside the LRS scope the LRS
 * checks every parameter and body itself, with xAPI's errors) and the zod schemas of the
 * credential routes (service routes, in the envelope).
 */

export type LrsResource = 'statements' | 'activities/state' | 'activities/profile' | 'agents/profile' | 'activities' | 'agents' | 'about';
type Method = 'GET' | 'PUT' | 'POST' | 'DELETE';

const iri = z.string().describe('an absolute IRI');
const agentJson = z.string().describe('an Agent or identified Group as JSON, e.g. {"account":{"homePage":"<PUBLIC_BASE_URL>","name":"<personId>"}}');
const uuid = z.string().describe('a UUID');
const timestamp = z.string().describe('ISO 8601 timestamp with a time zone');
const boolText = z.enum(['true', 'false']);

const plain = (description: string) => ({ description, content: { 'text/plain': { schema: z.string() } } });

/** Every LRS error is a status with a plain-text message (not the service envelope). */
const ERRORS = {
  400: plain('Bad request: an invalid or missing parameter, header (X-Experience-API-Version) or statement property (plain text)'),
  401: plain('Authorization missing or not valid: HTTP Basic with an LRS credential, or a Bearer session token (plain text)'),
  403: plain('Forbidden: a session acting for an agent other than its own (plain text)'),
  404: plain('Not found (plain text)'),
  409: plain('Conflict (plain text)'),
  412: plain('Precondition failed: If-Match / If-None-Match do not hold (plain text)'),
  413: plain('Request too large (plain text)'),
  429: plain('Rate limit exceeded (plain text)'),
  500: plain('Internal error (plain text)'),
};

const ENVELOPE_NOTE =
  ' The LRS answers in xAPI form, not the service envelope: errors are a status with a plain-text message. Every request but GET /about sends `X-Experience-API-Version: 1.0.x`; every answer carries `X-Experience-API-Version: 1.0.3`. Authorization: Basic (LRS credential) or Bearer (session token). The alternate request syntax (POST ?method=GET|PUT|POST|DELETE with a form body) is accepted on every resource. ' +
  'Errors: 400 a missing or invalid parameter, header or statement; 401 no valid authorization; 403 a session acting for an agent other than its own; 404 nothing there; 429 rate limit exceeded.';

const security = [{ basicAuth: [] }, { bearerAuth: [] }];

const statementLoose = z
  .looseObject({
    id: uuid.optional(),
    actor: z.looseObject({}).describe('Agent or Group'),
    verb: z.looseObject({ id: iri }),
    object: z.looseObject({}).describe('Activity, Agent, Group, StatementRef or SubStatement'),
    result: z.looseObject({}).optional(),
    context: z.looseObject({}).optional(),
    timestamp: timestamp.optional(),
    attachments: z.array(z.looseObject({})).optional(),
  })
  .describe('an xAPI 1.0.3 statement');

const statementResult = z.object({ statements: z.array(z.looseObject({})), more: z.string().describe('relative URL of the next page, or empty') });

const documentQuery = {
  state: z.object({ activityId: iri, agent: agentJson, registration: uuid.optional(), stateId: z.string().optional(), since: timestamp.optional() }),
  activityProfile: z.object({ activityId: iri, profileId: z.string().optional(), since: timestamp.optional() }),
  agentProfile: z.object({ agent: agentJson, profileId: z.string().optional(), since: timestamp.optional() }),
};

interface LrsRoute {
  resource: LrsResource;
  methods: Method[];
  schema: (method: Method) => Record<string, unknown>;
}

const op = (operationId: string, summary: string, description: string, extra: Record<string, unknown>) => ({
  tags: ['xapi'],
  operationId,
  summary,
  description: description + ENVELOPE_NOTE,
  security,
  ...extra,
});

function documentRoute(resource: LrsResource, name: string, idParam: string, query: z.ZodObject, what: string): LrsRoute {
  return {
    resource,
    methods: ['GET', 'PUT', 'POST', 'DELETE'],
    schema: (method) => {
      const byMethod: Record<Method, [string, string]> = {
        GET: ['Get', `With ${idParam}: the document (its Content-Type, ETag, Last-Modified). Without: the ids as a JSON array (changed after since).`],
        PUT: ['Put', 'Stores the document (204). If-Match / If-None-Match: 412 when they do not hold.'],
        POST: ['Post', 'Merges a JSON object into the stored JSON object (new top-level keys win); stores it when absent. Non-JSON on either side: 400.'],
        DELETE: ['Delete', `With ${idParam}: removes the document (If-Match honoured).`],
      };
      const [verb, text] = byMethod[method];
      return op(`xapi${verb}${name}`, `${verb} ${what}`, text, {
        querystring: query,
        ...(method === 'PUT' || method === 'POST'
          ? { body: z.string().describe('the document, any content type'), consumes: ['application/json', 'application/octet-stream'] }
          : {}),
        response: { 200: z.unknown().describe('the document, or the list of ids'), 204: z.null().describe('stored or deleted'), ...ERRORS },
      });
    },
  };
}

export const LRS_ROUTES: LrsRoute[] = [
  {
    resource: 'statements',
    methods: ['GET', 'PUT', 'POST'],
    schema: (method) => {
      if (method === 'POST') {
        return op(
          'xapiPostStatements',
          'Store statements',
          'One statement or an array of statements (at most 500), as application/json or as multipart/mixed with attachments (the first part the JSON, each further part an attachment with Content-Transfer-Encoding: binary and X-Experience-API-Hash). Answers the statement ids. Same id as a stored statement and equivalent: kept as stored; different: 409. One id twice in the batch: 400. A statement with verb completed or passed about a lesson activity completes the lesson (see README). Every answer, errors too, carries X-Experience-API-Consistent-Through.',
          { body: z.union([statementLoose, z.array(statementLoose)]), consumes: ['application/json', 'multipart/mixed'], response: { 200: z.array(uuid), ...ERRORS } },
        );
      }
      if (method === 'PUT') {
        return op(
          'xapiPutStatement',
          'Store one statement with the given id',
          '204 when stored or already stored identically; 409 when a different statement has that id. Every answer, errors too, carries X-Experience-API-Consistent-Through.',
          {
            querystring: z.object({ statementId: uuid }),
            body: statementLoose,
            consumes: ['application/json', 'multipart/mixed'],
            response: { 204: z.null().describe('stored'), ...ERRORS },
          },
        );
      }
      return op(
        'xapiGetStatements',
        'One statement, or a page of statements',
        'statementId or voidedStatementId (with format and attachments only) gives one statement; otherwise a StatementResult filtered by agent, verb, activity, registration, related_activities, related_agents, since, until (on stored), limit (0 or above 100: 100), format (exact, ids, canonical), attachments (multipart/mixed answer) and ascending, with `more` to continue. X-Experience-API-Consistent-Through on every answer of the statements resource (POST, PUT and errors too). A session sees only statements it is the actor of.',
        {
          querystring: z.object({
            statementId: uuid.optional(),
            voidedStatementId: uuid.optional(),
            agent: agentJson.optional(),
            verb: iri.optional(),
            activity: iri.optional(),
            registration: uuid.optional(),
            related_activities: boolText.optional(),
            related_agents: boolText.optional(),
            since: timestamp.optional(),
            until: timestamp.optional(),
            limit: z.string().regex(/^\d+$/).optional(),
            format: z.enum(['exact', 'ids', 'canonical']).optional(),
            attachments: boolText.optional(),
            ascending: boolText.optional(),
            more: z.string().optional().describe('the continuation token of a `more` link'),
          }),
          response: { 200: z.union([statementResult, statementLoose]), ...ERRORS },
        },
      );
    },
  },
  documentRoute('activities/state', 'State', 'stateId', documentQuery.state, 'a state document'),
  documentRoute('activities/profile', 'ActivityProfile', 'profileId', documentQuery.activityProfile, 'an activity profile document'),
  documentRoute('agents/profile', 'AgentProfile', 'profileId', documentQuery.agentProfile, 'an agent profile document'),
  {
    resource: 'activities',
    methods: ['GET'],
    schema: () =>
      op('xapiGetActivity', 'An activity with its canonical definition', 'The definition merged from the statements that defined it; 404 for an activity no statement named.', {
        querystring: z.object({ activityId: iri }),
        response: { 200: z.looseObject({ objectType: z.literal('Activity'), id: iri }), ...ERRORS },
      }),
  },
  {
    resource: 'agents',
    methods: ['GET'],
    schema: () =>
      op('xapiGetPerson', 'The Person object of an agent', 'Its identifier and the names statements gave it as their actor.', {
        querystring: z.object({ agent: agentJson }),
        response: { 200: z.looseObject({ objectType: z.literal('Person') }), ...ERRORS },
      }),
  },
  {
    resource: 'about',
    methods: ['GET'],
    schema: () => ({
      tags: ['xapi'],
      operationId: 'xapiAbout',
      summary: 'The xAPI versions this LRS supports',
      description:
        'Unauthenticated; needs no X-Experience-API-Version header. Answers {"version": ["1.0.3", "1.0.2", "1.0.1", "1.0.0"]}. ' +
        'Like every LRS route it answers in xAPI form, not the service envelope; it only fails when rate-limited (429) or on a server error (500).',
      security: [],
      response: { 200: z.object({ version: z.array(z.string()) }), 429: ERRORS[429], 500: ERRORS[500] },
    }),
  },
];

// ── credentials (service routes, in the envelope) ─────────────────────────────

export const credentialSchema = z.object({
  id: z.string(),
  key: z.string().describe('the HTTP Basic user name'),
  name: z.string(),
  createdBy: z.string(),
  createdAt: z.string(),
});
export const createdCredentialSchema = credentialSchema.extend({ secret: z.string().describe('the HTTP Basic password: shown in this answer only') });
export const createCredentialBody = z.object({ name: z.string().trim().min(1).max(200).describe('what the credential is for, e.g. the content tool') });
export const credentialParams = z.object({ id: z.string().min(1) });
