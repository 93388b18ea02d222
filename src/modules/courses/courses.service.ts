import { and, asc, count, desc, eq, ilike, inArray, max, or, sql, type SQL } from 'drizzle-orm';
import type { z } from 'zod';
import { withTx, type ServiceContext } from '../../platform/context.js';
import { iso } from '../../platform/dto.js';
import { newId } from '../../platform/ids.js';
import { AppError, notFound, validationError } from '../../platform/http/errors.js';
import { pageMeta, pageOffset, toPage } from '../../platform/http/pagination.js';
import { canManageCourses } from '../../platform/auth/permissions.js';
import { escapeLike } from '../../platform/db/like.js';
import { byId, inTenant } from '../../platform/db/tenancy.js';
import { enqueue } from '../../platform/queue/queue.js';
import { courseState, openableLessonIds, ownEnrollment, requireAccess } from '../access/access.service.js';
import { refreshCourseProgress } from '../progress/course-progress.js';
import { scormPackageFiles, scormPackages } from '../scorm/scorm.tables.js';
import { captionTracks } from '../captions/captions.tables.js';
import { copyAssignments } from '../assignments/assignments.copy.js';
import { copyQuizzes } from '../quizzes/quizzes.copy.js';
import { audit, changes, snapshot } from '../audit/audit.js';
import { ratingOf } from '../reviews/reviews.summary.js';
import { categories, courseModules, courses, lessons, type Category, type Course, type CourseModule, type Lesson } from './courses.tables.js';
import { assertPdfContent, assertWebLinks, learnerBlocks } from './lesson-content.js';
import type {
  createCategoryBody,
  createCourseBody,
  createLessonBody,
  createModuleBody,
  listCoursesQuery,
  updateCourseBody,
  updateLessonBody,
  updateModuleBody,
} from './courses.schemas.js';
import { CATEGORY_PAGE_SIZE } from './courses.schemas.js';

export const toCourseDto = (c: Course) => ({
  id: c.id,
  institutionId: c.institutionId,
  title: c.title,
  description: c.description,
  categoryId: c.categoryId,
  ownerId: c.ownerId,
  status: c.status,
  maxEnrollments: c.maxEnrollments,
  dripMode: c.dripMode,
  certificateEnabled: c.certificateEnabled,
  certificateValidityMonths: c.certificateValidityMonths,
  thumbnailUrl: c.thumbnailUrl,
  estimatedDuration: c.estimatedDuration,
  passingScore: c.passingScore,
  publishedAt: iso(c.publishedAt),
  archivedAt: iso(c.archivedAt),
  createdAt: iso(c.createdAt) as string,
  updatedAt: iso(c.updatedAt) as string,
});

export const toModuleDto = (m: CourseModule) => ({
  id: m.id,
  courseId: m.courseId,
  title: m.title,
  order: m.order,
  createdAt: iso(m.createdAt) as string,
  updatedAt: iso(m.updatedAt) as string,
});

/**
 * A lesson as its reader may see it: `manager` everything; `learner` the content with answer
 * fields stripped from blocks; `outline` no content at all (titles, types, order, durations).
 */
export type LessonView = 'manager' | 'learner' | 'outline';

export const lessonViewOf = (ctx: ServiceContext): LessonView => (canManageCourses(ctx.actor) ? 'manager' : 'learner');

export const toLessonDto = (l: Lesson, view: LessonView = 'manager') => ({
  id: l.id,
  courseId: l.courseId,
  moduleId: l.moduleId,
  title: l.title,
  type: l.type,
  order: l.order,
  content: view === 'outline' ? null : l.content,
  videoUrl: view === 'outline' ? null : l.videoUrl,
  durationSeconds: l.durationSeconds,
  isRequired: l.isRequired,
  unlockAfterDays: l.unlockAfterDays,
  unlockAt: iso(l.unlockAt),
  blocks: view === 'manager' ? l.blocks : view === 'learner' ? learnerBlocks(l.blocks) : [],
  xapiCompletion: l.xapiCompletion,
  createdAt: iso(l.createdAt) as string,
  updatedAt: iso(l.updatedAt) as string,
});

export const toCategoryDto = (c: Category) => ({
  id: c.id,
  name: c.name,
  description: c.description,
  createdAt: iso(c.createdAt) as string,
});

