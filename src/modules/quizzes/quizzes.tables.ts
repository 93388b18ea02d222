import { sql } from 'drizzle-orm';
import { boolean, foreignKey, index, integer, jsonb, pgTable, real, text, timestamp, unique, uniqueIndex } from 'drizzle-orm/pg-core';
import { lessons } from '../courses/courses.tables.js';
import { enrollments } from '../enrollments/enrollments.tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const QUESTION_TYPES = ['SINGLE_CHOICE', 'MULTIPLE_CHOICE', 'TRUE_FALSE', 'SHORT_ANSWER', 'NUMERIC'] as const;
export type QuestionType = (typeof QUESTION_TYPES)[number];

/**
 * IN_PROGRESS: started with POST /api/quiz/{id}/start, not submitted yet (at most one per student
 * and quiz). SUBMITTED: graded. EXPIRED: submitted after its deadline and the grace period, or
 * found past them when the student started again; never graded, never passed.
 */
export const ATTEMPT_STATUSES = ['IN_PROGRESS', 'SUBMITTED', 'EXPIRED'] as const;
export type AttemptStatus = (typeof ATTEMPT_STATUSES)[number];

/**
 * A question as stored, with its answer key. Only the fields of its type are set:
 * choice questions `options` and `correctOptionIds`; TRUE_FALSE `correctAnswer`; SHORT_ANSWER
 * `acceptedAnswers`; NUMERIC `numericAnswer` and `tolerance`.
 */
export interface StoredQuestion {
  id: string;
  type: QuestionType;
  prompt: string;
  options?: Array<{ id: string; text: string }>;
  correctOptionIds?: string[];
  correctAnswer?: boolean;
  acceptedAnswers?: string[];
  numericAnswer?: number;
  tolerance?: number;
  points: number;
  explanation?: string | null;
  order: number;
}

/** An answer as the student sent it (stored with the attempt). */
export interface StoredAnswer {
  questionId: string;
  optionIds?: string[];
  value?: boolean | number;
  text?: string;
}

/** The grading of one question of an attempt: never the answer key. */
export interface QuestionResult {
  questionId: string;
  correct: boolean;
  pointsAwarded: number;
  points: number;
}

/**
 * The quiz of a QUIZ lesson. Its primary key is the lesson's id (one quiz per lesson), and the
 * composite key to the lesson cascades: deleting the lesson deletes the quiz and its attempts.
 * Questions are one JSON document, replaced as a whole by PUT /api/quiz/{id}.
 */
export const quizzes = pgTable(
  'quizzes',
  {
    institutionId: text('institution_id').notNull(),
    /** The QUIZ lesson's id. */
    id: text('id').primaryKey(),
    title: text('title').notNull(),
    description: text('description'),
    /** Percent, 0 to 100: an attempt passes at a percentage at or above it. */
    passingScore: real('passing_score').notNull(),
    /** null: unlimited. */
    maxAttempts: integer('max_attempts'),
    /** null: no time limit. */
    timeLimitMinutes: integer('time_limit_minutes'),
    shuffleQuestions: boolean('shuffle_questions').notNull().default(false),
    shuffleOptions: boolean('shuffle_options').notNull().default(false),
    questions: jsonb('questions').$type<StoredQuestion[]>().notNull(),
    updatedBy: text('updated_by').notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('quizzes_inst_id_uq').on(t.institutionId, t.id),
    foreignKey({ name: 'quizzes_lesson_fk', columns: [t.institutionId, t.id], foreignColumns: [lessons.institutionId, lessons.id] }).onDelete('cascade'),
  ],
);

/**
 * One attempt of a student at a quiz. Numbered per student and quiz from 1; the unique number and
 * the partial unique index (one IN_PROGRESS attempt per student and quiz) back up the enrollment
 * lock under which attempts are counted and created.
 */
export const quizAttempts = pgTable(
  'quiz_attempts',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    quizId: text('quiz_id').notNull(),
    enrollmentId: text('enrollment_id').notNull(),
    /** The student's CRM Contact id (the caller's person id). */
    studentId: text('student_id').notNull(),
    attemptNumber: integer('attempt_number').notNull(),
    status: text('status', { enum: ATTEMPT_STATUSES }).notNull(),
    startedAt: ts('started_at').notNull(),
    /** startedAt + the time limit the quiz had at the start; null: no limit. */
    deadlineAt: ts('deadline_at'),
    submittedAt: ts('submitted_at'),
    answers: jsonb('answers').$type<StoredAnswer[]>(),
    results: jsonb('results').$type<QuestionResult[]>(),
    score: real('score'),
    maxScore: real('max_score'),
    percentage: real('percentage'),
    passed: boolean('passed'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('quiz_attempts_inst_id_uq').on(t.institutionId, t.id),
    foreignKey({ name: 'quiz_attempts_quiz_fk', columns: [t.institutionId, t.quizId], foreignColumns: [quizzes.institutionId, quizzes.id] }).onDelete('cascade'),
    foreignKey({ name: 'quiz_attempts_enrollment_fk', columns: [t.institutionId, t.enrollmentId], foreignColumns: [enrollments.institutionId, enrollments.id] }).onDelete(
      'cascade',
    ),
    uniqueIndex('quiz_attempts_number_uq').on(t.institutionId, t.quizId, t.studentId, t.attemptNumber),
    uniqueIndex('quiz_attempts_open_uq')
      .on(t.institutionId, t.quizId, t.studentId)
      .where(sql`status = 'IN_PROGRESS'`),
    // The staff list: every attempt of a quiz, newest first.
    index('quiz_attempts_inst_quiz_started_idx').on(t.institutionId, t.quizId, t.startedAt.desc().nullsFirst(), t.id.desc().nullsFirst()),
  ],
);

export type Quiz = typeof quizzes.$inferSelect;
export type QuizAttempt = typeof quizAttempts.$inferSelect;
