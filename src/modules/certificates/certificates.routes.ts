import { certificatesJobs } from './certificates.jobs.js';
import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { envelope, ok, paged, pagedEnvelope } from '../../platform/http/envelope.js';
import { requestContext } from '../../platform/auth/auth-plugin.js';
import { myCertificates, verifyCertificate } from './certificates.service.js';
import { certificateSchema, myCertificatesQuery, verificationSchema, verifyQuery } from './certificates.schemas.js';

const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);
  const tags = ['certificates'];

  r.get(
    '/api/certificates',
    {
      schema: {
        tags,
        operationId: 'myCertificates',
        summary: "The caller's certificates, newest first",
        querystring: myCertificatesQuery,
        response: { 200: pagedEnvelope(certificateSchema) },
      },
    },
    async (req) => {
      const { rows, meta } = await myCertificates(requestContext(deps, req), req.query);
      return paged(rows, meta);
    },
  );

  r.get(
    '/api/certificates/verify',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        operationId: 'verifyCertificate',
        summary: 'Public verification by code: validity, course, dates and the holder display name only',
        querystring: verifyQuery,
        response: {
          200: envelope(verificationSchema),
        },
      },
    },
    async (req) => ok(await verifyCertificate({ db: deps.database.db, crm: deps.crm, clock: deps.clock, storage: deps.storage }, req.query.code)),
  );
};

export const certificatesModule: AppModule = { name: 'certificates', routes, jobs: certificatesJobs };
