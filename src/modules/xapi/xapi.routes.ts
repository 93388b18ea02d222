import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { deletedSchema, envelope, ok } from '../../platform/http/envelope.js';
import { actorOf, requestContext } from '../../platform/auth/auth-plugin.js';
import { createCredentialBody, createdCredentialSchema, credentialParams, credentialSchema } from './xapi.schemas.js';
import * as credentials from './xapi.credentials.js';
import { registerLrs } from './xapi.lrs.js';

const tags = ['xapi'];

/**
 * Issue 15 (spec 4.9 xAPI row, 5.5): the LRS at /api/xapi/ (its own plugin scope, outside the
 * envelope: xapi.lrs.ts) and the ADMIN routes that issue its credentials (service routes, in
 * the envelope).
 */
const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);
  const ctxOf = (req: Parameters<typeof actorOf>[0]) => requestContext(deps, req);

  r.post(
    '/api/xapi/credentials',
    {
      schema: {
        tags,
        operationId: 'createXapiCredential',
        summary: 'Issue an LRS credential (ADMIN)',
        description:
          'A new HTTP Basic key/secret pair for the xAPI LRS of the caller’s institution. The `secret` is in this answer only (it is stored as an ' +
          'scrypt hash). Statements stored with it carry the authority `{account: {homePage: "<PUBLIC_BASE_URL>/xapi/credentials", name: key}, name}`. ' +
          'ADMIN only (403 otherwise). This route answers in the service envelope; the LRS routes do not.',
        body: createCredentialBody,
        response: { 201: envelope(createdCredentialSchema) },
      },
    },
    async (req, reply) => reply.code(201).send(ok(await credentials.createCredential(ctxOf(req), req.body))),
  );

  r.get(
    '/api/xapi/credentials',
    {
      schema: {
        tags,
        operationId: 'listXapiCredentials',
        summary: 'The institution’s LRS credentials (ADMIN)',
        description: 'Newest first, without secrets. ADMIN only (403 otherwise).',
        response: { 200: envelope(credentialSchema.array()) },
      },
    },
    async (req) => ok(await credentials.listCredentials(ctxOf(req))),
  );

  r.delete(
    '/api/xapi/credentials/:id',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'deleteXapiCredential',
        summary: 'Revoke an LRS credential (ADMIN)',
        description: `The pair stops working (within ${credentials.VERIFY_CACHE_MS / 1000} s on other processes of the service, at once on this one); statements it stored stay. ADMIN only; another institution’s id is 404.`,
        params: credentialParams,
        response: { 200: envelope(deletedSchema) },
      },
    },
    async (req) => ok(await credentials.deleteCredential(ctxOf(req), req.params.id)),
  );

  await registerLrs(app, deps);
};

export const xapiModule: AppModule = { name: 'xapi', routes };
