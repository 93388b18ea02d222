import { z } from 'zod';
import { optionalFilter } from '../../platform/http/query-filters.js';
import { paginationFields } from '../../platform/http/pagination.js';
import { ENROLLMENT_STATUSES } from './enrollments.tables.js';
import { enrollmentSchema } from './enrollments.dto.js';

export { enrollmentSchema };

/** DELETE …/enrollments/{studentId}: the enrollment, now DROPPED, with the delete answer's `deleted: true`. */
export const droppedEnrollmentSchema = enrollmentSchema.extend({ deleted: z.literal(true) });

export const courseParams = z.object({ id: z.string().min(1) });
export const studentParams = z.object({ id: z.string().min(1), studentId: z.string().min(1) });

export const namedEnrollmentSchema = enrollmentSchema.extend({
  studentName: z.string().describe('from the CRM; "Student <id>" when unavailable'),
});

export const bulkEnrollBody = z.object({ studentIds: z.array(z.string().trim().min(1).max(200)).min(1).max(1000) });

export const bulkEnrollResultSchema = z.object({
  enrolled: z.array(enrollmentSchema),
  alreadyEnrolled: z.array(enrollmentSchema),
  failed: z.array(z.object({ studentId: z.string(), code: z.string(), message: z.string() })),
});

export const listEnrollmentsQuery = z.object({ ...paginationFields, status: optionalFilter(z.enum(ENROLLMENT_STATUSES)) });
