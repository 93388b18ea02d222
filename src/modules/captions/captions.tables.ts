import { sql } from 'drizzle-orm';
import { boolean, foreignKey, index, pgTable, text, timestamp, unique, uniqueIndex } from 'drizzle-orm/pg-core';
import { lessons } from '../courses/courses.tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * WebVTT caption tracks of a lesson video (spec 2.2, 4.2). `blockId` names a video block of
 * the lesson; null is the lesson-level video. The file lives in storage under `storageKey`
 * and is never modified: a re-upload is a new track with a new key.
 */
export const captionTracks = pgTable(
  'caption_tracks',
  {
    id: text('id').primaryKey(),
    institutionId: text('institution_id').notNull(),
    lessonId: text('lesson_id').notNull(),
    blockId: text('block_id'),
    language: text('language').notNull(),
    label: text('label').notNull(),
    storageKey: text('storage_key').notNull(),
    isDefault: boolean('is_default').notNull().default(false),
    createdAt: ts('created_at').notNull(),
    createdBy: text('created_by').notNull(),
  },
  (t) => [
    unique('caption_tracks_inst_id_uq').on(t.institutionId, t.id),
    foreignKey({ name: 'caption_tracks_lesson_fk', columns: [t.institutionId, t.lessonId], foreignColumns: [lessons.institutionId, lessons.id] }).onDelete('cascade'),
    index('caption_tracks_inst_lesson_idx').on(t.institutionId, t.lessonId, t.createdAt),
    // At most one default per (lesson, blockId). NULLs are distinct in a unique index, so the
    // lesson-level video (block_id null) gets its own partial index (works on PG 15 and PGlite).
    uniqueIndex('caption_tracks_default_block_uq')
      .on(t.institutionId, t.lessonId, t.blockId)
      .where(sql`${t.isDefault} and ${t.blockId} is not null`),
    uniqueIndex('caption_tracks_default_lesson_uq')
      .on(t.institutionId, t.lessonId)
      .where(sql`${t.isDefault} and ${t.blockId} is null`),
  ],
);

export type CaptionTrack = typeof captionTracks.$inferSelect;
