import { and, asc, count, desc, eq, inArray, sql } from 'drizzle-orm';
import { withTx, type ServiceContext } from '../../platform/context.js';
import { iso } from '../../platform/dto.js';
import { byId, inTenant, sameTenantRef } from '../../platform/db/tenancy.js';
import { conflict, notFound, validationError } from '../../platform/http/errors.js';
import { pageMeta, pageOffset, toPage } from '../../platform/http/pagination.js';
import { requireAccess } from '../access/access.service.js';
import { courses, type Course } from '../courses/courses.tables.js';
import { notify } from '../notifications/notify.js';
import { peerReviews, submissions, assignments, type Assignment, type PeerReview, type PeerReviewStatus, type Submission } from './assignments.tables.js';
import { assertScoreFits, criterionDto, loadAssignment, lockAssignment, namesOf, recomputeAggregate, rubricDto, rubricOf, type RubricWithCriteria } from './assignments.service.js';
import { MODERATION_PAGE_SIZE, MY_PEER_REVIEWS_PAGE_SIZE, PREVIEW_LENGTH } from './assignments.schemas.js';
import { firstChars } from '../../platform/text.js';
import { uploadTypeOf } from '../files/files.schemas.js';

/*
 * The reviewer side of peer review is anonymous (spec 4.4): no response here carries the
 * author's id, name, e-mail, their file names or any other field that points at them. The
 * DTOs below are built field by field from what a reviewer may see; nothing is spread from a
 * submission row.
 */

const preview = (text: string | null) => firstChars(text ?? '', PREVIEW_LENGTH);

/**
 * A reviewer sees attachments under neutral names ("Attachment 1.pdf"): the author's file names
 * may carry their name, also after the last dot ("essay.Murphy"), so the extension is the one the
 * upload allow-list gives the stored content type.
 */
async function anonymousFiles(ctx: ServiceContext, s: Submission) {
  return Promise.all(
    s.files.map(async (f, i) => {
      const ext = uploadTypeOf(f.contentType)?.ext;
      return { id: f.fileId, name: `Attachment ${i + 1}${ext ? `.${ext}` : ''}`, contentType: f.contentType, size: f.size, url: await ctx.storage.urlFor(f.key) };
    }),
  );
}

/** GET /api/me/peer-reviews: the caller's reviews, by status (default PENDING), newest assignment first. */
export async function listMyReviews(ctx: ServiceContext, q: { status: PeerReviewStatus[]; page: number; perPage?: number; limit?: number }) {
  const page = toPage(q, MY_PEER_REVIEWS_PAGE_SIZE);
  const mine = and(inTenant(ctx, peerReviews), eq(peerReviews.reviewerId, ctx.actor.personId));
  const where = and(mine, inArray(peerReviews.status, q.status));
  const [rows, [{ total }], [{ pending }]] = await Promise.all([
    ctx.db
      .select({ review: peerReviews, assignment: assignments, courseTitle: courses.title, submission: submissions })
      .from(peerReviews)
      .innerJoin(assignments, sameTenantRef(peerReviews.assignmentId, peerReviews.institutionId, assignments))
      .innerJoin(courses, sameTenantRef(assignments.courseId, assignments.institutionId, courses))
      .innerJoin(submissions, sameTenantRef(peerReviews.submissionId, peerReviews.institutionId, submissions))
      .where(where)
      .orderBy(desc(peerReviews.assignedAt), desc(peerReviews.id))
      .limit(page.perPage)
      .offset(pageOffset(page)),
    ctx.db.select({ total: count() }).from(peerReviews).where(where),
    ctx.db
      .select({ pending: count() })
      .from(peerReviews)
      .where(and(mine, eq(peerReviews.status, 'PENDING'))),
  ]);
  const reviews = rows.map(({ review, assignment, courseTitle, submission }) => ({
    id: review.id,
    status: review.status,
    score: review.score,
    assignedAt: iso(review.assignedAt),
    submittedAt: iso(review.submittedAt),
    assignment: { id: assignment.id, title: assignment.title, maxScore: assignment.maxScore, dueDate: iso(assignment.dueDate), courseId: assignment.courseId, courseTitle },
    submission: { id: submission.id, submittedAt: iso(submission.submittedAt), textContentPreview: preview(submission.textContent), fileCount: submission.files.length },
  }));
  return { data: { reviews, total: Number(total), pendingCount: Number(pending) }, meta: pageMeta(page, Number(total)) };
}

