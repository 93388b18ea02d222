import { and, asc, count, desc, eq, inArray, sql } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { ServiceContext } from '../../platform/context.js';
import { containsPattern } from '../../platform/db/like.js';
import { iso } from '../../platform/dto.js';
import { notFound, validationError } from '../../platform/http/errors.js';
import { pageMeta, pageOffset, toPage } from '../../platform/http/pagination.js';
import type { PageMeta } from '../../platform/http/envelope.js';
import { newId } from '../../platform/ids.js';
import { courses, lessons, type Lesson } from '../courses/courses.tables.js';
import { requireAccess } from '../access/access.service.js';
import { orderedScanFor, pageWithTotal, totalsCacheOf, totalsKey } from './filtered-totals.js';
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

const enrichmentColumns = {
  lessonTitle: lessons.title,
  lessonType: lessons.type,
  courseId: courses.id,
  courseTitle: courses.title,
};

/** The columns of a note in the lists (the keys too: the ordered search joins and filters on them; it reads the same columns from its subquery). */
const noteColumns = {
  id: lessonNotes.id,
  institutionId: lessonNotes.institutionId,
  studentId: lessonNotes.studentId,
  lessonId: lessonNotes.lessonId,
  content: lessonNotes.content,
  timestampSeconds: lessonNotes.timestampSeconds,
  createdAt: lessonNotes.createdAt,
  updatedAt: lessonNotes.updatedAt,
};
const noteRowColumns = { ...noteColumns, ...enrichmentColumns };

const bookmarkColumns = {
  id: lessonBookmarks.id,
  institutionId: lessonBookmarks.institutionId,
  studentId: lessonBookmarks.studentId,
  lessonId: lessonBookmarks.lessonId,
  timestampSeconds: lessonBookmarks.timestampSeconds,
  label: lessonBookmarks.label,
  createdAt: lessonBookmarks.createdAt,
};
const bookmarkRowColumns = { ...bookmarkColumns, ...enrichmentColumns };

/** The values of a list statement's placeholders. */
type MyListParams = {
  institutionId: string;
  studentId: string;
  courseId?: string;
  /** The ILIKE pattern of the search (wildcards escaped). */
  pattern?: string;
  limit: number;
  offset: number;
  /** How many of the caller's newest rows the ordered search reads (`orderedScanFor`). */
  scan?: number;
};

/** Which filters a list statement has: each combination is its own prepared statement. */
interface MyListShape {
  course: boolean;
  search: boolean;
}

type PageStatement<Row> = { execute(params: MyListParams): Promise<Array<Row & { counter: number | null }>> };

/** The statements of one list shape, as `myListPage` runs them. */
interface MyListStatements<Row> {
  /** A page; `counter` is the caller's unfiltered total, or with filters their version (null: no counter row). */
  page: PageStatement<Row>;
  /**
   * With a search: the same page found by reading the caller's newest `scan` rows in order
   * (the owner's (student, time) index) and filtering them. Right whenever it finds a full page:
   * the first matches in order are the first matches of the prefix.
   */
  orderedSearch?: PageStatement<Row>;
  /** The exact filtered total with the version it was counted at and the unfiltered total, in one statement. */
  count: { execute(params: MyListParams): Promise<Array<{ total: number; version: number | null; all: number | null }>> };
}

const placeholders = {
  institutionId: sql.placeholder('institutionId'),
  studentId: sql.placeholder('studentId'),
  courseId: sql.placeholder('courseId'),
  pattern: sql.placeholder('pattern'),
  limit: sql.placeholder('limit'),
  offset: sql.placeholder('offset'),
  scan: sql.placeholder('scan'),
};

/** A column of the caller's counter row, as a scalar subquery. */
const counterColumn = (db: ServiceContext['db'], column: PgColumn) =>
  sql<number | null>`(${db
    .select({ value: column })
    .from(studentAnnotationCounts)
    .where(and(eq(studentAnnotationCounts.institutionId, placeholders.institutionId), eq(studentAnnotationCounts.id, placeholders.studentId)))})`.mapWith(Number);

/**
 * The caller's rows of `table` under the shape's filters. The courseId filter is a `lesson_id in
 * (lessons of the course)` subquery over the owner's (student, lesson) index; search is `ILIKE
 * '%…%'` with the wildcards escaped, served by the trigram index (migration 0019).
 */
const myListWhere = (db: ServiceContext['db'], table: { institutionId: PgColumn; studentId: PgColumn; lessonId: PgColumn }, text: PgColumn, shape: MyListShape) =>
  and(
    eq(table.institutionId, placeholders.institutionId),
    eq(table.studentId, placeholders.studentId),
    shape.course
      ? inArray(
          table.lessonId,
          db
            .select({ id: lessons.id })
            .from(lessons)
            .where(and(eq(lessons.institutionId, placeholders.institutionId), eq(lessons.courseId, placeholders.courseId))),
        )
      : undefined,
    shape.search ? sql`${text} ilike ${placeholders.pattern} escape '\\'` : undefined,
  );

