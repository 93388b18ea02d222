import { z } from 'zod';
import { realNumber } from '../../platform/http/numbers.js';
import { optionalFilter } from '../../platform/http/query-filters.js';
import { charsBetween } from '../../platform/text.js';
import { paginationFields } from '../../platform/http/pagination.js';
import { ATTEMPT_STATUSES, QUESTION_TYPES } from './quizzes.tables.js';

/** Limits of a quiz (the spec leaves them open; README "Quizzes"). */
export const QUIZ_LIMITS = {
  title: 200,
  description: 5_000,
  questions: 200,
  prompt: 2_000,
  options: 20,
  optionId: 64,
  optionText: 500,
  acceptedAnswers: 50,
  acceptedAnswer: 500,
  explanation: 5_000,
  points: 1_000,
  maxAttempts: 100,
  timeLimitMinutes: 1_440,
  answerText: 1_000,
} as const;

const text = (min: number, max: number, what: string) =>
  z.string().trim().refine(charsBetween(min, max), `must be ${min} to ${max} characters after trimming`).describe(`${what}; trimmed, ${min} to ${max} characters`);

/** zod 4 numbers are finite: Infinity and NaN (e.g. JSON 1e400) are refused. */
const finite = z.number();

// ── path and query ─────────────────────────────────────────────────────────────
export const quizParams = z.object({ id: z.string().min(1).describe('id of the QUIZ lesson (the quiz shares it)') });

export const listAttemptsQuery = z.object({
  ...paginationFields,
  studentId: optionalFilter(z.string()).describe('course staff only: the attempts of one student (learners always get their own)'),
});
export type ListAttemptsQuery = z.output<typeof listAttemptsQuery>;

// ── PUT /api/quiz/{id} ─────────────────────────────────────────────────────────
const optionInput = z.object({
  id: z.string().trim().min(1).max(QUIZ_LIMITS.optionId).describe('chosen by the author, unique within the question; correctOptionIds refer to it'),
  text: text(1, QUIZ_LIMITS.optionText, 'option text'),
});

/**
 * One question. The zod schema checks shapes and lengths; the rules that tie fields together
 * (which fields each type needs, that correct options exist, unique ids) are checked by the
 * service after the access check, and answer 400 VALIDATION_ERROR with the field's path.
 */
const questionInput = z.object({
  id: z.string().min(1).max(64).optional().describe('omit for a new question (the server assigns one); send it back to keep a question'),
  type: z.enum(QUESTION_TYPES),
  prompt: text(1, QUIZ_LIMITS.prompt, 'the question'),
  options: z.array(optionInput).min(2).max(QUIZ_LIMITS.options).nullable().optional().describe('SINGLE_CHOICE and MULTIPLE_CHOICE only: 2 to 20 options'),
  correctOptionIds: z
    .array(z.string().min(1).max(QUIZ_LIMITS.optionId))
    .min(1)
    .max(QUIZ_LIMITS.options)
    .nullable()
    .optional()
    .describe('choice questions: the correct options (SINGLE_CHOICE exactly one, MULTIPLE_CHOICE at least one)'),
  correctAnswer: z.boolean().nullable().optional().describe('TRUE_FALSE only: the right answer'),
  acceptedAnswers: z
    .array(text(1, QUIZ_LIMITS.acceptedAnswer, 'an accepted answer'))
    .min(1)
    .max(QUIZ_LIMITS.acceptedAnswers)
    .nullable()
    .optional()
    .describe('SHORT_ANSWER only: answers accepted, compared without any whitespace and case-insensitively ("New York" matches "newyork")'),
  numericAnswer: finite.nullable().optional().describe('NUMERIC only: the right value'),
  tolerance: finite.min(0).nullable().optional().describe('NUMERIC only: accepted distance from numericAnswer, >= 0 (default 0)'),
  points: finite.positive().max(QUIZ_LIMITS.points).default(1).describe('> 0, at most 1,000 (default 1)'),
  explanation: z.string().trim().max(QUIZ_LIMITS.explanation).nullable().optional().describe('shown to course staff only'),
  order: z.number().int().min(0).max(10_000).optional().describe('position; questions are stored by order (ties: the order sent) and renumbered 1..n'),
});
export type QuestionInput = z.output<typeof questionInput>;

