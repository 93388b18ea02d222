import { and, asc, desc, eq, sql, type SQL } from 'drizzle-orm';
import { auditCreate, auditUpdate } from '../audit/audit.js';
import { withTx, type ServiceContext } from '../../platform/context.js';
import { iso } from '../../platform/dto.js';
import { AppError, conflict, notFound, validationError } from '../../platform/http/errors.js';
import { pageMeta, pageOffset, toPage } from '../../platform/http/pagination.js';
import type { PageMeta } from '../../platform/http/envelope.js';
import { newId } from '../../platform/ids.js';
import { byId, inTenant } from '../../platform/db/tenancy.js';
import { canManageCourses } from '../../platform/auth/permissions.js';
import { lessons, type Lesson } from '../courses/courses.tables.js';
import { enrollments, type Enrollment } from '../enrollments/enrollments.tables.js';
import { studentNames } from '../enrollments/enrollments.service.js';
import { requireAccess } from '../access/access.service.js';
import { completeAssessedLesson } from '../progress/progress.service.js';
import { recordLearning } from '../gamification/gamification.service.js';
import { quizAttempts, quizzes, type Quiz, type QuizAttempt } from './quizzes.tables.js';
import { buildQuestions, checkAnswers, grade, learnerQuestions, staffQuestion, totalPoints } from './quizzes.questions.js';
import type { AttemptDto, ListAttemptsQuery, MyAttempts, QuestionDto, QuizDto, StaffAttemptDto, SubmitAttemptInput, UpsertQuizInput } from './quizzes.schemas.js';

/** A submission is accepted up to this long after an attempt's deadline (network, clocks). */
export const GRACE_MS = 30_000;

const ATTEMPTS_DEFAULT_PAGE_SIZE = 20;

// ── loading and locking ────────────────────────────────────────────────────────

/** The quiz of a QUIZ lesson; any other lesson, or a QUIZ lesson without one yet, is 404. */
async function loadQuiz(ctx: ServiceContext, lesson: Lesson): Promise<Quiz> {
  if (lesson.type !== 'QUIZ') throw notFound('Quiz');
  const [quiz] = await ctx.db
    .select()
    .from(quizzes)
    .where(byId(ctx, quizzes, lesson.id))
    .limit(1);
  if (!quiz) throw notFound('Quiz');
  return quiz;
}

/**
 * The learner's enrollment, locked for the transaction: every start and submission of one student
 * in one course takes this lock before it counts attempts, so concurrent requests count one after
 * another and `maxAttempts` holds (PostgreSQL: row lock; PGlite: one connection anyway).
 */
async function lockEnrollment(tx: ServiceContext, enrollmentId: string): Promise<Enrollment> {
  const [e] = await tx.db
    .select()
    .from(enrollments)
    .where(byId(tx, enrollments, enrollmentId))
    .for('update');
  if (!e || e.status === 'DROPPED') throw new AppError('ENROLLMENT_REQUIRED', 'You must be enrolled in this course');
  return e;
}

/** The caller's attempts at a quiz, oldest first. */
const ownAttempts = (ctx: ServiceContext, quizId: string) =>
  ctx.db
    .select()
    .from(quizAttempts)
    .where(and(inTenant(ctx, quizAttempts), eq(quizAttempts.quizId, quizId), eq(quizAttempts.studentId, ctx.actor.personId)))
    .orderBy(asc(quizAttempts.attemptNumber));

/**
 * The attempts of the current cycle: those started since a recurring compliance training last
 * reopened the enrollment (all of them when it never did). They are what `maxAttempts`,
 * `myAttempts` and the lesson's best score count; attempt numbers go on across cycles.
 */
const ofCurrentCycle = (attempts: QuizAttempt[], enrollment: Pick<Enrollment, 'reopenedAt'> | null | undefined) => {
  const since = enrollment?.reopenedAt;
  return since ? attempts.filter((a) => a.startedAt.getTime() >= since.getTime()) : attempts;
};

/** An IN_PROGRESS attempt whose deadline and grace period have passed: it can no longer be submitted. */
const pastGrace = (a: QuizAttempt, now: Date) => a.deadlineAt !== null && now.getTime() > a.deadlineAt.getTime() + GRACE_MS;

/** The status to show: an IN_PROGRESS attempt past its deadline and grace is EXPIRED (stored so at its next start or submission). */
const shownStatus = (a: QuizAttempt, now: Date): QuizAttempt['status'] => (a.status === 'IN_PROGRESS' && pastGrace(a, now) ? 'EXPIRED' : a.status);

