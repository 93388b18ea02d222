import { bigint, index, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
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
    courseId: text('course_id').references(() => courses.id, { onDelete: 'set null' }),
    lessonId: text('lesson_id').references(() => lessons.id, { onDelete: 'set null' }),
    uploadedBy: text('uploaded_by').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('files_key_uq').on(t.key),
    index('files_inst_created_idx').on(t.institutionId, t.createdAt),
    index('files_inst_uploader_idx').on(t.institutionId, t.uploadedBy, t.createdAt),
  ],
);

export type FileRow = typeof files.$inferSelect;
