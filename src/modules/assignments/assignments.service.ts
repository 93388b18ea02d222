import { and, asc, count, desc, eq, inArray, or, sql } from 'drizzle-orm';
import { withTx, type ServiceContext } from '../../platform/context.js';
import { iso } from '../../platform/dto.js';
import { byId, inTenant } from '../../platform/db/tenancy.js';
import { conflict, notFound, validationError } from '../../platform/http/errors.js';
import { pageMeta, pageOffset, toPage } from '../../platform/http/pagination.js';
import { canManageCourses } from '../../platform/auth/permissions.js';
import { newId } from '../../platform/ids.js';
import { requireAccess } from '../access/access.service.js';
import type { Course } from '../courses/courses.tables.js';
import { files } from '../files/files.tables.js';
import { institutionSlug } from '../institutions/institutions.service.js';
import { notify } from '../notifications/notify.js';
import { completeAssessedLesson, recordAssessedScore } from '../progress/progress.service.js';
import { recordLearning } from '../gamification/gamification.service.js';
import { allocateReviewers } from './peer-allocation.js';
import { audit, changes as changedFields, snapshot } from '../audit/audit.js';
import {
  assignments,
  peerReviews,
  rubricCriteria,
  rubrics,
  submissions,
  type Assignment,
  type RubricCriterion,
  type Rubric,
  type Submission,
  type SubmissionFile,
} from './assignments.tables.js';
import { DEFAULT_PEER_REVIEW_COUNT, type SubmitInput, type UpsertAssignment } from './assignments.schemas.js';

// ── loading and shaping ─────────────────────────────────────────────────────

export interface RubricWithCriteria {
  rubric: Rubric;
  criteria: RubricCriterion[];
}

export async function loadAssignment(ctx: ServiceContext, id: string): Promise<Assignment> {
  const [row] = await ctx.db
    .select()
    .from(assignments)
    .where(byId(ctx, assignments, id))
    .limit(1);
  if (!row) throw notFound('Assignment');
  return row;
}

/**
 * The assignment row locked for the transaction: submissions and reviewer allocation serialise
 * on it (`update`). Grading takes it `share`d, so the maxScore a grade is checked against cannot
 * be lowered (PUT, which checks the grades given under its own update lock) until it commits.
 */
export async function lockAssignment(tx: ServiceContext, id: string, strength: 'update' | 'share' = 'update'): Promise<Assignment> {
  const [row] = await tx.db
    .select()
    .from(assignments)
    .where(byId(tx, assignments, id))
    .for(strength);
  if (!row) throw notFound('Assignment');
  return row;
}

export async function rubricOf(ctx: ServiceContext, assignmentId: string): Promise<RubricWithCriteria | null> {
  const [rubric] = await ctx.db
    .select()
    .from(rubrics)
    .where(and(inTenant(ctx, rubrics), eq(rubrics.assignmentId, assignmentId)))
    .limit(1);
  if (!rubric) return null;
  const criteria = await ctx.db
    .select()
    .from(rubricCriteria)
    .where(and(inTenant(ctx, rubricCriteria), eq(rubricCriteria.rubricId, rubric.id)))
    .orderBy(asc(rubricCriteria.order), asc(rubricCriteria.id));
  return { rubric, criteria };
}

export const criterionDto = (c: RubricCriterion) => ({ id: c.id, title: c.title, description: c.description, maxPoints: c.maxPoints, order: c.order });

export const rubricDto = (r: RubricWithCriteria | null) =>
  r ? { id: r.rubric.id, title: r.rubric.title, totalPoints: r.criteria.reduce((sum, c) => sum + c.maxPoints, 0), criteria: r.criteria.map(criterionDto) } : null;

async function fileDtos(ctx: ServiceContext, list: SubmissionFile[]) {
  return Promise.all(list.map(async (f) => ({ fileId: f.fileId, name: f.name, contentType: f.contentType, size: f.size, url: await ctx.storage.urlFor(f.key) })));
}