export const upsertQuizBody = z.object({
  title: text(1, QUIZ_LIMITS.title, 'title'),
  description: z.string().trim().max(QUIZ_LIMITS.description).nullable().optional(),
  passingScore: realNumber().min(0).max(100).default(70).describe('percent, 0 to 100 (default 70): an attempt passes at a percentage at or above it'),
  maxAttempts: z.number().int().min(1).max(QUIZ_LIMITS.maxAttempts).nullable().default(null).describe('attempts per student, 1 to 100; null (default): unlimited'),
  timeLimitMinutes: z
    .number()
    .int()
    .min(1)
    .max(QUIZ_LIMITS.timeLimitMinutes)
    .nullable()
    .default(null)
    .describe('1 to 1,440; null (default): none. With a limit, learners see the questions only during an open attempt (POST /start)'),
  shuffleQuestions: z.boolean().default(false).describe('learners see the questions in an order of their own (stable per attempt)'),
  shuffleOptions: z.boolean().default(false).describe('learners see the options of choice questions in an order of their own (stable per attempt)'),
  questions: z.array(questionInput).min(1).max(QUIZ_LIMITS.questions).describe('1 to 200 questions; replaces the stored list'),
});
export type UpsertQuizInput = z.output<typeof upsertQuizBody>;

// ── POST /api/quiz/{id}/attempt ────────────────────────────────────────────────
const answerInput = z.object({
  questionId: z.string().min(1).max(64),
  optionIds: z
    .array(z.string().min(1).max(QUIZ_LIMITS.optionId))
    .max(QUIZ_LIMITS.options)
    .optional()
    .describe('SINGLE_CHOICE (at most one) and MULTIPLE_CHOICE: the options chosen'),
  value: z.union([z.boolean(), finite]).optional().describe('TRUE_FALSE: a boolean; NUMERIC: a number'),
  text: z.string().max(QUIZ_LIMITS.answerText).optional().describe('SHORT_ANSWER: the answer text (at most 1,000 characters)'),
});

export const submitAttemptBody = z.object({
  attemptId: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe(
      'the attempt POST /start returned; when given it must be the caller’s open attempt (409 CONFLICT once it was submitted or expired). ' +
        'Omitted: the caller’s open attempt, else a new attempt started and submitted now (also on a quiz with a time limit)',
    ),
  answers: z
    .array(answerInput)
    .max(QUIZ_LIMITS.questions)
    .describe('one entry per answered question (a question without an entry scores 0); each question at most once; only the field of its type'),
});
export type SubmitAttemptInput = z.output<typeof submitAttemptBody>;

// ── responses ──────────────────────────────────────────────────────────────────
const isoTimestamp = z.string().describe('ISO 8601 timestamp');

/**
 * A question as sent. Course staff get the answer key fields of its type; learners get id,
 * type, prompt, options (id and text), points and order only.
 */
export const questionSchema = z.object({
  id: z.string(),
  type: z.enum(QUESTION_TYPES),
  prompt: z.string(),
  options: z
    .array(z.object({ id: z.string(), text: z.string() }))
    .optional()
    .describe('choice questions'),
  correctOptionIds: z.array(z.string()).optional().describe('course staff only'),
  correctAnswer: z.boolean().optional().describe('course staff only (TRUE_FALSE)'),
  acceptedAnswers: z.array(z.string()).optional().describe('course staff only (SHORT_ANSWER)'),
  numericAnswer: z.number().optional().describe('course staff only (NUMERIC)'),
  tolerance: z.number().optional().describe('course staff only (NUMERIC)'),
  points: z.number(),
  explanation: z.string().nullable().optional().describe('course staff only'),
  order: z.number().int().describe('1..n; for learners the position in their (possibly shuffled) order'),
});

