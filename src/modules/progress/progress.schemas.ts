import { z } from 'zod';
import { realNumber } from '../../platform/http/numbers.js';
import { ENROLLMENT_STATUSES } from '../enrollments/enrollments.tables.js';

export const lessonParams = z.object({ id: z.string().min(1) });
export const blockParams = z.object({ id: z.string().min(1), blockId: z.string().min(1).max(100) });

const progressFields = {
  completed: z.boolean().optional(),
  progressPercent: z.number().min(0).max(100).optional(),
  // A player reports fractions (42.7); stored in whole seconds, as the events route does.
  positionSeconds: z
    .number()
    .min(0)
    .max(86_400 * 7)
    .transform(Math.floor)
    .optional(),
};

export const progressBody = z.object(progressFields);

export const progressBatchBody = z.object({
  items: z
    .array(z.object({ lessonId: z.string().min(1).optional(), ...progressFields }))
    .min(1)
    .max(200),
});

export const progressResultSchema = z.object({
  lessonId: z.string(),
  enrollmentId: z.string(),
  completed: z.boolean(),
  completedAt: z.string().nullable(),
  progressPercent: z.number().int().describe('this lesson, 0-100'),
  positionSeconds: z.number().int().nullable(),
  pdfPage: z.number().int().nullable(),
  pdfTotalPages: z.number().int().nullable(),
  updatedAt: z.string(),
  progress: z.number().int().describe("the enrollment's progress, 0-100"),
  status: z.enum(ENROLLMENT_STATUSES).describe("the enrollment's status"),
  courseCompleted: z.boolean(),
  completedNow: z.boolean().describe('this call completed the course'),
  certificateId: z
    .string()
    .nullable()
    .describe('the certificate this call issued: at completion, or when it lifted a completed course’s final score to its passing score; else null'),
});

export const progressBatchResultSchema = z.object({
  items: z.array(progressResultSchema),
  progress: z.number().int(),
  status: z.enum(ENROLLMENT_STATUSES),
});

export const pdfProgressBody = z.object({
  page: z.number().int().min(1).max(100_000),
  totalPages: z.number().int().min(1).max(100_000),
});

export const eventSchema = z.object({
  type: z.string().trim().min(1).max(40).describe('play, pause, seek, complete, …'),
  positionSeconds: realNumber()
    .min(0)
    .max(86_400 * 7)
    .optional(),
  occurredAt: z.string().datetime({ offset: true }).optional(),
  data: z.record(z.string(), z.unknown()).optional(),
});

export const eventsBody = z.union([eventSchema, z.object({ events: z.array(eventSchema).min(1).max(500) })]);

export const eventsResultSchema = z.object({ recorded: z.number().int(), progress: progressResultSchema.nullable() });

export const interactionBody = z.object({
  kind: z.string().trim().min(1).max(60),
  targetId: z.string().max(200).optional(),
  data: z.record(z.string(), z.unknown()).optional(),
});

export const interactionSchema = z.object({
  id: z.string(),
  lessonId: z.string(),
  kind: z.string(),
  targetId: z.string().nullable(),
  data: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
});

export const answerSchema = z.object({
  lessonId: z.string(),
  blockId: z.string(),
  answer: z.unknown(),
  isCorrect: z.boolean().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const answerBody = z.object({
  answer: z.union([z.string().max(10_000), z.number(), z.boolean(), z.array(z.unknown()).max(100), z.record(z.string(), z.unknown())]),
});
