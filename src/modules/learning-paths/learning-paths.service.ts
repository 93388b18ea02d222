import { and, asc, count, desc, eq, inArray } from 'drizzle-orm';
import { withTx, type ServiceContext } from '../../platform/context.js';
import { iso } from '../../platform/dto.js';
import { byId, inTenant, sameTenantRef } from '../../platform/db/tenancy.js';
import { AppError, conflict } from '../../platform/http/errors.js';
import { pageMeta, pageOffset, toPage } from '../../platform/http/pagination.js';
import { newId } from '../../platform/ids.js';
import { audit, changes, snapshot } from '../audit/audit.js';
import { requireAccess, visibleLearningPaths } from '../access/access.service.js';
import { courses } from '../courses/courses.tables.js';
import { enrollments } from '../enrollments/enrollments.tables.js';
import { enrollStudents, lockCourses } from '../enrollments/enrollments.service.js';
import { learningPathCourses, learningPathEnrollments, learningPaths, type LearningPath } from './learning-paths.tables.js';
import { countsOnPath, holdsBack } from './learning-paths.rule.js';

type PathStatus = LearningPath['status'];

/** A path the caller may see (404 otherwise; the rule is `learningPath.view` of the access module). */
const visiblePath = (ctx: ServiceContext, id: string): Promise<LearningPath> => requireAccess(ctx, 'learningPath.view', id);

/** A path the caller may change: its creator or ADMIN, with canManageCourses (`learningPath.edit`). */
const editablePath = (ctx: ServiceContext, id: string): Promise<LearningPath> => requireAccess(ctx, 'learningPath.edit', id);

/** The path as the caller sees it: its courses in order with the caller's enrollment and the order lock. */
async function pathDto(ctx: ServiceContext, path: LearningPath) {
  const [rows, [onPath]] = await Promise.all([
    ctx.db
      .select({ link: learningPathCourses, course: courses, enrollment: enrollments })
      .from(learningPathCourses)
      .innerJoin(courses, sameTenantRef(learningPathCourses.courseId, learningPathCourses.institutionId, courses))
      .leftJoin(
        enrollments,
        and(
          eq(enrollments.institutionId, learningPathCourses.institutionId),
          eq(enrollments.courseId, learningPathCourses.courseId),
          eq(enrollments.studentId, ctx.actor.personId),
        ),
      )
      .where(and(inTenant(ctx, learningPathCourses), eq(learningPathCourses.pathId, path.id)))
      .orderBy(asc(learningPathCourses.position)),
    ctx.db
      .select({ id: learningPathEnrollments.id })
      .from(learningPathEnrollments)
      .where(and(inTenant(ctx, learningPathEnrollments), eq(learningPathEnrollments.pathId, path.id), eq(learningPathEnrollments.studentId, ctx.actor.personId))),
  ]);
  let blocked = false;
  const list = rows.map(({ link, course, enrollment }) => {
    const item = {
      courseId: course.id,
      title: course.title,
      position: link.position,
      status: course.status,
      enrollmentStatus: enrollment?.status ?? null,
      progress: enrollment?.progress ?? null,
      locked: blocked,
    };
    // The access module's prerequisite rule: only a course the learner can still complete
    // (PUBLISHED, or ACTIVE in it) holds back the ones after it.
    if (holdsBack(course.status, enrollment?.status)) blocked = true;
    return item;
  });
  // Progress over the courses that count for the learner (the same rule): completed ones, and
  // ones they can still complete; the next is the first of those not completed (the one that
  // holds back the rest). An archived or unpublished course they never took is left out, so the
  // path can reach 100 %.
  const counted = list.filter((c) => countsOnPath(c.status, c.enrollmentStatus));
  const completedCourses = counted.filter((c) => c.enrollmentStatus === 'COMPLETED').length;
  return {
    id: path.id,
    title: path.title,
    description: path.description,
    status: path.status,
    createdBy: path.createdBy,
    courseCount: list.length,
    courses: list,
    enrolled: !!onPath,
    progress: {
      completedCourses,
      totalCourses: counted.length,
      percent: counted.length ? Math.round((completedCourses / counted.length) * 100) : 0,
      nextCourseId: counted.find((c) => holdsBack(c.status, c.enrollmentStatus))?.courseId ?? null,
    },
    createdAt: iso(path.createdAt),
    updatedAt: iso(path.updatedAt),
  };
}

