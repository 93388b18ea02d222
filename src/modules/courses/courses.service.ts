import { and, asc, desc, eq, ilike, inArray, max, or, sql, type SQL } from 'drizzle-orm';
import type { z } from 'zod';
import type { ServiceContext } from '../../platform/context.js';
import type { DbOrTx } from '../../platform/db/client.js';
import { iso } from '../../platform/dto.js';
import { newId } from '../../platform/ids.js';
import { AppError, notFound, validationError } from '../../platform/http/errors.js';
import { pageMeta, pageOffset, toPage } from '../../platform/http/pagination.js';
import { canManageCourses, requireManageCourses, requireOwnerOrAdmin } from '../../platform/auth/permissions.js';
import { escapeLike } from '../../platform/db/like.js';
import { enrollments } from '../enrollments/enrollments.tables.js';
import {
  categories,
  courseModules,
  courses,
  lessons,
  type Category,
  type Course,
  type CourseModule,
  type Lesson,
} from './courses.tables.js';
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
import { inTenant, byId } from '../../platform/db/tenancy.js';

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

export const toLessonDto = (l: Lesson) => ({
  id: l.id,
  courseId: l.courseId,
  moduleId: l.moduleId,
  title: l.title,
  type: l.type,
  order: l.order,
  content: l.content,
  videoUrl: l.videoUrl,
  durationSeconds: l.durationSeconds,
  isRequired: l.isRequired,
  unlockAfterDays: l.unlockAfterDays,
  unlockAt: iso(l.unlockAt),
  blocks: l.blocks,
  createdAt: iso(l.createdAt) as string,
  updatedAt: iso(l.updatedAt) as string,
});

export const toCategoryDto = (c: Category) => ({
  id: c.id,
  name: c.name,
  description: c.description,
  createdAt: iso(c.createdAt) as string,
});

/** A course of the caller's institution, or 404. */
export async function loadCourse(ctx: ServiceContext, courseId: string, db: DbOrTx = ctx.db): Promise<Course> {
  const [course] = await db
    .select()
    .from(courses)
    .where(byId(ctx, courses, courseId))
    .limit(1);
  if (!course) throw notFound('Course');
  return course;
}

/** A course the caller may author: owner or ADMIN (403), in the institution (404). */
async function loadOwnCourse(ctx: ServiceContext, courseId: string, db: DbOrTx = ctx.db) {
  requireManageCourses(ctx.actor);
  const course = await loadCourse(ctx, courseId, db);
  requireOwnerOrAdmin(ctx.actor, course.ownerId, 'course');
  return course;
}

/** Learners see published courses and those they are enrolled in; managers see all. */
export async function loadVisibleCourse(ctx: ServiceContext, courseId: string): Promise<Course> {
  const course = await loadCourse(ctx, courseId);
  if (canManageCourses(ctx.actor) || course.status === 'PUBLISHED') return course;
  const [enrolled] = await ctx.db
    .select({ id: enrollments.id })
    .from(enrollments)
    .where(and(inTenant(ctx, enrollments), eq(enrollments.courseId, course.id), eq(enrollments.studentId, ctx.actor.personId)))
    .limit(1);
  if (!enrolled) throw notFound('Course');
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
  if (q.categoryId) filters.push(eq(courses.categoryId, q.categoryId));
  if (q.ownerId) filters.push(eq(courses.ownerId, q.ownerId));
  if (q.search) {
    const pattern = `%${escapeLike(q.search)}%`;
    filters.push(or(ilike(courses.title, pattern), ilike(courses.description, pattern)) as SQL);
  }
  const where = and(...filters);
  const [rows, [{ total }]] = await Promise.all([
    ctx.db.select().from(courses).where(where).orderBy(desc(courses.createdAt), desc(courses.id)).limit(page.perPage).offset(pageOffset(page)),
    ctx.db.select({ total: sql<number>`count(*)::int` }).from(courses).where(where),
  ]);
  return { rows: rows.map(toCourseDto), meta: pageMeta(page, total) };
}

export async function createCourse(ctx: ServiceContext, body: z.infer<typeof createCourseBody>) {
  requireManageCourses(ctx.actor);
  await assertCategory(ctx, body.categoryId);
  const now = ctx.clock.now();
  const [course] = await ctx.db
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
  return toCourseDto(course);
}

export async function getCourse(ctx: ServiceContext, courseId: string) {
  return toCourseDto(await loadVisibleCourse(ctx, courseId));
}

export async function updateCourse(ctx: ServiceContext, courseId: string, body: z.infer<typeof updateCourseBody>) {
  const course = await loadOwnCourse(ctx, courseId);
  if (body.categoryId !== undefined) await assertCategory(ctx, body.categoryId);
  const patch = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
  const [updated] = await ctx.db
    .update(courses)
    .set({ ...patch, updatedAt: ctx.clock.now() })
    .where(byId(ctx, courses, course.id))
    .returning();
  return toCourseDto(updated);
}