/** What the audit log records of a created or duplicated course, and of a created or deleted lesson. */
const COURSE_AUDITED = ['title', 'status', 'ownerId', 'categoryId', 'maxEnrollments', 'dripMode', 'certificateEnabled'] as const;
const LESSON_AUDITED = ['courseId', 'moduleId', 'title', 'type', 'order'] as const;

/** A course of the caller's institution, or 404 (no rule beyond tenancy: callers check access). */
export async function loadCourse(ctx: ServiceContext, courseId: string): Promise<Course> {
  const [course] = await ctx.db
    .select()
    .from(courses)
    .where(byId(ctx, courses, courseId))
    .limit(1);
  if (!course) throw notFound('Course');
  return course;
}

async function assertCategory(ctx: ServiceContext, categoryId: string | null | undefined) {
  if (!categoryId) return;
  const [cat] = await ctx.db
    .select({ id: categories.id })
    .from(categories)
    .where(byId(ctx, categories, categoryId))
    .limit(1);
  if (!cat) throw validationError('Unknown category', [{ field: 'body.categoryId', message: 'no such category in your institution' }]);
}

export async function listCourses(ctx: ServiceContext, q: z.infer<typeof listCoursesQuery>) {
  const page = toPage(q);
  const filters: SQL[] = [inTenant(ctx, courses)];
  if (!canManageCourses(ctx.actor)) filters.push(eq(courses.status, 'PUBLISHED'));
  else if (q.status) filters.push(eq(courses.status, q.status));
  else filters.push(inArray(courses.status, ['DRAFT', 'PUBLISHED']));
  if (q.status && !canManageCourses(ctx.actor) && q.status !== 'PUBLISHED') filters.push(sql`false`);
  const categoryId = q.categoryId ?? q.category;
  const ownerId = q.ownerId ?? q.owner;
  if (categoryId) filters.push(eq(courses.categoryId, categoryId));
  if (ownerId) filters.push(eq(courses.ownerId, ownerId));
  if (q.search) {
    const pattern = `%${escapeLike(q.search)}%`;
    filters.push(or(ilike(courses.title, pattern), ilike(courses.description, pattern)) as SQL);
  }
  const where = and(...filters);
  const [rows, [{ total }]] = await Promise.all([
    ctx.db.select().from(courses).where(where).orderBy(desc(courses.createdAt), desc(courses.id)).limit(page.perPage).offset(pageOffset(page)),
    ctx.db
      .select({ total: sql<number>`count(*)::int` })
      .from(courses)
      .where(where),
  ]);
  return { rows: rows.map(toCourseDto), meta: pageMeta(page, total) };
}

