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

export const verifyQuery = z.object({ code: z.string().max(64).optional() });

export const verificationSchema = z.object({
  valid: z.boolean(),
  certificateNumber: z.string(),
  courseTitle: z.string(),
  issuedAt: z.string(),
  expiresAt: z.string().nullable(),
  holderName: z.string().nullable().describe("the holder's name from the CRM, or null; never an id"),
});