/** GET /api/learning-paths: staff see every path; learners the PUBLISHED ones and the ones they are on. */
export async function listPaths(ctx: ServiceContext, q: { page: number; perPage?: number; limit?: number; status?: PathStatus }) {
  const page = toPage(q);
  const visible = visibleLearningPaths(ctx);
  const where = and(inTenant(ctx, learningPaths), visible, q.status ? eq(learningPaths.status, q.status) : undefined);
  const [paths, [{ total }]] = await Promise.all([
    ctx.db.select().from(learningPaths).where(where).orderBy(desc(learningPaths.createdAt), desc(learningPaths.id)).limit(page.perPage).offset(pageOffset(page)),
    ctx.db.select({ total: count() }).from(learningPaths).where(where),
  ]);
  const rows = await Promise.all(
    paths.map(async (p) => {
      const { courses: _courses, ...rest } = await pathDto(ctx, p);
      return rest;
    }),
  );
  return { rows, meta: pageMeta(page, Number(total)) };
}

/** Courses of the caller's institution by id: every id must exist here, else 404 (another institution's course included). */
async function coursesOfInstitution(ctx: ServiceContext, ids: string[]) {
  if (ids.length === 0) return;
  const found = await ctx.db
    .select({ id: courses.id })
    .from(courses)
    .where(and(inTenant(ctx, courses), inArray(courses.id, ids)));
  const known = new Set(found.map((c) => c.id));
  const missing = ids.filter((id) => !known.has(id));
  if (missing.length > 0) throw new AppError('NOT_FOUND', 'Course not found', { courseIds: missing });
  if (new Set(ids).size !== ids.length) throw conflict('A course appears twice in the path');
}

