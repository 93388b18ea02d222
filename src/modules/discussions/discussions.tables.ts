import { boolean, foreignKey, index, pgTable, text, timestamp, unique } from 'drizzle-orm/pg-core';
import { courses, lessons } from '../courses/courses.tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * A discussion thread of a course, or of one of its lessons (`lesson_id`). Text is stored as
 * given and served as text. Deleting is soft (`deleted_at`): the thread keeps its place and its
 * replies, and its title, body and author are no longer served. Moderators pin, lock (no new
 * replies) and hide (only staff see it).
 */
export const discussionThreads = pgTable(
  'discussion_threads',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    courseId: text('course_id').notNull(),
    lessonId: text('lesson_id'),
    authorId: text('author_id').notNull(),
    /** The author's role when posting (the generic name label: `Student <id>` or `Staff <id>`). */
    authorRole: text('author_role').notNull(),
    title: text('title').notNull(),
    body: text('body').notNull(),
    isPinned: boolean('is_pinned').notNull().default(false),
    isLocked: boolean('is_locked').notNull().default(false),
    isHidden: boolean('is_hidden').notNull().default(false),
    /** The thread's creation or its latest reply: the list order after pinning. */
    lastActivityAt: ts('last_activity_at').notNull(),
    editedAt: ts('edited_at'),
    deletedAt: ts('deleted_at'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('discussion_threads_inst_id_uq').on(t.institutionId, t.id),
    foreignKey({ name: 'discussion_threads_course_fk', columns: [t.institutionId, t.courseId], foreignColumns: [courses.institutionId, courses.id] }).onDelete('cascade'),
    foreignKey({ name: 'discussion_threads_lesson_fk', columns: [t.institutionId, t.lessonId], foreignColumns: [lessons.institutionId, lessons.id] }).onDelete('cascade'),
    index('discussion_threads_course_idx').on(t.institutionId, t.courseId, t.isPinned, t.lastActivityAt),
    index('discussion_threads_lesson_idx').on(t.institutionId, t.lessonId, t.isPinned, t.lastActivityAt),
  ],
);

/** A reply in a thread; `parent_reply_id` nests it under another reply of the same thread. Soft-deleted and hidden like threads. */
export const discussionReplies = pgTable(
  'discussion_replies',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    threadId: text('thread_id').notNull(),
    parentReplyId: text('parent_reply_id'),
    authorId: text('author_id').notNull(),
    authorRole: text('author_role').notNull(),
    body: text('body').notNull(),
    isHidden: boolean('is_hidden').notNull().default(false),
    editedAt: ts('edited_at'),
    deletedAt: ts('deleted_at'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('discussion_replies_inst_id_uq').on(t.institutionId, t.id),
    foreignKey({ name: 'discussion_replies_thread_fk', columns: [t.institutionId, t.threadId], foreignColumns: [discussionThreads.institutionId, discussionThreads.id] }).onDelete(
      'cascade',
    ),
    foreignKey({ name: 'discussion_replies_parent_fk', columns: [t.institutionId, t.parentReplyId], foreignColumns: [t.institutionId, t.id] }).onDelete('cascade'),
    index('discussion_replies_thread_idx').on(t.institutionId, t.threadId, t.createdAt),
  ],
);

export type DiscussionThread = typeof discussionThreads.$inferSelect;
export type DiscussionReply = typeof discussionReplies.$inferSelect;
