import { z } from 'zod';
import type { AppModule } from '../types.js';
import { typed } from '../types.js';
import { commonErrors, envelope, errorEnvelope, ok, paged, pagedEnvelope } from '../../platform/http/envelope.js';
import { paginationFields } from '../../platform/http/pagination.js';
import { serviceContext } from '../../platform/context.js';
import { actorOf } from '../../platform/auth/auth-plugin.js';
import { myCertificates, verifyCertificate } from './certificates.service.js';

const certificateSchema = z.object({
  id: z.string(),
  courseId: z.string(),
  enrollmentId: z.string(),
  studentId: z.string(),
  courseTitle: z.string(),
  certificateNumber: z.string(),
  verificationCode: z.string(),
  finalScore: z.number().nullable(),
  issuedAt: z.string(),
  expiresAt: z.string().nullable(),
  pdfUrl: z.string().nullable().describe('null until the worker has rendered the PDF'),
});

export const certificatesModule: AppModule = async (app, deps) => {
  const r = typed(app);
  const tags = ['certificates'];

  r.get('/api/certificates', {
    schema: { tags, operationId: 'myCertificates', summary: "The caller's certificates, newest first", querystring: z.object({ ...paginationFields }), response: { 200: pagedEnvelope(certificateSchema), ...commonErrors } },
  }, async (req) => {
    const { rows, meta } = await myCertificates(serviceContext(deps, actorOf(req)), req.query);
    return paged(rows, meta);
  });

  r.get('/api/certificates/verify', {
    config: { auth: 'public' },
    schema: {
      tags,
      operationId: 'verifyCertificate',
      summary: 'Public verification by code: validity, course, dates and the holder display name only',
      querystring: z.object({ code: z.string().max(64).optional() }),
      response: {
        200: envelope(
          z.object({
            valid: z.boolean(),
            certificateNumber: z.string(),
            courseTitle: z.string(),
            issuedAt: z.string(),
            expiresAt: z.string().nullable(),
            holderName: z.string().nullable(),
          }),
        ),
        400: errorEnvelope,
        404: errorEnvelope,
        429: errorEnvelope,
      },
    },
  }, async (req) =>
    ok(await verifyCertificate({ db: deps.database.db, crm: deps.crm, clock: deps.clock, storage: deps.storage }, req.query.code)));
};
