import { and, asc, desc, eq, isNull, sql, type SQL } from 'drizzle-orm';
import { withTx, type ServiceContext } from '../../platform/context.js';
import { iso } from '../../platform/dto.js';
import { byId, inTenant } from '../../platform/db/tenancy.js';
import { conflict, notFound, validationError } from '../../platform/http/errors.js';
import { pageMeta, pageOffset, toPage } from '../../platform/http/pagination.js';
import { newId } from '../../platform/ids.js';
import { requireAccess, type CommunityAccess } from '../access/access.service.js';
import { audit, changes } from '../audit/audit.js';
import { displayNames } from '../institutions/display-names.js';
import { notify } from '../notifications/notify.js';
import { discussionReplies, discussionThreads, type DiscussionReply, type DiscussionThread } from './discussions.tables.js';
import { REPLIES_PAGE_SIZE, type CreateReply, type CreateThread, type ModerateThread, type UpdateThread } from './discussions.schemas.js';

type PageQuery = { page: number; perPage?: number; limit?: number };

// ── shaping ─────────────────────────────────────────────────────────────────

/** The generic label of a person the CRM does not name, by the role they posted with. */
const labelOf = (role: string) => (role === 'STUDENT' ? 'Student' : role === 'PARENT' ? 'Parent' : 'Staff');

/** Author names of the posts whose author is shown: one optional CRM lookup per distinct person. */
const authorNames = (ctx: ServiceContext, posts: Array<{ authorId: string; authorRole: string } | null>) =>
  displayNames(
    ctx,
    posts.filter((p) => p !== null).map((p) => ({ id: p.authorId, label: labelOf(p.authorRole) })),
  );

/** A deleted post keeps its place; its text and author are not served (to anyone). */
function threadDto(t: DiscussionThread, replyCount: number, names: Map<string, string>) {
  const gone = t.deletedAt !== null;
  return {
    id: t.id,
    courseId: t.courseId,
    lessonId: t.lessonId,
    title: gone ? null : t.title,
    body: gone ? null : t.body,
    authorId: gone ? null : t.authorId,
    authorName: gone ? null : (names.get(t.authorId) ?? `${labelOf(t.authorRole)} ${t.authorId}`),
    authorRole: gone ? null : t.authorRole,
    isPinned: t.isPinned,
    isLocked: t.isLocked,
    isHidden: t.isHidden,
    isDeleted: gone,
    replyCount,
    lastActivityAt: iso(t.lastActivityAt),
    editedAt: iso(t.editedAt),
    createdAt: iso(t.createdAt),
    updatedAt: iso(t.updatedAt),
  };
}

/** What of a reply a reader may see: deleted ones are placeholders for everyone, hidden ones for non-staff. */
const masked = (r: DiscussionReply, manager: boolean) => r.deletedAt !== null || (r.isHidden && !manager);

function replyDto(r: DiscussionReply, manager: boolean, names: Map<string, string>) {
  const hide = masked(r, manager);
  return {
    id: r.id,
    threadId: r.threadId,
    parentReplyId: r.parentReplyId,
    body: hide ? null : r.body,
    authorId: hide ? null : r.authorId,
    authorName: hide ? null : (names.get(r.authorId) ?? `${labelOf(r.authorRole)} ${r.authorId}`),
    authorRole: hide ? null : r.authorRole,
    isHidden: r.isHidden,
    isDeleted: r.deletedAt !== null,
    editedAt: iso(r.editedAt),
    createdAt: iso(r.createdAt),
    updatedAt: iso(r.updatedAt),
  };
}

/**
 * Replies of the outer thread row the reader can read (not deleted; for non-staff not hidden),
 * as a correlated subquery. Written with explicit table names: in a single-table select Drizzle
 * leaves the outer columns unqualified.
 */
const visibleReplyCount = (manager: boolean) =>
  sql<number>`(select count(*)::int from discussion_replies r where r.institution_id = "discussion_threads"."institution_id"
    and r.thread_id = "discussion_threads"."id" and r.deleted_at is null${manager ? sql`` : sql` and not r.is_hidden`})`;