export async function submissionDto(ctx: ServiceContext, s: Submission) {
  return {
    id: s.id,
    assignmentId: s.assignmentId,
    studentId: s.studentId,
    textContent: s.textContent,
    files: await fileDtos(ctx, s.files),
    isLate: s.isLate,
    status: s.status,
    score: s.score,
    instructorScore: s.instructorScore,
    peerScoreAverage: s.peerScoreAverage,
    peerReviewsCompleted: s.peerReviewsCompleted,
    feedback: s.feedback,
    gradedAt: iso(s.gradedAt),
    submittedAt: iso(s.submittedAt),
  };
}

function assignmentDto(a: Assignment, course: Course, rubric: RubricWithCriteria | null) {
  return {
    id: a.id,
    lessonId: a.id,
    courseId: a.courseId,
    courseTitle: course.title,
    title: a.title,
    instructions: a.instructions,
    maxScore: a.maxScore,
    passingScore: a.passingScore,
    dueDate: iso(a.dueDate),
    allowLate: a.allowLate,
    isPeerAssessed: a.isPeerAssessed,
    peerReviewCount: a.peerReviewCount,
    rubric: rubricDto(rubric),
    createdAt: iso(a.createdAt),
    updatedAt: iso(a.updatedAt),
  };
}

/** Display names of people through the CRM, one optional lookup per distinct id; the generic label when unknown. */
export async function namesOf(ctx: ServiceContext, ids: Iterable<string>, label = 'Student'): Promise<Map<string, string>> {
  const unique = [...new Set(ids)];
  const slug = unique.length > 0 ? await institutionSlug(ctx, ctx.institutionId).catch(() => null) : null;
  const pairs = await Promise.all(unique.map(async (id) => [id, (slug ? await ctx.crm.displayNameOrNull(slug, id) : null) ?? `${label} ${id}`] as const));
  return new Map(pairs);
}

// ── assignment ──────────────────────────────────────────────────────────────

/** GET /api/assignments/{id}: staff see the assignment; a learner who may open the lesson also gets their submission. */
export async function getAssignment(ctx: ServiceContext, id: string) {
  if (canManageCourses(ctx.actor)) {
    const { course } = await requireAccess(ctx, 'lesson.staff', id);
    const a = await loadAssignment(ctx, id);
    return assignmentDto(a, course, await rubricOf(ctx, id));
  }
  const { course } = await requireAccess(ctx, 'lesson.open', id);
  const a = await loadAssignment(ctx, id);
  const [mine] = await ctx.db
    .select()
    .from(submissions)
    .where(and(inTenant(ctx, submissions), eq(submissions.assignmentId, id), eq(submissions.studentId, ctx.actor.personId)))
    .limit(1);
  return { ...assignmentDto(a, course, await rubricOf(ctx, id)), mySubmission: mine ? await submissionDto(ctx, mine) : null };
}

/**
 * PUT /api/assignments/{id}: create or replace the assignment of an ASSIGNMENT lesson (the
 * course's owner or ADMIN). `rubric` absent keeps the current rubric, null removes it; a
 * criterion sent with its id keeps that id (and the scores drafts give it, while they fit its
 * maxPoints), others are new, and criteria left out are removed (with their draft scores). Audited (`assignment.create`, `assignment.update`, with the rubric when it changed).
 */
