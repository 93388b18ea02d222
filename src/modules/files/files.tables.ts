import { bigint, foreignKey, index, pgTable, text, timestamp, unique, uniqueIndex } from 'drizzle-orm/pg-core';
import { courses, lessons } from '../courses/courses.tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * Uploaded objects registered by a user (spec 4.9 /api/upload, /api/files). The bytes live
 * in storage under `key`; a key is registered at most once.
 */
export const files = pgTable(
  'files',
  {
    id: text('id').primaryKey(),
    institutionId: text('institution_id').notNull(),
    key: text('key').notNull(),
    name: text('name').notNull(),
    contentType: text('content_type').notNull(),
    size: bigint('size', { mode: 'number' }).notNull(),
    courseId: text('course_id'),
    lessonId: text('lesson_id'),
    uploadedBy: text('uploaded_by').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    unique('files_inst_id_uq').on(t.institutionId, t.id),
    // ON DELETE SET NULL (course_id) / (lesson_id) in the migration: the file stays, the link goes.
    foreignKey({ name: 'files_course_fk', columns: [t.institutionId, t.courseId], foreignColumns: [courses.institutionId, courses.id] }).onDelete('set null'),
    foreignKey({ name: 'files_lesson_fk', columns: [t.institutionId, t.lessonId], foreignColumns: [lessons.institutionId, lessons.id] }).onDelete('set null'),
    uniqueIndex('files_key_uq').on(t.key),
    index('files_inst_created_idx').on(t.institutionId, t.createdAt),
    index('files_inst_uploader_idx').on(t.institutionId, t.uploadedBy, t.createdAt),
  ],
);

export type FileRow = typeof files.$inferSelect;

export const UPLOAD_STATUSES = ['PENDING', 'REGISTERED', 'REMOVED'] as const;

/**
 * Presigned uploads: who asked for which key, how large it may be, and whether it was
 * registered. Registration is bound to the row (same institution, same person); a row still
 * PENDING a day after the presign has its object removed by the worker. Pending rows count
 * against the upload quotas until then.
 */
export const uploads = pgTable(
  'uploads',
  {
    id: text('id').primaryKey(),
    institutionId: text('institution_id').notNull(),
    key: text('key').notNull(),
    presignedBy: text('presigned_by').notNull(),
    contentType: text('content_type').notNull(),
    /** The size declared at presign (reserved against the quotas). */
    size: bigint('size', { mode: 'number' }).notNull(),
    status: text('status', { enum: UPLOAD_STATUSES }).notNull().default('PENDING'),
    expiresAt: ts('expires_at').notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('uploads_inst_id_uq').on(t.institutionId, t.id),
    uniqueIndex('uploads_key_uq').on(t.key),
    index('uploads_inst_presigner_status_idx').on(t.institutionId, t.presignedBy, t.status),
  ],
);

export type UploadRow = typeof uploads.$inferSelect;