async function replyCountOf(ctx: ServiceContext, threadId: string, manager: boolean): Promise<number> {
  const [{ n }] = await ctx.db
    .select({ n: sql<number>`count(*)::int` })
    .from(discussionReplies)
    .where(
      and(
        inTenant(ctx, discussionReplies),
        eq(discussionReplies.threadId, threadId),
        isNull(discussionReplies.deletedAt),
        manager ? undefined : eq(discussionReplies.isHidden, false),
      ),
    );
  return n;
}

async function oneThreadDto(ctx: ServiceContext, thread: DiscussionThread, manager: boolean) {
  const [count, names] = await Promise.all([replyCountOf(ctx, thread.id, manager), authorNames(ctx, [thread.deletedAt ? null : thread])]);
  return threadDto(thread, count, names);
}

// ── threads ─────────────────────────────────────────────────────────────────

/**
 * Threads of a course (every thread, lesson ones included) or of one lesson: pinned first,
 * then by latest activity. Staff see hidden threads; a deleted thread stays listed while it has
 * replies the reader can see (its text and author are gone), and drops out otherwise.
 */
async function listThreads(ctx: ServiceContext, access: CommunityAccess, lessonId: string | null, q: PageQuery) {
  const page = toPage(q);
  const count = visibleReplyCount(access.manager);
  const filters: SQL[] = [inTenant(ctx, discussionThreads), eq(discussionThreads.courseId, access.course.id)];
  if (lessonId) filters.push(eq(discussionThreads.lessonId, lessonId));
  if (!access.manager) filters.push(eq(discussionThreads.isHidden, false));
  filters.push(sql`(${discussionThreads.deletedAt} is null or ${count} > 0)`);
  const where = and(...filters);
  const [rows, [{ total }]] = await Promise.all([
    ctx.db
      .select({ thread: discussionThreads, replyCount: count })
      .from(discussionThreads)
      .where(where)
      .orderBy(desc(discussionThreads.isPinned), desc(discussionThreads.lastActivityAt), desc(discussionThreads.id))
      .limit(page.perPage)
      .offset(pageOffset(page)),
    ctx.db
      .select({ total: sql<number>`count(*)::int` })
      .from(discussionThreads)
      .where(where),
  ]);
  const names = await authorNames(
    ctx,
    rows.map((r) => (r.thread.deletedAt ? null : r.thread)),
  );
  return { rows: rows.map((r) => threadDto(r.thread, r.replyCount, names)), meta: pageMeta(page, total) };
}

/** GET /api/courses/{id}/discussions: staff, or students with an ACTIVE or COMPLETED enrollment. */
export async function listCourseThreads(ctx: ServiceContext, courseId: string, q: PageQuery) {
  return listThreads(ctx, await requireAccess(ctx, 'course.community', courseId), null, q);
}

/** GET /api/lessons/{id}/discussions: as the course's, for the threads of one lesson. */
export async function listLessonThreads(ctx: ServiceContext, lessonId: string, q: PageQuery) {
  const access = await requireAccess(ctx, 'lesson.community', lessonId);
  return listThreads(ctx, access, access.lesson.id, q);
}

async function insertThread(ctx: ServiceContext, access: CommunityAccess, lessonId: string | null, body: CreateThread) {
  const now = ctx.clock.now();
  const [thread] = (await ctx.db
    .insert(discussionThreads)
    .values({
      institutionId: ctx.institutionId,
      id: newId(),
      courseId: access.course.id,
      lessonId,
      authorId: ctx.actor.personId,
      authorRole: ctx.actor.role,
      title: body.title,
      body: body.body,
      lastActivityAt: now,
      createdAt: now,
      updatedAt: now,
    })
    .returning()) as [DiscussionThread];
  return oneThreadDto(ctx, thread, access.manager);
}

export async function createCourseThread(ctx: ServiceContext, courseId: string, body: CreateThread) {
  return insertThread(ctx, await requireAccess(ctx, 'course.community', courseId), null, body);
}

export async function createLessonThread(ctx: ServiceContext, lessonId: string, body: CreateThread) {
  const access = await requireAccess(ctx, 'lesson.community', lessonId);
  return insertThread(ctx, access, access.lesson.id, body);
}

/**
 * GET /api/discussions/{id}: the thread and a page of its replies, oldest first (default 50).
 * Every reply keeps its place, so nesting (`parentReplyId`) stays whole: deleted ones, and for
 * students hidden ones, come without text or author.
 */