export const attemptRefSchema = z.object({
  id: z.string(),
  attemptNumber: z.number().int(),
  startedAt: isoTimestamp,
  deadlineAt: isoTimestamp.nullable().describe('startedAt + the time limit; submissions are accepted up to 30 s after it'),
});

export const myAttemptsSchema = z
  .object({
    used: z.number().int().describe('attempts started, whatever their outcome'),
    remaining: z.number().int().nullable().describe('null: unlimited'),
    passed: z.boolean().describe('some attempt passed'),
    bestPercentage: z.number().nullable(),
    inProgress: attemptRefSchema.nullable().describe('the open attempt, if any'),
  })
  .describe("the caller's attempts (learners with an enrollment; null for others)");

export const quizSchema = z.object({
  id: z.string().describe('the QUIZ lesson id'),
  lessonId: z.string(),
  courseId: z.string(),
  title: z.string(),
  description: z.string().nullable(),
  passingScore: z.number(),
  maxAttempts: z.number().int().nullable(),
  timeLimitMinutes: z.number().int().nullable(),
  shuffleQuestions: z.boolean(),
  shuffleOptions: z.boolean(),
  questionCount: z.number().int(),
  totalPoints: z.number(),
  questions: z.array(questionSchema).nullable().describe('null for a learner on a quiz with a time limit until they start an attempt (POST /api/quiz/{id}/start returns them)'),
  myAttempts: myAttemptsSchema.nullable(),
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
});

const resultSchema = z.object({
  questionId: z.string(),
  correct: z.boolean().describe("whether the student's answer was right"),
  pointsAwarded: z.number(),
  points: z.number().describe('what the question was worth'),
});

const answerSchema = z.object({
  questionId: z.string(),
  optionIds: z.array(z.string()).optional(),
  value: z.union([z.boolean(), z.number()]).optional(),
  text: z.string().optional(),
});

export const attemptSchema = z.object({
  id: z.string(),
  quizId: z.string(),
  studentId: z.string(),
  attemptNumber: z.number().int(),
  status: z.enum(ATTEMPT_STATUSES),
  startedAt: isoTimestamp,
  deadlineAt: isoTimestamp.nullable(),
  submittedAt: isoTimestamp.nullable(),
  score: z.number().nullable().describe('points scored; null unless SUBMITTED'),
  maxScore: z.number().nullable(),
  percentage: z.number().nullable().describe('score / maxScore × 100, two decimals'),
  passed: z.boolean().nullable().describe('null while IN_PROGRESS; false when EXPIRED'),
  results: z.array(resultSchema).nullable().describe('per question: right or not and the points; never the right answer nor an explanation'),
  answers: z.array(answerSchema).nullable().describe('what the student sent'),
});

export const staffAttemptSchema = attemptSchema.extend({
  studentName: z.string().nullable().describe('course staff: the name from the CRM, or the generic label "Student <id>"; null in a learner\'s own list'),
});

export const startResultSchema = z.object({
  attempt: attemptSchema,
  quiz: quizSchema.describe('the quiz as the learner takes it, with the questions'),
});

export const submitResultSchema = attemptSchema.extend({
  completion: z
    .object({
      lessonCompleted: z.literal(true),
      lessonScore: z.number().describe('the best passing percentage so far, stored as the lesson score'),
      progress: z.number().int().describe("the enrollment's progress, percent"),
      enrollmentStatus: z.enum(['ACTIVE', 'DROPPED', 'COMPLETED']),
      courseCompleted: z.boolean(),
      completedNow: z.boolean().describe('this attempt completed the course'),
      certificateId: z
        .string()
        .nullable()
        .describe('the certificate this call issued: at completion, or when it lifted a completed course’s final score to its passing score; else null'),
    })
    .nullable()
    .describe('a passed attempt completes the lesson; null otherwise'),
});

export type QuestionDto = z.infer<typeof questionSchema>;
export type QuizDto = z.infer<typeof quizSchema>;
export type AttemptDto = z.infer<typeof attemptSchema>;
export type StaffAttemptDto = z.infer<typeof staffAttemptSchema>;
export type MyAttempts = z.infer<typeof myAttemptsSchema>;