interface ReviewContext {
  review: PeerReview;
  assignment: Assignment;
  course: Course;
  submission: Submission;
  rubric: RubricWithCriteria | null;
}

/** The review (only its reviewer: anyone else 404), its assignment, course, submission and rubric. */
async function loadForReviewer(ctx: ServiceContext, reviewId: string, lock = false): Promise<ReviewContext> {
  const review = await requireAccess(ctx, 'peerReview.review', reviewId);
  // A write holds the assignment shared, as grading does: its maxScore stays as read until commit.
  const assignment = lock ? await lockAssignment(ctx, review.assignmentId, 'share') : await loadAssignment(ctx, review.assignmentId);
  const [course] = await ctx.db
    .select()
    .from(courses)
    .where(byId(ctx, courses, assignment.courseId));
  // Review work on one submission serialises on the submission row (the aggregate and finalisation).
  const query = ctx.db
    .select()
    .from(submissions)
    .where(byId(ctx, submissions, review.submissionId));
  const [submission] = lock ? await query.for('update') : await query;
  // Read again under the lock, still as the caller's: allocation may have moved an untouched review meanwhile.
  const [current] = lock ? await ctx.db.select().from(peerReviews).where(mine(ctx, reviewId)) : [review];
  if (!current) throw notFound('Peer review');
  return { review: current, assignment, course: course!, submission: submission!, rubric: await rubricOf(ctx, assignment.id) };
}

/** The caller's review by id: every write names the reviewer too, so a review moved to someone else in between is not theirs to change. */
const mine = (ctx: ServiceContext, reviewId: string) => and(byId(ctx, peerReviews, reviewId), eq(peerReviews.reviewerId, ctx.actor.personId));

/** A write to a PENDING review of the caller; none done means it was moved away or finished meanwhile. */
async function writeOwnPending(tx: ServiceContext, reviewId: string, set: Partial<typeof peerReviews.$inferInsert>): Promise<PeerReview> {
  const [row] = await tx.db
    .update(peerReviews)
    .set(set)
    .where(and(mine(tx, reviewId), eq(peerReviews.status, 'PENDING')))
    .returning();
  if (!row) throw notFound('Peer review');
  return row;
}

const reviewDto = (r: PeerReview) => ({
  id: r.id,
  status: r.status,
  score: r.score,
  rubricScores: r.rubricScores,
  feedback: r.feedback,
  submittedAt: iso(r.submittedAt),
  createdAt: iso(r.createdAt),
});

/** GET /api/peer-reviews/{id}: what the reviewer needs, and nothing about the author. */
export async function getReview(ctx: ServiceContext, reviewId: string) {
  const { review, assignment, course, submission, rubric } = await loadForReviewer(ctx, reviewId);
  return {
    peerReview: reviewDto(review),
    assignment: {
      id: assignment.id,
      title: assignment.title,
      instructions: assignment.instructions,
      maxScore: assignment.maxScore,
      courseId: assignment.courseId,
      courseTitle: course.title,
    },
    ...(rubric ? { rubric: rubricDto(rubric)! } : {}),
    submission: {
      id: submission.id,
      submittedAt: iso(submission.submittedAt),
      textContent: submission.textContent,
      files: await anonymousFiles(ctx, submission),
      isLate: submission.isLate,
    },
  };
}

/** Rubric scores given for known criteria, each within 0..maxPoints; `complete` demands every criterion. */
function checkRubricScores(rubric: RubricWithCriteria, scores: Record<string, number>, complete: boolean) {
  const byId = new Map(rubric.criteria.map((c) => [c.id, c]));
  for (const [id, value] of Object.entries(scores)) {
    const c = byId.get(id);
    if (!c) throw validationError('rubricScores names a criterion this rubric does not have', [{ field: `body.rubricScores.${id}`, message: 'unknown criterion' }]);
    if (value > c.maxPoints) throw validationError(`${c.title}: at most ${c.maxPoints} points`, [{ field: `body.rubricScores.${id}`, message: `between 0 and ${c.maxPoints}` }]);
  }
  if (complete) {
    const missing = rubric.criteria.filter((c) => scores[c.id] === undefined);
    if (missing.length > 0)
      throw validationError(
        'Every criterion needs a score',
        missing.map((c) => ({ field: `body.rubricScores.${c.id}`, message: `missing score for ${c.title}` })),
      );
  }
}