/** The exact count of the caller's rows under `where`, with their version and unfiltered total read in the same statement. */
const countStatement = (
  db: ServiceContext['db'],
  table: typeof lessonNotes | typeof lessonBookmarks,
  where: ReturnType<typeof myListWhere>,
  version: PgColumn,
  all: PgColumn,
  name: string,
) =>
  db
    .select({ total: count(), version: counterColumn(db, version), all: counterColumn(db, all) })
    .from(table)
    .where(where)
    .prepare(name);

const statementName = (list: string, shape: MyListShape) => `my_${list}${shape.course ? '_course' : ''}${shape.search ? '_search' : ''}`;
const filteredShape = (shape: MyListShape) => shape.course || shape.search;

function prepareMyNotes(db: ServiceContext['db'], shape: MyListShape) {
  const where = myListWhere(db, lessonNotes, lessonNotes.content, shape);
  const name = statementName('notes', shape);
  const recent = db
    .select({ ...noteColumns })
    .from(lessonNotes)
    .where(and(eq(lessonNotes.institutionId, placeholders.institutionId), eq(lessonNotes.studentId, placeholders.studentId)))
    .orderBy(desc(lessonNotes.updatedAt), desc(lessonNotes.id))
    .limit(placeholders.scan)
    .as('recent');
  return {
    orderedSearch: shape.search
      ? db
          .select({
            id: recent.id,
            institutionId: recent.institutionId,
            studentId: recent.studentId,
            lessonId: recent.lessonId,
            content: recent.content,
            timestampSeconds: recent.timestampSeconds,
            createdAt: recent.createdAt,
            updatedAt: recent.updatedAt,
            ...enrichmentColumns,
            counter: counterColumn(db, studentAnnotationCounts.notesVersion),
          })
          .from(recent)
          .innerJoin(lessons, sameTenantRef(recent.lessonId, recent.institutionId, lessons))
          .innerJoin(courses, courseJoin)
          .where(myListWhere(db, recent, recent.content, shape))
          .orderBy(desc(recent.updatedAt), desc(recent.id))
          .limit(placeholders.limit)
          .offset(placeholders.offset)
          .prepare(`${name}_ordered`)
      : undefined,
    page: db
      .select({ ...noteRowColumns, counter: counterColumn(db, filteredShape(shape) ? studentAnnotationCounts.notesVersion : studentAnnotationCounts.notes) })
      .from(lessonNotes)
      .innerJoin(lessons, sameTenantRef(lessonNotes.lessonId, lessonNotes.institutionId, lessons))
      .innerJoin(courses, courseJoin)
      .where(where)
      .orderBy(desc(lessonNotes.updatedAt), desc(lessonNotes.id))
      .limit(placeholders.limit)
      .offset(placeholders.offset)
      .prepare(`${name}_page`),
    count: countStatement(db, lessonNotes, where, studentAnnotationCounts.notesVersion, studentAnnotationCounts.notes, `${name}_count`),
  };
}

function prepareMyBookmarks(db: ServiceContext['db'], shape: MyListShape) {
  const where = myListWhere(db, lessonBookmarks, lessonBookmarks.label, shape);
  const name = statementName('bookmarks', shape);
  const recent = db
    .select({ ...bookmarkColumns })
    .from(lessonBookmarks)
    .where(and(eq(lessonBookmarks.institutionId, placeholders.institutionId), eq(lessonBookmarks.studentId, placeholders.studentId)))
    .orderBy(desc(lessonBookmarks.createdAt), desc(lessonBookmarks.id))
    .limit(placeholders.scan)
    .as('recent');
  return {
    orderedSearch: shape.search
      ? db
          .select({
            id: recent.id,
            institutionId: recent.institutionId,
            studentId: recent.studentId,
            lessonId: recent.lessonId,
            timestampSeconds: recent.timestampSeconds,
            label: recent.label,
            createdAt: recent.createdAt,
            ...enrichmentColumns,
            counter: counterColumn(db, studentAnnotationCounts.bookmarksVersion),
          })
          .from(recent)
          .innerJoin(lessons, sameTenantRef(recent.lessonId, recent.institutionId, lessons))
          .innerJoin(courses, courseJoin)
          .where(myListWhere(db, recent, recent.label, shape))
          .orderBy(desc(recent.createdAt), desc(recent.id))
          .limit(placeholders.limit)
          .offset(placeholders.offset)
          .prepare(`${name}_ordered`)
      : undefined,
    page: db
      .select({ ...bookmarkRowColumns, counter: counterColumn(db, filteredShape(shape) ? studentAnnotationCounts.bookmarksVersion : studentAnnotationCounts.bookmarks) })
      .from(lessonBookmarks)
      .innerJoin(lessons, sameTenantRef(lessonBookmarks.lessonId, lessonBookmarks.institutionId, lessons))
      .innerJoin(courses, courseJoin)
      .where(where)
      .orderBy(desc(lessonBookmarks.createdAt), desc(lessonBookmarks.id))
      .limit(placeholders.limit)
      .offset(placeholders.offset)
      .prepare(`${name}_page`),
    count: countStatement(db, lessonBookmarks, where, studentAnnotationCounts.bookmarksVersion, studentAnnotationCounts.bookmarks, `${name}_count`),
  };
}

