import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { envelope, ok, paged, pagedEnvelope } from '../../platform/http/envelope.js';
import { actorOf, requestContext } from '../../platform/auth/auth-plugin.js';
import {
  assignmentSchema,
  draftBody,
  draftSchema,
  flagBody,
  flagSchema,
  gradeBody,
  idParams,
  moderationEnvelope,
  moderationQuery,
  submissionsQuery,
  queueQuery,
  queueEnvelope,
  reviewDetailSchema,
  submissionListItem,
  submissionSchema,
  submitBody,
  submitReviewBody,
  submitReviewSchema,
  upsertAssignmentBody,
} from './assignments.schemas.js';
import * as assignments from './assignments.service.js';
import * as reviews from './peer-reviews.service.js';

const tags = ['assignments'];
const peerTags = ['peer review'];
const anonymous = 'Anonymous: the answer never contains the author’s id, name, e-mail, file names or any other author-identifying field.';

/** Spec 4.9 assignment rows and 4.4 peer review. `{id}` of /api/assignments is the ASSIGNMENT lesson's id. */
const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);
  const ctxOf = (req: Parameters<typeof actorOf>[0]) => requestContext(deps, req);

  r.get(
    '/api/assignments/:id',
    {
      config: { recordScope: 'institution', errors: ['FEE_OVERDUE'] },
      schema: {
        tags,
        operationId: 'getAssignment',
        summary: 'An assignment (id = its ASSIGNMENT lesson) with its rubric',
        description:
          'Course staff see it; a learner who may open the lesson (enrollment, drip, fees) sees it with `mySubmission`. Course managers (canManageCourses) see any assignment of the institution. A learner needs an ACTIVE or COMPLETED enrollment (403 ENROLLMENT_REQUIRED), the lesson unlocked (403 LESSON_LOCKED) and, where fee gating is on, fees not overdue (402 FEE_OVERDUE). A lesson without an assignment yet, or one the caller may not know: 404 NOT_FOUND.',
        params: idParams,
        response: { 200: envelope(assignmentSchema) },
      },
    },
    async (req) => ok(await assignments.getAssignment(ctxOf(req), req.params.id)),
  );

  r.put(
    '/api/assignments/:id',
    {
      config: { recordScope: 'owner-edit' },
      schema: {
        tags,
        operationId: 'upsertAssignment',
        summary: 'Create or replace the assignment of an ASSIGNMENT lesson',
        description:
          'The course owner or ADMIN (with canManageCourses). `rubric` absent keeps the current rubric, null removes it; criteria sent with their `id` keep it, ' +
          'others get new ids, criteria left out are removed. `totalPoints` is computed; a peer review scores the rubric (0..totalPoints), ' +
          'and the mean of the reviews becomes the submission score as it is (not rescaled), so a rubric should total `maxScore`. Turning peer review on, or raising `peerReviewCount`, after students submitted allocates their reviewers at once. A `maxScore` below a grade already given (the instructor score, else the final score, else the peer average so far) → 409 CONFLICT (`details.highestGrade`). A lesson of another type → 400.',
        params: idParams,
        body: upsertAssignmentBody,
        response: { 200: envelope(assignmentSchema) },
      },
    },
    async (req) => ok(await assignments.upsertAssignment(ctxOf(req), req.params.id, req.body)),
  );

  r.post(
    '/api/assignments/:id/submit',
    {
      config: { recordScope: 'institution', errors: ['FEE_OVERDUE'] },
      schema: {
        tags,
        operationId: 'submitAssignment',
        summary: 'Submit (or resubmit) the caller’s work',
        description:
          'Text and/or files (`fileId` or `key` of files the caller registered through POST /api/files). After the due date: 400 unless the assignment allows late work ' +
          '(then `isLate` is true). Resubmitting replaces an ungraded submission; after grading, or once any peer review of it was submitted or flagged → 409 CONFLICT. ' +
          'On a peer-assessed assignment reviewers are allocated ' +
          'once N + 1 students have submitted (N = peerReviewCount).',
        params: idParams,
        body: submitBody,
        response: { 201: envelope(submissionSchema) },
      },
    },
    async (req, reply) => reply.code(201).send(ok(await assignments.submit(ctxOf(req), req.params.id, req.body))),
  );

  r.post(
    '/api/assignments/:id/grade',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'gradeAssignment',
        summary: 'Grade a submission (canManageCourses)',
        description:
          'Score 0..maxScore; the instructor score becomes the score and overrides any peer average. The student gets ASSESS_GRADED; a passing grade completes the lesson. canManageCourses only (403 FORBIDDEN otherwise), any course of the institution. A score outside 0..maxScore 400 VALIDATION_ERROR; an unknown assignment or submission 404 NOT_FOUND. Audited.',
        params: idParams,
        body: gradeBody,
        response: { 200: envelope(submissionSchema) },
      },
    },
    async (req) => ok(await assignments.grade(ctxOf(req), req.params.id, req.body)),
  );

  r.get(
    '/api/assignments/:id/submissions',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'listAssignmentSubmissions',
        summary: 'Submissions of an assignment (canManageCourses), newest first, with student names',
        description:
          'canManageCourses only (403 FORBIDDEN otherwise), any course of the institution; an unknown assignment 404 NOT_FOUND. Each submission with its files, scores and grading state; names come from the CRM ("Student <id>" when it cannot give one). 400 VALIDATION_ERROR for a bad page value.',
        params: idParams,
        querystring: submissionsQuery,
        response: { 200: pagedEnvelope(submissionListItem) },
      },
    },
    async (req) => {
      const { rows, meta } = await assignments.listSubmissions(ctxOf(req), req.params.id, req.query);
      return paged(rows, meta);
    },
  );

  r.get(
    '/api/assignments/:id/peer-reviews',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags: peerTags,
        operationId: 'moderatePeerReviews',
        summary: 'Peer review moderation view (canManageCourses; not anonymous)',
        description:
          'One group per submission (paginated, default 50) with the student, scores and every review with its reviewer; names from the CRM. canManageCourses only (403 FORBIDDEN otherwise), any course of the institution; an unknown assignment 404 NOT_FOUND. 400 VALIDATION_ERROR for a bad page value.',
        params: idParams,
        querystring: moderationQuery,
        response: { 200: moderationEnvelope },
      },
    },
    async (req) => {
      const { data, meta } = await reviews.moderationView(ctxOf(req), req.params.id, req.query);
      return { data, error: null, meta };
    },
  );

  r.get(
    '/api/me/peer-reviews',
    {
      schema: {
        tags: peerTags,
        operationId: 'listMyPeerReviews',
        summary: 'The caller’s peer-review queue',
        description: `\`status\`: comma-separated PENDING, SUBMITTED, FLAGGED (the parameter may repeat; empty items are skipped; default, also when empty, PENDING). Previews are the first 240 characters. ${anonymous} Any signed-in user: the reviews assigned to them. 400 VALIDATION_ERROR for an unknown status or a bad page value.`,
        querystring: queueQuery,
        response: { 200: queueEnvelope },
      },
    },
    async (req) => {
      const { data, meta } = await reviews.listMyReviews(ctxOf(req), req.query);
      return { data, error: null, meta };
    },
  );

  r.get(
    '/api/peer-reviews/:id',
    {
      config: { recordScope: 'owner' },
      schema: {
        tags: peerTags,
        operationId: 'getPeerReview',
        summary: 'A peer review to do (only its assigned reviewer; anyone else 404)',
        description: `Attachments carry neutral names ("Attachment 1.pdf"). ${anonymous}`,
        params: idParams,
        response: { 200: envelope(reviewDetailSchema) },
      },
    },
    async (req) => ok(await reviews.getReview(ctxOf(req), req.params.id)),
  );

  r.patch(
    '/api/peer-reviews/:id',
    {
      config: { recordScope: 'owner' },
      schema: {
        tags: peerTags,
        operationId: 'savePeerReviewDraft',
        summary: 'Save a draft of a peer review',
        description: `Optional rubricScores (merged) and feedback; answers the review as GET's \`peerReview\` does, with \`updatedAt\`. rubricScores on an assignment without a rubric → 400. Never changes the status; 409 CONFLICT once SUBMITTED or FLAGGED. ${anonymous} Only the review’s assigned reviewer (anyone else, staff included, 404 NOT_FOUND).`,
        params: idParams,
        body: draftBody,
        response: { 200: envelope(draftSchema) },
      },
    },
    async (req) => ok(await reviews.saveDraft(ctxOf(req), req.params.id, req.body)),
  );

  r.post(
    '/api/peer-reviews/:id/submit',
    {
      config: { recordScope: 'owner' },
      schema: {
        tags: peerTags,
        operationId: 'submitPeerReview',
        summary: 'Submit a peer review',
        description:
          'With a rubric: rubricScores for every criterion (0..maxPoints), score = their sum (to four decimals); without: score 0..maxScore, and rubricScores → 400. Answers the aggregate, whose `peerScoreAverage` is the mean ' +
          "of the submitted reviews' scores (two decimals); `finalisedNow` is true " +
          `when this completed the last review and the peer average became the score (ASSESS_PEER_GRADED is sent then, once). A review completed after that (extra reviewers) keeps the score on the peer average while there is no instructor grade. ${anonymous} Only the review’s assigned reviewer (anyone else, staff included, 404 NOT_FOUND). Once SUBMITTED or FLAGGED: 409 CONFLICT.`,
        params: idParams,
        body: submitReviewBody,
        response: { 200: envelope(submitReviewSchema) },
      },
    },
    async (req) => ok(await reviews.submitReview(ctxOf(req), req.params.id, req.body)),
  );

  r.post(
    '/api/peer-reviews/:id/flag',
    {
      config: { recordScope: 'owner' },
      schema: {
        tags: peerTags,
        operationId: 'flagPeerReview',
        summary: 'Flag the submission under review (reason 3–500 characters)',
        description: `The review becomes FLAGGED (completed, left out of the average) and the course owner gets TEACHER_NEW_SUBMISSION. ${anonymous} Only the review’s assigned reviewer (anyone else, staff included, 404 NOT_FOUND). Once SUBMITTED or FLAGGED: 409 CONFLICT; a reason outside 3–500 characters 400 VALIDATION_ERROR.`,
        params: idParams,
        body: flagBody,
        response: { 200: envelope(flagSchema) },
      },
    },
    async (req) => ok(await reviews.flagReview(ctxOf(req), req.params.id, req.body.reason)),
  );
};

export const assignmentsModule: AppModule = { name: 'assignments', routes };
