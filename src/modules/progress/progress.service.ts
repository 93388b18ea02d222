import { isDeepStrictEqual } from 'node:util';
import { and, eq, sql } from 'drizzle-orm';
import { withTx, type ServiceContext } from '../../platform/context.js';
import { iso } from '../../platform/dto.js';
import { newId } from '../../platform/ids.js';
import { AppError, notFound, validationError } from '../../platform/http/errors.js';
import { inTenant } from '../../platform/db/tenancy.js';
import { lessons, type Course, type Lesson } from '../courses/courses.tables.js';
import { recordLearning, type LearningEvent } from '../gamification/gamification.service.js';
import { blockAnswers, enrollments, learnerEvents, lessonInteractions, lessonProgress, type Enrollment, type LessonProgress } from '../enrollments/enrollments.tables.js';
import { courseState, lockedError, requireAccess } from '../access/access.service.js';
import { lessonLocks } from '../learn/drip.js';
import { recomputeEnrollment, type CompletionResult } from './completion.js';

export interface ProgressInput {
  completed?: boolean;
  progressPercent?: number;
  positionSeconds?: number;
  pdfPage?: number;
  pdfTotalPages?: number;
  score?: number;
}

/**
 * Lessons that complete only through their assessment (a passed quiz attempt, a graded
 * submission) or their tracking (a SCORM package's CMI data), never by a learner saying so: a
 * progress call may save position, not completion.
 */
const ASSESSED_TYPES = new Set<Lesson['type']>(['QUIZ', 'ASSIGNMENT', 'SCORM']);

const claimsCompletion = (input: ProgressInput) => input.completed === true || (input.progressPercent ?? 0) >= 100;

function assertSelfCompletable(lesson: Lesson, input: ProgressInput, field: string) {
  if (ASSESSED_TYPES.has(lesson.type) && claimsCompletion(input)) {
    const by = lesson.type === 'SCORM' ? 'its tracking data (POST /api/scorm/{id}/track)' : 'its assessment';
    throw new AppError('CONFLICT', `${/^[AEIOU]/.test(lesson.type) ? 'An' : 'A'} ${lesson.type} lesson is completed by ${by}, not by a progress update`, { field });
  }
}

/**
 * The caller's enrollment for learner writes, locked for the transaction so concurrent writes
 * of one learner in one course serialise: ACTIVE or COMPLETED (DROPPED is 403).
 */
export async function lockOwnEnrollment(tx: ServiceContext, courseId: string): Promise<Enrollment> {
  const [e] = await tx.db
    .select()
    .from(enrollments)
    .where(and(inTenant(tx, enrollments), eq(enrollments.courseId, courseId), eq(enrollments.studentId, tx.actor.personId)))
    .for('update')
    .limit(1);
  if (!e || e.status === 'DROPPED') throw new AppError('ENROLLMENT_REQUIRED', 'You must be enrolled in this course');
  return e;
}

/** Several inputs for one lesson fold into one: later values win, completion is sticky, percent only grows. */
function fold(a: ProgressInput | undefined, b: ProgressInput): ProgressInput {
  if (!a) return b;
  return {
    completed: a.completed === true || b.completed === true || undefined,
    progressPercent: Math.max(a.progressPercent ?? 0, b.progressPercent ?? 0) || undefined,
    positionSeconds: b.positionSeconds ?? a.positionSeconds,
    pdfPage: b.pdfPage ?? a.pdfPage,
    pdfTotalPages: b.pdfTotalPages ?? a.pdfTotalPages,
    score: b.score ?? a.score,
  };
}

/**
 * Writes the progress of several lessons in one statement. Completion is sticky: once
 * complete, a later "completed: false" or lower percent does not undo it.
 */