export async function upsertAssignment(ctx: ServiceContext, id: string, body: UpsertAssignment) {
  const { lesson, course } = await requireAccess(ctx, 'lesson.author', id);
  if (lesson.type !== 'ASSIGNMENT')
    throw validationError('Only an ASSIGNMENT lesson has an assignment', [{ field: 'params.id', message: `the lesson is a ${lesson.type} lesson` }]);
  return withTx(ctx, async (tx) => {
    const now = tx.clock.now();
    const [before] = await tx.db
      .select()
      .from(assignments)
      .where(byId(tx, assignments, id))
      .for('update');
    if (before && body.maxScore < before.maxScore) await assertGradesFit(tx, id, body.maxScore);
    const values = {
      title: body.title,
      instructions: body.instructions,
      maxScore: body.maxScore,
      passingScore: body.passingScore ?? null,
      dueDate: new Date(body.dueDate),
      allowLate: body.allowLate,
      isPeerAssessed: body.isPeerAssessed,
      // Absent: the count it has (when it was peer-assessed already), else the default.
      peerReviewCount: body.isPeerAssessed ? (body.peerReviewCount ?? (before?.isPeerAssessed ? before.peerReviewCount : DEFAULT_PEER_REVIEW_COUNT)) : 0,
      updatedAt: now,
    };
    const [a] = await tx.db
      .insert(assignments)
      .values({ institutionId: tx.institutionId, id, courseId: course.id, ...values, createdAt: now })
      .onConflictDoUpdate({ target: assignments.id, set: values })
      .returning();
    // Peer review switched on, or more reviewers asked for, after students submitted: their
    // submissions get reviewers now, not only when the next student submits.
    if (before && a!.isPeerAssessed && (!before.isPeerAssessed || a!.peerReviewCount > before.peerReviewCount)) await allocateReviewers(tx, a!, course);
    const rubricBefore = body.rubric !== undefined ? rubricSummary(await rubricOf(tx, id)) : undefined;
    if (body.rubric !== undefined) await replaceRubric(tx, id, body.rubric);
    const rubric = await rubricOf(tx, id);
    const entry = before ? changedFields(before, a!, ASSIGNMENT_AUDIT_FIELDS) : { before: null, after: snapshot(a!, ASSIGNMENT_AUDIT_FIELDS) };
    if (rubricBefore !== undefined && JSON.stringify(rubricBefore) !== JSON.stringify(rubricSummary(rubric))) {
      if (entry.before) entry.before.rubric = rubricBefore;
      entry.after.rubric = rubricSummary(rubric);
    }
    await audit(tx, { action: before ? 'assignment.update' : 'assignment.create', targetType: 'assignment', targetId: id, ...entry });
    return assignmentDto(a!, course, rubric);
  });
}

/**
 * A lower maxScore must still hold the grades given: otherwise a grade of 60 would read as
 * 300 % of a new maximum of 20. Each submission's grade is the one that counts: the instructor
 * score, else the final score, else the peer average so far (it becomes the score once the
 * reviews are in). 409, naming the highest grade.
 */
async function assertGradesFit(tx: ServiceContext, assignmentId: string, maxScore: number) {
  const [row] = await tx.db
    .select({ highest: sql<number | null>`max(coalesce(${submissions.instructorScore}, ${submissions.score}, ${submissions.peerScoreAverage}))` })
    .from(submissions)
    .where(and(inTenant(tx, submissions), eq(submissions.assignmentId, assignmentId)));
  const highest = row?.highest === null || row?.highest === undefined ? null : Number(row.highest);
  if (highest !== null && highest > maxScore) {
    throw conflict(`A submission is graded ${highest}: maxScore cannot go below it`, { highestGrade: highest });
  }
}

const ASSIGNMENT_AUDIT_FIELDS = ['title', 'instructions', 'maxScore', 'passingScore', 'dueDate', 'allowLate', 'isPeerAssessed', 'peerReviewCount'] as const;

/** A rubric as the audit log records it: its title and criteria (title and points). */
const rubricSummary = (r: RubricWithCriteria | null) => (r ? { title: r.rubric.title, criteria: r.criteria.map((c) => ({ title: c.title, maxPoints: c.maxPoints })) } : null);

