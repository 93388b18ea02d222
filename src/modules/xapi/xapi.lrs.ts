import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import cors from '@fastify/cors';
import type { Deps } from '../../platform/context.js';
import { AppError } from '../../platform/http/errors.js';
import { forClient, sendError, toAppError } from '../../platform/http/errors-plugin.js';
import { routeRateLimits } from '../../platform/http/rate-limit.js';
import { decodeSessionToken, TokenError } from '../../platform/auth/tokens.js';
import { lrsContext, type LrsContext, type Principal } from './xapi.context.js';
import { credentialAuthority, verifyCredential } from './xapi.credentials.js';
import { agentKey, learnerAgent, type Json } from './xapi.keys.js';
import { putStatement, storeStatements, parseStatementsJson } from './xapi.statements.js';
import { consistentThroughNow, getOneStatement, queryStatements, type ReadResult } from './xapi.query.js';
import { deleteDocument, getDocument, writeDocument, type DocumentResult } from './xapi.documents.js';
import { getActivity, getPerson, XAPI_VERSIONS } from './xapi.activities.js';
import { buildMixed, isMultipartMixed, parseMixed } from './xapi.attachments.js';
import { acceptedLanguages } from './xapi.format.js';
import { LRS_ROUTES, type LrsResource } from './xapi.schemas.js';
import type { XapiDocumentKind } from './xapi.tables.js';

/**
 * The xAPI 1.0.3 learning record store at /api/xapi/, as one Fastify plugin scope that steps
 * out of the service's envelope (the documented exception): answers and errors are xAPI's own,
 * errors a plain status with a short text/plain message. Inside the scope:
 *
 * - bodies are taken as raw bytes (statements JSON or multipart/mixed, documents of any type,
 *   the form of the alternate request syntax), and checked here with the platform's input
 *   rules (no NUL or lone surrogates, JSON nesting at most 64) where they are JSON;
 * - query strings are checked by the platform's input guard as everywhere, then by the LRS;
 * - every answer carries `X-Experience-API-Version: 1.0.3`, and every request but GET /about
 *   must send `X-Experience-API-Version` 1.0.x (400 otherwise);
 * - authentication is `Authorization: Basic` (a credential of the institution) or `Bearer` (a
 *   session token: one of the service's people, as their own agent); cookies are not used here;
 * - CORS is open to any origin without credentials (xAPI content runs from anywhere and
 *   authenticates with the Authorization header), with the xAPI headers allowed and exposed;
 * - the alternate request syntax (POST ?method=…, a form body carrying headers and content)
 *   is supported;
 * - rate limits count per credential or person (RATE_LIMIT_XAPI per window).
 */

export const XAPI_VERSION = '1.0.3';
const VERSION_HEADER = 'x-experience-api-version';
const CONSISTENT_THROUGH = 'x-experience-api-consistent-through';
const ACCEPTED_VERSION = /^1\.0(?:\.\d+)?$/;

const XAPI_CORS = {
  origin: '*',
  credentials: false,
  methods: ['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'OPTIONS'],
  allowedHeaders: ['Authorization', 'Content-Type', 'X-Experience-API-Version', 'If-Match', 'If-None-Match', 'Accept-Language'],
  exposedHeaders: ['ETag', 'Last-Modified', 'X-Experience-API-Version', 'X-Experience-API-Consistent-Through', 'Content-Type'],
  maxAge: 86_400,
};

/** The request as the LRS handles it: from HTTP, or unwrapped from the alternate request syntax. */
interface LrsRequest {
  method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  resource: LrsResource;
  params: Record<string, string>;
  headers: Record<string, string | undefined>;
  body: Buffer;
}

interface LrsResponse {
  status: number;
  headers?: Record<string, string>;
  body?: Buffer | string;
  contentType?: string;
}

const bad = (message: string) => new AppError('VALIDATION_ERROR', message);

/** Query values as single strings: a repeated parameter is 400. */
function singleValues(query: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries((query ?? {}) as Record<string, unknown>)) {
    if (Array.isArray(v)) throw bad(`Parameter ${k} is repeated`);
    if (typeof v === 'string') out[k] = v;
  }
  return out;
}

const headerValue = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(', ') : v);

/** Headers the alternate request syntax carries in its form (xAPI 1.0.3 Communication 1.3). */
const FORM_HEADERS = ['authorization', 'x-experience-api-version', 'content-type', 'content-length', 'if-match', 'if-none-match'];