async function upsertProgress(tx: ServiceContext, enrollment: Enrollment, inputs: Map<string, ProgressInput>): Promise<LessonProgress[]> {
  if (inputs.size === 0) return [];
  const now = tx.clock.now();
  const excluded = (column: string) => sql.raw(`excluded.${column}`);
  const current = (column: string) => sql.raw(`"lesson_progress".${column}`);
  return tx.db
    .insert(lessonProgress)
    .values(
      [...inputs].map(([lessonId, input]) => {
        const completed = claimsCompletion(input);
        return {
          id: newId(),
          institutionId: tx.institutionId,
          enrollmentId: enrollment.id,
          lessonId,
          studentId: enrollment.studentId,
          completed,
          completedAt: completed ? now : null,
          // Floored: only a completion is 100 (99.6 % read as 100 showed a finished lesson that was not).
          progressPercent: completed ? 100 : Math.max(0, Math.min(100, Math.floor(input.progressPercent ?? 0))),
          positionSeconds: input.positionSeconds ?? null,
          pdfPage: input.pdfPage ?? null,
          pdfTotalPages: input.pdfTotalPages ?? null,
          score: input.score ?? null,
          updatedAt: now,
        };
      }),
    )
    .onConflictDoUpdate({
      target: [lessonProgress.institutionId, lessonProgress.enrollmentId, lessonProgress.lessonId],
      set: {
        completed: sql`${current('completed')} or ${excluded('completed')}`,
        completedAt: sql`coalesce(${current('completed_at')}, ${excluded('completed_at')})`,
        progressPercent: sql`case when ${current('completed')} or ${excluded('completed')} then 100 else greatest(${current('progress_percent')}, ${excluded('progress_percent')}) end`,
        positionSeconds: sql`coalesce(${excluded('position_seconds')}, ${current('position_seconds')})`,
        pdfPage: sql`coalesce(${excluded('pdf_page')}, ${current('pdf_page')})`,
        pdfTotalPages: sql`coalesce(${excluded('pdf_total_pages')}, ${current('pdf_total_pages')})`,
        score: sql`coalesce(${excluded('score')}, ${current('score')})`,
        updatedAt: now,
      },
    })
    .returning();
}

