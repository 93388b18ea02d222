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

/**
 * The reviewer plan of a peer-assessed assignment, computed in memory from every submission
 * and review (pure, so it is easy to test): returns the reviews to create and the reviews to
 * move to another reviewer.
 *
 * - Nothing happens until N + 1 students have submitted (N = peerReviewCount); from then on
 *   every submission has N reviewers, drawn from the other submitters, never its author,
 *   never the same reviewer twice.
 * - A new review goes to the least-loaded eligible submitter (ties: who submitted first).
 * - Then loads are balanced: while some reviewer has two or more reviews above another, a
 *   movable review of the most-loaded moves to the least-loaded, if that reviewer may take it.
 *   So a late submitter gets reviews of their own work and reviewing duties too.
 */
export function planAllocation(n: number, submitters: { submissionId: string; studentId: string }[], existing: Review[]) {
  if (n < 1 || submitters.length < n + 1) return { create: [] as Review[], move: [] as Array<{ id: string; to: string }> };
  const authorOf = new Map(submitters.map((s) => [s.submissionId, s.studentId]));
  const order = new Map(submitters.map((s, i) => [s.studentId, i]));
  const reviews: Review[] = existing.filter((r) => authorOf.has(r.submissionId)).map((r) => ({ ...r }));
  const load = new Map(submitters.map((s) => [s.studentId, 0]));
  for (const r of reviews) load.set(r.reviewerId, (load.get(r.reviewerId) ?? 0) + 1);
  const reviewersOf = (submissionId: string) => new Set(reviews.filter((r) => r.submissionId === submissionId).map((r) => r.reviewerId));
  const byLoad = (a: string, b: string) => load.get(a)! - load.get(b)! || order.get(a)! - order.get(b)!;

  const create: Review[] = [];
  for (const s of submitters) {
    const taken = reviewersOf(s.submissionId);
    while (taken.size < n) {
      const candidates = submitters.map((x) => x.studentId).filter((id) => id !== s.studentId && !taken.has(id));
      if (candidates.length === 0) break;
      const reviewer = candidates.sort(byLoad)[0]!;
      const review: Review = { id: null, submissionId: s.submissionId, reviewerId: reviewer, movable: true };
      reviews.push(review);
      create.push(review);
      taken.add(reviewer);
      load.set(reviewer, load.get(reviewer)! + 1);
    }
  }

  const moved = new Map<Review, string>();
  for (let guard = 0; guard < reviews.length * 2; guard++) {
    const people = [...load.keys()].sort(byLoad);
    const low = people[0]!;
    const highs = people.filter((p) => load.get(p)! >= load.get(low)! + 2).reverse();
    let done = false;
    for (const high of highs) {
      const review = reviews.find((r) => r.reviewerId === high && r.movable && authorOf.get(r.submissionId) !== low && !reviewersOf(r.submissionId).has(low));
      if (!review) continue;
      review.reviewerId = low;
      if (review.id) moved.set(review, low);
      load.set(high, load.get(high)! - 1);
      load.set(low, load.get(low)! + 1);
      done = true;
      break;
    }
    if (!done) break;
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
      .select({ submissionId: submissions.id, studentId: submissions.studentId })
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
