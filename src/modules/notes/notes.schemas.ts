import { z } from 'zod';
import { optionalFilter } from '../../platform/http/query-filters.js';
import { LESSON_TYPES } from '../courses/courses.tables.js';
import { paginationFields } from '../../platform/http/pagination.js';
import { charsBetween } from '../../platform/text.js';

/** Limits of spec part 8 (notes) and 4.3 (bookmarks). */
export const NOTE_CONTENT_MAX = 10_000;
export const BOOKMARK_LABEL_MAX = 120;
export const SEARCH_MAX = 200;
export const TIMESTAMP_MAX_SECONDS = 86_400;

const noteContent = z
  .string()
  .trim()
  .refine(charsBetween(1, NOTE_CONTENT_MAX), `must be 1 to ${NOTE_CONTENT_MAX} characters after trimming`)
  .describe(`trimmed; 1 to ${NOTE_CONTENT_MAX} characters`);

const timestampSeconds = z.number().int().min(0).max(TIMESTAMP_MAX_SECONDS).describe(`integer seconds, 0 to ${TIMESTAMP_MAX_SECONDS}`);

/** Trimmed; empty or whitespace-only becomes null; otherwise 1 to 120 characters. */
const bookmarkLabel = z
  .string()
  .trim()
  .refine(charsBetween(0, BOOKMARK_LABEL_MAX), `must be at most ${BOOKMARK_LABEL_MAX} characters after trimming`)
  .transform((s) => (s === '' ? null : s))
  .nullable()
  .describe(`trimmed; 1 to ${BOOKMARK_LABEL_MAX} characters; empty string is stored as null`);

// ── path parameters ────────────────────────────────────────────────────────────
export const lessonParams = z.object({ id: z.string().min(1).describe('lesson id') });
export const noteParams = lessonParams.extend({ noteId: z.string().min(1) });
export const bookmarkParams = lessonParams.extend({ bookmarkId: z.string().min(1) });

// ── request bodies ─────────────────────────────────────────────────────────────
export const createNoteBody = z.object({
  content: noteContent,
  timestampSeconds: timestampSeconds.nullable().optional().describe('VIDEO lessons only; 0 to 86,400 or null'),
});

export const updateNoteBody = z
  .object({
    content: noteContent.optional(),
    timestampSeconds: timestampSeconds.nullable().optional().describe('VIDEO lessons only; 0 to 86,400 or null'),
  })
  .refine((b) => b.content !== undefined || b.timestampSeconds !== undefined, 'Provide content or timestampSeconds');

export const createBookmarkBody = z.object({
  timestampSeconds,
  label: bookmarkLabel.optional(),
});

export const updateBookmarkBody = z
  .object({
    timestampSeconds: timestampSeconds.optional(),
    label: bookmarkLabel.optional(),
  })
  .refine((b) => b.timestampSeconds !== undefined || b.label !== undefined, 'Provide label or timestampSeconds');

export type CreateNoteInput = z.output<typeof createNoteBody>;
export type UpdateNoteInput = z.output<typeof updateNoteBody>;
export type CreateBookmarkInput = z.output<typeof createBookmarkBody>;
export type UpdateBookmarkInput = z.output<typeof updateBookmarkBody>;

// ── query of GET /api/me/notes and /api/me/bookmarks ───────────────────────────
export const myListQuery = z.object({
  ...paginationFields,
  courseId: optionalFilter(z.string()).describe('only rows of lessons of this course'),
  search: z
    .string()
    .refine(charsBetween(1, SEARCH_MAX), `must be 1 to ${SEARCH_MAX} characters`)
    .optional()
    .describe(`1 to ${SEARCH_MAX} characters; case-insensitive substring (no wildcards)`),
});
export type MyListQuery = z.output<typeof myListQuery>;

// ── responses ──────────────────────────────────────────────────────────────────
const isoTimestamp = z.string().describe('ISO 8601 timestamp');

export const noteSchema = z.object({
  id: z.string(),
  lessonId: z.string(),
  studentId: z.string().describe('the owner'),
  enrollmentId: z.string(),
  content: z.string(),
  timestampSeconds: z.number().int().nullable(),
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
});

export const bookmarkSchema = z.object({
  id: z.string(),
  lessonId: z.string(),
  studentId: z.string().describe('the owner'),
  timestampSeconds: z.number().int(),
  label: z.string().nullable(),
  createdAt: isoTimestamp,
});

const enrichment = {
  lessonTitle: z.string(),
  lessonType: z.enum(LESSON_TYPES),
  courseId: z.string(),
  courseTitle: z.string(),
};

/** Spec 2.5: the note fields without enrollmentId and studentId, plus the lesson and course. */
export const myNoteRowSchema = noteSchema.omit({ enrollmentId: true, studentId: true }).extend(enrichment);

/** Spec 2.5: the bookmark fields plus the lesson and course, plus timestampLabel. */
export const myBookmarkRowSchema = bookmarkSchema.extend({
  ...enrichment,
  timestampLabel: z.string().describe('m:ss below one hour, h:mm:ss from one hour'),
});

export type NoteDto = z.infer<typeof noteSchema>;
export type BookmarkDto = z.infer<typeof bookmarkSchema>;
export type MyNoteRow = z.infer<typeof myNoteRowSchema>;
export type MyBookmarkRow = z.infer<typeof myBookmarkRowSchema>;