function fromHttp(req: FastifyRequest, resource: LrsResource): LrsRequest {
  const params = singleValues(req.query);
  const headers: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(req.headers)) headers[k] = headerValue(v);
  const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  if (req.method === 'POST' && params.method !== undefined) return fromAlternateSyntax(params, headers, body, resource);
  // GET and DELETE read no body; a JSON one still meets the platform's rules, as on every route.
  if ((req.method === 'GET' || req.method === 'DELETE') && body.length > 0 && /json/i.test(headers['content-type'] ?? '')) parseStatementsJson(body.toString('utf8'));
  return { method: req.method === 'HEAD' ? 'GET' : (req.method as LrsRequest['method']), resource, params, headers, body };
}

/** POST ?method=X with a form body: the form's header fields, `content` and parameters become the request. */
function fromAlternateSyntax(params: Record<string, string>, headers: Record<string, string | undefined>, body: Buffer, resource: LrsResource): LrsRequest {
  const { method, ...others } = params;
  if (Object.keys(others).length > 0) throw bad('With the alternate request syntax every parameter goes in the form body');
  if (!/^application\/x-www-form-urlencoded\b/i.test(headers['content-type'] ?? '')) throw bad('The alternate request syntax needs a application/x-www-form-urlencoded body');
  const upper = (method ?? '').toUpperCase();
  if (!['GET', 'PUT', 'POST', 'DELETE'].includes(upper)) throw bad('method must be GET, PUT, POST or DELETE');
  const form = new URLSearchParams(body.toString('utf8'));
  const innerHeaders: Record<string, string | undefined> = { 'accept-language': headers['accept-language'] };
  const innerParams: Record<string, string> = {};
  let content = Buffer.alloc(0);
  for (const [k, v] of form) {
    const lower = k.toLowerCase();
    if (lower === 'content') content = Buffer.from(v, 'utf8');
    else if (FORM_HEADERS.includes(lower)) innerHeaders[lower] = v;
    else if (innerParams[k] !== undefined) throw bad(`Parameter ${k} is repeated`);
    else innerParams[k] = v;
  }
  return { method: upper as LrsRequest['method'], resource, params: innerParams, headers: innerHeaders, body: content };
}

/** The caller of an Authorization header: a credential (Basic) or a session (Bearer). */
async function authenticate(deps: Deps, authorization: string | undefined): Promise<Principal> {
  if (!authorization) throw new AppError('AUTH_REQUIRED', 'Authorization required (HTTP Basic with an LRS credential, or a Bearer session token)');
  const basic = /^Basic\s+(\S+)$/i.exec(authorization);
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const cred = colon > 0 ? await verifyCredential(deps, decoded.slice(0, colon), decoded.slice(colon + 1)) : null;
    if (!cred) throw new AppError('AUTH_REQUIRED', 'Unknown credential');
    return { institutionId: cred.institutionId, authority: credentialAuthority(deps.config.publicBaseUrl, cred), self: null, credentialId: cred.id };
  }
  const bearer = /^Bearer\s+(\S+)$/i.exec(authorization);
  if (bearer) {
    try {
      const session = await decodeSessionToken(bearer[1]!, {
        secret: deps.config.AUTH_SECRET,
        cookieName: deps.config.SESSION_COOKIE_NAME,
        now: deps.clock.now(),
        maxAgeSeconds: deps.config.AUTH_MAX_TOKEN_AGE_SECONDS,
      });
      const agent = learnerAgent(deps.config.publicBaseUrl, session.personId);
      return {
        institutionId: session.institutionId,
        authority: { objectType: 'Agent', name: 'LMS', account: { homePage: `${deps.config.publicBaseUrl}/xapi`, name: 'lms' } },
        self: { agent, key: agentKey(agent)!, session },
        credentialId: null,
      };
    } catch (err) {
      if (err instanceof TokenError) throw new AppError('AUTH_REQUIRED', 'The session token is not valid');
      throw err;
    }
  }
  throw new AppError('AUTH_REQUIRED', 'Authorization must be Basic or Bearer');
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The LRS caller from the request's own Authorization header (onRequest), or why it was refused. */
    lrsAuth?: Principal | AppError;
    /** The caller the LRS acts for, once authenticated (with the alternate syntax, from the form). */
    lrsPrincipal?: Principal;
  }
}

function checkVersion(headers: Record<string, string | undefined>) {
  const v = headers[VERSION_HEADER];
  if (v === undefined) throw bad('The X-Experience-API-Version header is required');
  if (!ACCEPTED_VERSION.test(v.trim())) throw bad(`X-Experience-API-Version ${v} is not supported (1.0.x)`);
}

const readResponse = (r: ReadResult): LrsResponse => {
  const headers: Record<string, string> = { [CONSISTENT_THROUGH]: r.consistentThrough };
  if (r.lastModified) headers['last-modified'] = r.lastModified.toUTCString();
  if (r.attachments === null) return { status: 200, headers, body: r.json, contentType: 'application/json; charset=utf-8' };
  const mixed = buildMixed(r.json, r.attachments);
  return { status: 200, headers, body: mixed.body, contentType: mixed.contentType };
};

