import { sql } from 'drizzle-orm';
import { check, foreignKey, index, integer, pgTable, text, timestamp, unique } from 'drizzle-orm/pg-core';
import { courses } from '../courses/courses.tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** A student's review of a course: one per student and course (a second POST updates it). */
export const courseReviews = pgTable(
  'course_reviews',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    courseId: text('course_id').notNull(),
    studentId: text('student_id').notNull(),
    rating: integer('rating').notNull(),
    comment: text('comment'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('course_reviews_inst_id_uq').on(t.institutionId, t.id),
    unique('course_reviews_student_uq').on(t.institutionId, t.courseId, t.studentId),
    foreignKey({ name: 'course_reviews_course_fk', columns: [t.institutionId, t.courseId], foreignColumns: [courses.institutionId, courses.id] }).onDelete('cascade'),
    index('course_reviews_course_idx').on(t.institutionId, t.courseId, t.updatedAt),
    check('course_reviews_rating_ck', sql`${t.rating} between 1 and 5`),
  ],
);

export type CourseReview = typeof courseReviews.$inferSelect;
