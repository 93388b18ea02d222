import { and, asc, eq, sql } from 'drizzle-orm';
import type { ServiceContext } from '../../platform/context.js';
import { inTenant } from '../../platform/db/tenancy.js';
import { newId } from '../../platform/ids.js';
import type { Course } from '../courses/courses.tables.js';
import { notify } from '../notifications/notify.js';
import { peerReviews, submissions, type Assignment } from './assignments.tables.js';

interface Review {
  id: string | null;
  submissionId: string;
  reviewerId: string;
  /** Only a PENDING review nobody has started (no draft) may move to another reviewer. */
  movable: boolean;
}

interface Submitter {
  submissionId: string;
  studentId: string;
  /** Its peer grade is final (or an instructor graded it): an extra review there only adjusts a given grade (or none), so others come first. */
  settled?: boolean;
}

/**
 * The reviewer plan of a peer-assessed assignment, computed in memory from every submission
 * and review (pure, so it is easy to test): returns the reviews to create and the reviews to
 * move to another reviewer. The rule it keeps (issue 11):
 *
 * - Nothing happens until N + 1 students have submitted (N = peerReviewCount); from then on
 *   every submission has (at least) N reviewers, drawn from the other submitters, never its
 *   author, never the same reviewer twice.
 * - Reviewer loads are balanced: no reviewer has more than one review above any other.
 *
 * A missing review goes to the least-loaded eligible submitter (ties: who submitted first).
 * Then, while some reviewer has two or more reviews above the least-loaded one, a movable
 * review (PENDING and untouched) of a most-loaded reviewer moves to the least-loaded, if that
 * person may take it. A review someone started or finished never moves: when no movable
 * review fits, the least-loaded person gets an extra review of a submission they may review
 * (one not yet settled first, then the one with the fewest reviewers, then the earliest), so
 * that submission has more than N reviewers. So a late submitter gets reviews of their own
 * work and reviewing duties too, whatever happened to the earlier reviews.
 */
export function planAllocation(n: number, submitters: Submitter[], existing: Review[]) {
  if (n < 1 || submitters.length < n + 1) return { create: [] as Review[], move: [] as Array<{ id: string; to: string }> };
  const authorOf = new Map(submitters.map((s) => [s.submissionId, s.studentId]));
  const order = new Map(submitters.map((s, i) => [s.studentId, i]));
  const reviews: Review[] = existing.filter((r) => authorOf.has(r.submissionId)).map((r) => ({ ...r }));
  const load = new Map(submitters.map((s) => [s.studentId, 0]));
  for (const r of reviews) load.set(r.reviewerId, (load.get(r.reviewerId) ?? 0) + 1);
  const reviewersOf = (submissionId: string) => new Set(reviews.filter((r) => r.submissionId === submissionId).map((r) => r.reviewerId));
  const byLoad = (a: string, b: string) => load.get(a)! - load.get(b)! || order.get(a)! - order.get(b)!;
  const mayReview = (person: string, submissionId: string) => authorOf.get(submissionId) !== person && !reviewersOf(submissionId).has(person);

  const create: Review[] = [];
  const add = (submissionId: string, reviewerId: string) => {
    const review: Review = { id: null, submissionId, reviewerId, movable: true };
    reviews.push(review);
    create.push(review);
    load.set(reviewerId, load.get(reviewerId)! + 1);
  };
  for (const s of submitters) {
    const taken = reviewersOf(s.submissionId);
    while (taken.size < n) {
      const candidates = submitters.map((x) => x.studentId).filter((id) => id !== s.studentId && !taken.has(id));
      if (candidates.length === 0) break;
      const reviewer = candidates.sort(byLoad)[0]!;
      add(s.submissionId, reviewer);
      taken.add(reviewer);
    }
  }

  const moved = new Map<Review, string>();
  // Each round moves a review or adds one to the least-loaded person, so the spread shrinks; the guard only bounds a bug.
  for (let guard = 0; guard < (submitters.length + reviews.length) * 4; guard++) {
    const people = [...load.keys()].sort(byLoad);
    const low = people[0]!;
    const highest = load.get(people[people.length - 1]!)!;
    if (highest - load.get(low)! <= 1) break;
    const highs = people.filter((p) => load.get(p)! >= load.get(low)! + 2).reverse();
    const movable = highs.map((high) => reviews.find((r) => r.reviewerId === high && r.movable && mayReview(low, r.submissionId))).find(Boolean);
    if (movable) {
      load.set(movable.reviewerId, load.get(movable.reviewerId)! - 1);
      load.set(low, load.get(low)! + 1);
      movable.reviewerId = low;
      if (movable.id) moved.set(movable, low);
      continue;
    }
    const extra = submitters
      .filter((s) => mayReview(low, s.submissionId))
      .sort((a, b) => Number(!!a.settled) - Number(!!b.settled) || reviewersOf(a.submissionId).size - reviewersOf(b.submissionId).size)[0];
    if (!extra) break;
    add(extra.submissionId, low);
  }
  return { create, move: [...moved].map(([r, to]) => ({ id: r.id!, to })) };
}

/**
 * Allocate reviewers for a peer-assessed assignment, in the caller's transaction (which holds
 * the assignment's row lock, so two submissions cannot allocate at once). New and moved
 * reviewers get PEER_REVIEW_ASSIGNED (naming the assignment, never the author).
 */
export async function allocateReviewers(tx: ServiceContext, assignment: Assignment, course: Course) {
  const [subs, existing] = await Promise.all([
    tx.db
      .select({
        submissionId: submissions.id,
        studentId: submissions.studentId,
        settled: sql<boolean>`${submissions.peerFinalisedAt} is not null or ${submissions.instructorScore} is not null`,
      })
      .from(submissions)
      .where(and(inTenant(tx, submissions), eq(submissions.assignmentId, assignment.id)))
      .orderBy(asc(submissions.createdAt), asc(submissions.id)),
    tx.db
      .select({
        id: peerReviews.id,
        submissionId: peerReviews.submissionId,
        reviewerId: peerReviews.reviewerId,
        movable: sql<boolean>`${peerReviews.status} = 'PENDING' and ${peerReviews.feedback} is null and ${peerReviews.rubricScores} = '{}'::jsonb`,
      })
      .from(peerReviews)
      .where(and(inTenant(tx, peerReviews), eq(peerReviews.assignmentId, assignment.id))),
  ]);
  const plan = planAllocation(assignment.peerReviewCount, subs, existing);
  const now = tx.clock.now();
  if (plan.create.length > 0) {
    await tx.db.insert(peerReviews).values(
      plan.create.map((r) => ({
        institutionId: tx.institutionId,
        id: newId(),
        assignmentId: assignment.id,
        submissionId: r.submissionId,
        reviewerId: r.reviewerId,
        assignedAt: now,
        createdAt: now,
        updatedAt: now,
      })),
    );
  }
  for (const m of plan.move) {
    await tx.db
      .update(peerReviews)
      .set({ reviewerId: m.to, assignedAt: now, updatedAt: now })
      .where(and(inTenant(tx, peerReviews), eq(peerReviews.id, m.id), eq(peerReviews.status, 'PENDING')));
  }
  const told = [...new Set([...plan.create.map((r) => r.reviewerId), ...plan.move.map((m) => m.to)])];
  if (told.length > 0) {
    await notify(tx, {
      institutionId: tx.institutionId,
      key: 'PEER_REVIEW_ASSIGNED',
      recipients: told,
      metadata: { assignmentId: assignment.id, title: assignment.title, courseTitle: course.title },
      actionUrl: '/peer-reviews',
    });
  }
  return plan;
}