const documentResponse = (r: DocumentResult): LrsResponse => {
  const headers: Record<string, string> = {};
  if (r.etag) headers.etag = r.etag;
  if (r.lastModified) headers['last-modified'] = r.lastModified.toUTCString();
  return { status: r.status, headers, body: r.body, contentType: r.contentType };
};

const jsonResponse = (value: unknown): LrsResponse => ({ status: 200, body: JSON.stringify(value), contentType: 'application/json; charset=utf-8' });

/** The statements of a POST or PUT body: JSON, or multipart/mixed with attachments. */
function statementsBody(req: LrsRequest, maxParts: number) {
  const type = req.headers['content-type'];
  if (isMultipartMixed(type)) {
    const { json, parts } = parseMixed(req.body, type!, maxParts);
    return { value: parseStatementsJson(json), parts };
  }
  if (!/^application\/json\b/i.test(type ?? '')) throw bad('Statements are sent as application/json or multipart/mixed');
  return { value: parseStatementsJson(req.body.toString('utf8')), parts: [] };
}

const DOCUMENT_KIND: Partial<Record<LrsResource, XapiDocumentKind>> = { 'activities/state': 'state', 'activities/profile': 'activity_profile', 'agents/profile': 'agent_profile' };

async function dispatch(ctx: LrsContext, req: LrsRequest): Promise<LrsResponse> {
  const languages = acceptedLanguages(req.headers['accept-language']);
  const kind = DOCUMENT_KIND[req.resource];
  if (kind) {
    const docReq = { kind, params: req.params, headers: req.headers };
    if (req.method === 'GET') return documentResponse(await getDocument(ctx, docReq));
    if (req.method === 'DELETE') return documentResponse(await deleteDocument(ctx, docReq));
    return documentResponse(await writeDocument(ctx, docReq, req.method, req.body));
  }
  switch (`${req.method} ${req.resource}`) {
    case 'GET statements':
      return readResponse(
        req.params.statementId !== undefined || req.params.voidedStatementId !== undefined
          ? await getOneStatement(ctx, req.params, languages)
          : await queryStatements(ctx, req.params, languages),
      );
    case 'POST statements': {
      if (Object.keys(req.params).length > 0) throw bad('POST /statements takes no parameters (PUT takes statementId)');
      const { value, parts } = statementsBody(req, 1000);
      const { ids, consistentThrough } = await storeStatements(ctx, Array.isArray(value) ? value : [value], parts);
      return { ...jsonResponse(ids), headers: { [CONSISTENT_THROUGH]: consistentThrough } };
    }
    case 'PUT statements': {
      const { statementId, ...rest } = req.params;
      if (Object.keys(rest).length > 0) throw bad(`Unknown parameter ${Object.keys(rest)[0]}`);
      if (statementId === undefined) throw bad('PUT /statements needs the statementId parameter');
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i.test(statementId)) throw bad('statementId must be a UUID');
      const { value, parts } = statementsBody(req, 1000);
      const { consistentThrough } = await putStatement(ctx, statementId.toLowerCase(), value as Json, parts);
      return { status: 204, headers: { [CONSISTENT_THROUGH]: consistentThrough } };
    }
    case 'GET activities':
      return jsonResponse(await getActivity(ctx, req.params));
    case 'GET agents':
      return jsonResponse(await getPerson(ctx, req.params));
    default:
      throw new AppError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on /api/xapi/${req.resource}`);
  }
}

function send(reply: FastifyReply, res: LrsResponse) {
  reply.code(res.status);
  for (const [k, v] of Object.entries(res.headers ?? {})) reply.header(k, v);
  if (res.body === undefined) return reply.send();
  reply.type(res.contentType ?? 'application/octet-stream');
  return reply.send(res.body);
}

/** Errors of the LRS: the status and a short plain-text message (no envelope). */
function sendLrsError(req: FastifyRequest, reply: FastifyReply, err: Error) {
  const appErr = forClient(toAppError(err, req), req);
  if (appErr.status >= 500 && err instanceof AppError) req.log.error({ err, reqId: req.id }, appErr.message);
  if (appErr.status === 401) reply.header('www-authenticate', 'Basic realm="xAPI LRS", charset="UTF-8"');
  if (appErr.code === 'METHOD_NOT_ALLOWED' && Array.isArray(appErr.details?.allow)) reply.header('allow', (appErr.details.allow as string[]).join(', '));
  return reply.code(appErr.status).type('text/plain; charset=utf-8').send(appErr.message);
}

const isStatementsPath = (url: string) => /^\/api\/(v1\/)?xapi\/statements\/*$/.test(url.split('?')[0]!);

/** Registers the LRS scope under /api/xapi (call with the app's root instance). */
export async function registerLrs(app: FastifyInstance, deps: Deps) {
  await app.register(
    async (scope) => {
      // The service-wide CORS plugin runs only when CORS_ORIGINS is set (each route's
      // `config.cors` then widens it here); without it, the LRS has its own.
      if (!scope.hasPlugin('@fastify/cors')) await scope.register(cors, XAPI_CORS);
      // Bodies are bytes here: the LRS reads JSON, multipart/mixed, forms and documents itself.
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: deps.config.XAPI_BODY_LIMIT_BYTES }, (_req, body, done) => done(null, body));
      // Route schemas here are documentation: the LRS validates its own parameters, with xAPI's errors.
      scope.setValidatorCompiler(() => () => true);

      scope.addHook('onRequest', async (req, reply) => {
        reply.header('X-Experience-API-Version', XAPI_VERSION);
        if (req.method === 'OPTIONS' || !req.headers.authorization) return;
        try {
          const principal = await authenticate(deps, req.headers.authorization);
          req.lrsAuth = principal;
          req.apiCaller = principal.self ? `${principal.institutionId}:${principal.self.session.personId}` : `${principal.institutionId}:${principal.credentialId}`;
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          req.lrsAuth = err;
        }
      });
      // Every answer of the statements resource carries X-Experience-API-Consistent-Through (xAPI
      // 1.0.3 Communication 2.1.3): reads and writes set it; errors (and 405s) get it here.
      // A rate-limited or failed request does not touch the database for it (see consistentThroughNow).
      scope.addHook('onSend', async (req, reply, payload) => {
        if (req.method === 'OPTIONS' || reply.hasHeader(CONSISTENT_THROUGH) || !isStatementsPath(req.url)) return payload;
        const principal = req.lrsPrincipal ?? (req.lrsAuth instanceof AppError ? undefined : req.lrsAuth);
        const locked = principal && reply.statusCode !== 429 && reply.statusCode < 500;
        reply.header(CONSISTENT_THROUGH, await consistentThroughNow(deps, locked ? principal.institutionId : null));
        return payload;
      });
      scope.setErrorHandler((err, req, reply) => sendLrsError(req, reply, err as Error));
      scope.setNotFoundHandler((req, reply) => {
        const path = req.url.split('?')[0]!.replace(/\/+$/, '');
        // The credential routes are service routes: their errors stay in the envelope.
        if (/^\/api\/(v1\/)?xapi\/credentials(\/[^/]+)?$/.test(path)) {
          const allow = path.endsWith('/credentials') ? ['GET', 'HEAD', 'POST'] : ['DELETE'];
          reply.header('allow', allow.join(', '));
          return sendError(reply, 405, 'METHOD_NOT_ALLOWED', `Method ${req.method} is not allowed on ${path}`, { allow });
        }
        const route = LRS_ROUTES.find((r) => `/api/xapi/${r.resource}` === path || `/api/v1/xapi/${r.resource}` === path);
        if (route) {
          const allow = [...route.methods, ...(route.methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'];
          return sendLrsError(req, reply, new AppError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${path}`, { allow }));
        }
        return sendLrsError(req, reply, new AppError('NOT_FOUND', `No xAPI resource at ${path}`));
      });

      const rateLimit = routeRateLimits(deps.config).xapi;
      for (const route of LRS_ROUTES) {
        for (const method of route.methods) {
          scope.route({
            method,
            url: `/${route.resource}`,
            schema: route.schema(method),
            config: { auth: 'public', cors: XAPI_CORS, rateLimit },
            handler: async (req, reply) => {
              const lrsReq = fromHttp(req, route.resource);
              if (route.resource === 'about') {
                if (lrsReq.method !== 'GET') throw new AppError('METHOD_NOT_ALLOWED', 'GET /about only');
                return send(reply, jsonResponse({ version: XAPI_VERSIONS }));
              }
              checkVersion(lrsReq.headers);
              const principal = lrsReq.headers.authorization === req.headers.authorization && req.lrsAuth ? req.lrsAuth : await authenticate(deps, lrsReq.headers.authorization);
              if (principal instanceof AppError) throw principal;
              req.lrsPrincipal = principal;
              const ctx = lrsContext(deps, principal, req.log, req.id);
              return send(reply, await dispatch(ctx, lrsReq));
            },
          });
        }
      }
      // CORS preflight of every LRS path.
      scope.options('/*', { schema: { hide: true }, config: { auth: 'public', cors: XAPI_CORS } }, async (_req, reply) => reply.code(204).send());
    },
    { prefix: '/api/xapi' },
  );
}
