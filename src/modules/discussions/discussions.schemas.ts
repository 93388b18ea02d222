import { z } from 'zod';
import { paginationFields, paginationFieldsFor } from '../../platform/http/pagination.js';
import { pageMetaSchema } from '../../platform/http/envelope.js';

export const DISCUSSION_TITLE_MAX = 200;
export const DISCUSSION_BODY_MAX = 20_000;

const title = z.string().trim().min(1, 'required').max(DISCUSSION_TITLE_MAX);
/** Stored exactly as given (not trimmed, never rendered as HTML); it must not be blank. */
const body = z
  .string()
  .min(1, 'required')
  .max(DISCUSSION_BODY_MAX)
  .refine((s) => s.trim().length > 0, 'must not be blank');

export const idParams = z.object({ id: z.string().min(1).max(200) });
export const listQuery = z.object(paginationFields);
/** The replies of a thread come 50 a page unless perPage or limit says otherwise. */
export const REPLIES_PAGE_SIZE = 50;
export const repliesQuery = z.object(paginationFieldsFor(REPLIES_PAGE_SIZE));

export const createThreadBody = z.strictObject({ title, body });
export const updateThreadBody = z
  .strictObject({ title: title.optional(), body: body.optional() })
  .refine((b) => b.title !== undefined || b.body !== undefined, 'give title or body');
export const createReplyBody = z.strictObject({
  body,
  parentReplyId: z.string().min(1).max(200).optional().describe('a reply of the same discussion to answer (nested under it)'),
});
export const updateReplyBody = z.strictObject({ body });
export const moderateThreadBody = z
  .strictObject({ isPinned: z.boolean().optional(), isLocked: z.boolean().optional(), isHidden: z.boolean().optional() })
  .refine((b) => b.isPinned !== undefined || b.isLocked !== undefined || b.isHidden !== undefined, 'give isPinned, isLocked or isHidden');
export const moderateReplyBody = z.strictObject({ isHidden: z.boolean() });

export type CreateThread = z.infer<typeof createThreadBody>;
export type UpdateThread = z.infer<typeof updateThreadBody>;
export type CreateReply = z.infer<typeof createReplyBody>;
export type ModerateThread = z.infer<typeof moderateThreadBody>;

const author = {
  authorId: z.string().nullable().describe('null once deleted (or hidden, for students)'),
  authorName: z.string().nullable().describe('from the CRM; `Student <id>` or `Staff <id>` when the CRM does not know the person'),
  authorRole: z.string().nullable(),
};

export const threadSchema = z.object({
  id: z.string(),
  courseId: z.string(),
  lessonId: z.string().nullable(),
  title: z.string().nullable().describe('null once deleted'),
  body: z.string().nullable().describe('plain text as written, not HTML; null once deleted'),
  ...author,
  isPinned: z.boolean(),
  isLocked: z.boolean().describe('no new replies'),
  isHidden: z.boolean().describe('hidden by a moderator: only staff see it'),
  isDeleted: z.boolean(),
  replyCount: z.number().int().describe('replies the caller can read (not deleted; for students not hidden)'),
  lastActivityAt: z.string(),
  editedAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const replySchema = z.object({
  id: z.string(),
  threadId: z.string(),
  parentReplyId: z.string().nullable(),
  body: z.string().nullable().describe('plain text as written; null once deleted, or hidden (for students)'),
  ...author,
  isHidden: z.boolean(),
  isDeleted: z.boolean(),
  editedAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const threadDetailEnvelope = z.object({
  data: z.object({ thread: threadSchema, replies: z.array(replySchema).describe('oldest first; the page of `meta`') }),
  error: z.null(),
  meta: pageMetaSchema,
});