async function replaceRubric(tx: ServiceContext, assignmentId: string, input: UpsertAssignment['rubric']) {
  const now = tx.clock.now();
  const current = await rubricOf(tx, assignmentId);
  if (!input) {
    if (current) await tx.db.delete(rubrics).where(byId(tx, rubrics, current.rubric.id));
    await pruneDraftScores(tx, assignmentId, []);
    return;
  }
  const rubricId = current?.rubric.id ?? newId();
  if (current)
    await tx.db
      .update(rubrics)
      .set({ title: input.title, updatedAt: now })
      .where(byId(tx, rubrics, rubricId));
  else await tx.db.insert(rubrics).values({ institutionId: tx.institutionId, id: rubricId, assignmentId, title: input.title, createdAt: now, updatedAt: now });
  const known = new Set(current?.criteria.map((c) => c.id) ?? []);
  const rows = input.criteria.map((c) => ({
    institutionId: tx.institutionId,
    id: c.id && known.has(c.id) ? c.id : newId(),
    rubricId,
    title: c.title,
    description: c.description,
    maxPoints: c.maxPoints,
    order: c.order,
  }));
  const kept = rows.map((r) => r.id);
  await tx.db.delete(rubricCriteria).where(and(inTenant(tx, rubricCriteria), eq(rubricCriteria.rubricId, rubricId), sql`${rubricCriteria.id} <> all(${sql.param(kept)}::text[])`));
  await tx.db
    .insert(rubricCriteria)
    .values(rows)
    .onConflictDoUpdate({
      target: rubricCriteria.id,
      set: { title: sql`excluded.title`, description: sql`excluded.description`, maxPoints: sql`excluded.max_points`, order: sql`excluded."order"` },
    });
  await pruneDraftScores(tx, assignmentId, rows);
}

/**
 * A new rubric's effect on the drafts of pending peer reviews: a score for a criterion that is
 * gone goes too, and so does one above its criterion's new maxPoints (the reviewer scores it
 * again), so a draft never shows or keeps what the rubric can no longer take.
 */
async function pruneDraftScores(tx: ServiceContext, assignmentId: string, criteria: Array<Pick<RubricCriterion, 'id' | 'maxPoints'>>) {
  const maxPointsOf = new Map(criteria.map((c) => [c.id, c.maxPoints]));
  const drafts = await tx.db
    .select({ id: peerReviews.id, rubricScores: peerReviews.rubricScores })
    .from(peerReviews)
    .where(and(inTenant(tx, peerReviews), eq(peerReviews.assignmentId, assignmentId), eq(peerReviews.status, 'PENDING'), sql`${peerReviews.rubricScores} <> '{}'::jsonb`));
  for (const draft of drafts) {
    const entries = Object.entries(draft.rubricScores);
    const kept = entries.filter(([id, score]) => score <= (maxPointsOf.get(id) ?? -Infinity));
    if (kept.length < entries.length)
      await tx.db
        .update(peerReviews)
        .set({ rubricScores: Object.fromEntries(kept) })
        .where(byId(tx, peerReviews, draft.id));
  }
}

// ── submissions ─────────────────────────────────────────────────────────────

/** The files a submission names: each must be a file the caller registered in this institution. */
async function resolveFiles(ctx: ServiceContext, input: NonNullable<SubmitInput['files']>): Promise<SubmissionFile[]> {
  if (input.length === 0) return [];
  const ids = input.filter((f) => f.fileId).map((f) => f.fileId!);
  const keys = input.filter((f) => f.key).map((f) => f.key!);
  const rows = await ctx.db
    .select()
    .from(files)
    .where(
      and(inTenant(ctx, files), eq(files.uploadedBy, ctx.actor.personId), or(ids.length ? inArray(files.id, ids) : undefined, keys.length ? inArray(files.key, keys) : undefined)),
    );
  return input.map((f, i) => {
    const row = rows.find((r) => (f.fileId ? r.id === f.fileId && (!f.key || r.key === f.key) : r.key === f.key));
    if (!row) throw validationError('A file is not one you uploaded', [{ field: `body.files.${i}`, message: 'no file of yours with this fileId or key' }]);
    return { fileId: row.id, key: row.key, name: f.name, contentType: row.contentType, size: row.size };
  });
}

