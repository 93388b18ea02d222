import { z } from 'zod';
import { realNumber } from '../../platform/http/numbers.js';
import { charsBetween } from '../../platform/text.js';
import { envelopeWithMeta } from '../../platform/http/envelope.js';
import { DEFAULT_PAGE_SIZE, paginationFieldsFor } from '../../platform/http/pagination.js';
import { PEER_REVIEW_STATUSES, SUBMISSION_STATUSES } from './assignments.tables.js';

/** Spec 8: flag reason 3 to 500 characters; queue preview the first 240 characters. */
export const FLAG_REASON_MIN = 3;
export const FLAG_REASON_MAX = 500;
export const PREVIEW_LENGTH = 240;
export const TEXT_MAX = 100_000;
export const FEEDBACK_MAX = 10_000;
export const MAX_FILES = 20;

const isoDateTime = z.string().datetime({ offset: true }).describe('ISO 8601 timestamp');
const points = realNumber().min(0).max(1_000_000);

export const idParams = z.object({ id: z.string().min(1).max(200) });

/** Default page sizes: the moderation view 50 submissions, the caller's review queue 25. */
export const MODERATION_PAGE_SIZE = 50;
export const MY_PEER_REVIEWS_PAGE_SIZE = 25;

export const submissionsQuery = z.object(paginationFieldsFor(DEFAULT_PAGE_SIZE));
export const moderationQuery = z.object(paginationFieldsFor(MODERATION_PAGE_SIZE));

// ── assignment ───────────────────────────────────────────────────────────────

const criterionInput = z.strictObject({
  id: z.string().min(1).max(200).optional().describe('an existing criterion id keeps that criterion (and the scores given for it)'),
  title: z.string().trim().min(1).max(200),
  description: z.string().max(2000).default(''),
  maxPoints: points.refine((n) => n > 0, 'must be greater than 0'),
  order: z.number().int().min(0).max(10_000),
});

/** Reviewers per submission of a peer-assessed assignment saved without a count (as Canvas: one each). */
export const DEFAULT_PEER_REVIEW_COUNT = 1;

export const upsertAssignmentBody = z
  .strictObject({
    title: z.string().trim().min(1).max(300),
    instructions: z.string().max(TEXT_MAX),
    maxScore: points.refine((n) => n > 0, 'must be greater than 0'),
    passingScore: points.nullable().optional(),
    dueDate: isoDateTime,
    allowLate: z.boolean().default(false),
    isPeerAssessed: z.boolean().default(false),
    peerReviewCount: z
      .number()
      .int()
      .min(0)
      .max(10)
      .optional()
      .describe(
        `reviewers per submission, used only when isPeerAssessed (an assignment that is not peer-assessed stores 0); absent: the current count of an assignment that was already peer-assessed, else ${DEFAULT_PEER_REVIEW_COUNT}`,
      ),
    rubric: z
      .strictObject({
        title: z.string().trim().min(1).max(200),
        criteria: z
          .array(criterionInput)
          .min(1)
          .max(50)
          .refine((list) => {
            const ids = list.flatMap((c) => (c.id ? [c.id] : []));
            return new Set(ids).size === ids.length;
          }, 'a criterion id appears twice'),
      })
      .nullable()
      .optional()
      .describe('absent: the current rubric stays (a new assignment has none); null: removes the rubric (reviews then give a score from 0 to maxScore)'),
  })
  .refine((b) => b.passingScore == null || b.passingScore <= b.maxScore, { message: 'passingScore cannot exceed maxScore', path: ['passingScore'] })
  .refine((b) => !b.isPeerAssessed || b.peerReviewCount === undefined || b.peerReviewCount >= 1, {
    message: 'a peer-assessed assignment needs peerReviewCount of at least 1',
    path: ['peerReviewCount'],
  });
export type UpsertAssignment = z.infer<typeof upsertAssignmentBody>;

export const criterionSchema = z.object({ id: z.string(), title: z.string(), description: z.string(), maxPoints: z.number(), order: z.number().int() });
export const rubricSchema = z.object({ id: z.string(), title: z.string(), totalPoints: z.number(), criteria: z.array(criterionSchema) });

const fileOut = z.object({ fileId: z.string(), name: z.string(), contentType: z.string(), size: z.number(), url: z.string() });

