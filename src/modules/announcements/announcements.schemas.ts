import { z } from 'zod';
import { paginationFields } from '../../platform/http/pagination.js';
import { ANNOUNCEMENT_TARGETS } from './announcements.tables.js';

export const ANNOUNCEMENT_TITLE_MAX = 200;
export const ANNOUNCEMENT_BODY_MAX = 20_000;
/** The announcement text carried in the notification (`{{message}}` of COURSE_ANNOUNCEMENT). */
export const ANNOUNCEMENT_MESSAGE_PREVIEW = 500;

const title = z.string().trim().min(1, 'required').max(ANNOUNCEMENT_TITLE_MAX);
/** Stored exactly as given (not trimmed, never rendered as HTML); it must not be blank. */
const body = z
  .string()
  .min(1, 'required')
  .max(ANNOUNCEMENT_BODY_MAX)
  .refine((s) => s.trim().length > 0, 'must not be blank');
const crmIds = z.array(z.string().trim().min(1).max(200)).max(50);

export const idParams = z.object({ id: z.string().min(1).max(200) });
export const listQuery = z.object(paginationFields);

export const createAnnouncementBody = z.strictObject({
  title,
  body,
  isPinned: z.boolean().default(false),
  classIds: crmIds.optional().describe('CRM class ids: every student of their sections'),
  sectionIds: crmIds.optional().describe('CRM section ids'),
});
export type CreateAnnouncement = z.infer<typeof createAnnouncementBody>;

export const updateAnnouncementBody = z
  .strictObject({ title: title.optional(), body: body.optional(), isPinned: z.boolean().optional() })
  .refine((b) => b.title !== undefined || b.body !== undefined || b.isPinned !== undefined, 'give title, body or isPinned');
export type UpdateAnnouncement = z.infer<typeof updateAnnouncementBody>;

export const announcementSchema = z.object({
  id: z.string(),
  courseId: z.string(),
  authorId: z.string(),
  authorName: z.string(),
  title: z.string(),
  body: z.string().describe('plain text as the author wrote it; not HTML'),
  isPinned: z.boolean(),
  target: z.object({
    type: z.enum(ANNOUNCEMENT_TARGETS).describe('COURSE: every enrolled student; CLASS_SECTION: the students of the classes and sections, resolved when posted'),
    classIds: z.array(z.string()),
    sectionIds: z.array(z.string()),
  }),
  recipientCount: z.number().int().describe('students notified when it was posted'),
  editedAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
