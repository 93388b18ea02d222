import { and, eq, sql } from 'drizzle-orm';
import type { ServiceContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/client.js';
import { iso } from '../../platform/dto.js';
import { newId } from '../../platform/ids.js';
import { AppError, notFound, validationError } from '../../platform/http/errors.js';
import type { Course, Lesson } from '../courses/courses.tables.js';
import { lessons } from '../courses/courses.tables.js';
import { findLesson } from '../courses/lesson-access.js';
import { blockAnswers, enrollments, learnerEvents, lessonInteractions, lessonProgress, type Enrollment, type LessonProgress } from '../enrollments/enrollments.tables.js';
import { courseState, lockedError } from '../learn/learn.service.js';
import { recomputeEnrollment } from './completion.js';
import { inTenant } from '../../platform/db/tenancy.js';

export interface ProgressInput {
  completed?: boolean;
  progressPercent?: number;
  positionSeconds?: number;
  pdfPage?: number;
  pdfTotalPages?: number;
  score?: number;
}

/** The caller's enrollment for learner writes: ACTIVE or COMPLETED, locked for the transaction. */
async function lockOwnEnrollment(tx: Tx, ctx: ServiceContext, courseId: string): Promise<Enrollment> {
  const [e] = await tx
    .select()
    .from(enrollments)
    .where(and(inTenant(ctx, enrollments), eq(enrollments.courseId, courseId), eq(enrollments.studentId, ctx.actor.personId)))
    .for('update')
    .limit(1);
  if (!e || e.status === 'DROPPED') throw new AppError('ENROLLMENT_REQUIRED', 'You must be enrolled in this course');
  return e;
}

async function assertUnlocked(tx: Tx, ctx: ServiceContext, course: Course, enrollment: Enrollment, lessonId: string) {
  const state = await courseState(ctx, course, enrollment, tx);
  const lock = state.locks.get(lessonId);
  if (lock?.locked) throw lockedError(lock);
}

async function upsertProgress(tx: Tx, ctx: ServiceContext, enrollment: Enrollment, lesson: Lesson, input: ProgressInput): Promise<LessonProgress> {
  const now = ctx.clock.now();
  const [existing] = await tx
    .select()
    .from(lessonProgress)
    .where(and(inTenant(ctx, lessonProgress), eq(lessonProgress.enrollmentId, enrollment.id), eq(lessonProgress.lessonId, lesson.id)))
    .limit(1);
  // Completion is sticky: once complete, a later "completed: false" or lower percent does not undo it.
  const completed = (existing?.completed ?? false) || input.completed === true || (input.progressPercent ?? 0) >= 100;
  const percent = completed ? 100 : Math.max(existing?.progressPercent ?? 0, Math.round(input.progressPercent ?? 0));
  const values = {
    completed,
    completedAt: existing?.completedAt ?? (completed ? now : null),
    progressPercent: percent,
    positionSeconds: input.positionSeconds ?? existing?.positionSeconds ?? null,
    pdfPage: input.pdfPage ?? existing?.pdfPage ?? null,
    pdfTotalPages: input.pdfTotalPages ?? existing?.pdfTotalPages ?? null,
    score: input.score ?? existing?.score ?? null,
    updatedAt: now,
  };
  if (existing) {
    const [row] = await tx.update(lessonProgress).set(values).where(eq(lessonProgress.id, existing.id)).returning();
    return row;
  }
  const [row] = await tx
    .insert(lessonProgress)
    .values({ id: newId(), institutionId: ctx.institutionId, enrollmentId: enrollment.id, lessonId: lesson.id, studentId: enrollment.studentId, ...values })
    .returning();
  return row;
}

function progressDto(p: LessonProgress, result: Awaited<ReturnType<typeof recomputeEnrollment>>) {
  return {
    lessonId: p.lessonId,
    enrollmentId: p.enrollmentId,
    completed: p.completed,
    completedAt: iso(p.completedAt),
    progressPercent: p.progressPercent,
    positionSeconds: p.positionSeconds,
    pdfPage: p.pdfPage,
    pdfTotalPages: p.pdfTotalPages,
    updatedAt: iso(p.updatedAt) as string,
    progress: result.enrollment.progress,
    status: result.enrollment.status,
    courseCompleted: result.enrollment.status === 'COMPLETED',
    completedNow: result.completedNow,
    certificateId: result.certificate?.id ?? null,
  };
}

/** POST /api/lessons/:id/progress (and pdf-progress, events that complete). */
export async function updateProgress(ctx: ServiceContext, lessonId: string, input: ProgressInput) {
  const { lesson, course } = await findLesson(ctx, lessonId);
  return ctx.db.transaction(async (tx) => {
    const enrollment = await lockOwnEnrollment(tx, ctx, course.id);
    await assertUnlocked(tx, ctx, course, enrollment, lesson.id);
    const p = await upsertProgress(tx, ctx, enrollment, lesson, input);
    return progressDto(p, await recomputeEnrollment(tx, ctx, course, enrollment));
  });
}

/** POST /api/lessons/:id/progress-v2 — several lessons of the same course in one transaction. */
export async function updateProgressBatch(ctx: ServiceContext, lessonId: string, items: Array<ProgressInput & { lessonId?: string }>) {
  const { course } = await findLesson(ctx, lessonId);
  return ctx.db.transaction(async (tx) => {
    const enrollment = await lockOwnEnrollment(tx, ctx, course.id);
    const courseLessons = await tx.select().from(lessons).where(and(inTenant(ctx, lessons), eq(lessons.courseId, course.id)));
    const byId = new Map(courseLessons.map((l) => [l.id, l]));
    const rows: LessonProgress[] = [];
    for (const [i, item] of items.entries()) {
      const lesson = byId.get(item.lessonId ?? lessonId);
      if (!lesson) throw validationError('Every lesson must belong to the same course', [{ field: `body.items.${i}.lessonId`, message: 'not a lesson of this course' }]);
      await assertUnlocked(tx, ctx, course, enrollment, lesson.id);
      rows.push(await upsertProgress(tx, ctx, enrollment, lesson, item));
    }
    const result = await recomputeEnrollment(tx, ctx, course, enrollment);
    return { items: rows.map((p) => progressDto(p, result)), progress: result.enrollment.progress, status: result.enrollment.status };
  });
}

/** POST /api/lessons/:id/pdf-progress — page reached of total pages; the last page completes it. */
export async function updatePdfProgress(ctx: ServiceContext, lessonId: string, page: number, totalPages: number) {
  if (page > totalPages) throw validationError('page cannot exceed totalPages', [{ field: 'body.page', message: 'must be at most totalPages' }]);
  const { lesson } = await findLesson(ctx, lessonId);
  if (lesson.type !== 'PDF') throw validationError('PDF progress applies to PDF lessons only');
  return updateProgress(ctx, lessonId, {
    pdfPage: page,
    pdfTotalPages: totalPages,
    progressPercent: Math.floor((page / totalPages) * 100),
    completed: page >= totalPages,
  });
}

const COMPLETING_EVENTS = new Set(['complete', 'completed', 'ended']);

/** POST /api/lessons/:id/events — learner player events, stored; a complete event completes the lesson. */
export async function recordEvents(ctx: ServiceContext, lessonId: string, events: Array<{ type: string; positionSeconds?: number; occurredAt?: string; data?: Record<string, unknown> }>) {
  const { course } = await findLesson(ctx, lessonId);
  const now = ctx.clock.now();
  await ctx.db.transaction(async (tx) => {
    await lockOwnEnrollment(tx, ctx, course.id);
    await tx.insert(learnerEvents).values(
      events.map((e) => ({
        id: newId(),
        institutionId: ctx.institutionId,
        lessonId,
        studentId: ctx.actor.personId,
        type: e.type,
        positionSeconds: e.positionSeconds ?? null,
        data: e.data ?? {},
        occurredAt: e.occurredAt ? new Date(e.occurredAt) : now,
        createdAt: now,
      })),
    );
  });
  const last = [...events].reverse().find((e) => e.positionSeconds !== undefined);
  const completes = events.some((e) => COMPLETING_EVENTS.has(e.type.toLowerCase()));
  const progress = completes || last
    ? await updateProgress(ctx, lessonId, { completed: completes || undefined, positionSeconds: last?.positionSeconds !== undefined ? Math.floor(last.positionSeconds) : undefined })
    : null;
  return { recorded: events.length, progress };
}

/** POST /api/lessons/:id/interactions */
export async function recordInteraction(ctx: ServiceContext, lessonId: string, body: { kind: string; targetId?: string; data?: Record<string, unknown> }) {
  const { course } = await findLesson(ctx, lessonId);
  const now = ctx.clock.now();
  return ctx.db.transaction(async (tx) => {
    await lockOwnEnrollment(tx, ctx, course.id);
    const [row] = await tx
      .insert(lessonInteractions)
      .values({ id: newId(), institutionId: ctx.institutionId, lessonId, studentId: ctx.actor.personId, kind: body.kind, targetId: body.targetId ?? null, data: body.data ?? {}, createdAt: now })
      .returning();
    return { id: row.id, lessonId, kind: row.kind, targetId: row.targetId, data: row.data, createdAt: iso(row.createdAt) as string };
  });
}

function blockOf(lesson: Lesson, blockId: string) {
  const block = lesson.blocks.find((b) => b.id === blockId);
  if (!block) throw notFound('Block');
  return block;
}

const answerDto = (a: typeof blockAnswers.$inferSelect) => ({
  lessonId: a.lessonId,
  blockId: a.blockId,
  answer: a.answer,
  isCorrect: a.isCorrect,
  createdAt: iso(a.createdAt) as string,
  updatedAt: iso(a.updatedAt) as string,
});

/** POST /api/lessons/:id/blocks/:blockId/answer — the caller's answer (latest wins). */
export async function answerBlock(ctx: ServiceContext, lessonId: string, blockId: string, answer: unknown) {
  const { lesson, course } = await findLesson(ctx, lessonId);
  const block = blockOf(lesson, blockId);
  const isCorrect = 'correctAnswer' in block ? JSON.stringify(block.correctAnswer) === JSON.stringify(answer) : null;
  const now = ctx.clock.now();
  return ctx.db.transaction(async (tx) => {
    await lockOwnEnrollment(tx, ctx, course.id);
    const [row] = await tx
      .insert(blockAnswers)
      .values({ id: newId(), institutionId: ctx.institutionId, lessonId, blockId, studentId: ctx.actor.personId, answer: answer as object, isCorrect, createdAt: now, updatedAt: now })
      .onConflictDoUpdate({
        target: [blockAnswers.institutionId, blockAnswers.lessonId, blockAnswers.blockId, blockAnswers.studentId],
        set: { answer: sql`excluded.answer`, isCorrect: sql`excluded.is_correct`, updatedAt: now },
      })
      .returning();
    return answerDto(row);
  });
}

/** GET /api/lessons/:id/blocks/:blockId/answer — the caller's own answer or null. */
export async function getBlockAnswer(ctx: ServiceContext, lessonId: string, blockId: string) {
  const { lesson } = await findLesson(ctx, lessonId);
  blockOf(lesson, blockId);
  const [row] = await ctx.db
    .select()
    .from(blockAnswers)
    .where(and(inTenant(ctx, blockAnswers), eq(blockAnswers.lessonId, lessonId), eq(blockAnswers.blockId, blockId), eq(blockAnswers.studentId, ctx.actor.personId)))
    .limit(1);
  return row ? answerDto(row) : null;
}