export async function getThread(ctx: ServiceContext, threadId: string, q: PageQuery) {
  const { thread, manager } = await requireAccess(ctx, 'discussion.view', threadId);
  const page = toPage(q, REPLIES_PAGE_SIZE);
  const where = and(inTenant(ctx, discussionReplies), eq(discussionReplies.threadId, thread.id));
  const [replies, [{ total }], visible] = await Promise.all([
    ctx.db.select().from(discussionReplies).where(where).orderBy(asc(discussionReplies.createdAt), asc(discussionReplies.id)).limit(page.perPage).offset(pageOffset(page)),
    ctx.db
      .select({ total: sql<number>`count(*)::int` })
      .from(discussionReplies)
      .where(where),
    replyCountOf(ctx, thread.id, manager),
  ]);
  if (thread.deletedAt && visible === 0) throw notFound('Discussion');
  const names = await authorNames(ctx, [thread.deletedAt ? null : thread, ...replies.map((r) => (masked(r, manager) ? null : r))]);
  return {
    data: { thread: threadDto(thread, visible, names), replies: replies.map((r) => replyDto(r, manager, names)) },
    meta: pageMeta(page, total),
  };
}

/** PATCH /api/discussions/{id}: the author changes the title or body (sets `editedAt`). */
export async function updateThread(ctx: ServiceContext, threadId: string, body: UpdateThread) {
  const { thread, manager } = await requireAccess(ctx, 'discussion.edit', threadId);
  const now = ctx.clock.now();
  const [row] = await ctx.db
    .update(discussionThreads)
    .set({ ...(body.title !== undefined ? { title: body.title } : {}), ...(body.body !== undefined ? { body: body.body } : {}), editedAt: now, updatedAt: now })
    .where(and(byId(ctx, discussionThreads, thread.id), isNull(discussionThreads.deletedAt)))
    .returning();
  if (!row) throw notFound('Discussion');
  return oneThreadDto(ctx, row, manager);
}

/** DELETE /api/discussions/{id}: the author deletes it softly; replies stay. */
export async function deleteThread(ctx: ServiceContext, threadId: string) {
  const { thread } = await requireAccess(ctx, 'discussion.edit', threadId);
  const now = ctx.clock.now();
  await ctx.db
    .update(discussionThreads)
    .set({ deletedAt: now, updatedAt: now })
    .where(and(byId(ctx, discussionThreads, thread.id), isNull(discussionThreads.deletedAt)));
  return { id: thread.id, deleted: true as const };
}

/** POST /api/discussions/{id}/moderate (canManageCourses): pin, lock, hide; audited. */
export async function moderateThread(ctx: ServiceContext, threadId: string, body: ModerateThread) {
  await requireAccess(ctx, 'discussion.moderate', threadId);
  const row = await withTx(ctx, async (tx) => {
    const [current] = await tx.db
      .select()
      .from(discussionThreads)
      .where(byId(tx, discussionThreads, threadId))
      .for('update');
    if (!current) throw notFound('Discussion');
    const [updated] = (await tx.db
      .update(discussionThreads)
      .set({
        ...(body.isPinned !== undefined ? { isPinned: body.isPinned } : {}),
        ...(body.isLocked !== undefined ? { isLocked: body.isLocked } : {}),
        ...(body.isHidden !== undefined ? { isHidden: body.isHidden } : {}),
        updatedAt: tx.clock.now(),
      })
      .where(byId(tx, discussionThreads, current.id))
      .returning()) as [DiscussionThread];
    await audit(tx, { action: 'discussion.moderate', targetType: 'discussion', targetId: current.id, ...changes(current, updated, ['isPinned', 'isLocked', 'isHidden']) });
    return updated;
  });
  return oneThreadDto(ctx, row, true);
}

// ── replies ─────────────────────────────────────────────────────────────────

/**
 * POST /api/discussions/{id}/replies: a member of the course's community replies, optionally
 * under another reply of the thread. The thread row is locked for the insert, so a reply never
 * lands after a lock or a deletion committed (409 CONFLICT for both). The thread's author gets
 * DISCUSSION_REPLY (not for their own replies), in the same transaction.
 */
