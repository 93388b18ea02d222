import { and, desc, eq, sql, type SQL } from 'drizzle-orm';
import { withTx, type ServiceContext } from '../../platform/context.js';
import { iso } from '../../platform/dto.js';
import { byId, inTenant } from '../../platform/db/tenancy.js';
import { notFound, validationError } from '../../platform/http/errors.js';
import { pageMeta, pageOffset, toPage } from '../../platform/http/pagination.js';
import { newId } from '../../platform/ids.js';
import { requireAccess } from '../access/access.service.js';
import { audit, changes, snapshot } from '../audit/audit.js';
import { enrollments } from '../enrollments/enrollments.tables.js';
import { displayNames } from '../institutions/display-names.js';
import { requireInstitutionSlug } from '../institutions/institutions.service.js';
import { notify } from '../notifications/notify.js';
import { announcementRecipients, announcements, type Announcement } from './announcements.tables.js';
import { firstChars } from '../../platform/text.js';
import { ANNOUNCEMENT_MESSAGE_PREVIEW, type CreateAnnouncement, type UpdateAnnouncement } from './announcements.schemas.js';

const AUDITED = ['courseId', 'title', 'body', 'isPinned', 'targetType', 'classIds', 'sectionIds', 'recipientCount'] as const;

function toDto(a: Announcement, authorName: string) {
  return {
    id: a.id,
    courseId: a.courseId,
    authorId: a.authorId,
    authorName,
    title: a.title,
    body: a.body,
    isPinned: a.isPinned,
    target: { type: a.targetType, classIds: a.classIds, sectionIds: a.sectionIds },
    recipientCount: a.recipientCount,
    editedAt: iso(a.editedAt),
    createdAt: iso(a.createdAt),
    updatedAt: iso(a.updatedAt),
  };
}

async function withAuthorNames(ctx: ServiceContext, rows: Announcement[]) {
  const names = await displayNames(
    ctx,
    rows.map((a) => ({ id: a.authorId, label: 'Staff' })),
  );
  return rows.map((a) => toDto(a, names.get(a.authorId)!));
}

const unique = (ids: string[] | undefined) => [...new Set(ids ?? [])];

/**
 * The students of CRM classes and sections, read when the announcement is posted (never cached;
 * before the transaction, so none is held open across CRM calls): the classes list names each
 * class's sections, and each section's roster names its students. An id the CRM does not know
 * is 400; a CRM that cannot answer is 502 (strict calls: nobody would be reached).
 */
async function rosterOf(ctx: ServiceContext, classIds: string[], sectionIds: string[]): Promise<string[]> {
  const slug = await requireInstitutionSlug(ctx, ctx.institutionId);
  const classes = await ctx.crm.getClasses(slug);
  const knownSections = new Set(classes.flatMap((c) => c.sections.map((s) => s.id)));
  const issues = [
    ...classIds.flatMap((id, i) => (classes.some((c) => c.id === id) ? [] : [{ field: `body.classIds.${i}`, message: `no class ${id} in the CRM` }])),
    ...sectionIds.flatMap((id, i) => (knownSections.has(id) ? [] : [{ field: `body.sectionIds.${i}`, message: `no section ${id} in the CRM` }])),
  ];
  if (issues.length > 0) throw validationError('Unknown class or section', issues);
  const sections = new Set([...classes.filter((c) => classIds.includes(c.id)).flatMap((c) => c.sections.map((s) => s.id)), ...sectionIds]);
  const rosters = await Promise.all([...sections].map((id) => ctx.crm.getSectionRoster(slug, id)));
  return [...new Set(rosters.flat().map((r) => r.studentContactId))];
}

/** Students with an ACTIVE enrollment in the course, among `among` when given: one query. */
async function activeStudents(tx: ServiceContext, courseId: string, among: string[] | null): Promise<string[]> {
  if (among && among.length === 0) return [];
  const rows = await tx.db
    .select({ studentId: enrollments.studentId })
    .from(enrollments)
    .where(
      and(
        inTenant(tx, enrollments),
        eq(enrollments.courseId, courseId),
        eq(enrollments.status, 'ACTIVE'),
        among ? sql`${enrollments.studentId} = any(${sql.param(among)}::text[])` : undefined,
      ),
    );
  return rows.map((r) => r.studentId);
}

const preview = (text: string) => {
  const cut = firstChars(text, ANNOUNCEMENT_MESSAGE_PREVIEW);
  return cut.length < text.length ? `${cut}…` : text;
};

/**
 * POST /api/courses/{id}/announcements (canManageCourses). Without classIds and sectionIds it
 * targets the whole course; with them, the CRM roster of those classes and sections at this
 * moment. Either way the students reached are those with an ACTIVE enrollment now; each gets
 * COURSE_ANNOUNCEMENT, in the transaction that stores the announcement, its recipients and its
 * audit row.
 */
