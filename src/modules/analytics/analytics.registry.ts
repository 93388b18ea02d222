/**
 * The entity registry of analytics reports (spec 4.9 `GET /api/analytics/entities`): what can be
 * reported on, as data. Each entity names its table, its fields (type, and whether a field may be
 * filtered on, grouped by or aggregated) and the joins it allows. A report definition can only
 * name what is here: the compiler (analytics.compiler.ts) turns names into the SQL expressions
 * below, so no text of a definition ever becomes SQL.
 *
 * What is left out on purpose: note content (notes are private to their author, spec 4.3: staff
 * may count notes per lesson or course, never read or attribute them), answers, submission text
 * and files, quiz answer keys, certificate verification codes.
 */
import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn, PgTable } from 'drizzle-orm/pg-core';
import { COURSE_STATUSES, LESSON_TYPES, courses, lessons } from '../courses/courses.tables.js';
import { ENROLLMENT_STATUSES, enrollments, lessonProgress } from '../enrollments/enrollments.tables.js';
import { ATTEMPT_STATUSES, quizAttempts } from '../quizzes/quizzes.tables.js';
import { SUBMISSION_STATUSES, submissions } from '../assignments/assignments.tables.js';
import { certificates } from '../certificates/certificates.tables.js';
import { ATTENDANCE_MARKS, LIVE_SESSION_STATUSES, liveSessionParticipants, liveSessions } from '../live-sessions/live-sessions.tables.js';
import { attendedBy } from '../live-sessions/live-sessions.attendance-rule.js';
import { lessonNotes } from '../notes/notes.tables.js';
import { complianceRecords, complianceTrainings } from '../compliance/compliance.tables.js';
import { complianceStatusSql } from '../compliance/compliance.status.js';

