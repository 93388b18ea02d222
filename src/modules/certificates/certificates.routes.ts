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
        description:
          'Any signed-in user: the certificates issued to them (by issuedAt, newest first), each with its verification code and, once the worker has rendered it, a signed pdfUrl. 400 VALIDATION_ERROR for a bad page value.',
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
        description:
          'Public: no authentication (so no 401), rate-limited per IP (429 RATE_LIMITED). `code` is required: missing or blank is 400 VALIDATION_ERROR (`details.fields` names querystring.code); an unknown code 404 NOT_FOUND. `valid` is false once the certificate has expired. The holder’s name comes from the CRM (null when it cannot give one); nothing else about the holder is shown.',
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