/** DELETE archives: the course leaves listings, learner data stays. */
export async function archiveCourse(ctx: ServiceContext, courseId: string) {
  const course = await loadOwnCourse(ctx, courseId);
  const now = ctx.clock.now();
  const [updated] = await ctx.db
    .update(courses)
    .set({ status: 'ARCHIVED', archivedAt: course.archivedAt ?? now, updatedAt: now })
    .where(byId(ctx, courses, course.id))
    .returning();
  return toCourseDto(updated);
}

export async function publishCourse(ctx: ServiceContext, courseId: string, status: 'PUBLISHED' | 'DRAFT') {
  const course = await loadOwnCourse(ctx, courseId);
  const now = ctx.clock.now();
  const [updated] = await ctx.db
    .update(courses)
    .set({
      status,
      publishedAt: status === 'PUBLISHED' ? (course.publishedAt ?? now) : course.publishedAt,
      archivedAt: null,
      updatedAt: now,
    })
    .where(byId(ctx, courses, course.id))
    .returning();
  return toCourseDto(updated);
}

/** Deep copy of modules and lessons into a new DRAFT owned by the caller. */
export async function duplicateCourse(ctx: ServiceContext, courseId: string) {
  requireManageCourses(ctx.actor);
  const source = await loadCourse(ctx, courseId);
  const now = ctx.clock.now();
  return ctx.db.transaction(async (tx) => {
    const [copy] = await tx
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
    const mods = await tx.select().from(courseModules).where(and(eq(courseModules.courseId, source.id), inTenant(ctx, courseModules)));
    const moduleIdMap = new Map<string, string>();
    if (mods.length > 0) {
      const copies = mods.map((m) => {
        const id = newId();
        moduleIdMap.set(m.id, id);
        return { ...m, id, courseId: copy.id, createdAt: now, updatedAt: now };
      });
      await tx.insert(courseModules).values(copies);
    }
    const ls = await tx.select().from(lessons).where(and(eq(lessons.courseId, source.id), inTenant(ctx, lessons)));
    if (ls.length > 0) {
      await tx.insert(lessons).values(
        ls.map((l) => ({
          ...l,
          id: newId(),
          courseId: copy.id,
          moduleId: l.moduleId ? (moduleIdMap.get(l.moduleId) ?? null) : null,
          createdAt: now,
          updatedAt: now,
        })),
      );
    }
    return toCourseDto(copy);
  });
}

/** Modules with their lessons, in order; lessons outside a module come in `lessonsWithoutModule`. */
export async function courseOutline(ctx: ServiceContext, course: Course) {
  const [mods, ls] = await Promise.all([
    ctx.db.select().from(courseModules).where(and(eq(courseModules.courseId, course.id), inTenant(ctx, courseModules))).orderBy(asc(courseModules.order), asc(courseModules.createdAt)),
    ctx.db.select().from(lessons).where(and(eq(lessons.courseId, course.id), inTenant(ctx, lessons))).orderBy(asc(lessons.order), asc(lessons.createdAt)),
  ]);
  return { modules: mods, lessons: ls };
}

/** Lessons in reading order: module order first (module-less lessons first), then lesson order. */
export function orderedLessons(mods: CourseModule[], ls: Lesson[]): Lesson[] {
  const moduleRank = new Map(mods.map((m, i) => [m.id, i]));
  return [...ls].sort((a, b) => {
    const ra = a.moduleId ? (moduleRank.get(a.moduleId) ?? -1) : -1;
    const rb = b.moduleId ? (moduleRank.get(b.moduleId) ?? -1) : -1;
    return ra - rb || a.order - b.order || a.createdAt.getTime() - b.createdAt.getTime();
  });
}

export async function listModules(ctx: ServiceContext, courseId: string) {
  const course = await loadVisibleCourse(ctx, courseId);
  const { modules: mods, lessons: ls } = await courseOutline(ctx, course);
  return mods.map((m) => ({ ...toModuleDto(m), lessons: ls.filter((l) => l.moduleId === m.id).map(toLessonDto) }));
}

async function nextOrder(db: DbOrTx, table: typeof courseModules | typeof lessons, where: SQL | undefined) {
  const [{ value }] = await db.select({ value: max(table.order) }).from(table).where(where);
  return value === null ? 0 : value + 1;
}

export async function createModule(ctx: ServiceContext, courseId: string, body: z.infer<typeof createModuleBody>) {
  const course = await loadOwnCourse(ctx, courseId);
  const now = ctx.clock.now();
  const order = body.order ?? (await nextOrder(ctx.db, courseModules, and(inTenant(ctx, courseModules), eq(courseModules.courseId, course.id))));
  const [mod] = await ctx.db
    .insert(courseModules)
    .values({ id: newId(), institutionId: ctx.institutionId, courseId: course.id, title: body.title, order, createdAt: now, updatedAt: now })
    .returning();
  await touchCourse(ctx, course.id);
  return toModuleDto(mod);
}

async function loadModule(ctx: ServiceContext, moduleId: string) {
  const [mod] = await ctx.db
    .select()
    .from(courseModules)
    .where(byId(ctx, courseModules, moduleId))
    .limit(1);
  if (!mod) throw notFound('Module');
  await loadOwnCourse(ctx, mod.courseId);
  return mod;
}

