import { bigint, foreignKey, index, integer, pgTable, primaryKey, text, timestamp, unique } from 'drizzle-orm/pg-core';
import { lessons } from '../courses/courses.tables.js';
import { enrollments } from '../enrollments/enrollments.tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * A student's private note on a lesson (spec 2.3). Every read filters by institution and owner,
 * so every index leads with (institution_id, student_id):
 * - `lesson_notes_inst_student_updated_idx` serves GET /api/me/notes (updatedAt desc, id desc)
 *   as an ordered index scan;
 * - `lesson_notes_inst_student_lesson_idx` serves the per-lesson list (createdAt desc, id desc);
 * - `lesson_notes_search_idx` serves `?search=` (ILIKE '%…%'): a GIN index of the owner's keys
 *   (btree_gin) and the content's trigrams (pg_trgm), so a search of 3 or more characters reads
 *   the owner's matching rows, not all their notes nor everyone's matches (migration 0019).
 */
export const lessonNotes = pgTable(
  'lesson_notes',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    lessonId: text('lesson_id').notNull(),
    /** The owner's CRM Contact id (the caller's person id). */
    studentId: text('student_id').notNull(),
    /** The ACTIVE enrollment the note was written under. */
    enrollmentId: text('enrollment_id').notNull(),
    content: text('content').notNull(),
    timestampSeconds: integer('timestamp_seconds'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('lesson_notes_inst_id_uq').on(t.institutionId, t.id),
    foreignKey({ name: 'lesson_notes_lesson_fk', columns: [t.institutionId, t.lessonId], foreignColumns: [lessons.institutionId, lessons.id] }).onDelete('cascade'),
    foreignKey({ name: 'lesson_notes_enrollment_fk', columns: [t.institutionId, t.enrollmentId], foreignColumns: [enrollments.institutionId, enrollments.id] }).onDelete('cascade'),
    // `desc().nullsFirst()` is what `order by x desc` means, so the index serves the sort.
    index('lesson_notes_inst_student_updated_idx').on(t.institutionId, t.studentId, t.updatedAt.desc().nullsFirst(), t.id.desc().nullsFirst()),
    index('lesson_notes_inst_student_lesson_idx').on(t.institutionId, t.studentId, t.lessonId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst()),
    index('lesson_notes_search_idx').using('gin', t.institutionId, t.studentId, t.content.op('gin_trgm_ops')),
  ],
);

/**
 * A student's private bookmark at a position of a lesson (spec 2.4).
 * - `lesson_bookmarks_inst_student_created_idx` serves GET /api/me/bookmarks (createdAt desc, id desc);
 * - `lesson_bookmarks_inst_student_lesson_idx` serves the per-lesson list (timestampSeconds asc, createdAt);
 * - `lesson_bookmarks_search_idx` serves `?search=` on the label, as for notes.
 */
export const lessonBookmarks = pgTable(
  'lesson_bookmarks',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    lessonId: text('lesson_id').notNull(),
    studentId: text('student_id').notNull(),
    timestampSeconds: integer('timestamp_seconds').notNull(),
    /** 1 to 120 characters, or null. */
    label: text('label'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    unique('lesson_bookmarks_inst_id_uq').on(t.institutionId, t.id),
    foreignKey({ name: 'lesson_bookmarks_lesson_fk', columns: [t.institutionId, t.lessonId], foreignColumns: [lessons.institutionId, lessons.id] }).onDelete('cascade'),
    index('lesson_bookmarks_inst_student_created_idx').on(t.institutionId, t.studentId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst()),
    index('lesson_bookmarks_inst_student_lesson_idx').on(t.institutionId, t.studentId, t.lessonId, t.timestampSeconds, t.createdAt, t.id),
    index('lesson_bookmarks_search_idx').using('gin', t.institutionId, t.studentId, t.label.op('gin_trgm_ops')),
  ],
);

/**
 * How many notes and bookmarks each student has: the unfiltered `meta.total` of GET /api/me/notes
 * and /api/me/bookmarks, read as one row instead of counting the student's index entries on
 * every page. Kept exact by statement-level triggers on lesson_notes and lesson_bookmarks
 * (migration 0018), in the transaction of every insert and delete, including the deletes that
 * cascade from a lesson, a course or an enrollment; never written by the services. A student
 * with no row has none of either. `id` is the student's person id (the table is keyed like
 * every tenant table).
 */
export const studentAnnotationCounts = pgTable(
  'student_annotation_counts',
  {
    institutionId: text('institution_id').notNull(),
    /** The student's person id. */
    id: text('id').notNull(),
    notes: integer('notes').notNull().default(0),
    bookmarks: integer('bookmarks').notNull().default(0),
    /**
     * The id (xid8) of the last transaction that inserted, changed or deleted one of the
     * student's notes (bookmarks): a version for caching filtered totals (filtered-totals.ts).
     * Transaction ids never repeat in a cluster, so the version never goes back, even when the
     * row is truncated and rebuilt.
     */
    notesVersion: bigint('notes_version', { mode: 'number' }).notNull().default(0),
    bookmarksVersion: bigint('bookmarks_version', { mode: 'number' }).notNull().default(0),
  },
  (t) => [primaryKey({ name: 'student_annotation_counts_pk', columns: [t.institutionId, t.id] })],
);

export type LessonNote = typeof lessonNotes.$inferSelect;
export type LessonBookmark = typeof lessonBookmarks.$inferSelect;