export async function createAnnouncement(ctx: ServiceContext, courseId: string, body: CreateAnnouncement) {
  const course = await requireAccess(ctx, 'course.announce', courseId);
  const classIds = unique(body.classIds);
  const sectionIds = unique(body.sectionIds);
  const targeted = classIds.length + sectionIds.length > 0;
  const roster = targeted ? await rosterOf(ctx, classIds, sectionIds) : null;
  const saved = await withTx(ctx, async (tx) => {
    const recipients = await activeStudents(tx, course.id, roster);
    const now = tx.clock.now();
    const [row] = (await tx.db
      .insert(announcements)
      .values({
        institutionId: tx.institutionId,
        id: newId(),
        courseId: course.id,
        authorId: tx.actor.personId,
        title: body.title,
        body: body.body,
        isPinned: body.isPinned,
        targetType: targeted ? 'CLASS_SECTION' : 'COURSE',
        classIds,
        sectionIds,
        recipientCount: recipients.length,
        createdAt: now,
        updatedAt: now,
      })
      .returning()) as [Announcement];
    if (targeted && recipients.length > 0) {
      await tx.db.insert(announcementRecipients).values(recipients.map((studentId) => ({ institutionId: tx.institutionId, id: newId(), announcementId: row.id, studentId })));
    }
    await notify(tx, {
      institutionId: tx.institutionId,
      key: 'COURSE_ANNOUNCEMENT',
      recipients,
      metadata: { announcementId: row.id, courseId: course.id, courseTitle: course.title, title: row.title, message: preview(row.body) },
      actionUrl: `/courses/${course.id}/announcements`,
    });
    await audit(tx, { action: 'announcement.create', targetType: 'announcement', targetId: row.id, after: snapshot(row, AUDITED) });
    return row;
  });
  return (await withAuthorNames(ctx, [saved]))[0]!;
}

/**
 * GET /api/courses/{id}/announcements: staff see every announcement; a learner (ACTIVE or
 * COMPLETED enrollment) sees the whole-course ones and the targeted ones that reached them.
 * Pinned first, then newest first.
 */
export async function listAnnouncements(ctx: ServiceContext, courseId: string, q: { page: number; perPage?: number; limit?: number }) {
  const access = await requireAccess(ctx, 'course.community', courseId);
  const page = toPage(q);
  const filters: SQL[] = [inTenant(ctx, announcements), eq(announcements.courseId, access.course.id)];
  if (!access.manager) {
    // Written with explicit table names: Drizzle leaves the outer columns unqualified in a single-table select.
    filters.push(sql`(${announcements.targetType} = 'COURSE' or exists (select 1 from announcement_recipients r
      where r.institution_id = "announcements"."institution_id" and r.announcement_id = "announcements"."id" and r.student_id = ${ctx.actor.personId}))`);
  }
  const where = and(...filters);
  const [rows, [{ total }]] = await Promise.all([
    ctx.db
      .select()
      .from(announcements)
      .where(where)
      .orderBy(desc(announcements.isPinned), desc(announcements.createdAt), desc(announcements.id))
      .limit(page.perPage)
      .offset(pageOffset(page)),
    ctx.db
      .select({ total: sql<number>`count(*)::int` })
      .from(announcements)
      .where(where),
  ]);
  return { rows: await withAuthorNames(ctx, rows), meta: pageMeta(page, total) };
}

/** PATCH /api/announcements/{id}: its author or ADMIN changes the title, body or pin. The audience stays; nobody is notified again. */
export async function updateAnnouncement(ctx: ServiceContext, id: string, body: UpdateAnnouncement) {
  const current = await requireAccess(ctx, 'announcement.edit', id);
  const saved = await withTx(ctx, async (tx) => {
    const now = tx.clock.now();
    const textChanged = (body.title !== undefined && body.title !== current.title) || (body.body !== undefined && body.body !== current.body);
    const [row] = (await tx.db
      .update(announcements)
      .set({
        ...(body.title !== undefined ? { title: body.title } : {}),
        ...(body.body !== undefined ? { body: body.body } : {}),
        ...(body.isPinned !== undefined ? { isPinned: body.isPinned } : {}),
        ...(textChanged ? { editedAt: now } : {}),
        updatedAt: now,
      })
      .where(byId(tx, announcements, current.id))
      .returning()) as [Announcement | undefined];
    if (!row) throw notFound('Announcement');
    await audit(tx, { action: 'announcement.update', targetType: 'announcement', targetId: row.id, ...changes(current, row, ['title', 'body', 'isPinned']) });
    return row;
  });
  return (await withAuthorNames(ctx, [saved]))[0]!;
}

/** DELETE /api/announcements/{id}: its author or ADMIN; the recipients go with it. */
export async function deleteAnnouncement(ctx: ServiceContext, id: string) {
  const current = await requireAccess(ctx, 'announcement.edit', id);
  await withTx(ctx, async (tx) => {
    const [gone] = await tx.db
      .delete(announcements)
      .where(byId(tx, announcements, current.id))
      .returning({ id: announcements.id });
    if (gone) await audit(tx, { action: 'announcement.delete', targetType: 'announcement', targetId: current.id, before: snapshot(current, AUDITED) });
  });
  return { id: current.id, deleted: true as const };
}
