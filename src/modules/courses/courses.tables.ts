import { boolean, foreignKey, index, integer, jsonb, pgTable, text, timestamp, unique, uniqueIndex } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const COURSE_STATUSES = ['DRAFT', 'PUBLISHED', 'ARCHIVED'] as const;
export const DRIP_MODES = ['NONE', 'SCHEDULED', 'SEQUENTIAL'] as const;
export const LESSON_TYPES = ['VIDEO', 'TEXT', 'PDF', 'QUIZ', 'ASSIGNMENT', 'SCORM', 'LIVE', 'INTERACTIVE'] as const;
export type LessonType = (typeof LESSON_TYPES)[number];

export const categories = pgTable(
  'categories',
  {
    id: text('id').primaryKey(),
    institutionId: text('institution_id').notNull(),
    name: text('name').notNull(),
    description: text('description'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [uniqueIndex('categories_inst_name_uq').on(t.institutionId, t.name), unique('categories_inst_id_uq').on(t.institutionId, t.id)],
);

export const courses = pgTable(
  'courses',
  {
    id: text('id').primaryKey(),
    institutionId: text('institution_id').notNull(),
    title: text('title').notNull(),
    description: text('description'),
    categoryId: text('category_id'),
    ownerId: text('owner_id').notNull(),
    status: text('status', { enum: COURSE_STATUSES }).notNull().default('DRAFT'),
    maxEnrollments: integer('max_enrollments'),
    dripMode: text('drip_mode', { enum: DRIP_MODES }).notNull().default('NONE'),
    certificateEnabled: boolean('certificate_enabled').notNull().default(false),
    /** Months a certificate stays valid; null = no expiry. */
    certificateValidityMonths: integer('certificate_validity_months'),
    thumbnailUrl: text('thumbnail_url'),
    estimatedDuration: integer('estimated_duration'),
    passingScore: integer('passing_score'),
    publishedAt: ts('published_at'),
    archivedAt: ts('archived_at'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('courses_inst_id_uq').on(t.institutionId, t.id),
    index('courses_inst_status_idx').on(t.institutionId, t.status, t.createdAt),
    index('courses_inst_owner_idx').on(t.institutionId, t.ownerId),
    // ON DELETE SET NULL (category_id) in the migration: only the reference is cleared.
    foreignKey({ name: 'courses_category_fk', columns: [t.institutionId, t.categoryId], foreignColumns: [categories.institutionId, categories.id] }).onDelete('set null'),
  ],
);

export const courseModules = pgTable(
  'course_modules',
  {
    id: text('id').primaryKey(),
    institutionId: text('institution_id').notNull(),
    courseId: text('course_id').notNull(),
    title: text('title').notNull(),
    order: integer('order').notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('course_modules_inst_id_uq').on(t.institutionId, t.id),
    index('modules_inst_course_idx').on(t.institutionId, t.courseId, t.order),
    foreignKey({ name: 'course_modules_course_fk', columns: [t.institutionId, t.courseId], foreignColumns: [courses.institutionId, courses.id] }).onDelete('cascade'),
  ],
);

/** A block of a lesson (video, text, question…); captions may name a video block. */
export interface LessonBlock {
  id: string;
  type: string;
  [key: string]: unknown;
}

export const lessons = pgTable(
  'lessons',
  {
    id: text('id').primaryKey(),
    institutionId: text('institution_id').notNull(),
    courseId: text('course_id').notNull(),
    moduleId: text('module_id'),
    title: text('title').notNull(),
    type: text('type', { enum: LESSON_TYPES }).notNull(),
    order: integer('order').notNull(),
    content: text('content'),
    videoUrl: text('video_url'),
    durationSeconds: integer('duration_seconds'),
    isRequired: boolean('is_required').notNull().default(true),
    unlockAfterDays: integer('unlock_after_days'),
    unlockAt: ts('unlock_at'),
    blocks: jsonb('blocks').$type<LessonBlock[]>().notNull().default([]),
    /** A `completed` or `passed` xAPI statement about the lesson's activity completes it (see the xapi module). */
    xapiCompletion: boolean('xapi_completion').notNull().default(true),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('lessons_inst_id_uq').on(t.institutionId, t.id),
    index('lessons_inst_course_idx').on(t.institutionId, t.courseId, t.order),
    foreignKey({ name: 'lessons_course_fk', columns: [t.institutionId, t.courseId], foreignColumns: [courses.institutionId, courses.id] }).onDelete('cascade'),
    // ON DELETE SET NULL (module_id) in the migration: a deleted module's lessons stay in the course.
    foreignKey({ name: 'lessons_module_fk', columns: [t.institutionId, t.moduleId], foreignColumns: [courseModules.institutionId, courseModules.id] }).onDelete('set null'),
  ],
);

export type Course = typeof courses.$inferSelect;
export type CourseModule = typeof courseModules.$inferSelect;
export type Lesson = typeof lessons.$inferSelect;
export type Category = typeof categories.$inferSelect;
