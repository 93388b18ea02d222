import { boolean, foreignKey, index, integer, jsonb, pgTable, text, timestamp, unique } from 'drizzle-orm/pg-core';
import { courses } from '../courses/courses.tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** COURSE: every enrolled student; CLASS_SECTION: the students of CRM classes and sections, resolved when posted. */
export const ANNOUNCEMENT_TARGETS = ['COURSE', 'CLASS_SECTION'] as const;
export type AnnouncementTarget = (typeof ANNOUNCEMENT_TARGETS)[number];

/** A course announcement (spec 4.9 `/api/courses/{id}/announcements`, class-targetable). */
export const announcements = pgTable(
  'announcements',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    courseId: text('course_id').notNull(),
    authorId: text('author_id').notNull(),
    title: text('title').notNull(),
    body: text('body').notNull(),
    isPinned: boolean('is_pinned').notNull().default(false),
    targetType: text('target_type', { enum: ANNOUNCEMENT_TARGETS }).notNull(),
    /** CRM class and section ids as given (CLASS_SECTION only). */
    classIds: jsonb('class_ids').$type<string[]>().notNull().default([]),
    sectionIds: jsonb('section_ids').$type<string[]>().notNull().default([]),
    /** Students notified when it was posted (ACTIVE enrollments among the targeted). */
    recipientCount: integer('recipient_count').notNull().default(0),
    editedAt: ts('edited_at'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('announcements_inst_id_uq').on(t.institutionId, t.id),
    foreignKey({ name: 'announcements_course_fk', columns: [t.institutionId, t.courseId], foreignColumns: [courses.institutionId, courses.id] }).onDelete('cascade'),
    index('announcements_course_idx').on(t.institutionId, t.courseId, t.isPinned, t.createdAt),
  ],
);

/**
 * The students a CLASS_SECTION announcement reached: the CRM roster of its classes and sections
 * when it was posted, intersected with the course's ACTIVE enrollments. Only they see it.
 */
export const announcementRecipients = pgTable(
  'announcement_recipients',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    announcementId: text('announcement_id').notNull(),
    studentId: text('student_id').notNull(),
  },
  (t) => [
    unique('announcement_recipients_inst_id_uq').on(t.institutionId, t.id),
    unique('announcement_recipients_uq').on(t.institutionId, t.announcementId, t.studentId),
    foreignKey({
      name: 'announcement_recipients_announcement_fk',
      columns: [t.institutionId, t.announcementId],
      foreignColumns: [announcements.institutionId, announcements.id],
    }).onDelete('cascade'),
    index('announcement_recipients_student_idx').on(t.institutionId, t.studentId, t.announcementId),
  ],
);

export type Announcement = typeof announcements.$inferSelect;