const attemptLimit = (quiz: Quiz, used: number) =>
  new AppError('ATTEMPT_LIMIT', `You have used all ${quiz.maxAttempts} attempts of this quiz`, { maxAttempts: quiz.maxAttempts, used });

// ── mapping ────────────────────────────────────────────────────────────────────

function toAttemptDto(a: QuizAttempt, now: Date): AttemptDto {
  const status = shownStatus(a, now);
  return {
    id: a.id,
    quizId: a.quizId,
    studentId: a.studentId,
    attemptNumber: a.attemptNumber,
    status,
    startedAt: iso(a.startedAt),
    deadlineAt: iso(a.deadlineAt),
    submittedAt: iso(a.submittedAt),
    score: a.score,
    maxScore: a.maxScore,
    percentage: a.percentage,
    passed: status === 'EXPIRED' ? false : a.passed,
    // Per question only right-or-not and points (the stored form has nothing more).
    results: a.results ? a.results.map((r) => ({ questionId: r.questionId, correct: r.correct, pointsAwarded: r.pointsAwarded, points: r.points })) : null,
    answers: a.answers
      ? a.answers.map((x) => ({
          questionId: x.questionId,
          ...(x.optionIds ? { optionIds: x.optionIds } : {}),
          ...(x.value !== undefined ? { value: x.value } : {}),
          ...(x.text !== undefined ? { text: x.text } : {}),
        }))
      : null,
  };
}

function summarise(quiz: Quiz, attempts: QuizAttempt[], now: Date): MyAttempts {
  const open = attempts.find((a) => a.status === 'IN_PROGRESS' && !pastGrace(a, now)) ?? null;
  const passed = attempts.filter((a) => a.status === 'SUBMITTED' && a.passed);
  const graded = attempts.filter((a) => a.status === 'SUBMITTED' && a.percentage !== null);
  return {
    used: attempts.length,
    remaining: quiz.maxAttempts === null ? null : Math.max(0, quiz.maxAttempts - attempts.length),
    passed: passed.length > 0,
    bestPercentage: graded.length > 0 ? Math.max(...graded.map((a) => a.percentage!)) : null,
    inProgress: open ? { id: open.id, attemptNumber: open.attemptNumber, startedAt: iso(open.startedAt), deadlineAt: iso(open.deadlineAt) } : null,
  };
}

function toQuizDto(quiz: Quiz, lesson: Lesson, questions: QuestionDto[] | null, myAttempts: MyAttempts | null): QuizDto {
  return {
    id: quiz.id,
    lessonId: lesson.id,
    courseId: lesson.courseId,
    title: quiz.title,
    description: quiz.description,
    passingScore: quiz.passingScore,
    maxAttempts: quiz.maxAttempts,
    timeLimitMinutes: quiz.timeLimitMinutes,
    shuffleQuestions: quiz.shuffleQuestions,
    shuffleOptions: quiz.shuffleOptions,
    questionCount: quiz.questions.length,
    totalPoints: totalPoints(quiz.questions),
    questions,
    myAttempts,
    createdAt: iso(quiz.createdAt),
    updatedAt: iso(quiz.updatedAt),
  };
}

const staffView = (quiz: Quiz, lesson: Lesson) => toQuizDto(quiz, lesson, quiz.questions.map(staffQuestion), null);

/**
 * The quiz as a learner sees it: no answer keys (`learnerQuestions`), their attempts, and the
 * questions only when they may see them: always on a quiz without a time limit, else only during
 * an open attempt (so reading the questions starts the clock). The shuffle seed is the learner
 * and the attempt number (the open one, or the next), so a page reload shows the same order.
 */
function learnerView(ctx: ServiceContext, quiz: Quiz, lesson: Lesson, attempts: QuizAttempt[], enrollment: Pick<Enrollment, 'reopenedAt'> | null | undefined, now: Date): QuizDto {
  const myAttempts = summarise(quiz, ofCurrentCycle(attempts, enrollment), now);
  const attemptNumber = myAttempts.inProgress?.attemptNumber ?? nextNumber(attempts);
  const visible = quiz.timeLimitMinutes === null || myAttempts.inProgress !== null;
  const questions = visible ? learnerQuestions(quiz, `${quiz.id}:${ctx.actor.personId}:${attemptNumber}`) : null;
  return toQuizDto(quiz, lesson, questions, myAttempts);
}

// ── authoring ──────────────────────────────────────────────────────────────────

/** What the audit log records of a quiz change (the questions summarised when long). */
const QUIZ_AUDIT_FIELDS = ['title', 'description', 'passingScore', 'maxAttempts', 'timeLimitMinutes', 'shuffleQuestions', 'shuffleOptions', 'questions'] as const;