/**
 * POST /api/assignments/{id}/submit: a learner's submission (ACTIVE or COMPLETED enrollment,
 * the lesson open to them). Late ones are refused unless the assignment allows them; a
 * resubmission replaces an ungraded submission and is refused (409) once graded, or once any
 * peer review of it was submitted or flagged (the reviewers judged that work). On a
 * peer-assessed assignment, reviewers are allocated in the same transaction. The day counts
 * toward the learner's streak.
 */
export async function submit(ctx: ServiceContext, id: string, body: SubmitInput) {
  const { course, enrollment } = await requireAccess(ctx, 'lesson.learn', id);
  const assignment = await loadAssignment(ctx, id);
  const now = ctx.clock.now();
  const isLate = now.getTime() > assignment.dueDate.getTime();
  if (isLate && !assignment.allowLate)
    throw validationError('The due date has passed and this assignment does not accept late submissions', [{ field: 'body', message: 'past the due date' }]);
  const attached = await resolveFiles(ctx, body.files ?? []);
  const content = { textContent: body.textContent?.length ? body.textContent : null, files: attached, isLate, submittedAt: now, updatedAt: now };
  const me = ctx.actor.personId;
  const saved = await withTx(ctx, async (tx) => {
    const a = await lockAssignment(tx, id);
    const [existing] = await tx.db
      .select()
      .from(submissions)
      .where(and(inTenant(tx, submissions), eq(submissions.assignmentId, id), eq(submissions.studentId, me)))
      .for('update');
    let row: Submission;
    if (existing) {
      if (existing.status === 'GRADED' || existing.instructorScore !== null) throw conflict('This submission has been graded and cannot be replaced');
      // Reviews complete under this row's lock, so none can finish while the check holds.
      const [reviewed] = await tx.db
        .select({ n: count() })
        .from(peerReviews)
        .where(and(inTenant(tx, peerReviews), eq(peerReviews.submissionId, existing.id), inArray(peerReviews.status, ['SUBMITTED', 'FLAGGED'])));
      if (reviewed!.n > 0)
        throw conflict('Peers have already reviewed this submission, so it can no longer be replaced', { submissionId: existing.id, reviewsCompleted: reviewed!.n });
      [row] = (await tx.db
        .update(submissions)
        .set(content)
        .where(byId(tx, submissions, existing.id))
        .returning()) as [Submission];
    } else {
      [row] = (await tx.db
        .insert(submissions)
        .values({ institutionId: tx.institutionId, id: newId(), assignmentId: id, enrollmentId: enrollment.id, studentId: me, ...content, createdAt: now })
        .returning()) as [Submission];
    }
    if (a.isPeerAssessed) await allocateReviewers(tx, a, course);
    // Handing in work is learning: the day counts toward the streak (the points come with a passing grade).
    await recordLearning(tx, me, []);
    if (course.ownerId) {
      await notify(tx, {
        institutionId: tx.institutionId,
        key: 'TEACHER_NEW_SUBMISSION',
        recipients: [course.ownerId],
        metadata: { assignmentId: id, submissionId: row.id, title: a.title, courseTitle: course.title, flagged: false },
        actionUrl: `/assignments/${id}/submissions`,
      });
    }
    return row;
  });
  return submissionDto(ctx, saved);
}

/** A score given directly (an instructor's grade, a peer's score without a rubric): 0 to the assignment's maxScore. */
export function assertScoreFits(assignment: Assignment, score: number) {
  if (score > assignment.maxScore) {
    throw validationError(`score must be between 0 and ${assignment.maxScore}`, [{ field: 'body.score', message: `at most ${assignment.maxScore}` }]);
  }
}

const percentOf = (score: number, max: number) => (max > 0 ? (score / max) * 100 : 0);
const passes = (a: Assignment, score: number) => a.passingScore === null || score >= a.passingScore;