/** A sum of decimal scores without binary float noise (0.1 + 0.2 is 0.3, not 0.30000000000000004): four decimals, as quiz scores. */
const withoutFloatNoise = (n: number) => Math.round(n * 10_000) / 10_000;

const assertPending = (r: PeerReview) => {
  if (r.status !== 'PENDING') throw conflict(`This review is ${r.status} and can no longer change`);
};

/** PATCH /api/peer-reviews/{id}: save a draft (answered as GET's `peerReview`, with `updatedAt`); never changes the status (409 once SUBMITTED or FLAGGED). */
export async function saveDraft(ctx: ServiceContext, reviewId: string, body: { rubricScores?: Record<string, number>; feedback?: string }) {
  return withTx(ctx, async (tx) => {
    const { review, rubric } = await loadForReviewer(tx, reviewId, true);
    assertPending(review);
    if (body.rubricScores) {
      // An empty map is let through, as on submit, so a client can send the same body to both.
      if (!rubric && Object.keys(body.rubricScores).length > 0) throw validationError('This assignment has no rubric', [{ field: 'body.rubricScores', message: 'no rubric' }]);
      if (rubric) checkRubricScores(rubric, body.rubricScores, false);
    }
    const row = await writeOwnPending(tx, review.id, {
      ...(body.rubricScores !== undefined && { rubricScores: { ...review.rubricScores, ...body.rubricScores } }),
      ...(body.feedback !== undefined && { feedback: body.feedback }),
      updatedAt: tx.clock.now(),
    });
    return { ...reviewDto(row), updatedAt: iso(row.updatedAt) };
  });
}

/**
 * POST /api/peer-reviews/{id}/submit (spec 4.4 rules 1–3): with a rubric every criterion is
 * scored and the score is their sum (to four decimals); without one the score is 0..maxScore
 * and rubricScores are refused (400), as in a draft. The aggregate is
 * recomputed and may finalise the submission.
 */
export async function submitReview(ctx: ServiceContext, reviewId: string, body: { rubricScores?: Record<string, number>; score?: number; feedback?: string }) {
  return withTx(ctx, async (tx) => {
    const { review, assignment, course, submission, rubric } = await loadForReviewer(tx, reviewId, true);
    assertPending(review);
    let score: number;
    let rubricScores: Record<string, number> = {};
    if (rubric) {
      if (!body.rubricScores) throw validationError('This assignment has a rubric: give rubricScores for every criterion', [{ field: 'body.rubricScores', message: 'required' }]);
      checkRubricScores(rubric, body.rubricScores, true);
      rubricScores = Object.fromEntries(rubric.criteria.map((c) => [c.id, body.rubricScores![c.id]!]));
      score = withoutFloatNoise(Object.values(rubricScores).reduce((a, b) => a + b, 0));
    } else {
      // Scores for criteria of no rubric would be dropped unseen: refused, as a draft refuses them.
      if (body.rubricScores && Object.keys(body.rubricScores).length > 0)
        throw validationError('This assignment has no rubric', [{ field: 'body.rubricScores', message: 'no rubric' }]);
      if (body.score === undefined) throw validationError('Give a score', [{ field: 'body.score', message: 'required' }]);
      assertScoreFits(assignment, body.score);
      score = body.score;
    }
    const now = tx.clock.now();
    await writeOwnPending(tx, review.id, { status: 'SUBMITTED', score, rubricScores, feedback: body.feedback ?? review.feedback ?? '', submittedAt: now, updatedAt: now });
    const aggregate = await recomputeAggregate(tx, assignment, course, submission);
    return { status: 'SUBMITTED' as const, score, aggregate };
  });
}