export async function createCourse(ctx: ServiceContext, body: z.infer<typeof createCourseBody>) {
  await requireAccess(ctx, 'catalog.author', null);
  assertWebLinks(ctx.config, { thumbnailUrl: body.thumbnailUrl });
  await assertCategory(ctx, body.categoryId);
  const now = ctx.clock.now();
  return withTx(ctx, async (tx) => {
    const [course] = await tx.db
      .insert(courses)
      .values({
        id: newId(),
        institutionId: ctx.institutionId,
        ownerId: ctx.actor.personId,
        title: body.title,
        description: body.description ?? null,
        categoryId: body.categoryId ?? null,
        maxEnrollments: body.maxEnrollments ?? null,
        dripMode: body.dripMode ?? 'NONE',
        certificateEnabled: body.certificateEnabled ?? false,
        certificateValidityMonths: body.certificateValidityMonths ?? null,
        thumbnailUrl: body.thumbnailUrl ?? null,
        estimatedDuration: body.estimatedDuration ?? null,
        passingScore: body.passingScore ?? null,
        status: 'DRAFT',
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    await audit(tx, { action: 'course.create', targetType: 'course', targetId: course.id, after: snapshot(course, COURSE_AUDITED) });
    return toCourseDto(course);
  });
}

/** Course detail: the course with its rating (`averageRating`, `reviewCount`). */
export async function getCourse(ctx: ServiceContext, courseId: string) {
  const course = await requireAccess(ctx, 'course.view', courseId);
  return { ...toCourseDto(course), ...(await ratingOf(ctx, course.id)) };
}

export async function updateCourse(ctx: ServiceContext, courseId: string, body: z.infer<typeof updateCourseBody>) {
  const course = await requireAccess(ctx, 'course.author', courseId);
  assertWebLinks(ctx.config, { thumbnailUrl: body.thumbnailUrl });
  if (body.categoryId !== undefined) await assertCategory(ctx, body.categoryId);
  const patch = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
  return withTx(ctx, async (tx) => {
    const [updated] = await tx.db
      .update(courses)
      .set({ ...patch, updatedAt: ctx.clock.now() })
      .where(byId(tx, courses, course.id))
      .returning();
    await audit(tx, { action: 'course.update', targetType: 'course', targetId: course.id, ...changes(course, updated, Object.keys(patch) as Array<keyof Course>) });
    return toCourseDto(updated);
  });
}

/** DELETE archives: the course leaves listings, learner data stays. */
export async function archiveCourse(ctx: ServiceContext, courseId: string) {
  const course = await requireAccess(ctx, 'course.author', courseId);
  return withTx(ctx, async (tx) => {
    // The course lock first, then the time: enrollments holding the lock finish before the
    // archive, so archivedAt never reads as earlier than an enrollment made before it.
    await tx.db
      .select({ id: courses.id })
      .from(courses)
      .where(byId(tx, courses, course.id))
      .for('update');
    const now = tx.clock.now();
    const [updated] = await tx.db
      .update(courses)
      .set({ status: 'ARCHIVED', archivedAt: course.archivedAt ?? now, updatedAt: now })
      .where(byId(tx, courses, course.id))
      .returning();
    await audit(tx, { action: 'course.archive', targetType: 'course', targetId: course.id, ...changes(course, updated, ['status', 'archivedAt']) });
    return toCourseDto(updated);
  });
}

export async function publishCourse(ctx: ServiceContext, courseId: string, status: 'PUBLISHED' | 'DRAFT') {
  const course = await requireAccess(ctx, 'course.author', courseId);
  const now = ctx.clock.now();
  return withTx(ctx, async (tx) => {
    const [updated] = await tx.db
      .update(courses)
      .set({
        status,
        publishedAt: status === 'PUBLISHED' ? (course.publishedAt ?? now) : course.publishedAt,
        archivedAt: null,
        updatedAt: now,
      })
      .where(byId(tx, courses, course.id))
      .returning();
    await audit(tx, { action: 'course.publish', targetType: 'course', targetId: course.id, ...changes(course, updated, ['status', 'publishedAt', 'archivedAt']) });
    return toCourseDto(updated);
  });
}

/**
 * Deep copy of modules, lessons, their quizzes and their assignments (with rubrics) into a new
 * DRAFT owned by the caller (canManageCourses). Learner data (enrollments, attempts, submissions)
 * is not copied, nor are caption tracks and SCORM packages, whose stored files belong to the source.
 */
export async function duplicateCourse(ctx: ServiceContext, courseId: string) {
  const source = await requireAccess(ctx, 'course.staff', courseId);
  const now = ctx.clock.now();
  return withTx(ctx, async (tx) => {
    const [copy] = await tx.db
      .insert(courses)
      .values({
        ...source,
        id: newId(),
        title: `${source.title} (copy)`.slice(0, 200),
        ownerId: ctx.actor.personId,
        status: 'DRAFT',
        publishedAt: null,
        archivedAt: null,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    const mods = await tx.db
      .select()
      .from(courseModules)
      .where(and(inTenant(tx, courseModules), eq(courseModules.courseId, source.id)));
    const moduleIdMap = new Map(mods.map((m) => [m.id, newId()]));
    if (mods.length > 0) {
      await tx.db.insert(courseModules).values(mods.map((m) => ({ ...m, id: moduleIdMap.get(m.id)!, courseId: copy.id, createdAt: now, updatedAt: now })));
    }
    const ls = await tx.db
      .select()
      .from(lessons)
      .where(and(inTenant(tx, lessons), eq(lessons.courseId, source.id)));
    const lessonIdMap = new Map(ls.map((l) => [l.id, newId()]));
    if (ls.length > 0) {
      await tx.db.insert(lessons).values(
        ls.map((l) => ({
          ...l,
          id: lessonIdMap.get(l.id)!,
          courseId: copy.id,
          moduleId: l.moduleId ? (moduleIdMap.get(l.moduleId) ?? null) : null,
          createdAt: now,
          updatedAt: now,
        })),
      );
    }
    await copyQuizzes(tx, lessonIdMap);
    await copyAssignments(tx, lessonIdMap, copy.id);
    await audit(tx, {
      action: 'course.duplicate',
      targetType: 'course',
      targetId: copy.id,
      after: { sourceCourseId: source.id, ...snapshot(copy, COURSE_AUDITED), modules: mods.length, lessons: ls.length },
    });
    return toCourseDto(copy);
  });
}

/**
 * GET /api/courses/:id/modules — modules with their lessons, in order. Course managers get
 * every lesson whole; everyone else gets the outline (titles, types, order, durations and
 * lock state) and a lesson's content only where they may open it (enrolled, unlocked, fees
 * allowing), with answer fields stripped from its blocks.
 */
export async function listModules(ctx: ServiceContext, courseId: string) {
  const course = await requireAccess(ctx, 'course.view', courseId);
  const manager = canManageCourses(ctx.actor);
  const [state, openable] = await Promise.all([courseState(ctx, course, manager ? null : await ownEnrollmentForOutline(ctx, course)), openableLessonIds(ctx, course)]);
  const byOrder = [...state.ordered].sort((a, b) => a.order - b.order || a.createdAt.getTime() - b.createdAt.getTime());
  const outlineLesson = (l: Lesson) => {
    const lock = state.locks.get(l.id);
    return {
      ...toLessonDto(l, manager ? 'manager' : openable.has(l.id) ? 'learner' : 'outline'),
      locked: lock?.locked ?? false,
      unlocksAt: iso(lock?.unlocksAt ?? null),
      lockReason: lock?.reason ?? null,
    };
  };
  return state.modules.map((m) => ({ ...toModuleDto(m), lessons: byOrder.filter((l) => l.moduleId === m.id).map(outlineLesson) }));
}

/** The caller's enrollment for lock state in an outline (a DROPPED one counts as none). */
async function ownEnrollmentForOutline(ctx: ServiceContext, course: Course) {
  const e = await ownEnrollment(ctx, course.id);
  return e && e.status !== 'DROPPED' ? e : null;
}

async function nextOrder(ctx: ServiceContext, table: typeof courseModules | typeof lessons, where: SQL | undefined) {
  const [{ value }] = await ctx.db
    .select({ value: max(table.order) })
    .from(table)
    .where(where);
  return value === null ? 0 : value + 1;
}

async function touchCourse(ctx: ServiceContext, courseId: string) {
  await ctx.db
    .update(courses)
    .set({ updatedAt: ctx.clock.now() })
    .where(byId(ctx, courses, courseId));
}

export async function createModule(ctx: ServiceContext, courseId: string, body: z.infer<typeof createModuleBody>) {
  const course = await requireAccess(ctx, 'course.author', courseId);
  const now = ctx.clock.now();
  return withTx(ctx, async (tx) => {
    const order = body.order ?? (await nextOrder(tx, courseModules, and(inTenant(tx, courseModules), eq(courseModules.courseId, course.id))));
    const [mod] = await tx.db
      .insert(courseModules)
      .values({ id: newId(), institutionId: ctx.institutionId, courseId: course.id, title: body.title, order, createdAt: now, updatedAt: now })
      .returning();
    await touchCourse(tx, course.id);
    await audit(tx, { action: 'module.create', targetType: 'module', targetId: mod.id, after: snapshot(mod, ['courseId', 'title', 'order']) });
    return toModuleDto(mod);
  });
}

/** A module the caller may author (as `course.author` on its course), or 404. */
async function loadModuleForAuthoring(ctx: ServiceContext, moduleId: string) {
  const [mod] = await ctx.db
    .select()
    .from(courseModules)
    .where(byId(ctx, courseModules, moduleId))
    .limit(1);
  if (!mod) throw notFound('Module');
  await requireAccess(ctx, 'course.author', mod.courseId);
  return mod;
}

export async function updateModule(ctx: ServiceContext, moduleId: string, body: z.infer<typeof updateModuleBody>) {
  const mod = await loadModuleForAuthoring(ctx, moduleId);
  return withTx(ctx, async (tx) => {
    const [updated] = await tx.db
      .update(courseModules)
      .set({ ...(body.title !== undefined ? { title: body.title } : {}), ...(body.order !== undefined ? { order: body.order } : {}), updatedAt: ctx.clock.now() })
      .where(byId(tx, courseModules, mod.id))
      .returning();
    if (!updated) throw notFound('Module');
    await audit(tx, { action: 'module.update', targetType: 'module', targetId: mod.id, ...changes(mod, updated, ['title', 'order']) });
    return toModuleDto(updated);
  });
}

/**
 * Deleting a module keeps its lessons (and learner progress on them): they leave the module.
 * The foreign key does the same (ON DELETE SET NULL (module_id)), so a lesson added to the
 * module while it is being deleted also stays, without a module.
 */
export async function deleteModule(ctx: ServiceContext, moduleId: string) {
  const mod = await loadModuleForAuthoring(ctx, moduleId);
  await withTx(ctx, async (tx) => {
    await tx.db
      .update(lessons)
      .set({ moduleId: null, updatedAt: ctx.clock.now() })
      .where(and(inTenant(tx, lessons), eq(lessons.moduleId, mod.id)));
    const [gone] = await tx.db
      .delete(courseModules)
      .where(byId(tx, courseModules, mod.id))
      .returning({ id: courseModules.id });
    if (gone) await audit(tx, { action: 'module.delete', targetType: 'module', targetId: mod.id, before: snapshot(mod, ['courseId', 'title', 'order']) });
  });
  return { id: mod.id, deleted: true as const };
}

async function assertModuleOfCourse(ctx: ServiceContext, courseId: string, moduleId: string | null | undefined) {
  if (!moduleId) return;
  const [mod] = await ctx.db
    .select({ id: courseModules.id })
    .from(courseModules)
    .where(and(byId(ctx, courseModules, moduleId), eq(courseModules.courseId, courseId)))
    .limit(1);
  if (!mod) throw validationError('Unknown module', [{ field: 'body.moduleId', message: 'no such module in this course' }]);
}

function assertUniqueBlockIds(blocks: Array<{ id: string }> | undefined) {
  if (!blocks) return;
  const ids = new Set(blocks.map((b) => b.id));
  if (ids.size !== blocks.length) throw validationError('Block ids must be unique', [{ field: 'body.blocks', message: 'duplicate block id' }]);
}

export async function createLesson(ctx: ServiceContext, courseId: string, body: z.infer<typeof createLessonBody>) {
  const course = await requireAccess(ctx, 'course.author', courseId);
  assertUniqueBlockIds(body.blocks);
  assertWebLinks(ctx.config, { videoUrl: body.videoUrl }, body.blocks);
  assertPdfContent(ctx.config, body.type, body.content);
  await assertModuleOfCourse(ctx, course.id, body.moduleId);
  const now = ctx.clock.now();
  return withTx(ctx, async (tx) => {
    const order =
      body.order ??
      (await nextOrder(
        tx,
        lessons,
        and(inTenant(tx, lessons), eq(lessons.courseId, course.id), body.moduleId ? eq(lessons.moduleId, body.moduleId) : sql`${lessons.moduleId} is null`),
      ));
    const [lesson] = await tx.db
      .insert(lessons)
      .values({
        id: newId(),
        institutionId: ctx.institutionId,
        courseId: course.id,
        moduleId: body.moduleId ?? null,
        title: body.title,
        type: body.type,
        order,
        content: body.content ?? null,
        videoUrl: body.videoUrl ?? null,
        durationSeconds: body.durationSeconds ?? null,
        isRequired: body.isRequired ?? true,
        unlockAfterDays: body.unlockAfterDays ?? null,
        unlockAt: body.unlockAt ? new Date(body.unlockAt) : null,
        blocks: body.blocks ?? [],
        xapiCompletion: body.xapiCompletion ?? true,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    await touchCourse(tx, course.id);
    // One more lesson to complete: every enrollment's progress moves now.
    await refreshCourseProgress(tx, course.id);
    await audit(tx, { action: 'lesson.create', targetType: 'lesson', targetId: lesson.id, after: snapshot(lesson, LESSON_AUDITED) });
    return toLessonDto(lesson);
  });
}

export async function updateLesson(ctx: ServiceContext, lessonId: string, body: z.infer<typeof updateLessonBody>) {
  const { lesson } = await requireAccess(ctx, 'lesson.author', lessonId);
  assertUniqueBlockIds(body.blocks);
  assertWebLinks(ctx.config, { videoUrl: body.videoUrl }, body.blocks);
  // The address as it will be: the content sent, or the one kept when only the type changes to PDF.
  assertPdfContent(ctx.config, body.type ?? lesson.type, body.content !== undefined ? body.content : body.type !== undefined ? lesson.content : undefined);
  if (body.moduleId !== undefined) await assertModuleOfCourse(ctx, lesson.courseId, body.moduleId);
  const { unlockAt, ...rest } = body;
  const patch = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
  return withTx(ctx, async (tx) => {
    const [updated] = await tx.db
      .update(lessons)
      .set({ ...patch, ...(unlockAt !== undefined ? { unlockAt: unlockAt ? new Date(unlockAt) : null } : {}), updatedAt: ctx.clock.now() })
      .where(byId(tx, lessons, lesson.id))
      .returning();
    if (!updated) throw notFound('Lesson');
    if (updated.isRequired !== lesson.isRequired) await refreshCourseProgress(tx, lesson.courseId);
    const keys = [...Object.keys(patch), ...(unlockAt !== undefined ? ['unlockAt'] : [])] as Array<keyof Lesson>;
    await audit(tx, { action: 'lesson.update', targetType: 'lesson', targetId: lesson.id, ...changes(lesson, updated, keys) });
    return toLessonDto(updated);
  });
}

/**
 * Deletes a lesson and, through the foreign keys, what hangs off it (progress, notes,
 * bookmarks, caption rows). The caption files in storage are removed by a job enqueued in
 * the same transaction, so they go exactly when the rows go.
 */
export async function deleteLesson(ctx: ServiceContext, lessonId: string) {
  const { lesson } = await requireAccess(ctx, 'lesson.author', lessonId);
  await withTx(ctx, async (tx) => {
    const tracks = await tx.db
      .select({ key: captionTracks.storageKey })
      .from(captionTracks)
      .where(and(inTenant(tx, captionTracks), eq(captionTracks.lessonId, lesson.id)));
    // The files of the lesson's SCORM packages (rows cascade with the lesson).
    const packageFiles = await tx.db
      .select({ key: scormPackageFiles.storageKey })
      .from(scormPackageFiles)
      .innerJoin(scormPackages, and(eq(scormPackages.institutionId, scormPackageFiles.institutionId), eq(scormPackages.id, scormPackageFiles.packageId)))
      .where(and(inTenant(tx, scormPackageFiles), eq(scormPackages.lessonId, lesson.id)));
    const [gone] = await tx.db
      .delete(lessons)
      .where(byId(tx, lessons, lesson.id))
      .returning({ id: lessons.id });
    if (gone) await audit(tx, { action: 'lesson.delete', targetType: 'lesson', targetId: lesson.id, before: snapshot(lesson, LESSON_AUDITED) });
    const keys = [...tracks.map((t) => t.key), ...packageFiles.map((f) => f.key)];
    // One job per 10,000 keys (the job's payload limit).
    for (let i = 0; i < keys.length; i += 10_000) {
      await enqueue(tx.db, ctx.clock, 'storage.deleteObjects', { keys: keys.slice(i, i + 10_000) }, { institutionId: ctx.institutionId });
    }
    await touchCourse(tx, lesson.courseId);
    if (gone) await refreshCourseProgress(tx, lesson.courseId);
  });
  return { id: lesson.id, deleted: true as const };
}

/** GET /api/categories: by name, paginated (spec 4.1), CATEGORY_PAGE_SIZE a page by default. */
export async function listCategories(ctx: ServiceContext, q: { page: number; perPage?: number; limit?: number }) {
  const page = toPage(q, CATEGORY_PAGE_SIZE);
  const where = inTenant(ctx, categories);
  const [rows, [{ total }]] = await Promise.all([
    ctx.db.select().from(categories).where(where).orderBy(asc(categories.name), asc(categories.id)).limit(page.perPage).offset(pageOffset(page)),
    ctx.db.select({ total: count() }).from(categories).where(where),
  ]);
  return { rows: rows.map(toCategoryDto), meta: pageMeta(page, Number(total)) };
}

export async function createCategory(ctx: ServiceContext, body: z.infer<typeof createCategoryBody>) {
  await requireAccess(ctx, 'catalog.author', null);
  return withTx(ctx, async (tx) => {
    const [row] = await tx.db
      .insert(categories)
      .values({ id: newId(), institutionId: ctx.institutionId, name: body.name, description: body.description ?? null, createdAt: ctx.clock.now() })
      .onConflictDoNothing()
      .returning();
    if (!row) throw new AppError('CONFLICT', `A category named "${body.name}" already exists`);
    await audit(tx, { action: 'category.create', targetType: 'category', targetId: row.id, after: snapshot(row, ['name', 'description']) });
    return toCategoryDto(row);
  });
}
