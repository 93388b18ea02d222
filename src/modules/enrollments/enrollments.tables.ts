import { boolean, foreignKey, index, integer, jsonb, pgTable, real, text, timestamp, unique, uniqueIndex } from 'drizzle-orm/pg-core';
import { courses, lessons } from '../courses/courses.tables.js';
import { jsonValue } from '../../platform/db/json-value.js';
import { learningPaths } from '../learning-paths/learning-paths.tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const ENROLLMENT_STATUSES = ['ACTIVE', 'DROPPED', 'COMPLETED'] as const;
export type EnrollmentStatus = (typeof ENROLLMENT_STATUSES)[number];

export const enrollments = pgTable(
  'enrollments',
  {
    id: text('id').primaryKey(),
    institutionId: text('institution_id').notNull(),
    courseId: text('course_id').notNull(),
    /** The student's CRM Contact id. */
    studentId: text('student_id').notNull(),
    status: text('status', { enum: ENROLLMENT_STATUSES }).notNull().default('ACTIVE'),
    progress: integer('progress').notNull().default(0),
    finalScore: real('final_score'),
    enrolledBy: text('enrolled_by'),
    enrolledAt: ts('enrolled_at').notNull(),
    completedAt: ts('completed_at'),
    droppedAt: ts('dropped_at'),
    lastAccessedAt: ts('last_accessed_at'),
    /** The learning path that made this enrollment: the path's order then locks the course until the courses before it are completed. */
    learningPathId: text('learning_path_id'),
    /**
     * When a recurring compliance training last reopened this completed enrollment for a new
     * cycle: quiz attempts started before it no longer count against `maxAttempts`.
     */
    reopenedAt: ts('reopened_at'),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('enrollments_inst_id_uq').on(t.institutionId, t.id),
    foreignKey({ name: 'enrollments_learning_path_fk', columns: [t.institutionId, t.learningPathId], foreignColumns: [learningPaths.institutionId, learningPaths.id] }),
    foreignKey({ name: 'enrollments_course_fk', columns: [t.institutionId, t.courseId], foreignColumns: [courses.institutionId, courses.id] }).onDelete('cascade'),
    uniqueIndex('enrollments_inst_course_student_uq').on(t.institutionId, t.courseId, t.studentId),
    index('enrollments_inst_student_idx').on(t.institutionId, t.studentId, t.status),
    index('enrollments_inst_course_status_idx').on(t.institutionId, t.courseId, t.status),
  ],
);

export const lessonProgress = pgTable(
  'lesson_progress',
  {
    id: text('id').primaryKey(),
    institutionId: text('institution_id').notNull(),
    enrollmentId: text('enrollment_id').notNull(),
    lessonId: text('lesson_id').notNull(),
    studentId: text('student_id').notNull(),
    completed: boolean('completed').notNull().default(false),
    completedAt: ts('completed_at'),
    progressPercent: integer('progress_percent').notNull().default(0),
    positionSeconds: integer('position_seconds'),
    pdfPage: integer('pdf_page'),
    pdfTotalPages: integer('pdf_total_pages'),
    score: real('score'),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('lesson_progress_inst_id_uq').on(t.institutionId, t.id),
    uniqueIndex('lesson_progress_enrollment_lesson_uq').on(t.institutionId, t.enrollmentId, t.lessonId),
    foreignKey({ name: 'lesson_progress_enrollment_fk', columns: [t.institutionId, t.enrollmentId], foreignColumns: [enrollments.institutionId, enrollments.id] }).onDelete(
      'cascade',
    ),
    foreignKey({ name: 'lesson_progress_lesson_fk', columns: [t.institutionId, t.lessonId], foreignColumns: [lessons.institutionId, lessons.id] }).onDelete('cascade'),
  ],
);

/** Learner player events (play, pause, seek, complete…), stored as they come. */
export const learnerEvents = pgTable(
  'learner_events',
  {
    id: text('id').primaryKey(),
    institutionId: text('institution_id').notNull(),
    lessonId: text('lesson_id').notNull(),
    studentId: text('student_id').notNull(),
    type: text('type').notNull(),
    positionSeconds: real('position_seconds'),
    data: jsonb('data').$type<Record<string, unknown>>().notNull().default({}),
    occurredAt: ts('occurred_at').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    unique('learner_events_inst_id_uq').on(t.institutionId, t.id),
    index('learner_events_inst_lesson_student_idx').on(t.institutionId, t.lessonId, t.studentId, t.createdAt),
    foreignKey({ name: 'learner_events_lesson_fk', columns: [t.institutionId, t.lessonId], foreignColumns: [lessons.institutionId, lessons.id] }).onDelete('cascade'),
  ],
);

export const lessonInteractions = pgTable(
  'lesson_interactions',
  {
    id: text('id').primaryKey(),
    institutionId: text('institution_id').notNull(),
    lessonId: text('lesson_id').notNull(),
    studentId: text('student_id').notNull(),
    kind: text('kind').notNull(),
    targetId: text('target_id'),
    data: jsonb('data').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    unique('lesson_interactions_inst_id_uq').on(t.institutionId, t.id),
    index('lesson_interactions_inst_lesson_student_idx').on(t.institutionId, t.lessonId, t.studentId),
    foreignKey({ name: 'lesson_interactions_lesson_fk', columns: [t.institutionId, t.lessonId], foreignColumns: [lessons.institutionId, lessons.id] }).onDelete('cascade'),
  ],
);

export const blockAnswers = pgTable(
  'block_answers',
  {
    id: text('id').primaryKey(),
    institutionId: text('institution_id').notNull(),
    lessonId: text('lesson_id').notNull(),
    blockId: text('block_id').notNull(),
    studentId: text('student_id').notNull(),
    // Any JSON value, a bare string too (Drizzle's jsonb would read "42" back as 42).
    answer: jsonValue('answer').notNull(),
    isCorrect: boolean('is_correct'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('block_answers_inst_id_uq').on(t.institutionId, t.id),
    uniqueIndex('block_answers_uq').on(t.institutionId, t.lessonId, t.blockId, t.studentId),
    foreignKey({ name: 'block_answers_lesson_fk', columns: [t.institutionId, t.lessonId], foreignColumns: [lessons.institutionId, lessons.id] }).onDelete('cascade'),
  ],
);

export type Enrollment = typeof enrollments.$inferSelect;
export type LessonProgress = typeof lessonProgress.$inferSelect;