/** POST /api/peer-reviews/{id}/flag (rule 4): FLAGGED counts as completed, not in the average; the course owner is told. */
export async function flagReview(ctx: ServiceContext, reviewId: string, reason: string) {
  return withTx(ctx, async (tx) => {
    const { review, assignment, course, submission } = await loadForReviewer(tx, reviewId, true);
    assertPending(review);
    const now = tx.clock.now();
    await writeOwnPending(tx, review.id, { status: 'FLAGGED', flagReason: reason, updatedAt: now });
    if (course.ownerId) {
      await notify(tx, {
        institutionId: tx.institutionId,
        key: 'TEACHER_NEW_SUBMISSION',
        recipients: [course.ownerId],
        metadata: { flagged: true, reason, peerReviewId: review.id, submissionId: submission.id, assignmentId: assignment.id, title: assignment.title, courseTitle: course.title },
        actionUrl: `/assignments/${assignment.id}/peer-reviews`,
      });
    }
    await recomputeAggregate(tx, assignment, course, submission);
    return { status: 'FLAGGED' as const };
  });
}

/**
 * GET /api/assignments/{id}/peer-reviews (canManageCourses): the moderation view, not
 * anonymous. A fixed number of queries whatever the number of submissions and reviews, and
 * one CRM name lookup per distinct person.
 */
export async function moderationView(ctx: ServiceContext, assignmentId: string, q: { page: number; perPage?: number; limit?: number }) {
  await requireAccess(ctx, 'lesson.staff', assignmentId);
  const assignment = await loadAssignment(ctx, assignmentId);
  const page = toPage(q, MODERATION_PAGE_SIZE);
  const where = and(inTenant(ctx, submissions), eq(submissions.assignmentId, assignmentId));
  const [rubric, subs, [{ total }]] = await Promise.all([
    rubricOf(ctx, assignmentId),
    ctx.db.select().from(submissions).where(where).orderBy(asc(submissions.submittedAt), asc(submissions.id)).limit(page.perPage).offset(pageOffset(page)),
    ctx.db.select({ total: count() }).from(submissions).where(where),
  ]);
  const reviews = subs.length
    ? await ctx.db
        .select()
        .from(peerReviews)
        .where(and(inTenant(ctx, peerReviews), sql`${peerReviews.submissionId} = any(${sql.param(subs.map((s) => s.id))}::text[])`))
        .orderBy(asc(peerReviews.createdAt), asc(peerReviews.id))
    : [];
  const names = await namesOf(ctx, [...subs.map((s) => s.studentId), ...reviews.map((r) => r.reviewerId)]);
  const groups = subs.map((s) => ({
    submissionId: s.id,
    student: { id: s.studentId, name: names.get(s.studentId)! },
    instructorScore: s.instructorScore,
    peerScoreAverage: s.peerScoreAverage,
    peerReviewsCompleted: s.peerReviewsCompleted,
    peerReviewCount: assignment.peerReviewCount,
    // An instructor grade overrides the peer average (rule 6), also one that comes later.
    instructorOverridden: s.instructorScore !== null,
    submittedAt: iso(s.submittedAt),
    reviews: reviews
      .filter((r) => r.submissionId === s.id)
      .map((r) => ({
        id: r.id,
        reviewer: { id: r.reviewerId, name: names.get(r.reviewerId)! },
        status: r.status,
        score: r.score,
        rubricScores: r.rubricScores,
        feedback: r.feedback,
        flagReason: r.flagReason,
        submittedAt: iso(r.submittedAt),
        createdAt: iso(r.createdAt),
      })),
  }));
  const rubricOut = rubricDto(rubric);
  return {
    data: {
      assignment: {
        id: assignment.id,
        title: assignment.title,
        maxScore: assignment.maxScore,
        peerReviewCount: assignment.peerReviewCount,
        isPeerAssessed: assignment.isPeerAssessed,
        rubric: rubricOut,
      },
      rubric: rubric ? { id: rubric.rubric.id, criteria: rubric.criteria.map(criterionDto) } : null,
      groups,
      total: Number(total),
    },
    meta: pageMeta(page, Number(total)),
  };
}
