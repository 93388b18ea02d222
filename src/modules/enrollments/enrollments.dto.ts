import { z } from 'zod';
import { iso } from '../../platform/dto.js';
import { ENROLLMENT_STATUSES, type Enrollment } from './enrollments.tables.js';

const ts = z.string().describe('ISO 8601 timestamp');

export const enrollmentSchema = z.object({
  id: z.string(),
  courseId: z.string(),
  studentId: z.string(),
  status: z.enum(ENROLLMENT_STATUSES),
  progress: z.number().int().describe('0-100: completed required lessons / required lessons'),
  finalScore: z.number().nullable(),
  enrolledAt: ts,
  completedAt: ts.nullable(),
  droppedAt: ts.nullable(),
  lastAccessedAt: ts.nullable(),
});

export const toEnrollmentDto = (e: Enrollment) => ({
  id: e.id,
  courseId: e.courseId,
  studentId: e.studentId,
  status: e.status,
  progress: e.progress,
  finalScore: e.finalScore,
  enrolledAt: iso(e.enrolledAt) as string,
  completedAt: iso(e.completedAt),
  droppedAt: iso(e.droppedAt),
  lastAccessedAt: iso(e.lastAccessedAt),
});