/**
 * The grade that counts, on the lesson: a pass completes it with the score as a percentage; a
 * grade below the pass mark (also a regrade of a passed submission) only sets the lesson's
 * score, so the enrollment's `finalScore` never keeps a grade that was replaced.
 */
async function scoreLesson(tx: ServiceContext, assignment: Assignment, course: Course, enrollmentId: string, score: number) {
  const percent = percentOf(score, assignment.maxScore);
  // A grader's action: not the learner's access or activity (no lastAccessedAt, no streak day).
  if (passes(assignment, score)) await completeAssessedLesson(tx, course, assignment.id, enrollmentId, percent, { byLearner: false });
  else await recordAssessedScore(tx, course, assignment.id, enrollmentId, percent, { byLearner: false });
}

/**
 * POST /api/assignments/{id}/grade (canManageCourses): the instructor's score (0..maxScore)
 * becomes the score that counts, over any peer average (spec 4.4 rule 6). The student gets
 * ASSESS_GRADED; a passing grade completes the lesson (and so may complete the course).
 */
export async function grade(ctx: ServiceContext, id: string, body: { submissionId: string; score: number; feedback?: string }) {
  const { course } = await requireAccess(ctx, 'lesson.staff', id);
  const graded = await withTx(ctx, async (tx) => {
    const assignment = await lockAssignment(tx, id, 'share');
    assertScoreFits(assignment, body.score);
    const [current] = await tx.db
      .select()
      .from(submissions)
      .where(and(byId(tx, submissions, body.submissionId), eq(submissions.assignmentId, id)))
      .for('update');
    if (!current) throw notFound('Submission');
    const now = tx.clock.now();
    const [row] = (await tx.db
      .update(submissions)
      .set({
        instructorScore: body.score,
        score: body.score,
        feedback: body.feedback ?? current.feedback,
        status: 'GRADED',
        gradedBy: tx.actor.personId,
        gradedAt: now,
        updatedAt: now,
      })
      .where(byId(tx, submissions, current.id))
      .returning()) as [Submission];
    await audit(tx, {
      action: 'submission.grade',
      targetType: 'submission',
      targetId: row.id,
      ...changedFields(current, row, ['status', 'score', 'instructorScore', 'feedback', 'gradedBy']),
    });
    await scoreLesson(tx, assignment, course, row.enrollmentId, body.score);
    await notify(tx, {
      institutionId: tx.institutionId,
      key: 'ASSESS_GRADED',
      recipients: [row.studentId],
      metadata: { submissionId: row.id, score: body.score, maxScore: assignment.maxScore, assignmentId: id, title: assignment.title, courseTitle: course.title },
      actionUrl: `/assignments/${id}`,
    });
    return row;
  });
  return submissionDto(ctx, graded);
}

/** GET /api/assignments/{id}/submissions (canManageCourses): paginated, newest first, names from the CRM. */
export async function listSubmissions(ctx: ServiceContext, id: string, q: { page: number; perPage?: number; limit?: number }) {
  await requireAccess(ctx, 'lesson.staff', id);
  await loadAssignment(ctx, id);
  const page = toPage(q);
  const where = and(inTenant(ctx, submissions), eq(submissions.assignmentId, id));
  const [rows, [{ total }]] = await Promise.all([
    ctx.db.select().from(submissions).where(where).orderBy(desc(submissions.submittedAt), desc(submissions.id)).limit(page.perPage).offset(pageOffset(page)),
    ctx.db.select({ total: count() }).from(submissions).where(where),
  ]);
  const names = await namesOf(
    ctx,
    rows.map((r) => r.studentId),
  );
  const data = await Promise.all(rows.map(async (r) => ({ ...(await submissionDto(ctx, r)), studentName: names.get(r.studentId)! })));
  return { rows: data, meta: pageMeta(page, Number(total)) };
}

// ── peer finalisation ───────────────────────────────────────────────────────