export async function updateModule(ctx: ServiceContext, moduleId: string, body: z.infer<typeof updateModuleBody>) {
  const mod = await loadModule(ctx, moduleId);
  const [updated] = await ctx.db
    .update(courseModules)
    .set({ ...(body.title !== undefined ? { title: body.title } : {}), ...(body.order !== undefined ? { order: body.order } : {}), updatedAt: ctx.clock.now() })
    .where(byId(ctx, courseModules, mod.id))
    .returning();
  return toModuleDto(updated);
}

/** Deleting a module keeps its lessons (and learner progress on them): they leave the module. */
export async function deleteModule(ctx: ServiceContext, moduleId: string) {
  const mod = await loadModule(ctx, moduleId);
  await ctx.db.transaction(async (tx) => {
    await tx.update(lessons).set({ moduleId: null, updatedAt: ctx.clock.now() }).where(and(eq(lessons.moduleId, mod.id), inTenant(ctx, lessons)));
    await tx.delete(courseModules).where(byId(ctx, courseModules, mod.id));
  });
  return { id: mod.id, deleted: true as const };
}

async function assertModuleOfCourse(ctx: ServiceContext, courseId: string, moduleId: string | null | undefined) {
  if (!moduleId) return;
  const [mod] = await ctx.db
    .select({ id: courseModules.id })
    .from(courseModules)
    .where(and(eq(courseModules.id, moduleId), eq(courseModules.courseId, courseId), inTenant(ctx, courseModules)))
    .limit(1);
  if (!mod) throw validationError('Unknown module', [{ field: 'body.moduleId', message: 'no such module in this course' }]);
}

function assertUniqueBlockIds(blocks: Array<{ id: string }> | undefined) {
  if (!blocks) return;
  const ids = new Set(blocks.map((b) => b.id));
  if (ids.size !== blocks.length) throw validationError('Block ids must be unique', [{ field: 'body.blocks', message: 'duplicate block id' }]);
}

async function touchCourse(ctx: ServiceContext, courseId: string) {
  await ctx.db.update(courses).set({ updatedAt: ctx.clock.now() }).where(byId(ctx, courses, courseId));
}

export async function createLesson(ctx: ServiceContext, courseId: string, body: z.infer<typeof createLessonBody>) {
  const course = await loadOwnCourse(ctx, courseId);
  await assertModuleOfCourse(ctx, course.id, body.moduleId);
  assertUniqueBlockIds(body.blocks);
  const now = ctx.clock.now();
  const order =
    body.order ??
    (await nextOrder(
      ctx.db,
      lessons,
      and(inTenant(ctx, lessons), eq(lessons.courseId, course.id), body.moduleId ? eq(lessons.moduleId, body.moduleId) : sql`${lessons.moduleId} is null`),
    ));
  const [lesson] = await ctx.db
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
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  await touchCourse(ctx, course.id);
  return toLessonDto(lesson);
}

async function loadLessonForAuthoring(ctx: ServiceContext, lessonId: string) {
  const [lesson] = await ctx.db.select().from(lessons).where(byId(ctx, lessons, lessonId)).limit(1);
  if (!lesson) throw notFound('Lesson');
  await loadOwnCourse(ctx, lesson.courseId);
  return lesson;
}

export async function updateLesson(ctx: ServiceContext, lessonId: string, body: z.infer<typeof updateLessonBody>) {
  const lesson = await loadLessonForAuthoring(ctx, lessonId);
  if (body.moduleId !== undefined) await assertModuleOfCourse(ctx, lesson.courseId, body.moduleId);
  assertUniqueBlockIds(body.blocks);
  const { unlockAt, ...rest } = body;
  const patch = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
  const [updated] = await ctx.db
    .update(lessons)
    .set({ ...patch, ...(unlockAt !== undefined ? { unlockAt: unlockAt ? new Date(unlockAt) : null } : {}), updatedAt: ctx.clock.now() })
    .where(byId(ctx, lessons, lesson.id))
    .returning();
  return toLessonDto(updated);
}

export async function deleteLesson(ctx: ServiceContext, lessonId: string) {
  const lesson = await loadLessonForAuthoring(ctx, lessonId);
  await ctx.db.delete(lessons).where(byId(ctx, lessons, lesson.id));
  return { id: lesson.id, deleted: true as const };
}

export async function listCategories(ctx: ServiceContext) {
  const rows = await ctx.db.select().from(categories).where(inTenant(ctx, categories)).orderBy(asc(categories.name));
  return rows.map(toCategoryDto);
}

export async function createCategory(ctx: ServiceContext, body: z.infer<typeof createCategoryBody>) {
  requireManageCourses(ctx.actor);
  const [row] = await ctx.db
    .insert(categories)
    .values({ id: newId(), institutionId: ctx.institutionId, name: body.name, description: body.description ?? null, createdAt: ctx.clock.now() })
    .onConflictDoNothing()
    .returning();
  if (!row) throw new AppError('CONFLICT', `A category named "${body.name}" already exists`);
  return toCategoryDto(row);
}