export const submissionSchema = z.object({
  id: z.string(),
  assignmentId: z.string(),
  studentId: z.string(),
  textContent: z.string().nullable(),
  files: z.array(fileOut),
  isLate: z.boolean(),
  status: z.enum(SUBMISSION_STATUSES),
  score: z.number().nullable().describe('the grade that counts: the instructor score, else the peer average once final'),
  instructorScore: z.number().nullable(),
  peerScoreAverage: z.number().nullable(),
  peerReviewsCompleted: z.number().int(),
  feedback: z.string().nullable(),
  gradedAt: z.string().nullable(),
  submittedAt: z.string(),
});

export const assignmentSchema = z.object({
  id: z.string(),
  lessonId: z.string(),
  courseId: z.string(),
  courseTitle: z.string(),
  title: z.string(),
  instructions: z.string(),
  maxScore: z.number(),
  passingScore: z.number().nullable(),
  dueDate: z.string(),
  allowLate: z.boolean(),
  isPeerAssessed: z.boolean(),
  peerReviewCount: z.number().int(),
  rubric: rubricSchema.nullable(),
  /** For a student: their own submission, or null. Absent for staff. */
  mySubmission: submissionSchema.nullable().optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const submitBody = z
  .strictObject({
    textContent: z.string().max(TEXT_MAX).optional(),
    files: z
      .array(
        z
          .strictObject({ fileId: z.string().min(1).max(200).optional(), key: z.string().min(1).max(1024).optional(), name: z.string().trim().min(1).max(255) })
          .refine((f) => !!f.fileId || !!f.key, 'give fileId or key (with both, they must name the same file)'),
      )
      .max(MAX_FILES)
      .optional(),
  })
  .refine((b) => (b.textContent?.trim().length ?? 0) > 0 || (b.files?.length ?? 0) > 0, 'a submission needs textContent or at least one file');
export type SubmitInput = z.infer<typeof submitBody>;

export const gradeBody = z.strictObject({
  submissionId: z.string().min(1).max(200),
  score: points,
  feedback: z.string().max(FEEDBACK_MAX).optional(),
});

export const submissionListItem = submissionSchema.extend({ studentName: z.string() });

// ── peer review ──────────────────────────────────────────────────────────────

export const queueQuery = z.object({
  status: z
    .union([z.string().max(100), z.array(z.string().max(100)).max(10)])
    .optional()
    .transform((v) => {
      // `status=A,B`, `status=A&status=B` or both; empty items are skipped, and nothing left means the default.
      const items = [v ?? []]
        .flat()
        .flatMap((s) => s.split(','))
        .map((x) => x.trim().toUpperCase())
        .filter((x) => x.length > 0);
      return items.length > 0 ? items : ['PENDING'];
    })
    .pipe(z.array(z.enum(PEER_REVIEW_STATUSES)).min(1))
    .describe('comma-separated list of PENDING, SUBMITTED, FLAGGED (the parameter may also repeat); empty items are skipped; default (also when empty) PENDING'),
  ...paginationFieldsFor(MY_PEER_REVIEWS_PAGE_SIZE),
});

const assignmentRef = z.object({ id: z.string(), title: z.string(), maxScore: z.number(), dueDate: z.string(), courseId: z.string(), courseTitle: z.string() });

export const queueItemSchema = z.object({
  id: z.string(),
  status: z.enum(PEER_REVIEW_STATUSES),
  score: z.number().nullable(),
  assignedAt: z.string(),
  submittedAt: z.string().nullable(),
  assignment: assignmentRef,
  submission: z.object({ id: z.string(), submittedAt: z.string(), textContentPreview: z.string(), fileCount: z.number().int() }),
});

export const queueSchema = z.object({ reviews: z.array(queueItemSchema), total: z.number().int(), pendingCount: z.number().int() });
/** GET /api/me/peer-reviews: the queue, with page meta. */
export const queueEnvelope = envelopeWithMeta(queueSchema);

/** A submission's file as a reviewer sees it: a neutral name, never the author's file name. */
const reviewerFile = z.object({ id: z.string(), name: z.string(), contentType: z.string(), size: z.number(), url: z.string() });

export const reviewDetailSchema = z.object({
  peerReview: z.object({
    id: z.string(),
    status: z.enum(PEER_REVIEW_STATUSES),
    score: z.number().nullable(),
    rubricScores: z.record(z.string(), z.number()),
    feedback: z.string().nullable(),
    submittedAt: z.string().nullable(),
    createdAt: z.string(),
  }),
  assignment: z.object({ id: z.string(), title: z.string(), instructions: z.string(), maxScore: z.number(), courseId: z.string(), courseTitle: z.string() }),
  rubric: rubricSchema.optional(),
  submission: z.object({ id: z.string(), submittedAt: z.string(), textContent: z.string().nullable(), files: z.array(reviewerFile), isLate: z.boolean() }),
});

const rubricScoresInput = z.record(z.string().min(1).max(200), z.number().finite().min(0).max(1_000_000));

export const draftBody = z
  .object({ rubricScores: rubricScoresInput.optional(), feedback: z.string().max(FEEDBACK_MAX).optional() })
  .describe('a draft: any other field (status included) is ignored');

/** The saved draft: the fields of GET's `peerReview`, with `updatedAt`. */
export const draftSchema = z.object({
  id: z.string(),
  status: z.enum(PEER_REVIEW_STATUSES),
  score: z.number().nullable(),
  rubricScores: z.record(z.string(), z.number()),
  feedback: z.string().nullable(),
  submittedAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const submitReviewBody = z.strictObject({
  rubricScores: rubricScoresInput.optional(),
  score: points.optional(),
  feedback: z.string().max(FEEDBACK_MAX).optional(),
});

export const submitReviewSchema = z.object({
  status: z.literal('SUBMITTED'),
  score: z.number(),
  aggregate: z.object({ peerScoreAverage: z.number().nullable(), reviewsSubmitted: z.number().int(), reviewsAssigned: z.number().int(), finalisedNow: z.boolean() }),
});

export const flagBody = z.strictObject({
  reason: z
    .string()
    .trim()
    // min for the JSON Schema (a lower bound in UTF-16 units too; when it fails, the refine is
    // not run, so a short reason is reported once); the refine counts code points.
    .min(FLAG_REASON_MIN, { error: `must be ${FLAG_REASON_MIN} to ${FLAG_REASON_MAX} characters after trimming`, abort: true })
    .refine(charsBetween(FLAG_REASON_MIN, FLAG_REASON_MAX), `must be ${FLAG_REASON_MIN} to ${FLAG_REASON_MAX} characters after trimming`)
    .describe(`${FLAG_REASON_MIN} to ${FLAG_REASON_MAX} characters`),
});
export const flagSchema = z.object({ status: z.literal('FLAGGED') });

const person = z.object({ id: z.string(), name: z.string() });

export const moderationSchema = z.object({
  assignment: z.object({
    id: z.string(),
    title: z.string(),
    maxScore: z.number(),
    peerReviewCount: z.number().int(),
    isPeerAssessed: z.boolean(),
    rubric: rubricSchema.nullable(),
  }),
  rubric: z.object({ id: z.string(), criteria: z.array(criterionSchema) }).nullable(),
  groups: z.array(
    z.object({
      submissionId: z.string(),
      student: person,
      instructorScore: z.number().nullable(),
      peerScoreAverage: z.number().nullable(),
      peerReviewsCompleted: z.number().int(),
      peerReviewCount: z.number().int(),
      instructorOverridden: z.boolean().describe('an instructor grade exists: it overrides the peer average, present or still to come (spec 4.4 rule 6)'),
      submittedAt: z.string(),
      reviews: z.array(
        z.object({
          id: z.string(),
          reviewer: person,
          status: z.enum(PEER_REVIEW_STATUSES),
          score: z.number().nullable(),
          rubricScores: z.record(z.string(), z.number()),
          feedback: z.string().nullable(),
          flagReason: z.string().nullable(),
          submittedAt: z.string().nullable(),
          createdAt: z.string(),
        }),
      ),
    }),
  ),
  total: z.number().int(),
});
/** GET /api/assignments/{id}/peer-reviews: the moderation view, with page meta over its groups. */
export const moderationEnvelope = envelopeWithMeta(moderationSchema);
