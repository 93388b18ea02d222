import { and, asc, count, desc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { ServiceContext } from '../../platform/context.js';
import { containsPattern } from '../../platform/db/like.js';
import { iso } from '../../platform/dto.js';
import { notFound, validationError } from '../../platform/http/errors.js';
import { pageMeta, pageOffset, toPage } from '../../platform/http/pagination.js';
import type { PageMeta } from '../../platform/http/envelope.js';
import { newId } from '../../platform/ids.js';
import { courses, lessons, type Lesson } from '../courses/courses.tables.js';
import { requireAccess } from '../access/access.service.js';
import { pageWithTotal, totalsCacheOf, totalsKey } from './filtered-totals.js';
import { lessonBookmarks, lessonNotes, studentAnnotationCounts, type LessonBookmark, type LessonNote } from './notes.tables.js';
import type { BookmarkDto, CreateBookmarkInput, CreateNoteInput, MyBookmarkRow, MyListQuery, MyNoteRow, NoteDto, UpdateBookmarkInput, UpdateNoteInput } from './notes.schemas.js';
import { inTenant, sameTenantRef } from '../../platform/db/tenancy.js';

/** Spec 4.3 and 8: my notes default to 20 a page. */
const MY_LIST_DEFAULT_PAGE_SIZE = 20;

// ── mapping ────────────────────────────────────────────────────────────────────

const toNoteDto = (n: LessonNote): NoteDto => ({
  id: n.id,
  lessonId: n.lessonId,
  studentId: n.studentId,
  enrollmentId: n.enrollmentId,
  content: n.content,
  timestampSeconds: n.timestampSeconds,
  createdAt: iso(n.createdAt),
  updatedAt: iso(n.updatedAt),
});

const toBookmarkDto = (b: LessonBookmark): BookmarkDto => ({
  id: b.id,
  lessonId: b.lessonId,
  studentId: b.studentId,
  timestampSeconds: b.timestampSeconds,
  label: b.label,
  createdAt: iso(b.createdAt),
});

/** `m:ss` below one hour, `h:mm:ss` from one hour (0 → "0:00", 3600 → "1:00:00"). */
export function formatTimestampLabel(totalSeconds: number): string {
  const s = Math.max(0, Math.floor(totalSeconds));
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  const seconds = String(s % 60).padStart(2, '0');
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${seconds}` : `${minutes}:${seconds}`;
}

function assertTimestampAllowed(lesson: Lesson, timestampSeconds: number | null | undefined) {
  if (timestampSeconds !== null && timestampSeconds !== undefined && lesson.type !== 'VIDEO') {
    throw validationError('timestampSeconds is only allowed on VIDEO lessons', [{ field: 'body.timestampSeconds', message: 'only allowed on VIDEO lessons' }]);
  }
}

/** The caller's rows in the caller's institution: every query on these tables starts here. */
const ownNotes = (ctx: ServiceContext) => and(inTenant(ctx, lessonNotes), eq(lessonNotes.studentId, ctx.actor.personId));
const ownBookmarks = (ctx: ServiceContext) => and(inTenant(ctx, lessonBookmarks), eq(lessonBookmarks.studentId, ctx.actor.personId));

// ── notes of a lesson ──────────────────────────────────────────────────────────

/** The caller's notes on a lesson, newest first. No enrollment check: a DROPPED student keeps them. */
export async function listLessonNotes(ctx: ServiceContext, lessonId: string): Promise<NoteDto[]> {
  const { lesson } = await requireAccess(ctx, 'lesson.view', lessonId);
  const rows = await ctx.db
    .select()
    .from(lessonNotes)
    .where(and(ownNotes(ctx), eq(lessonNotes.lessonId, lesson.id)))
    .orderBy(desc(lessonNotes.createdAt), desc(lessonNotes.id));
  return rows.map(toNoteDto);
}

/** Requires an ACTIVE enrollment in the lesson's course (403 ENROLLMENT_REQUIRED). */
export async function createNote(ctx: ServiceContext, lessonId: string, input: CreateNoteInput): Promise<NoteDto> {
  const { lesson, enrollment } = await requireAccess(ctx, 'lesson.annotate', lessonId);
  assertTimestampAllowed(lesson, input.timestampSeconds);
  const now = ctx.clock.now();
  const [row] = await ctx.db
    .insert(lessonNotes)
    .values({
      institutionId: ctx.institutionId,
      id: newId(),
      lessonId: lesson.id,
      studentId: ctx.actor.personId,
      enrollmentId: enrollment.id,
      content: input.content,
      timestampSeconds: input.timestampSeconds ?? null,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  return toNoteDto(row!);
}

/** Owner only; a note of someone else, or of another lesson, is 404 (existence not revealed). */
export async function updateNote(ctx: ServiceContext, lessonId: string, noteId: string, input: UpdateNoteInput): Promise<NoteDto> {
  const { lesson } = await requireAccess(ctx, 'lesson.view', lessonId);
  assertTimestampAllowed(lesson, input.timestampSeconds);
  const [row] = await ctx.db
    .update(lessonNotes)
    .set({
      ...(input.content !== undefined ? { content: input.content } : {}),
      ...(input.timestampSeconds !== undefined ? { timestampSeconds: input.timestampSeconds } : {}),
      updatedAt: ctx.clock.now(),
    })
    .where(and(ownNotes(ctx), eq(lessonNotes.id, noteId), eq(lessonNotes.lessonId, lesson.id)))
    .returning();
  if (!row) throw notFound('Note');
  return toNoteDto(row);
}

export async function deleteNote(ctx: ServiceContext, lessonId: string, noteId: string) {
  const { lesson } = await requireAccess(ctx, 'lesson.view', lessonId);
  const [row] = await ctx.db
    .delete(lessonNotes)
    .where(and(ownNotes(ctx), eq(lessonNotes.id, noteId), eq(lessonNotes.lessonId, lesson.id)))
    .returning({ id: lessonNotes.id });
  if (!row) throw notFound('Note');
  return { id: row.id, deleted: true as const };
}

// ── bookmarks of a lesson ──────────────────────────────────────────────────────

/** The caller's bookmarks on a lesson by position (tie: oldest first). */
export async function listLessonBookmarks(ctx: ServiceContext, lessonId: string): Promise<BookmarkDto[]> {
  const { lesson } = await requireAccess(ctx, 'lesson.view', lessonId);
  const rows = await ctx.db
    .select()
    .from(lessonBookmarks)
    .where(and(ownBookmarks(ctx), eq(lessonBookmarks.lessonId, lesson.id)))
    .orderBy(asc(lessonBookmarks.timestampSeconds), asc(lessonBookmarks.createdAt), asc(lessonBookmarks.id));
  return rows.map(toBookmarkDto);
}

export async function createBookmark(ctx: ServiceContext, lessonId: string, input: CreateBookmarkInput): Promise<BookmarkDto> {
  const { lesson } = await requireAccess(ctx, 'lesson.annotate', lessonId);
  const [row] = await ctx.db
    .insert(lessonBookmarks)
    .values({
      institutionId: ctx.institutionId,
      id: newId(),
      lessonId: lesson.id,
      studentId: ctx.actor.personId,
      timestampSeconds: input.timestampSeconds,
      label: input.label ?? null,
      createdAt: ctx.clock.now(),
    })
    .returning();
  return toBookmarkDto(row!);
}

export async function updateBookmark(ctx: ServiceContext, lessonId: string, bookmarkId: string, input: UpdateBookmarkInput): Promise<BookmarkDto> {
  const { lesson } = await requireAccess(ctx, 'lesson.view', lessonId);
  const [row] = await ctx.db
    .update(lessonBookmarks)
    .set({
      ...(input.timestampSeconds !== undefined ? { timestampSeconds: input.timestampSeconds } : {}),
      ...(input.label !== undefined ? { label: input.label } : {}),
    })
    .where(and(ownBookmarks(ctx), eq(lessonBookmarks.id, bookmarkId), eq(lessonBookmarks.lessonId, lesson.id)))
    .returning();
  if (!row) throw notFound('Bookmark');
  return toBookmarkDto(row);
}

export async function deleteBookmark(ctx: ServiceContext, lessonId: string, bookmarkId: string) {
  const { lesson } = await requireAccess(ctx, 'lesson.view', lessonId);
  const [row] = await ctx.db
    .delete(lessonBookmarks)
    .where(and(ownBookmarks(ctx), eq(lessonBookmarks.id, bookmarkId), eq(lessonBookmarks.lessonId, lesson.id)))
    .returning({ id: lessonBookmarks.id });
  if (!row) throw notFound('Bookmark');
  return { id: row.id, deleted: true as const };
}

// ── my notes / my bookmarks ────────────────────────────────────────────────────

const courseJoin = sameTenantRef(lessons.courseId, lessons.institutionId, courses);

/** Lesson ids of one course of the caller's institution (the `courseId` filter). */
const lessonIdsOfCourse = (ctx: ServiceContext, courseId: string) =>
  ctx.db
    .select({ id: lessons.id })
    .from(lessons)
    .where(and(inTenant(ctx, lessons), eq(lessons.courseId, courseId)));

const enrichmentColumns = {
  lessonTitle: lessons.title,
  lessonType: lessons.type,
  courseId: courses.id,
  courseTitle: courses.title,
};

/** The caller's counter row (student_annotation_counts): the unfiltered totals. */
const ownCounts = (ctx: ServiceContext) => and(inTenant(ctx, studentAnnotationCounts), eq(studentAnnotationCounts.id, ctx.actor.personId));

/** The caller's unfiltered totals from the counter row (none: 0 and 0). */
async function annotationCounts(ctx: ServiceContext): Promise<{ notes: number; bookmarks: number }> {
  const [row] = await ctx.db.select({ notes: studentAnnotationCounts.notes, bookmarks: studentAnnotationCounts.bookmarks }).from(studentAnnotationCounts).where(ownCounts(ctx));
  return row ?? { notes: 0, bookmarks: 0 };
}

const noteRowColumns = {
  id: lessonNotes.id,
  lessonId: lessonNotes.lessonId,
  content: lessonNotes.content,
  timestampSeconds: lessonNotes.timestampSeconds,
  createdAt: lessonNotes.createdAt,
  updatedAt: lessonNotes.updatedAt,
  ...enrichmentColumns,
};

/** The caller's notes (bookmarks) version from the counter row, as a column of a query (filtered-totals.ts). */
const ownVersion = (ctx: ServiceContext, column: typeof studentAnnotationCounts.notesVersion | typeof studentAnnotationCounts.bookmarksVersion) =>
  sql<number | null>`(${ctx.db.select({ version: column }).from(studentAnnotationCounts).where(ownCounts(ctx))})`.mapWith(Number);

/** The exact count of the caller's rows matching `where`, with the version it was counted at, in one statement. */
const countWithVersion = (ctx: ServiceContext, table: typeof lessonNotes | typeof lessonBookmarks, where: SQL | undefined, version: ReturnType<typeof ownVersion>) =>
  ctx.db
    .select({ total: count(), version })
    .from(table)
    .where(where)
    .then(([row]) => ({ total: row?.total ?? 0, version: row?.version ?? 0 }));

/** The key of a filtered list in the totals cache: the caller, the list and its filters. */
const filteredListKey = (ctx: ServiceContext, list: 'notes' | 'bookmarks', query: MyListQuery) =>
  totalsKey(ctx.institutionId, ctx.actor.personId, list, query.courseId, query.search);

/**
 * The unfiltered page with the caller's counter as a column: one prepared statement per database
 * handle (no query building per request; PostgreSQL parses and plans it once per connection),
 * one round trip. A page with no rows carries no total: the counter is read on its own then.
 */
const prepareMyNotesPage = (db: ServiceContext['db']) => {
  const institutionId = sql.placeholder('institutionId');
  const studentId = sql.placeholder('studentId');
  const total = db
    .select({ notes: studentAnnotationCounts.notes })
    .from(studentAnnotationCounts)
    .where(and(eq(studentAnnotationCounts.institutionId, institutionId), eq(studentAnnotationCounts.id, studentId)));
  return db
    .select({ ...noteRowColumns, total: sql<number>`(${total})`.mapWith(Number) })
    .from(lessonNotes)
    .innerJoin(lessons, sameTenantRef(lessonNotes.lessonId, lessonNotes.institutionId, lessons))
    .innerJoin(courses, courseJoin)
    .where(and(eq(lessonNotes.institutionId, institutionId), eq(lessonNotes.studentId, studentId)))
    .orderBy(desc(lessonNotes.updatedAt), desc(lessonNotes.id))
    .limit(sql.placeholder('limit'))
    .offset(sql.placeholder('offset'))
    .prepare('notes_my_page');
};
const preparedMyNotesPages = new WeakMap<object, ReturnType<typeof prepareMyNotesPage>>();

/**
 * The caller's notes across lessons, updatedAt desc (tie: id desc), with lesson and course.
 *
 * Unfiltered, `meta.total` is the caller's counter row (student_annotation_counts, kept by
 * triggers), read in the page query: the cost does not grow with the caller's notes. Filtered,
 * the total is counted, then reused while the caller's notes are unchanged (filtered-totals.ts),
 * so paging through a search counts once: the courseId filter is a `lesson_id in (lessons of the course)`
 * subquery over lesson_notes_inst_student_lesson_idx (bounded by the caller's notes in that
 * course); search is `content ILIKE '%…%'` with wildcards escaped.
 */
export async function listMyNotes(ctx: ServiceContext, query: MyListQuery): Promise<{ rows: MyNoteRow[]; meta: PageMeta }> {
  const page = toPage(query, MY_LIST_DEFAULT_PAGE_SIZE);
  const toRow = (r: Omit<MyNoteRow, 'createdAt' | 'updatedAt'> & { createdAt: Date; updatedAt: Date }): MyNoteRow => ({
    id: r.id,
    lessonId: r.lessonId,
    content: r.content,
    timestampSeconds: r.timestampSeconds,
    createdAt: iso(r.createdAt),
    updatedAt: iso(r.updatedAt),
    lessonTitle: r.lessonTitle,
    lessonType: r.lessonType,
    courseId: r.courseId,
    courseTitle: r.courseTitle,
  });

  if (query.courseId === undefined && query.search === undefined) {
    let prepared = preparedMyNotesPages.get(ctx.db);
    if (!prepared) {
      prepared = prepareMyNotesPage(ctx.db);
      preparedMyNotesPages.set(ctx.db, prepared);
    }
    const rows = await prepared.execute({ institutionId: ctx.institutionId, studentId: ctx.actor.personId, limit: page.perPage, offset: pageOffset(page) });
    const total = rows.length > 0 ? (rows[0]!.total ?? 0) : (await annotationCounts(ctx)).notes;
    return { rows: rows.map(toRow), meta: pageMeta(page, total) };
  }

  const filters: Array<SQL | undefined> = [ownNotes(ctx)];
  if (query.courseId !== undefined) filters.push(inArray(lessonNotes.lessonId, lessonIdsOfCourse(ctx, query.courseId)));
  if (query.search !== undefined) filters.push(sql`${lessonNotes.content} ilike ${containsPattern(query.search)} escape '\\'`);
  const where = and(...filters);
  const version = ownVersion(ctx, studentAnnotationCounts.notesVersion);
  const { rows, total } = await pageWithTotal(
    totalsCacheOf(ctx.db, ctx.config.FILTERED_TOTALS_CACHE_SIZE),
    filteredListKey(ctx, 'notes', query),
    () =>
      ctx.db
        .select({ ...noteRowColumns, version })
        .from(lessonNotes)
        .innerJoin(lessons, sameTenantRef(lessonNotes.lessonId, lessonNotes.institutionId, lessons))
        .innerJoin(courses, courseJoin)
        .where(where)
        .orderBy(desc(lessonNotes.updatedAt), desc(lessonNotes.id))
        .limit(page.perPage)
        .offset(pageOffset(page)),
    () => countWithVersion(ctx, lessonNotes, where, version),
  );
  return { rows: rows.map(toRow), meta: pageMeta(page, total) };
}

/**
 * The caller's bookmarks across lessons, createdAt desc (tie: id desc); search matches the label.
 * Totals as in `listMyNotes`: the counter row unfiltered, counted (or reused) when filtered.
 */
export async function listMyBookmarks(ctx: ServiceContext, query: MyListQuery): Promise<{ rows: MyBookmarkRow[]; meta: PageMeta }> {
  const page = toPage(query, MY_LIST_DEFAULT_PAGE_SIZE);
  const filters: Array<SQL | undefined> = [ownBookmarks(ctx)];
  if (query.courseId !== undefined) filters.push(inArray(lessonBookmarks.lessonId, lessonIdsOfCourse(ctx, query.courseId)));
  if (query.search !== undefined) filters.push(sql`${lessonBookmarks.label} ilike ${containsPattern(query.search)} escape '\\'`);
  const where = and(...filters);

  const version = ownVersion(ctx, studentAnnotationCounts.bookmarksVersion);
  const bookmarksPage = () =>
    ctx.db
      .select({
        id: lessonBookmarks.id,
        lessonId: lessonBookmarks.lessonId,
        studentId: lessonBookmarks.studentId,
        timestampSeconds: lessonBookmarks.timestampSeconds,
        label: lessonBookmarks.label,
        createdAt: lessonBookmarks.createdAt,
        ...enrichmentColumns,
        version,
      })
      .from(lessonBookmarks)
      .innerJoin(lessons, sameTenantRef(lessonBookmarks.lessonId, lessonBookmarks.institutionId, lessons))
      .innerJoin(courses, courseJoin)
      .where(where)
      .orderBy(desc(lessonBookmarks.createdAt), desc(lessonBookmarks.id))
      .limit(page.perPage)
      .offset(pageOffset(page));
  // Unfiltered, the total is the caller's counter row; filtered, it is counted (or cached at the caller's version).
  const { rows, total } =
    query.courseId === undefined && query.search === undefined
      ? await Promise.all([bookmarksPage(), annotationCounts(ctx)]).then(([rows, counts]) => ({ rows, total: counts.bookmarks }))
      : await pageWithTotal(totalsCacheOf(ctx.db, ctx.config.FILTERED_TOTALS_CACHE_SIZE), filteredListKey(ctx, 'bookmarks', query), bookmarksPage, () =>
          countWithVersion(ctx, lessonBookmarks, where, version),
        );
  return {
    rows: rows.map((r) => ({
      id: r.id,
      lessonId: r.lessonId,
      studentId: r.studentId,
      timestampSeconds: r.timestampSeconds,
      label: r.label,
      createdAt: iso(r.createdAt),
      timestampLabel: formatTimestampLabel(r.timestampSeconds),
      lessonTitle: r.lessonTitle,
      lessonType: r.lessonType,
      courseId: r.courseId,
      courseTitle: r.courseTitle,
    })),
    meta: pageMeta(page, total),
  };
}