export const FIELD_TYPES = ['string', 'enum', 'integer', 'number', 'boolean', 'timestamp'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** What an expression may depend on besides the tables: the current time (derived statuses). */
export interface ExprScope {
  now: Date;
}

/** The SQL type of a field's values, for keyset comparisons (`value::type`). */
export type SqlType = 'text' | 'integer' | 'real' | 'double precision' | 'boolean' | 'timestamptz';

export interface FieldDef {
  name: string;
  label: string;
  type: FieldType;
  /** The allowed values of an enum field. */
  values?: readonly string[];
  filterable: boolean;
  groupable: boolean;
  /** sum and avg (numbers), min and max (numbers and timestamps). */
  aggregatable: boolean;
  sqlType: SqlType;
  expr: (scope: ExprScope) => SQL | AnyPgColumn;
  /** Joins this field needs besides its own source (derived fields). */
  requires?: readonly string[];
  description?: string;
}

export interface JoinDef {
  /** How fields of the join are named in a definition: `<name>.<field>`. */
  name: string;
  label: string;
  table: PgTable;
  /** Inner joins follow foreign keys (always one row); left joins may find none. */
  kind: 'inner' | 'left';
  /** The join condition, always on the institution too. */
  on: SQL;
  /** Joins that must come first (a course reached through a lesson). */
  requires?: readonly string[];
  fields: readonly FieldDef[];
}

export interface EntityDef {
  name: string;
  label: string;
  description: string;
  table: PgTable & { institutionId: AnyPgColumn; id: AnyPgColumn };
  fields: readonly FieldDef[];
  joins: readonly JoinDef[];
  /** The timestamp field a date range applies to unless it names another. */
  dateField: string;
  /** Rows may only be counted (grouped or totalled), never listed: notes. */
  aggregateOnly?: boolean;
}

// ── field builders ─────────────────────────────────────────────────────────────

type Opts = Partial<Pick<FieldDef, 'filterable' | 'groupable' | 'aggregatable' | 'description' | 'requires'>>;

const col = (c: AnyPgColumn) => () => c;

/** An id or other text key: filter and group, never aggregate. */
const id = (name: string, label: string, c: AnyPgColumn, o: Opts = {}): FieldDef => ({
  name,
  label,
  type: 'string',
  sqlType: 'text',
  filterable: true,
  groupable: true,
  aggregatable: false,
  expr: col(c),
  ...o,
});
const text = id;
const enumField = (name: string, label: string, values: readonly string[], expr: FieldDef['expr'], o: Opts = {}): FieldDef => ({
  name,
  label,
  type: 'enum',
  values,
  sqlType: 'text',
  filterable: true,
  groupable: true,
  aggregatable: false,
  expr,
  ...o,
});
const int = (name: string, label: string, c: AnyPgColumn, o: Opts = {}): FieldDef => ({
  name,
  label,
  type: 'integer',
  sqlType: 'integer',
  filterable: true,
  groupable: true,
  aggregatable: true,
  expr: col(c),
  ...o,
});
/** A `real` column (scores, percentages). */
const num = (name: string, label: string, c: AnyPgColumn, o: Opts = {}): FieldDef => ({
  name,
  label,
  type: 'number',
  sqlType: 'real',
  filterable: true,
  groupable: false,
  aggregatable: true,
  expr: col(c),
  ...o,
});
const bool = (name: string, label: string, expr: FieldDef['expr'], o: Opts = {}): FieldDef => ({
  name,
  label,
  type: 'boolean',
  sqlType: 'boolean',
  filterable: true,
  groupable: true,
  aggregatable: false,
  expr,
  ...o,
});
/** Timestamps group by day, week, month or year (in the institution's time zone). */
const time = (name: string, label: string, c: AnyPgColumn, o: Opts = {}): FieldDef => ({
  name,
  label,
  type: 'timestamp',
  sqlType: 'timestamptz',
  filterable: true,
  groupable: true,
  aggregatable: true,
  expr: col(c),
  ...o,
});

// ── join targets ───────────────────────────────────────────────────────────────

const courseFields: FieldDef[] = [
  id('id', 'Course id', courses.id),
  text('title', 'Course title', courses.title),
  enumField('status', 'Course status', COURSE_STATUSES, col(courses.status)),
  id('ownerId', 'Course owner id', courses.ownerId),
  id('categoryId', 'Course category id', courses.categoryId),
  time('createdAt', 'Course created at', courses.createdAt),
  time('publishedAt', 'Course published at', courses.publishedAt),
];

const lessonFields: FieldDef[] = [
  id('id', 'Lesson id', lessons.id),
  text('title', 'Lesson title', lessons.title),
  enumField('type', 'Lesson type', LESSON_TYPES, col(lessons.type)),
  int('order', 'Lesson order', lessons.order, { aggregatable: false }),
  id('courseId', 'Course id', lessons.courseId),
];

const sameTenant = (fk: AnyPgColumn, childInstitution: AnyPgColumn, parent: { id: AnyPgColumn; institutionId: AnyPgColumn }) =>
  and(eq(parent.institutionId, childInstitution), eq(parent.id, fk)) as SQL;

const courseJoin = (fk: AnyPgColumn, childInstitution: AnyPgColumn, requires?: readonly string[]): JoinDef => ({
  name: 'course',
  label: 'Course',
  table: courses,
  kind: 'inner',
  on: sameTenant(fk, childInstitution, courses),
  requires,
  fields: courseFields,
});

const lessonJoin = (fk: AnyPgColumn, childInstitution: AnyPgColumn): JoinDef => ({
  name: 'lesson',
  label: 'Lesson',
  table: lessons,
  kind: 'inner',
  on: sameTenant(fk, childInstitution, lessons),
  fields: lessonFields,
});

// ── entities ───────────────────────────────────────────────────────────────────

/** Attended a live session: it is COMPLETED, and the person was marked PRESENT or, unmarked, joined. */
const attendedExpr = () => sql`(${liveSessions.status} = 'COMPLETED' and ${attendedBy(liveSessionParticipants)})`;

/** The compliance record's status as the compliance module derives it (WAIVED, COMPLETED, OVERDUE, ASSIGNED). */
const complianceColumns = {
  waivedAt: complianceRecords.waivedAt,
  completedAt: complianceRecords.completedAt,
  assignedAt: complianceRecords.assignedAt,
  dueAt: complianceRecords.dueAt,
  enrollmentCompletedAt: enrollments.completedAt,
};
const complianceStatusExpr = (scope: ExprScope) => complianceStatusSql(complianceColumns, scope.now);

export const ENTITIES: readonly EntityDef[] = [
  {
    name: 'enrollments',
    label: 'Enrollments',
    description: 'One row per student and course: status, progress, final score and dates.',
    table: enrollments,
    dateField: 'enrolledAt',
    fields: [
      id('id', 'Enrollment id', enrollments.id),
      id('courseId', 'Course id', enrollments.courseId),
      id('studentId', 'Student id', enrollments.studentId),
      enumField('status', 'Status', ENROLLMENT_STATUSES, col(enrollments.status)),
      int('progress', 'Progress (%)', enrollments.progress),
      num('finalScore', 'Final score', enrollments.finalScore),
      id('enrolledBy', 'Enrolled by', enrollments.enrolledBy),
      time('enrolledAt', 'Enrolled at', enrollments.enrolledAt),
      time('completedAt', 'Completed at', enrollments.completedAt),
      time('droppedAt', 'Dropped at', enrollments.droppedAt),
      time('lastAccessedAt', 'Last accessed at', enrollments.lastAccessedAt),
    ],
    joins: [courseJoin(enrollments.courseId, enrollments.institutionId)],
  },
  {
    name: 'lessonProgress',
    label: 'Lesson progress',
    description: 'One row per enrollment and lesson the student opened: completion, progress, position and score.',
    table: lessonProgress,
    dateField: 'updatedAt',
    fields: [
      id('id', 'Progress id', lessonProgress.id),
      id('enrollmentId', 'Enrollment id', lessonProgress.enrollmentId),
      id('lessonId', 'Lesson id', lessonProgress.lessonId),
      id('studentId', 'Student id', lessonProgress.studentId),
      bool('completed', 'Completed', col(lessonProgress.completed)),
      time('completedAt', 'Completed at', lessonProgress.completedAt),
      int('progressPercent', 'Progress (%)', lessonProgress.progressPercent),
      int('positionSeconds', 'Position (s)', lessonProgress.positionSeconds, { groupable: false }),
      num('score', 'Score', lessonProgress.score),
      time('updatedAt', 'Updated at', lessonProgress.updatedAt),
    ],
    joins: [lessonJoin(lessonProgress.lessonId, lessonProgress.institutionId), courseJoin(lessons.courseId, lessons.institutionId, ['lesson'])],
  },
  {
    name: 'quizAttempts',
    label: 'Quiz attempts',
    description: 'One row per quiz attempt: status, score, percentage, pass. Answers are not reportable.',
    table: quizAttempts,
    dateField: 'startedAt',
    fields: [
      id('id', 'Attempt id', quizAttempts.id),
      id('quizId', 'Quiz (lesson) id', quizAttempts.quizId),
      id('studentId', 'Student id', quizAttempts.studentId),
      int('attemptNumber', 'Attempt number', quizAttempts.attemptNumber),
      enumField('status', 'Status', ATTEMPT_STATUSES, col(quizAttempts.status)),
      time('startedAt', 'Started at', quizAttempts.startedAt),
      time('submittedAt', 'Submitted at', quizAttempts.submittedAt),
      num('score', 'Score', quizAttempts.score),
      num('maxScore', 'Maximum score', quizAttempts.maxScore),
      num('percentage', 'Percentage', quizAttempts.percentage),
      bool('passed', 'Passed', col(quizAttempts.passed)),
    ],
    joins: [lessonJoin(quizAttempts.quizId, quizAttempts.institutionId), courseJoin(lessons.courseId, lessons.institutionId, ['lesson'])],
  },
  {
    name: 'submissions',
    label: 'Assignment submissions',
    description: 'One row per submission: lateness, status and scores. Text and files are not reportable.',
    table: submissions,
    dateField: 'submittedAt',
    fields: [
      id('id', 'Submission id', submissions.id),
      id('assignmentId', 'Assignment (lesson) id', submissions.assignmentId),
      id('studentId', 'Student id', submissions.studentId),
      enumField('status', 'Status', SUBMISSION_STATUSES, col(submissions.status)),
      bool('isLate', 'Late', col(submissions.isLate)),
      num('score', 'Score', submissions.score),
      num('instructorScore', 'Instructor score', submissions.instructorScore),
      num('peerScoreAverage', 'Peer score average', submissions.peerScoreAverage),
      id('gradedBy', 'Graded by', submissions.gradedBy),
      time('submittedAt', 'Submitted at', submissions.submittedAt),
      time('gradedAt', 'Graded at', submissions.gradedAt),
    ],
    joins: [lessonJoin(submissions.assignmentId, submissions.institutionId), courseJoin(lessons.courseId, lessons.institutionId, ['lesson'])],
  },
  {
    name: 'certificates',
    label: 'Certificates',
    description: 'One row per certificate issued. Verification codes are not reportable.',
    table: certificates,
    dateField: 'issuedAt',
    fields: [
      id('id', 'Certificate id', certificates.id),
      id('courseId', 'Course id', certificates.courseId),
      id('studentId', 'Student id', certificates.studentId),
      text('certificateNumber', 'Certificate number', certificates.certificateNumber, { groupable: false }),
      num('finalScore', 'Final score', certificates.finalScore),
      time('issuedAt', 'Issued at', certificates.issuedAt),
      time('expiresAt', 'Expires at', certificates.expiresAt),
    ],
    joins: [courseJoin(certificates.courseId, certificates.institutionId)],
  },
  {
    name: 'liveAttendance',
    label: 'Live session attendance',
    description: 'One row per person registered for or joining a live session: registration, joins, marks and whether they attended.',
    table: liveSessionParticipants,
    dateField: 'firstJoinedAt',
    fields: [
      id('id', 'Participant id', liveSessionParticipants.id),
      id('sessionId', 'Live session id', liveSessionParticipants.sessionId),
      id('personId', 'Person id', liveSessionParticipants.personId),
      time('registeredAt', 'Registered at', liveSessionParticipants.registeredAt),
      time('firstJoinedAt', 'First joined at', liveSessionParticipants.firstJoinedAt),
      time('lastJoinedAt', 'Last joined at', liveSessionParticipants.lastJoinedAt),
      int('joinCount', 'Joins', liveSessionParticipants.joinCount),
      enumField('mark', 'Attendance mark', ATTENDANCE_MARKS, col(liveSessionParticipants.mark)),
      bool('attended', 'Attended', attendedExpr, {
        requires: ['session'],
        description: 'The session is COMPLETED and the person was marked PRESENT, or was not marked and joined at least once.',
      }),
    ],
    joins: [
      {
        name: 'session',
        label: 'Live session',
        table: liveSessions,
        kind: 'inner',
        on: sameTenant(liveSessionParticipants.sessionId, liveSessionParticipants.institutionId, liveSessions),
        fields: [
          id('id', 'Live session id', liveSessions.id),
          text('title', 'Live session title', liveSessions.title),
          enumField('status', 'Live session status', LIVE_SESSION_STATUSES, col(liveSessions.status)),
          time('scheduledAt', 'Scheduled at', liveSessions.scheduledAt),
          int('durationMinutes', 'Duration (min)', liveSessions.durationMinutes),
          id('hostId', 'Host id', liveSessions.hostId),
          id('courseId', 'Course id', liveSessions.courseId),
        ],
      },
      courseJoin(liveSessions.courseId, liveSessions.institutionId, ['session']),
    ],
  },
  {
    name: 'notes',
    label: 'Lesson notes (counts only)',
    description: 'Notes are private to their author (spec 4.3): they can only be counted, grouped by lesson, course or date. No content, no author, no listing of rows.',
    table: lessonNotes,
    dateField: 'createdAt',
    aggregateOnly: true,
    fields: [
      id('lessonId', 'Lesson id', lessonNotes.lessonId),
      bool('hasTimestamp', 'At a video time', () => sql`(${lessonNotes.timestampSeconds} is not null)`),
      time('createdAt', 'Created at', lessonNotes.createdAt, { aggregatable: false }),
    ],
    joins: [lessonJoin(lessonNotes.lessonId, lessonNotes.institutionId), courseJoin(lessons.courseId, lessons.institutionId, ['lesson'])],
  },
  {
    name: 'complianceRecords',
    label: 'Compliance records',
    description: 'One row per person, required training and cycle, with the status the compliance module derives (WAIVED, COMPLETED, OVERDUE, ASSIGNED).',
    table: complianceRecords,
    dateField: 'dueAt',
    fields: [
      id('id', 'Record id', complianceRecords.id),
      id('trainingId', 'Training id', complianceRecords.trainingId),
      id('personId', 'Person id', complianceRecords.personId),
      id('classId', 'CRM class id', complianceRecords.classId),
      id('sectionId', 'CRM section id', complianceRecords.sectionId),
      int('cycle', 'Cycle', complianceRecords.cycle),
      time('assignedAt', 'Assigned at', complianceRecords.assignedAt),
      time('dueAt', 'Due at', complianceRecords.dueAt),
      time('completedAt', 'Completed at', complianceRecords.completedAt),
      time('waivedAt', 'Waived at', complianceRecords.waivedAt),
      enumField('status', 'Status', ['WAIVED', 'COMPLETED', 'OVERDUE', 'ASSIGNED'], complianceStatusExpr, { requires: ['training', 'enrollment'] }),
    ],
    joins: [
      {
        name: 'training',
        label: 'Training',
        table: complianceTrainings,
        kind: 'inner',
        on: sameTenant(complianceRecords.trainingId, complianceRecords.institutionId, complianceTrainings),
        fields: [
          id('id', 'Training id', complianceTrainings.id),
          text('title', 'Training title', complianceTrainings.title),
          time('dueDate', 'Training due date', complianceTrainings.dueDate),
          int('recurrenceMonths', 'Recurrence (months)', complianceTrainings.recurrenceMonths),
          id('courseId', 'Course id', complianceTrainings.courseId),
        ],
      },
      {
        // The person's enrollment in the training's course (if any): its completion completes the record.
        name: 'enrollment',
        label: 'Enrollment',
        table: enrollments,
        kind: 'left',
        requires: ['training'],
        on: and(
          eq(enrollments.institutionId, complianceRecords.institutionId),
          eq(enrollments.courseId, complianceTrainings.courseId),
          eq(enrollments.studentId, complianceRecords.personId),
        ) as SQL,
        fields: [
          enumField('status', 'Enrollment status', ENROLLMENT_STATUSES, col(enrollments.status)),
          int('progress', 'Enrollment progress (%)', enrollments.progress),
          time('completedAt', 'Enrollment completed at', enrollments.completedAt),
        ],
      },
      courseJoin(complianceTrainings.courseId, complianceTrainings.institutionId, ['training']),
    ],
  },
  {
    name: 'courses',
    label: 'Courses',
    description: 'One row per course: status, owner, category and dates.',
    table: courses,
    dateField: 'createdAt',
    fields: [
      ...courseFields,
      int('maxEnrollments', 'Maximum enrollments', courses.maxEnrollments),
      int('estimatedDuration', 'Estimated duration', courses.estimatedDuration),
      int('passingScore', 'Passing score', courses.passingScore),
      bool('certificateEnabled', 'Certificates enabled', col(courses.certificateEnabled)),
    ],
    joins: [],
  },
];

const byName = new Map(ENTITIES.map((e) => [e.name, e]));

export const entityOf = (name: string): EntityDef | undefined => byName.get(name);

/** The registry as `GET /api/analytics/entities` shows it. */
export function registryDto() {
  const fieldDto = (f: FieldDef) => ({
    name: f.name,
    label: f.label,
    type: f.type,
    values: f.values ? [...f.values] : null,
    filterable: f.filterable,
    groupable: f.groupable,
    aggregatable: f.aggregatable,
    description: f.description ?? null,
  });
  return ENTITIES.map((e) => ({
    name: e.name,
    label: e.label,
    description: e.description,
    dateField: e.dateField,
    aggregateOnly: e.aggregateOnly ?? false,
    fields: e.fields.map(fieldDto),
    joins: e.joins.map((j) => ({ name: j.name, label: j.label, fields: j.fields.map((f) => ({ ...fieldDto(f), name: `${j.name}.${f.name}` })) })),
  }));
}
