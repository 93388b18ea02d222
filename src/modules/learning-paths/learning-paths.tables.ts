import { foreignKey, index, integer, pgTable, text, timestamp, unique } from 'drizzle-orm/pg-core';
import { courses } from '../courses/courses.tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const PATH_STATUSES = ['DRAFT', 'PUBLISHED', 'ARCHIVED'] as const;

/** A learning path: an ordered list of courses taken one after another. */
export const learningPaths = pgTable(
  'learning_paths',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    title: text('title').notNull(),
    description: text('description'),
    status: text('status', { enum: PATH_STATUSES }).notNull().default('DRAFT'),
    createdBy: text('created_by').notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [unique('learning_paths_inst_id_uq').on(t.institutionId, t.id), index('learning_paths_inst_status_idx').on(t.institutionId, t.status, t.createdAt)],
);

/** The courses of a path, by position (0-based, dense). */
export const learningPathCourses = pgTable(
  'learning_path_courses',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    pathId: text('path_id').notNull(),
    courseId: text('course_id').notNull(),
    position: integer('position').notNull(),
  },
  (t) => [
    unique('learning_path_courses_inst_id_uq').on(t.institutionId, t.id),
    unique('learning_path_courses_course_uq').on(t.institutionId, t.pathId, t.courseId),
    foreignKey({ name: 'learning_path_courses_path_fk', columns: [t.institutionId, t.pathId], foreignColumns: [learningPaths.institutionId, learningPaths.id] }).onDelete(
      'cascade',
    ),
    foreignKey({ name: 'learning_path_courses_course_fk', columns: [t.institutionId, t.courseId], foreignColumns: [courses.institutionId, courses.id] }).onDelete('cascade'),
  ],
);

/** A student on a path. */
export const learningPathEnrollments = pgTable(
  'learning_path_enrollments',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    pathId: text('path_id').notNull(),
    studentId: text('student_id').notNull(),
    enrolledAt: ts('enrolled_at').notNull(),
  },
  (t) => [
    unique('learning_path_enrollments_inst_id_uq').on(t.institutionId, t.id),
    unique('learning_path_enrollments_student_uq').on(t.institutionId, t.pathId, t.studentId),
    foreignKey({ name: 'learning_path_enrollments_path_fk', columns: [t.institutionId, t.pathId], foreignColumns: [learningPaths.institutionId, learningPaths.id] }).onDelete(
      'cascade',
    ),
  ],
);

export type LearningPath = typeof learningPaths.$inferSelect;