export async function createReply(ctx: ServiceContext, threadId: string, body: CreateReply) {
  const { course, manager } = await requireAccess(ctx, 'discussion.view', threadId);
  const me = ctx.actor.personId;
  const saved = await withTx(ctx, async (tx) => {
    const [thread] = await tx.db
      .select()
      .from(discussionThreads)
      .where(byId(tx, discussionThreads, threadId))
      .for('update');
    if (!thread || (thread.isHidden && !manager)) throw notFound('Discussion');
    if (thread.deletedAt) throw conflict('This discussion was deleted and takes no new replies');
    if (thread.isLocked) throw conflict('This discussion is locked: no new replies');
    if (body.parentReplyId) {
      const [parent] = await tx.db
        .select()
        .from(discussionReplies)
        .where(and(byId(tx, discussionReplies, body.parentReplyId), eq(discussionReplies.threadId, thread.id)))
        .limit(1);
      if (!parent || masked(parent, manager)) {
        throw validationError('Unknown reply', [{ field: 'body.parentReplyId', message: 'no reply to answer with this id in this discussion' }]);
      }
    }
    const now = tx.clock.now();
    const [reply] = (await tx.db
      .insert(discussionReplies)
      .values({
        institutionId: tx.institutionId,
        id: newId(),
        threadId: thread.id,
        parentReplyId: body.parentReplyId ?? null,
        authorId: me,
        authorRole: tx.actor.role,
        body: body.body,
        createdAt: now,
        updatedAt: now,
      })
      .returning()) as [DiscussionReply];
    await tx.db
      .update(discussionThreads)
      .set({ lastActivityAt: now })
      .where(byId(tx, discussionThreads, thread.id));
    if (thread.authorId !== me) {
      await notify(tx, {
        institutionId: tx.institutionId,
        key: 'DISCUSSION_REPLY',
        recipients: [thread.authorId],
        metadata: { threadId: thread.id, replyId: reply.id, title: thread.title, courseId: course.id, courseTitle: course.title, lessonId: thread.lessonId },
        actionUrl: `/discussions/${thread.id}`,
      });
    }
    return reply;
  });
  return replyDto(saved, manager, await authorNames(ctx, [saved]));
}

/** PATCH /api/discussion-replies/{id}: the author changes the text (sets `editedAt`). */
export async function updateReply(ctx: ServiceContext, replyId: string, text: string) {
  const { reply, manager } = await requireAccess(ctx, 'discussionReply.edit', replyId);
  const now = ctx.clock.now();
  const [row] = await ctx.db
    .update(discussionReplies)
    .set({ body: text, editedAt: now, updatedAt: now })
    .where(and(byId(ctx, discussionReplies, reply.id), isNull(discussionReplies.deletedAt)))
    .returning();
  if (!row) throw notFound('Reply');
  return replyDto(row, manager, await authorNames(ctx, [row]));
}

/** DELETE /api/discussion-replies/{id}: the author deletes it softly; its place (and the replies under it) stay. */
export async function deleteReply(ctx: ServiceContext, replyId: string) {
  const { reply } = await requireAccess(ctx, 'discussionReply.edit', replyId);
  const now = ctx.clock.now();
  await ctx.db
    .update(discussionReplies)
    .set({ deletedAt: now, updatedAt: now })
    .where(and(byId(ctx, discussionReplies, reply.id), isNull(discussionReplies.deletedAt)));
  return { id: reply.id, deleted: true as const };
}

/** POST /api/discussion-replies/{id}/moderate (canManageCourses): hide or show a reply; audited. */
export async function moderateReply(ctx: ServiceContext, replyId: string, isHidden: boolean) {
  await requireAccess(ctx, 'discussionReply.moderate', replyId);
  const row = await withTx(ctx, async (tx) => {
    const [current] = await tx.db
      .select()
      .from(discussionReplies)
      .where(byId(tx, discussionReplies, replyId))
      .for('update');
    if (!current) throw notFound('Reply');
    const [updated] = await tx.db
      .update(discussionReplies)
      .set({ isHidden, updatedAt: tx.clock.now() })
      .where(byId(tx, discussionReplies, current.id))
      .returning();
    if (!updated) throw notFound('Reply');
    await audit(tx, { action: 'discussion_reply.moderate', targetType: 'discussion_reply', targetId: updated.id, ...changes(current, updated, ['isHidden']) });
    return updated;
  });
  return replyDto(row, true, await authorNames(ctx, [row.deletedAt ? null : row]));
}