function progressDto(p: LessonProgress, result: CompletionResult) {
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

/** Progress rows and the recomputed enrollment, in the caller's transaction. */
async function writeProgress(tx: ServiceContext, course: Course, inputs: Map<string, ProgressInput>) {
  const enrollment = await lockOwnEnrollment(tx, course.id);
  const rows = await upsertProgress(tx, enrollment, inputs);
  const result = await recomputeEnrollment(tx, course, enrollment);
  await recordLearning(tx, enrollment.studentId, learningEvents(enrollment, rows, course, result));
  return { rows, result };
}

/** Gamification events of a progress write: completed lessons (once each, however often reported) and a completed course. */
function learningEvents(enrollment: Enrollment, rows: LessonProgress[], course: Course, result: CompletionResult): LearningEvent[] {
  const events: LearningEvent[] = rows.filter((p) => p.completed).map((p) => ({ kind: 'LESSON_COMPLETED', enrollmentId: enrollment.id, lessonId: p.lessonId }));
  if (result.completedNow) events.push({ kind: 'COURSE_COMPLETED', courseId: course.id });
  return events;
}

/** POST /api/lessons/:id/progress (and pdf-progress). */
export async function updateProgress(ctx: ServiceContext, lessonId: string, input: ProgressInput) {
  const { lesson, course } = await requireAccess(ctx, 'lesson.learn', lessonId);
  assertSelfCompletable(lesson, input, 'body.completed');
  return withTx(ctx, async (tx) => {
    const { rows, result } = await writeProgress(tx, course, new Map([[lesson.id, input]]));
    return progressDto(rows[0], result);
  });
}

/**
 * POST /api/lessons/:id/progress-v2 — several lessons of the same course in one transaction,
 * set-based: access and locks are checked for all of them first, then one upsert and one
 * recompute, whatever the batch size. Items count in order: a lesson a SEQUENTIAL course locks
 * behind one the batch completes earlier is open to the items after it.
 */
export async function updateProgressBatch(ctx: ServiceContext, lessonId: string, items: Array<ProgressInput & { lessonId?: string }>) {
  const opened = await requireAccess(ctx, 'lesson.learn', lessonId);
  const state = opened.state ?? (await courseState(ctx, opened.course, opened.enrollment));
  const lessonsById = new Map(state.ordered.map((l) => [l.id, l]));
  const inputs = new Map<string, ProgressInput>();
  const completed = new Set(state.completed);
  let locks = state.locks;
  for (const [i, { lessonId: itemLessonId, ...input }] of items.entries()) {
    const lesson = lessonsById.get(itemLessonId ?? lessonId);
    if (!lesson) throw validationError('Every lesson must belong to the same course', [{ field: `body.items.${i}.lessonId`, message: 'not a lesson of this course' }]);
    if (locks.get(lesson.id)?.reason === 'SEQUENTIAL' && completed.size > state.completed.size) {
      locks = lessonLocks(state.ordered, { dripMode: opened.course.dripMode, enrolledAt: opened.enrollment?.enrolledAt ?? null, completed, now: ctx.clock.now() });
    }
    const lock = locks.get(lesson.id);
    if (lock?.locked) throw lockedError(lock);
    assertSelfCompletable(lesson, input, `body.items.${i}.completed`);
    inputs.set(lesson.id, fold(inputs.get(lesson.id), input));
    if (claimsCompletion(input)) completed.add(lesson.id);
  }
  return withTx(ctx, async (tx) => {
    const { rows, result } = await writeProgress(tx, opened.course, inputs);
    return { items: rows.map((p) => progressDto(p, result)), progress: result.enrollment.progress, status: result.enrollment.status };
  });
}

/** POST /api/lessons/:id/pdf-progress — page reached of total pages; the last page completes it. */
export async function updatePdfProgress(ctx: ServiceContext, lessonId: string, page: number, totalPages: number) {
  if (page > totalPages) throw validationError('page cannot exceed totalPages', [{ field: 'body.page', message: 'must be at most totalPages' }]);
  // Who may write comes first (as on the other progress routes): a stranger learns nothing of the lesson's type.
  const { lesson } = await requireAccess(ctx, 'lesson.learn', lessonId);
  if (lesson.type !== 'PDF') throw validationError('PDF progress applies to PDF lessons only');
  return updateProgress(ctx, lessonId, {
    pdfPage: page,
    pdfTotalPages: totalPages,
    progressPercent: Math.floor((page / totalPages) * 100),
    completed: page >= totalPages,
  });
}

const COMPLETING_EVENTS = new Set(['complete', 'completed', 'ended']);

/**
 * POST /api/lessons/:id/events — learner player events. Access (enrollment, fees, drip lock)
 * is checked before anything is written; the events and the progress they imply (the last
 * position; completion on a complete event, except for assessed lessons) commit together.
 */
export async function recordEvents(
  ctx: ServiceContext,
  lessonId: string,
  events: Array<{ type: string; positionSeconds?: number; occurredAt?: string; data?: Record<string, unknown> }>,
) {
  const { lesson, course } = await requireAccess(ctx, 'lesson.learn', lessonId);
  const now = ctx.clock.now();
  const last = [...events].reverse().find((e) => e.positionSeconds !== undefined);
  const completes = !ASSESSED_TYPES.has(lesson.type) && events.some((e) => COMPLETING_EVENTS.has(e.type.toLowerCase()));
  return withTx(ctx, async (tx) => {
    const enrollment = await lockOwnEnrollment(tx, course.id);
    await tx.db.insert(learnerEvents).values(
      events.map((e) => ({
        id: newId(),
        institutionId: tx.institutionId,
        lessonId: lesson.id,
        studentId: enrollment.studentId,
        type: e.type,
        positionSeconds: e.positionSeconds ?? null,
        data: e.data ?? {},
        occurredAt: e.occurredAt ? new Date(e.occurredAt) : now,
        createdAt: now,
      })),
    );
    if (!completes && !last) return { recorded: events.length, progress: null };
    const input: ProgressInput = {
      completed: completes || undefined,
      positionSeconds: last?.positionSeconds !== undefined ? Math.floor(last.positionSeconds) : undefined,
    };
    const { rows, result } = await writeProgress(tx, course, new Map([[lesson.id, input]]));
    return { recorded: events.length, progress: progressDto(rows[0], result) };
  });
}

/** POST /api/lessons/:id/interactions */
export async function recordInteraction(ctx: ServiceContext, lessonId: string, body: { kind: string; targetId?: string; data?: Record<string, unknown> }) {
  const { lesson, enrollment } = await requireAccess(ctx, 'lesson.learn', lessonId);
  const [row] = await ctx.db
    .insert(lessonInteractions)
    .values({
      id: newId(),
      institutionId: ctx.institutionId,
      lessonId: lesson.id,
      studentId: enrollment.studentId,
      kind: body.kind,
      targetId: body.targetId ?? null,
      data: body.data ?? {},
      createdAt: ctx.clock.now(),
    })
    .returning();
  return { id: row.id, lessonId: lesson.id, kind: row.kind, targetId: row.targetId, data: row.data, createdAt: iso(row.createdAt) as string };
}

/**
 * The block an answer is for. A lesson that declares no blocks (its content is free-form, e.g.
 * an INTERACTIVE lesson made without `blocks`) takes answers to any block id, ungraded; one that
 * declares blocks takes only its own (else 404), as captions do.
 */
function blockOf(lesson: Lesson, blockId: string): Lesson['blocks'][number] | null {
  if (lesson.blocks.length === 0) return null;
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

/** POST /api/lessons/:id/blocks/:blockId/answer — the caller's answer (latest wins); only on lessons they may open. */
export async function answerBlock(ctx: ServiceContext, lessonId: string, blockId: string, answer: unknown) {
  const { lesson, enrollment } = await requireAccess(ctx, 'lesson.learn', lessonId);
  const block = blockOf(lesson, blockId);
  // Compared by content: the stored answer key is jsonb, which keeps object keys in its own order.
  const isCorrect = block && 'correctAnswer' in block ? isDeepStrictEqual(block.correctAnswer, answer) : null;
  const now = ctx.clock.now();
  const [row] = await ctx.db
    .insert(blockAnswers)
    .values({
      id: newId(),
      institutionId: ctx.institutionId,
      lessonId: lesson.id,
      blockId,
      studentId: enrollment.studentId,
      answer: answer as object,
      isCorrect,
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoUpdate({
      target: [blockAnswers.institutionId, blockAnswers.lessonId, blockAnswers.blockId, blockAnswers.studentId],
      set: { answer: sql`excluded.answer`, isCorrect: sql`excluded.is_correct`, updatedAt: now },
    })
    .returning();
  return answerDto(row);
}

/** GET /api/lessons/:id/blocks/:blockId/answer — the caller's own answer or null. */
export async function getBlockAnswer(ctx: ServiceContext, lessonId: string, blockId: string) {
  const { lesson } = await requireAccess(ctx, 'lesson.view', lessonId);
  blockOf(lesson, blockId);
  const [row] = await ctx.db
    .select()
    .from(blockAnswers)
    .where(and(inTenant(ctx, blockAnswers), eq(blockAnswers.lessonId, lesson.id), eq(blockAnswers.blockId, blockId), eq(blockAnswers.studentId, ctx.actor.personId)))
    .limit(1);
  return row ? answerDto(row) : null;
}

/**
 * Who caused an assessed score: the learner (a quiz attempt: the enrollment is marked accessed and
 * today counts toward their streak) or a grader (an instructor's grade, a peer review that
 * finalises the score: neither, the learner did nothing today).
 */
export interface AssessedBy {
  byLearner: boolean;
}

/** The enrollment an assessed score is for, locked for the rest of the caller's transaction. */
async function lockEnrollment(tx: ServiceContext, enrollmentId: string) {
  const [enrollment] = await tx.db
    .select()
    .from(enrollments)
    .where(and(inTenant(tx, enrollments), eq(enrollments.id, enrollmentId)))
    .for('update');
  if (!enrollment) throw notFound('Enrollment');
  return enrollment;
}

/**
 * A graded assessment that does not pass (or a regrade below the pass mark), for the
 * enrollment's student, in the caller's transaction: the lesson's score becomes `scorePercent`
 * (so an earlier, higher score does not linger), its completion stays as it was, and the
 * enrollment is recomputed (a COMPLETED one's `finalScore` follows).
 */
export async function recordAssessedScore(tx: ServiceContext, course: Course, lessonId: string, enrollmentId: string, scorePercent: number, by: AssessedBy) {
  const enrollment = await lockEnrollment(tx, enrollmentId);
  await upsertProgress(tx, enrollment, new Map([[lessonId, { score: Math.max(0, Math.min(100, scorePercent)) }]]));
  return recomputeEnrollment(tx, course, enrollment, { touch: by.byLearner });
}

/**
 * A QUIZ or ASSIGNMENT lesson completed through its assessment (a passed attempt, a graded
 * submission), for the enrollment's student, in the caller's transaction: the progress row
 * becomes complete with `scorePercent` (0–100, what the enrollment's `finalScore` averages)
 * and the enrollment is recomputed (course completion, certificate and CRM push follow).
 * The score given replaces the stored one; completion stays.
 */
export async function completeAssessedLesson(tx: ServiceContext, course: Course, lessonId: string, enrollmentId: string, scorePercent: number, by: AssessedBy) {
  const enrollment = await lockEnrollment(tx, enrollmentId);
  const rows = await upsertProgress(tx, enrollment, new Map([[lessonId, { completed: true, score: Math.max(0, Math.min(100, scorePercent)) }]]));
  const result = await recomputeEnrollment(tx, course, enrollment, { touch: by.byLearner });
  const [lesson] = await tx.db
    .select({ type: lessons.type })
    .from(lessons)
    .where(and(inTenant(tx, lessons), eq(lessons.id, lessonId)));
  const passed: LearningEvent = lesson?.type === 'QUIZ' ? { kind: 'QUIZ_PASSED', lessonId, scorePercent } : { kind: 'ASSIGNMENT_PASSED', lessonId };
  await recordLearning(tx, enrollment.studentId, [passed, ...learningEvents(enrollment, rows, course, result)], { activeToday: by.byLearner });
  return result;
}

/**
 * A lesson's progress from tracked data (a SCORM package's CMI values), for the caller as the
 * learner, in the caller's transaction: completion (sticky), score and percent as the tracking
 * determined them, with the enrollment recomputed (course completion, certificate and CRM push
 * follow) and the learning events recorded.
 */
export async function recordTrackedProgress(tx: ServiceContext, course: Course, lessonId: string, input: ProgressInput) {
  const { rows, result } = await writeProgress(tx, course, new Map([[lessonId, input]]));
  return progressDto(rows[0], result);
}

/**
 * A lesson completed by a learning record (a `completed` or `passed` xAPI statement about it),
 * for the learner in `tx.actor`, in the caller's transaction: as a progress call that claims
 * completion, with the record's score (0–100) when it has one. QUIZ, ASSIGNMENT and SCORM lessons
 * complete only through their assessment or tracking: nothing happens (null).
 */
export async function completeFromLearningRecord(tx: ServiceContext, course: Course, lesson: Lesson, scorePercent: number | null): Promise<CompletionResult | null> {
  if (ASSESSED_TYPES.has(lesson.type)) return null;
  const input: ProgressInput = { completed: true, ...(scorePercent !== null ? { score: Math.max(0, Math.min(100, scorePercent)) } : {}) };
  const { result } = await writeProgress(tx, course, new Map([[lesson.id, input]]));
  return result;
}
