import { z } from 'zod';
import { optionalFilter } from '../../platform/http/query-filters.js';
import { paginationFields } from '../../platform/http/pagination.js';
import { ASSIGNABLE_ROLES, COMPLIANCE_STATUSES } from './compliance.tables.js';

const page = {
  ...paginationFields,
};
const ids = z.array(z.string().min(1).max(200)).max(200).default([]);

export const pageQuery = z.object(page);

export const createTrainingBody = z
  .strictObject({
    courseId: z.string().min(1).max(200),
    title: z.string().trim().min(1).max(200).optional(),
    classIds: ids,
    sectionIds: ids,
    roles: z
      .array(z.enum(ASSIGNABLE_ROLES))
      .max(4)
      .transform((roles) => [...new Set(roles)])
      .default([])
      .describe('STUDENT (every class in the CRM), TEACHER, ADMIN (assigned when they first read their records); PARENT has no records (400); a repeated role counts once'),
    dueDate: z
      .union([z.string().datetime({ offset: true }), z.string().date()])
      .describe('a timestamp, or a date: due by the end of that day (UTC)')
      .transform((d) => (d.length === 10 ? `${d}T23:59:59.999Z` : d)),
    recurrenceMonths: z.number().int().min(1).max(120).nullable().optional(),
  })
  .refine((b) => b.classIds.length + b.sectionIds.length + b.roles.length > 0, 'target at least one class, section or role');

export const trainingSchema = z.object({
  id: z.string(),
  courseId: z.string(),
  title: z.string(),
  classIds: z.array(z.string()),
  sectionIds: z.array(z.string()),
  roles: z.array(z.string()),
  dueDate: z.string(),
  recurrenceMonths: z.number().int().nullable(),
  assignedCount: z.number().int().describe('people assigned in the first cycle'),
  createdBy: z.string(),
  createdAt: z.string(),
});

export const recordsQuery = z.object({
  ...page,
  status: optionalFilter(z.enum(COMPLIANCE_STATUSES)),
  classId: optionalFilter(z.string().max(200)).describe('staff'),
  sectionId: optionalFilter(z.string().max(200)).describe('staff'),
  trainingId: optionalFilter(z.string().max(200)),
  personId: optionalFilter(z.string().max(200)).describe('staff'),
});

export const recordSchema = z.object({
  id: z.string(),
  trainingId: z.string(),
  title: z.string(),
  courseId: z.string(),
  personId: z.string(),
  studentId: z.string().describe('the same as personId'),
  classId: z.string().nullable(),
  sectionId: z.string().nullable(),
  cycle: z.number().int(),
  status: z.enum(COMPLIANCE_STATUSES),
  assignedAt: z.string(),
  dueAt: z.string(),
  dueDate: z.string().describe('the same as dueAt'),
  completedAt: z.string().nullable(),
  waivedAt: z.string().nullable(),
  waiveReason: z.string().nullable(),
});

const someId = z.string().min(1).max(200);
/** A record by its id, or the current cycle of a training for one person (personId or studentId). */
export const waiveBody = z
  .strictObject({
    recordId: someId.optional(),
    trainingId: someId.optional(),
    personId: someId.optional(),
    studentId: someId.optional().describe('the same as personId'),
    reason: z.string().trim().min(3).max(500),
  })
  .refine((b) => b.recordId !== undefined || (b.trainingId !== undefined && (b.personId ?? b.studentId) !== undefined), {
    message: 'name the record: recordId, or trainingId with personId (or studentId)',
    path: ['recordId'],
  })
  .refine((b) => b.personId === undefined || b.studentId === undefined || b.personId === b.studentId, {
    message: 'personId and studentId name the same person; they differ',
    path: ['studentId'],
  });
export type WaiveBody = z.infer<typeof waiveBody>;
