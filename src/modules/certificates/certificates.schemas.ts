import { z } from 'zod';
import { paginationFields } from '../../platform/http/pagination.js';

export const certificateSchema = z.object({
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

export const myCertificatesQuery = z.object({ ...paginationFields });

/**
 * `code` is required (documented so): a missing or blank one reaches the service as '' and is
 * refused there, 400 VALIDATION_ERROR 'code is required' naming `querystring.code`, the same
 * answer for `?code=` as for no parameter.
 */
export const verifyQuery = z.object({
  code: z
    .preprocess((v) => v ?? '', z.string().max(64))
    .describe('the verification code printed on the certificate (case and surrounding spaces are ignored); required: missing or blank is 400'),
});

export const verificationSchema = z.object({
  valid: z.boolean(),
  certificateNumber: z.string(),
  courseTitle: z.string(),
  issuedAt: z.string(),
  expiresAt: z.string().nullable(),
  holderName: z.string().nullable().describe("the holder's name from the CRM, or null; never an id"),
});