/**
 * PUT /api/quiz/:id — create or replace the quiz of a QUIZ lesson (as `lesson.author`: the
 * course's owner with canManageCourses, or ADMIN). Another lesson type is 400. The lesson row is
 * locked (FOR NO KEY UPDATE: progress rows may still reference it) so two saves apply in turn
 * and question ids are checked against the quiz as it is. Audited (`quiz.create`, `quiz.update`).
 */
export async function upsertQuiz(ctx: ServiceContext, lessonId: string, input: UpsertQuizInput): Promise<{ created: boolean; quiz: QuizDto }> {
  const { lesson } = await requireAccess(ctx, 'lesson.author', lessonId);
  if (lesson.type !== 'QUIZ') {
    throw validationError('Only a QUIZ lesson has a quiz', [{ field: 'params.id', message: `the lesson is of type ${lesson.type}, not QUIZ` }]);
  }
  return withTx(ctx, async (tx) => {
    const [locked] = await tx.db
      .select()
      .from(lessons)
      .where(byId(tx, lessons, lesson.id))
      .for('no key update');
    if (!locked) throw notFound('Lesson');
    if (locked.type !== 'QUIZ') throw validationError('Only a QUIZ lesson has a quiz', [{ field: 'params.id', message: `the lesson is of type ${locked.type}, not QUIZ` }]);
    const [existing] = await tx.db
      .select()
      .from(quizzes)
      .where(byId(tx, quizzes, lesson.id));
    const questions = buildQuestions(input.questions, new Set((existing?.questions ?? []).map((q) => q.id)), newId);
    const now = tx.clock.now();
    const fields = {
      title: input.title,
      description: input.description || null,
      passingScore: input.passingScore,
      maxAttempts: input.maxAttempts,
      timeLimitMinutes: input.timeLimitMinutes,
      shuffleQuestions: input.shuffleQuestions,
      shuffleOptions: input.shuffleOptions,
      questions,
      updatedBy: tx.actor.personId,
      updatedAt: now,
    };
    const [saved] = existing
      ? await tx.db
          .update(quizzes)
          .set(fields)
          .where(byId(tx, quizzes, lesson.id))
          .returning()
      : await tx.db
          .insert(quizzes)
          .values({ institutionId: tx.institutionId, id: lesson.id, createdAt: now, ...fields })
          .returning();
    if (existing) await auditUpdate(tx, 'quiz', lesson.id, existing, saved!, QUIZ_AUDIT_FIELDS);
    else await auditCreate(tx, 'quiz', lesson.id, saved!, QUIZ_AUDIT_FIELDS);
    return { created: !existing, quiz: staffView(saved!, locked) };
  });
}

/**
 * GET /api/quiz/:id — course managers get the whole quiz with its answer key; everyone else
 * opens it like the lesson's content (`lesson.open`: enrollment, fees, drip lock) and gets the
 * learner view.
 */
export async function getQuiz(ctx: ServiceContext, lessonId: string): Promise<QuizDto> {
  const { lesson, enrollment } = await requireAccess(ctx, 'lesson.open', lessonId);
  const quiz = await loadQuiz(ctx, lesson);
  if (canManageCourses(ctx.actor)) return staffView(quiz, lesson);
  return learnerView(ctx, quiz, lesson, await ownAttempts(ctx, quiz.id), enrollment, ctx.clock.now());
}

// ── taking ─────────────────────────────────────────────────────────────────────

/**
 * POST /api/quiz/:id/start — the caller's open attempt, or a new one (IN_PROGRESS, with its
 * deadline when the quiz has a time limit). Idempotent while an attempt is open; an open attempt
 * past its deadline and grace is stored EXPIRED and a new one started. A new attempt counts
 * against `maxAttempts` (409 ATTEMPT_LIMIT), counted under the enrollment lock.
 */