/** POST /api/learning-paths (canManageCourses). */
export async function createPath(ctx: ServiceContext, body: { title: string; description?: string | null; status: PathStatus; courseIds?: string[] }) {
  await requireAccess(ctx, 'catalog.author', null);
  const courseIds = body.courseIds ?? [];
  await coursesOfInstitution(ctx, courseIds);
  const path = await withTx(ctx, async (tx) => {
    const now = tx.clock.now();
    const [row] = await tx.db
      .insert(learningPaths)
      .values({
        institutionId: tx.institutionId,
        id: newId(),
        title: body.title,
        description: body.description ?? null,
        status: body.status,
        createdBy: tx.actor.personId,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    if (courseIds.length > 0) {
      await tx.db
        .insert(learningPathCourses)
        .values(courseIds.map((courseId, position) => ({ institutionId: tx.institutionId, id: newId(), pathId: row!.id, courseId, position })));
    }
    await audit(tx, { action: 'learning_path.create', targetType: 'learning_path', targetId: row!.id, after: { ...snapshot(row!, ['title', 'status']), courseIds } });
    return row!;
  });
  return pathDto(ctx, path);
}

export async function getPath(ctx: ServiceContext, id: string) {
  return pathDto(ctx, await visiblePath(ctx, id));
}

/** PATCH /api/learning-paths/{id}: title, description, status (creator or ADMIN). */
export async function updatePath(ctx: ServiceContext, id: string, body: { title?: string; description?: string | null; status?: PathStatus }) {
  const path = await editablePath(ctx, id);
  const row = await withTx(ctx, async (tx) => {
    const [updated] = await tx.db
      .update(learningPaths)
      .set({ ...body, updatedAt: tx.clock.now() })
      .where(byId(tx, learningPaths, path.id))
      .returning();
    await audit(tx, { action: 'learning_path.update', targetType: 'learning_path', targetId: path.id, ...changes(path, updated!, ['title', 'description', 'status']) });
    return updated!;
  });
  return pathDto(ctx, row);
}

/**
 * POST /api/learning-paths/{id}/courses: add one course or several, at `position` (default the
 * end); later courses move down. A course of another institution is 404; one already on the
 * path 409.
 */
export async function addCourses(ctx: ServiceContext, id: string, body: { courseId?: string; courseIds?: string[]; position?: number }) {
  const path = await editablePath(ctx, id);
  const ids = [...(body.courseId ? [body.courseId] : []), ...(body.courseIds ?? [])];
  await coursesOfInstitution(ctx, ids);
  await withTx(ctx, async (tx) => {
    // Lock the path so concurrent additions keep positions dense.
    await tx.db
      .select({ id: learningPaths.id })
      .from(learningPaths)
      .where(byId(tx, learningPaths, path.id))
      .for('update');
    const current = await tx.db
      .select()
      .from(learningPathCourses)
      .where(and(inTenant(tx, learningPathCourses), eq(learningPathCourses.pathId, path.id)))
      .orderBy(asc(learningPathCourses.position));
    if (current.some((c) => ids.includes(c.courseId))) throw conflict('The course is already on this path');
    const at = Math.min(body.position ?? current.length, current.length);
    const order = [...current.slice(0, at).map((c) => c.courseId), ...ids, ...current.slice(at).map((c) => c.courseId)];
    await tx.db.delete(learningPathCourses).where(and(inTenant(tx, learningPathCourses), eq(learningPathCourses.pathId, path.id)));
    await tx.db.insert(learningPathCourses).values(order.map((courseId, position) => ({ institutionId: tx.institutionId, id: newId(), pathId: path.id, courseId, position })));
    await audit(tx, {
      action: 'learning_path.add_courses',
      targetType: 'learning_path',
      targetId: path.id,
      before: { courseIds: current.map((c) => c.courseId) },
      after: { courseIds: order },
    });
    await tx.db
      .update(learningPaths)
      .set({ updatedAt: tx.clock.now() })
      .where(byId(tx, learningPaths, path.id));
  });
  return getPath(ctx, path.id);
}

type CourseResult = 'ENROLLED' | 'ALREADY_ENROLLED' | 'COURSE_FULL' | 'NOT_AVAILABLE';

/**
 * POST /api/learning-paths/{id}/enroll: puts students on a PUBLISHED path and enrolls them in
 * its courses in path order, reporting each course (a full or unpublished course is reported,
 * not a failure of the whole). Idempotent. Learners enroll themselves (self-enrollment and fee
 * rules as for a course); staff may pass `studentIds` (audited). The enrollments the path makes
 * carry it, so its order holds as prerequisites: `lesson.open` refuses a course's lessons (403
 * LESSON_LOCKED, naming the course to complete first) until the courses before it are completed.
 */
export async function enrollPath(ctx: ServiceContext, id: string, body: { studentIds?: string[] } | null | undefined) {
  const path = await visiblePath(ctx, id);
  if (path.status !== 'PUBLISHED') throw conflict('Only a published path takes enrollments');
  let students: string[];
  const staffEnroll = !!body?.studentIds;
  if (body?.studentIds) {
    await requireAccess(ctx, 'catalog.author', null);
    students = [...new Set(body.studentIds)];
  } else {
    await requireAccess(ctx, 'learningPath.selfEnroll', null);
    students = [ctx.actor.personId];
  }
  const results = new Map(students.map((s) => [s, [] as Array<{ courseId: string; position: number; result: CourseResult }>]));
  await withTx(ctx, async (tx) => {
    const links = await tx.db
      .select({ courseId: learningPathCourses.courseId, position: learningPathCourses.position })
      .from(learningPathCourses)
      .where(and(inTenant(tx, learningPathCourses), eq(learningPathCourses.pathId, path.id)))
      .orderBy(asc(learningPathCourses.position));
    // Every course of the path locked up front, in id order (not path order: two paths may list
    // the same courses the other way round), and judged as it is under the lock.
    const locked = await lockCourses(
      tx,
      links.map((l) => l.courseId),
    );
    const now = tx.clock.now();
    const onPath = await tx.db
      .insert(learningPathEnrollments)
      .values(students.map((studentId) => ({ institutionId: tx.institutionId, id: newId(), pathId: path.id, studentId, enrolledAt: now })))
      .onConflictDoNothing()
      .returning();
    if (staffEnroll) {
      await audit(
        tx,
        onPath.map((p) => ({ action: 'learning_path.enroll', targetType: 'learning_path_enrollment', targetId: p.id, after: { learningPathId: path.id, studentId: p.studentId } })),
      );
    }
    for (const link of links) {
      const course = locked.get(link.courseId);
      if (course?.status !== 'PUBLISHED') {
        for (const s of students) results.get(s)!.push({ courseId: link.courseId, position: link.position, result: 'NOT_AVAILABLE' });
        continue;
      }
      const outcomes = await enrollStudents(tx, course, students);
      // The enrollments this path made follow its order: locked until the courses before are completed.
      const made = [...outcomes.values()].flatMap((o) => (o.kind === 'enrolled' ? [{ ...o.enrollment, learningPathId: path.id }] : []));
      if (made.length > 0) {
        await tx.db
          .update(enrollments)
          .set({ learningPathId: path.id })
          .where(
            and(
              inTenant(tx, enrollments),
              inArray(
                enrollments.id,
                made.map((e) => e.id),
              ),
            ),
          );
      }
      // Enrollments made by staff are audited (a learner enrolling themself is not a staff write).
      if (staffEnroll) {
        await audit(
          tx,
          made.map((e) => ({
            action: 'enrollment.create',
            targetType: 'enrollment',
            targetId: e.id,
            after: { courseId: e.courseId, studentId: e.studentId, status: e.status, learningPathId: path.id },
          })),
        );
      }
      for (const s of students) {
        const o = outcomes.get(s);
        results
          .get(s)!
          .push({ courseId: link.courseId, position: link.position, result: o?.kind === 'enrolled' ? 'ENROLLED' : o?.kind === 'already' ? 'ALREADY_ENROLLED' : 'COURSE_FULL' });
      }
    }
  });
  return { pathId: path.id, students: students.map((studentId) => ({ studentId, courses: results.get(studentId)! })) };
}