export interface Aggregate {
  peerScoreAverage: number | null;
  reviewsSubmitted: number;
  reviewsAssigned: number;
  finalisedNow: boolean;
}

/**
 * Recompute a submission's peer aggregate after a review completed (the caller holds the
 * submission's row lock, so the last two reviews of a submission cannot both miss or both
 * see completion). The peer average is the mean of the SUBMITTED reviews' scores (with a rubric
 * each is the sum of its criteria, spec 4.4 rule 1), to two decimals. When every
 * assigned review is complete and no instructor grade exists, the peer average becomes the
 * score, once (`peer_finalised_at`), and the student gets
 * ASSESS_PEER_GRADED, forced immediate. A review completed after that (an extra reviewer, a
 * raised peerReviewCount) keeps the score on the peer average while no instructor grade exists
 * (spec 4.4 rule 3), with the lesson's score following, and sends nothing. FLAGGED reviews count
 * as completed but not in the average; when every review was flagged there is no peer score to
 * give, so nothing is sent and the submission waits for the instructor (the owner was told of
 * each flag).
 */
export async function recomputeAggregate(tx: ServiceContext, assignment: Assignment, course: Course, submission: Submission): Promise<Aggregate> {
  const [agg] = await tx.db
    .select({
      assigned: sql<number>`count(*)::int`,
      completed: sql<number>`count(*) filter (where ${peerReviews.status} in ('SUBMITTED', 'FLAGGED'))::int`,
      average: sql<number | null>`avg(${peerReviews.score}) filter (where ${peerReviews.status} = 'SUBMITTED')::float8`,
    })
    .from(peerReviews)
    .where(and(inTenant(tx, peerReviews), eq(peerReviews.submissionId, submission.id)));
  const average = agg!.average === null ? null : Math.round(agg!.average * 100) / 100;
  const now = tx.clock.now();
  await tx.db
    .update(submissions)
    .set({ peerScoreAverage: average, peerReviewsCompleted: agg!.completed, updatedAt: now })
    .where(byId(tx, submissions, submission.id));
  let finalisedNow = false;
  if (agg!.assigned > 0 && agg!.completed === agg!.assigned && average !== null) {
    const [finalised] = await tx.db
      .update(submissions)
      .set({ score: average, status: 'GRADED', peerFinalisedAt: now, gradedAt: now, updatedAt: now })
      .where(and(byId(tx, submissions, submission.id), sql`${submissions.peerFinalisedAt} is null`, sql`${submissions.instructorScore} is null`))
      .returning();
    if (finalised) {
      finalisedNow = true;
      await scoreLesson(tx, assignment, course, finalised.enrollmentId, average);
      await notify(tx, {
        institutionId: tx.institutionId,
        key: 'ASSESS_PEER_GRADED',
        recipients: [finalised.studentId],
        metadata: { submissionId: finalised.id, score: average, maxScore: assignment.maxScore, assignmentId: assignment.id, title: assignment.title, courseTitle: course.title },
        actionUrl: `/assignments/${assignment.id}`,
        forceImmediate: true,
      });
    }
  }
  if (average !== null && !finalisedNow) {
    // Final already, and a later review came in (extra reviewers, a raised peerReviewCount): the score follows the average; nothing is sent again.
    const [followed] = await tx.db
      .update(submissions)
      .set({ score: average, gradedAt: now, updatedAt: now })
      .where(
        and(
          byId(tx, submissions, submission.id),
          sql`${submissions.peerFinalisedAt} is not null`,
          sql`${submissions.instructorScore} is null`,
          sql`${submissions.score} is distinct from ${average}::real`,
        ),
      )
      .returning();
    if (followed) await scoreLesson(tx, assignment, course, followed.enrollmentId, average);
  }
  return { peerScoreAverage: average, reviewsSubmitted: agg!.completed, reviewsAssigned: agg!.assigned, finalisedNow };
}