export async function startAttempt(ctx: ServiceContext, lessonId: string): Promise<{ created: boolean; attempt: AttemptDto; quiz: QuizDto }> {
  const { lesson, enrollment } = await requireAccess(ctx, 'quiz.take', lessonId);
  if (lesson.type !== 'QUIZ') throw notFound('Quiz');
  const outcome = await withTx(ctx, async (tx) => {
    const locked = await lockEnrollment(tx, enrollment.id);
    const quiz = await loadQuiz(tx, lesson);
    const attempts = await ownAttempts(tx, quiz.id);
    const counted = ofCurrentCycle(attempts, locked);
    const now = tx.clock.now();
    const open = attempts.find((a) => a.status === 'IN_PROGRESS');
    if (open && !pastGrace(open, now)) return { kind: 'open' as const, quiz, attempts, locked, attempt: open, now };
    if (open) {
      await tx.db
        .update(quizAttempts)
        .set({ status: 'EXPIRED', passed: false, updatedAt: now })
        .where(byId(tx, quizAttempts, open.id));
      open.status = 'EXPIRED';
      open.passed = false;
    }
    if (quiz.maxAttempts !== null && counted.length >= quiz.maxAttempts) return { kind: 'limit' as const, quiz, used: counted.length };
    const [created] = await tx.db
      .insert(quizAttempts)
      .values({
        institutionId: tx.institutionId,
        id: newId(),
        quizId: quiz.id,
        enrollmentId: enrollment.id,
        studentId: enrollment.studentId,
        attemptNumber: nextNumber(attempts),
        status: 'IN_PROGRESS',
        startedAt: now,
        deadlineAt: quiz.timeLimitMinutes === null ? null : new Date(now.getTime() + quiz.timeLimitMinutes * 60_000),
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    return { kind: 'created' as const, quiz, attempts: [...attempts, created!], locked, attempt: created!, now };
  });
  // Thrown after the commit, so an attempt found expired on the way stays recorded as EXPIRED.
  if (outcome.kind === 'limit') throw attemptLimit(outcome.quiz, outcome.used);
  return {
    created: outcome.kind === 'created',
    attempt: toAttemptDto(outcome.attempt, outcome.now),
    quiz: learnerView(ctx, outcome.quiz, lesson, outcome.attempts, outcome.locked, outcome.now),
  };
}

const nextNumber = (attempts: QuizAttempt[]) => attempts.reduce((n, a) => Math.max(n, a.attemptNumber), 0) + 1;

/** What a passed attempt did to the lesson and the enrollment. */
export interface Completion {
  lessonCompleted: true;
  lessonScore: number;
  progress: number;
  enrollmentStatus: Enrollment['status'];
  courseCompleted: boolean;
  completedNow: boolean;
  certificateId: string | null;
}

/**
 * POST /api/quiz/:id/attempt — grade the caller's answers on the server and store the attempt,
 * all in one transaction under the enrollment lock:
 * - the attempt submitted is the one named by `attemptId`, else the open one, else a new one
 *   started now and submitted at once (on a timed quiz too: a client need not call /start), which
 *   counts against `maxAttempts` (409 ATTEMPT_LIMIT);
 * - an attempt past its deadline + 30 s is stored EXPIRED with the answers, ungraded and not
 *   passed, and the answer is 400 VALIDATION_ERROR (after the commit, so the record stays);
 * - a passed attempt completes the lesson through `completeAssessedLesson`, with the best
 *   passing percentage so far as the lesson's score (course completion, certificate and CRM
 *   push follow in the same transaction). A failed one changes no progress; either counts the
 *   day toward the learner's streak.
 */
export async function submitAttempt(ctx: ServiceContext, lessonId: string, input: SubmitAttemptInput): Promise<AttemptDto & { completion: Completion | null }> {
  const { lesson, course, enrollment } = await requireAccess(ctx, 'quiz.take', lessonId);
  if (lesson.type !== 'QUIZ') throw notFound('Quiz');
  const outcome = await withTx(ctx, async (tx) => {
    const locked = await lockEnrollment(tx, enrollment.id);
    const quiz = await loadQuiz(tx, lesson);
    const answers = checkAnswers(quiz.questions, input.answers);
    const attempts = await ownAttempts(tx, quiz.id);
    const counted = ofCurrentCycle(attempts, locked);
    const now = tx.clock.now();

    let target: QuizAttempt | null;
    if (input.attemptId !== undefined) {
      target = attempts.find((a) => a.id === input.attemptId) ?? null;
      if (!target) throw notFound('Attempt');
      if (target.status !== 'IN_PROGRESS')
        throw conflict(`Attempt ${target.attemptNumber} was already ${target.status.toLowerCase()}`, { attemptId: target.id, status: target.status });
    } else {
      target = attempts.find((a) => a.status === 'IN_PROGRESS') ?? null;
    }

    if (target && pastGrace(target, now)) {
      const [expired] = await tx.db
        .update(quizAttempts)
        .set({ status: 'EXPIRED', submittedAt: now, answers, passed: false, updatedAt: now })
        .where(byId(tx, quizAttempts, target.id))
        .returning();
      return { kind: 'expired' as const, attempt: expired! };
    }
    // No open attempt: this submission is a new attempt started now, with or without a time limit.
    // Safe with a time limit: its time is zero, and a timed quiz shows its questions only during
    // an open attempt, so skipping /start gains no time on any attempt.
    if (!target && quiz.maxAttempts !== null && counted.length >= quiz.maxAttempts) throw attemptLimit(quiz, counted.length);

    const graded = grade(quiz.questions, answers, quiz.passingScore);
    const result = {
      status: 'SUBMITTED' as const,
      submittedAt: now,
      answers,
      results: graded.results,
      score: graded.score,
      maxScore: graded.maxScore,
      percentage: graded.percentage,
      passed: graded.passed,
      updatedAt: now,
    };
    const [saved] = target
      ? await tx.db
          .update(quizAttempts)
          .set(result)
          .where(byId(tx, quizAttempts, target.id))
          .returning()
      : await tx.db
          .insert(quizAttempts)
          .values({
            institutionId: tx.institutionId,
            id: newId(),
            quizId: quiz.id,
            enrollmentId: enrollment.id,
            studentId: enrollment.studentId,
            attemptNumber: nextNumber(attempts),
            startedAt: now,
            deadlineAt: quiz.timeLimitMinutes === null ? null : new Date(now.getTime() + quiz.timeLimitMinutes * 60_000),
            createdAt: now,
            ...result,
          })
          .returning();

    let completion: Completion | null = null;
    if (graded.passed) {
      const best = Math.max(graded.percentage, ...counted.filter((a) => a.status === 'SUBMITTED' && a.passed && a.percentage !== null).map((a) => a.percentage!));
      const done = await completeAssessedLesson(tx, course, lesson.id, enrollment.id, best, { byLearner: true });
      completion = {
        lessonCompleted: true,
        lessonScore: best,
        progress: done.enrollment.progress,
        enrollmentStatus: done.enrollment.status,
        courseCompleted: done.enrollment.status === 'COMPLETED',
        completedNow: done.completedNow,
        certificateId: done.certificate?.id ?? null,
      };
    } else {
      // No points for a failed attempt, but taking a quiz is learning: the day counts toward the streak.
      await recordLearning(tx, enrollment.studentId, []);
    }
    return { kind: 'submitted' as const, attempt: saved!, completion, now };
  });
  if (outcome.kind === 'expired') {
    const a = outcome.attempt;
    throw new AppError('VALIDATION_ERROR', 'The time limit of this attempt has passed: it was recorded as EXPIRED and not graded', {
      attemptId: a.id,
      status: a.status,
      deadlineAt: iso(a.deadlineAt),
      graceSeconds: GRACE_MS / 1000,
    });
  }
  return { ...toAttemptDto(outcome.attempt, outcome.now), completion: outcome.completion };
}

// ── results ────────────────────────────────────────────────────────────────────

/**
 * GET /api/quiz/:id/attempts — course managers: every attempt of the quiz (or one student's,
 * `studentId`), with the student's name from the CRM, one lookup per distinct student; anyone
 * else: their own attempts. Newest first, paginated.
 */
export async function listAttempts(ctx: ServiceContext, lessonId: string, query: ListAttemptsQuery): Promise<{ rows: StaffAttemptDto[]; meta: PageMeta }> {
  const { lesson, staff } = await requireAccess(ctx, 'quiz.attempts', lessonId);
  const quiz = await loadQuiz(ctx, lesson);
  const page = toPage(query, ATTEMPTS_DEFAULT_PAGE_SIZE);
  const filters: SQL[] = [inTenant(ctx, quizAttempts), eq(quizAttempts.quizId, quiz.id)];
  if (!staff) filters.push(eq(quizAttempts.studentId, ctx.actor.personId));
  else if (query.studentId !== undefined) filters.push(eq(quizAttempts.studentId, query.studentId));
  const where = and(...filters);
  const [rows, [counted]] = await Promise.all([
    ctx.db.select().from(quizAttempts).where(where).orderBy(desc(quizAttempts.startedAt), desc(quizAttempts.id)).limit(page.perPage).offset(pageOffset(page)),
    ctx.db
      .select({ total: sql<number>`count(*)::int` })
      .from(quizAttempts)
      .where(where),
  ]);
  const names = staff
    ? await studentNames(
        ctx,
        rows.map((r) => r.studentId),
      )
    : null;
  const now = ctx.clock.now();
  return {
    rows: rows.map((r) => ({ ...toAttemptDto(r, now), studentName: names?.get(r.studentId) ?? null })),
    meta: pageMeta(page, counted?.total ?? 0),
  };
}
