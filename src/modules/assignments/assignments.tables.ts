import { boolean, foreignKey, index, integer, jsonb, pgTable, real, text, timestamp, unique } from 'drizzle-orm/pg-core';
import { courses, lessons } from '../courses/courses.tables.js';
import { enrollments } from '../enrollments/enrollments.tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * An assignment: its id is the id of its ASSIGNMENT lesson (spec 4.9: `/api/assignments/{id}`
 * takes the lesson id), so it lives and dies with the lesson.
 */
export const assignments = pgTable(
  'assignments',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    courseId: text('course_id').notNull(),
    title: text('title').notNull(),
    instructions: text('instructions').notNull(),
    maxScore: real('max_score').notNull(),
    passingScore: real('passing_score'),
    dueDate: ts('due_date').notNull(),
    allowLate: boolean('allow_late').notNull().default(false),
    isPeerAssessed: boolean('is_peer_assessed').notNull().default(false),
    /** N: reviewers per submission; allocation starts once N + 1 students have submitted. */
    peerReviewCount: integer('peer_review_count').notNull().default(0),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('assignments_inst_id_uq').on(t.institutionId, t.id),
    foreignKey({ name: 'assignments_lesson_fk', columns: [t.institutionId, t.id], foreignColumns: [lessons.institutionId, lessons.id] }).onDelete('cascade'),
    foreignKey({ name: 'assignments_course_fk', columns: [t.institutionId, t.courseId], foreignColumns: [courses.institutionId, courses.id] }).onDelete('cascade'),
    index('assignments_inst_due_idx').on(t.institutionId, t.dueDate),
  ],
);

/** The rubric of an assignment (at most one); its criteria are `rubric_criteria`. */
export const rubrics = pgTable(
  'rubrics',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    assignmentId: text('assignment_id').notNull(),
    title: text('title').notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('rubrics_inst_id_uq').on(t.institutionId, t.id),
    unique('rubrics_assignment_uq').on(t.institutionId, t.assignmentId),
    foreignKey({ name: 'rubrics_assignment_fk', columns: [t.institutionId, t.assignmentId], foreignColumns: [assignments.institutionId, assignments.id] }).onDelete('cascade'),
  ],
);

export const rubricCriteria = pgTable(
  'rubric_criteria',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    rubricId: text('rubric_id').notNull(),
    title: text('title').notNull(),
    description: text('description').notNull(),
    maxPoints: real('max_points').notNull(),
    order: integer('order').notNull(),
  },
  (t) => [
    unique('rubric_criteria_inst_id_uq').on(t.institutionId, t.id),
    foreignKey({ name: 'rubric_criteria_rubric_fk', columns: [t.institutionId, t.rubricId], foreignColumns: [rubrics.institutionId, rubrics.id] }).onDelete('cascade'),
    index('rubric_criteria_rubric_idx').on(t.institutionId, t.rubricId, t.order),
  ],
);

export const SUBMISSION_STATUSES = ['SUBMITTED', 'GRADED'] as const;

/** A stored file of a submission, as submitted (the name is the author's: never shown to reviewers). */
export interface SubmissionFile {
  fileId: string;
  key: string;
  name: string;
  contentType: string;
  size: number;
}

/**
 * A student's submission (one per student and assignment; resubmitting replaces it until it is
 * graded). `score` is the grade that counts: the instructor's when there is one (spec 4.4 rule
 * 6), else the peer average once every assigned review is complete.
 */
export const submissions = pgTable(
  'assignment_submissions',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    assignmentId: text('assignment_id').notNull(),
    enrollmentId: text('enrollment_id').notNull(),
    studentId: text('student_id').notNull(),
    textContent: text('text_content'),
    files: jsonb('files').$type<SubmissionFile[]>().notNull().default([]),
    isLate: boolean('is_late').notNull(),
    status: text('status', { enum: SUBMISSION_STATUSES }).notNull().default('SUBMITTED'),
    score: real('score'),
    instructorScore: real('instructor_score'),
    feedback: text('feedback'),
    gradedBy: text('graded_by'),
    gradedAt: ts('graded_at'),
    peerScoreAverage: real('peer_score_average'),
    peerReviewsCompleted: integer('peer_reviews_completed').notNull().default(0),
    /** Set once, when the last assigned review completed and no instructor grade existed. */
    peerFinalisedAt: ts('peer_finalised_at'),
    submittedAt: ts('submitted_at').notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('assignment_submissions_inst_id_uq').on(t.institutionId, t.id),
    unique('assignment_submissions_student_uq').on(t.institutionId, t.assignmentId, t.studentId),
    foreignKey({ name: 'assignment_submissions_assignment_fk', columns: [t.institutionId, t.assignmentId], foreignColumns: [assignments.institutionId, assignments.id] }).onDelete(
      'cascade',
    ),
    foreignKey({ name: 'assignment_submissions_enrollment_fk', columns: [t.institutionId, t.enrollmentId], foreignColumns: [enrollments.institutionId, enrollments.id] }).onDelete(
      'cascade',
    ),
    index('assignment_submissions_assignment_idx').on(t.institutionId, t.assignmentId, t.submittedAt),
  ],
);

export const PEER_REVIEW_STATUSES = ['PENDING', 'SUBMITTED', 'FLAGGED'] as const;
export type PeerReviewStatus = (typeof PEER_REVIEW_STATUSES)[number];

/** A reviewer's review of one submission (spec 2.6, states 3.2). */
export const peerReviews = pgTable(
  'peer_reviews',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    assignmentId: text('assignment_id').notNull(),
    submissionId: text('submission_id').notNull(),
    reviewerId: text('reviewer_id').notNull(),
    status: text('status', { enum: PEER_REVIEW_STATUSES }).notNull().default('PENDING'),
    score: real('score'),
    rubricScores: jsonb('rubric_scores').$type<Record<string, number>>().notNull().default({}),
    feedback: text('feedback'),
    flagReason: text('flag_reason'),
    assignedAt: ts('assigned_at').notNull(),
    submittedAt: ts('submitted_at'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('peer_reviews_inst_id_uq').on(t.institutionId, t.id),
    unique('peer_reviews_submission_reviewer_uq').on(t.institutionId, t.submissionId, t.reviewerId),
    foreignKey({ name: 'peer_reviews_submission_fk', columns: [t.institutionId, t.submissionId], foreignColumns: [submissions.institutionId, submissions.id] }).onDelete('cascade'),
    foreignKey({ name: 'peer_reviews_assignment_fk', columns: [t.institutionId, t.assignmentId], foreignColumns: [assignments.institutionId, assignments.id] }).onDelete('cascade'),
    index('peer_reviews_reviewer_idx').on(t.institutionId, t.reviewerId, t.status, t.assignedAt),
    index('peer_reviews_assignment_idx').on(t.institutionId, t.assignmentId),
  ],
);

export type Assignment = typeof assignments.$inferSelect;
export type Rubric = typeof rubrics.$inferSelect;
export type RubricCriterion = typeof rubricCriteria.$inferSelect;
export type Submission = typeof submissions.$inferSelect;
export type PeerReview = typeof peerReviews.$inferSelect;