/**
 * The statements of the lists of `GET /api/me/notes` and `/api/me/bookmarks`, per database
 * handle and shape (no filter, course, search, both), prepared at first use: a request builds no
 * query, and PostgreSQL parses each statement once per connection (it still plans every call
 * with its values: plan_cache_mode=force_custom_plan).
 */
const preparedNotes = new WeakMap<object, Map<string, ReturnType<typeof prepareMyNotes>>>();
const preparedBookmarks = new WeakMap<object, Map<string, ReturnType<typeof prepareMyBookmarks>>>();

function preparedOnce<T>(
  cache: WeakMap<object, Map<string, T>>,
  db: ServiceContext['db'],
  list: string,
  shape: MyListShape,
  prepare: (db: ServiceContext['db'], shape: MyListShape) => T,
): T {
  let byShape = cache.get(db);
  if (!byShape) cache.set(db, (byShape = new Map()));
  const name = statementName(list, shape);
  let statements = byShape.get(name);
  if (!statements) byShape.set(name, (statements = prepare(db, shape)));
  return statements;
}

/** The caller's unfiltered totals from the counter row (none: 0 and 0). */
async function annotationCounts(ctx: ServiceContext): Promise<{ notes: number; bookmarks: number }> {
  const [row] = await ctx.db
    .select({ notes: studentAnnotationCounts.notes, bookmarks: studentAnnotationCounts.bookmarks })
    .from(studentAnnotationCounts)
    .where(and(inTenant(ctx, studentAnnotationCounts), eq(studentAnnotationCounts.id, ctx.actor.personId)));
  return row ?? { notes: 0, bookmarks: 0 };
}

/**
 * A page of the caller's list and its `meta.total`. Unfiltered, the total is the caller's
 * counter row (student_annotation_counts, kept by triggers), read in the page query: the cost
 * does not grow with the caller's rows (a page with no rows carries no counter: it is read on
 * its own then). Filtered, the total is counted, then reused while the caller's rows are
 * unchanged (filtered-totals.ts), so paging through a search counts its matches once.
 */
async function myListPage<Row>(
  ctx: ServiceContext,
  list: 'notes' | 'bookmarks',
  query: MyListQuery,
  statementsOf: (shape: MyListShape) => MyListStatements<Row>,
): Promise<{ rows: Row[]; meta: PageMeta }> {
  const page = toPage(query, MY_LIST_DEFAULT_PAGE_SIZE);
  const shape = { course: query.courseId !== undefined, search: query.search !== undefined };
  const statements = statementsOf(shape);
  const params: MyListParams = {
    institutionId: ctx.institutionId,
    studentId: ctx.actor.personId,
    ...(query.courseId !== undefined ? { courseId: query.courseId } : {}),
    ...(query.search !== undefined ? { pattern: containsPattern(query.search) } : {}),
    limit: page.perPage,
    offset: pageOffset(page),
  };
  if (!filteredShape(shape)) {
    const rows = await statements.page.execute(params);
    const total = rows.length > 0 ? (rows[0]!.counter ?? 0) : (await annotationCounts(ctx))[list];
    return { rows, meta: pageMeta(page, total) };
  }
  const { rows, total } = await pageWithTotal(
    totalsCacheOf(ctx.db, ctx.config.FILTERED_TOTALS_CACHE_SIZE),
    totalsKey(ctx.institutionId, ctx.actor.personId, list, query.courseId, query.search),
    async (cached) => {
      const scan = statements.orderedSearch && orderedScanFor(cached, params.offset + params.limit);
      let rows = scan === undefined ? undefined : await statements.orderedSearch!.execute({ ...params, scan });
      // Fewer than a page: the matches may go on past the rows read (or this is the last page).
      if (!rows || rows.length < params.limit) rows = await statements.page.execute(params);
      return rows.map((row) => Object.assign(row, { version: row.counter }));
    },
    () => statements.count.execute(params).then(([row]) => ({ total: row?.total ?? 0, version: row?.version ?? 0, all: row?.all ?? 0 })),
  );
  return { rows, meta: pageMeta(page, total) };
}

/** The caller's notes across lessons, updatedAt desc (tie: id desc), with lesson and course; totals as in `myListPage`. */
export async function listMyNotes(ctx: ServiceContext, query: MyListQuery): Promise<{ rows: MyNoteRow[]; meta: PageMeta }> {
  const { rows, meta } = await myListPage(ctx, 'notes', query, (shape) => preparedOnce(preparedNotes, ctx.db, 'notes', shape, prepareMyNotes));
  return {
    rows: rows.map((r) => ({
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
    })),
    meta,
  };
}

/** The caller's bookmarks across lessons, createdAt desc (tie: id desc); search matches the label; totals as in `myListPage`. */
export async function listMyBookmarks(ctx: ServiceContext, query: MyListQuery): Promise<{ rows: MyBookmarkRow[]; meta: PageMeta }> {
  const { rows, meta } = await myListPage(ctx, 'bookmarks', query, (shape) => preparedOnce(preparedBookmarks, ctx.db, 'bookmarks', shape, prepareMyBookmarks));
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
    meta,
  };
}
