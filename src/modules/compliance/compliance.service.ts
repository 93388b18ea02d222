import { count, desc, sql, type SQL } from 'drizzle-orm';
import type { Deps, ServiceContext } from '../../platform/context.js';
import { withTx } from '../../platform/context.js';
import { iso } from '../../platform/dto.js';
import { byId, inTenant, inTenantAs } from '../../platform/db/tenancy.js';
import { rawRows } from '../../platform/db/client.js';
import { conflict, notFound, validationError } from '../../platform/http/errors.js';
import { pageMeta, pageOffset, toPage } from '../../platform/http/pagination.js';
import { newId } from '../../platform/ids.js';
import { requireAccess } from '../access/access.service.js';
import { courses } from '../courses/courses.tables.js';
import { enrollStudents, lockCourse } from '../enrollments/enrollments.service.js';
import { requireInstitutionSlug } from '../institutions/institutions.service.js';
import { isCrmError } from '../../platform/crm/client.js';
import { notify } from '../notifications/notify.js';
import { audit } from '../audit/audit.js';
import { complianceRecords, complianceTrainings, type ComplianceStatus, type ComplianceTraining } from './compliance.tables.js';

/** Reminders go out this long before the due date (once per cycle), and once on becoming overdue. */
export const REMINDER_LEAD_MS = 7 * 86_400_000;

export interface TrainingInput {
  courseId: string;
  title?: string;
  classIds: string[];
  sectionIds: string[];
  roles: string[];
  dueDate: string;
  recurrenceMonths?: number | null;
}

/** Who a training targets, through the CRM roster: every student of the sections (and of the classes' sections). */
async function targetedStudents(ctx: ServiceContext, input: TrainingInput) {
  const slug = await requireInstitutionSlug(ctx, ctx.institutionId);
  const classes = input.classIds.length > 0 || input.roles.includes('STUDENT') ? await ctx.crm.getClasses(slug) : [];
  const sections = new Map<string, string | null>(input.sectionIds.map((id) => [id, null]));
  for (const c of classes) {
    if (input.roles.includes('STUDENT') || input.classIds.includes(c.id)) for (const s of c.sections) sections.set(s.id, c.id);
  }
  const people = new Map<string, { classId: string | null; sectionId: string }>();
  const unknownClasses = input.classIds.filter((id) => !classes.some((c) => c.id === id));
  if (unknownClasses.length > 0)
    throw validationError(
      'Unknown class',
      unknownClasses.map((id) => ({ field: 'body.classIds', message: `no class ${id} in the CRM` })),
    );
  const rosters = await Promise.all(
    [...sections].map(async ([sectionId, classId]) => {
      try {
        return { sectionId, classId, roster: await ctx.crm.getSectionRoster(slug, sectionId) };
      } catch (err) {
        if (isCrmError(err) && err.reason === 'not_found') throw validationError('Unknown section', [{ field: 'body.sectionIds', message: `no section ${sectionId} in the CRM` }]);
        throw err;
      }
    }),
  );
  for (const { sectionId, classId, roster } of rosters) {
    const owner = classId ?? classes.find((c) => c.sections.some((s) => s.id === sectionId))?.id ?? null;
    for (const entry of roster) if (!people.has(entry.studentContactId)) people.set(entry.studentContactId, { classId: owner, sectionId });
  }
  return people;
}

const trainingDto = (t: ComplianceTraining, assigned: number) => ({
  id: t.id,
  courseId: t.courseId,
  title: t.title,
  classIds: t.classIds,
  sectionIds: t.sectionIds,
  roles: t.roles,
  dueDate: iso(t.dueDate),
  recurrenceMonths: t.recurrenceMonths,
  assignedCount: assigned,
  createdBy: t.createdBy,
  createdAt: iso(t.createdAt),
});

/**
 * POST /api/compliance/training (ADMIN): a required course for classes, sections and roles.
 * The students it targets are read from the CRM roster now (before the transaction: no HTTP
 * inside one), get a record (cycle 1) and an enrollment in the course. Staff roles have no CRM
 * listing: a TEACHER or ADMIN target gets their record when they first read their records.
 */
export async function createTraining(ctx: ServiceContext, input: TrainingInput) {
  await requireAccess(ctx, 'institution.admin', null);
  const [course] = await ctx.db
    .select()
    .from(courses)
    .where(byId(ctx, courses, input.courseId));
  if (!course) throw notFound('Course');
  const due = new Date(input.dueDate);
  if (due.getTime() <= ctx.clock.now().getTime()) throw validationError('dueDate must be in the future', [{ field: 'body.dueDate', message: 'must be in the future' }]);
  const people = await targetedStudents(ctx, input);
  return withTx(ctx, async (tx) => {
    const now = tx.clock.now();
    const [training] = await tx.db
      .insert(complianceTrainings)
      .values({
        institutionId: tx.institutionId,
        id: newId(),
        courseId: course.id,
        title: input.title ?? course.title,
        classIds: input.classIds,
        sectionIds: input.sectionIds,
        roles: input.roles,
        dueDate: due,
        recurrenceMonths: input.recurrenceMonths ?? null,
        createdBy: tx.actor.personId,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    if (people.size > 0) {
      await tx.db.insert(complianceRecords).values(
        [...people].map(([personId, where]) => ({
          institutionId: tx.institutionId,
          id: newId(),
          trainingId: training!.id,
          personId,
          ...where,
          assignedAt: now,
          dueAt: due,
          createdAt: now,
          updatedAt: now,
        })),
      );
      if (course.status === 'PUBLISHED') await enrollStudents(tx, await lockCourse(tx, course.id), [...people.keys()]);
    }
    return trainingDto(training!, people.size);
  });
}

/** GET /api/compliance/training: staff. */
export async function listTrainings(ctx: ServiceContext, q: { page: number; perPage?: number; limit?: number }) {
  await requireAccess(ctx, 'compliance.trainings', null);
  const page = toPage(q);
  const where = inTenant(ctx, complianceTrainings);
  const [rows, [{ total }]] = await Promise.all([
    ctx.db
      .select({
        training: complianceTrainings,
        assigned: sql<number>`(select count(*)::int from ${complianceRecords} where ${complianceRecords.institutionId} = ${complianceTrainings.institutionId} and ${complianceRecords.trainingId} = ${complianceTrainings.id} and ${complianceRecords.cycle} = 1)`,
      })
      .from(complianceTrainings)
      .where(where)
      .orderBy(desc(complianceTrainings.createdAt))
      .limit(page.perPage)
      .offset(pageOffset(page)),
    ctx.db.select({ total: count() }).from(complianceTrainings).where(where),
  ]);
  return { rows: rows.map((r) => trainingDto(r.training, Number(r.assigned))), meta: pageMeta(page, Number(total)) };
}

/**
 * The derived status of records (latest cycle of each person and training), as SQL: WAIVED,
 * then COMPLETED (the course completed since the cycle began), then OVERDUE (past due), else
 * ASSIGNED.
 */
const statusSql = (now: Date) => sql<ComplianceStatus>`case
  when r.waived_at is not null then 'WAIVED'
  when coalesce(r.completed_at, e.completed_at) >= r.assigned_at then 'COMPLETED'
  when r.due_at < ${now.toISOString()}::timestamptz then 'OVERDUE'
  else 'ASSIGNED' end`;

interface RecordRow {
  id: string;
  training_id: string;
  title: string;
  course_id: string;
  person_id: string;
  class_id: string | null;
  section_id: string | null;
  cycle: number;
  assigned_at: string;
  due_at: string;
  completed_at: string | null;
  waived_at: string | null;
  waive_reason: string | null;
  status: ComplianceStatus;
  total: number;
}

const currentRecords = (institutionId: string, now: Date, filters: SQL[]) => sql`
  select * from (
    select r.id, r.training_id, t.title, t.course_id, r.person_id, r.class_id, r.section_id, r.cycle, r.assigned_at, r.due_at,
      case when coalesce(r.completed_at, e.completed_at) >= r.assigned_at then coalesce(r.completed_at, e.completed_at) end as completed_at,
      r.waived_at, r.waive_reason, ${statusSql(now)} as status
    from ${complianceRecords} r
    join ${complianceTrainings} t on t.institution_id = r.institution_id and t.id = r.training_id
    left join enrollments e on e.institution_id = r.institution_id and e.course_id = t.course_id and e.student_id = r.person_id and e.status = 'COMPLETED'
    where ${inTenantAs({ institutionId }, 'r')}
      and not exists (select 1 from ${complianceRecords} n where n.institution_id = r.institution_id and n.training_id = r.training_id and n.person_id = r.person_id and n.cycle > r.cycle)
  ) x
  where ${filters.length ? sql.join(filters, sql` and `) : sql`true`}
  order by due_at asc, id asc`;

const recordDto = (r: RecordRow) => ({
  id: r.id,
  trainingId: r.training_id,
  title: r.title,
  courseId: r.course_id,
  personId: r.person_id,
  classId: r.class_id,
  sectionId: r.section_id,
  cycle: r.cycle,
  status: r.status,
  assignedAt: iso(r.assigned_at),
  dueAt: iso(r.due_at),
  completedAt: iso(r.completed_at),
  waivedAt: iso(r.waived_at),
  waiveReason: r.waive_reason,
});

/**
 * GET /api/compliance/records: the current cycle of each obligation. Learners (and staff
 * without canManageCourses) see their own; staff filter by class, section, training, person
 * and status.
 */
export async function listRecords(
  ctx: ServiceContext,
  q: { page: number; perPage?: number; limit?: number; status?: ComplianceStatus; classId?: string; sectionId?: string; trainingId?: string; personId?: string },
) {
  const page = toPage(q);
  const now = ctx.clock.now();
  const { staff } = await requireAccess(ctx, 'compliance.records', null);
  if (!staff || q.personId === ctx.actor.personId) await assignStaffRole(ctx);
  const filters: SQL[] = [];
  if (!staff) filters.push(sql`person_id = ${ctx.actor.personId}`);
  else if (q.personId) filters.push(sql`person_id = ${q.personId}`);
  if (q.status) filters.push(sql`status = ${q.status}`);
  if (staff && q.classId) filters.push(sql`class_id = ${q.classId}`);
  if (staff && q.sectionId) filters.push(sql`section_id = ${q.sectionId}`);
  if (q.trainingId) filters.push(sql`training_id = ${q.trainingId}`);
  const rows = await rawRows<RecordRow>(
    ctx.db,
    sql`select *, count(*) over ()::int as total from (${currentRecords(ctx.institutionId, now, filters)}) y limit ${page.perPage} offset ${pageOffset(page)}`,
  );
  return { rows: rows.map(recordDto), meta: pageMeta(page, Number(rows[0]?.total ?? 0)) };
}

/** Staff roles have no roster: a targeted TEACHER or ADMIN gets their records when they first read them. */
async function assignStaffRole(ctx: ServiceContext) {
  if (ctx.actor.role !== 'TEACHER' && ctx.actor.role !== 'ADMIN') return;
  const now = ctx.clock.now();
  await ctx.db.execute(sql`insert into ${complianceRecords} (institution_id, id, training_id, person_id, cycle, assigned_at, due_at, created_at, updated_at)
    select t.institution_id, ${newId()} || '-' || t.id, t.id, ${ctx.actor.personId}, 1, ${now.toISOString()}::timestamptz, t.due_date, ${now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz
    from ${complianceTrainings} t where ${inTenantAs(ctx, 't')} and t.roles ? ${ctx.actor.role}
    on conflict do nothing`);
}

/** POST /api/compliance/waive (ADMIN): the current cycle of a record is waived, with the reason. */
export async function waive(ctx: ServiceContext, body: { recordId: string; reason: string }) {
  await requireAccess(ctx, 'institution.admin', null);
  return withTx(ctx, async (tx) => {
    const [record] = await tx.db
      .select()
      .from(complianceRecords)
      .where(byId(tx, complianceRecords, body.recordId))
      .for('update');
    if (!record) throw notFound('Compliance record');
    if (record.waivedAt) throw conflict('This record is already waived');
    const now = tx.clock.now();
    await tx.db
      .update(complianceRecords)
      .set({ waivedAt: now, waivedBy: tx.actor.personId, waiveReason: body.reason, updatedAt: now })
      .where(byId(tx, complianceRecords, record.id));
    await audit(tx, {
      action: 'compliance.waive',
      targetType: 'compliance_record',
      targetId: record.id,
      before: { waivedAt: null },
      after: { personId: record.personId, trainingId: record.trainingId, cycle: record.cycle, reason: body.reason },
    });
    const [row] = await rawRows<RecordRow>(tx.db, sql`select *, 1 as total from (${currentRecords(tx.institutionId, now, [sql`id = ${record.id}`])}) y`);
    if (!row) throw conflict('Only the current cycle of an obligation can be waived');
    return recordDto(row);
  });
}

/**
 * The hourly sweep (worker job `compliance.sweep`): records completions, reminds people whose
 * obligation is due within 7 days (once per cycle) and those who became overdue (once), and
 * opens the next cycle of a recurring training `recurrenceMonths` after a completion. Each
 * step is a conditional update, so a second run in the hour does nothing new.
 */
export async function sweepCompliance(deps: Pick<Deps, 'database' | 'clock' | 'config'>) {
  const db = deps.database.db;
  const now = deps.clock.now();
  const nowIso = now.toISOString();
  await db.execute(sql`update ${complianceRecords} r set completed_at = e.completed_at, updated_at = ${nowIso}::timestamptz
    from ${complianceTrainings} t, enrollments e
    where t.institution_id = r.institution_id and t.id = r.training_id and e.institution_id = r.institution_id and e.course_id = t.course_id
      and e.student_id = r.person_id and e.status = 'COMPLETED' and e.completed_at >= r.assigned_at and r.completed_at is null`);
  const due = await rawRows<{ id: string; institution_id: string; person_id: string; training_id: string; title: string; due_at: string; kind: 'soon' | 'overdue' }>(
    db,
    sql`update ${complianceRecords} r set
          reminded_at = case when r.due_at >= ${nowIso}::timestamptz then ${nowIso}::timestamptz else r.reminded_at end,
          overdue_notified_at = case when r.due_at < ${nowIso}::timestamptz then ${nowIso}::timestamptz else r.overdue_notified_at end,
          updated_at = ${nowIso}::timestamptz
        from ${complianceTrainings} t
        where t.institution_id = r.institution_id and t.id = r.training_id and r.waived_at is null and r.completed_at is null
          and ((r.due_at >= ${nowIso}::timestamptz and r.due_at < ${new Date(now.getTime() + REMINDER_LEAD_MS).toISOString()}::timestamptz and r.reminded_at is null)
            or (r.due_at < ${nowIso}::timestamptz and r.overdue_notified_at is null))
        returning r.id, r.institution_id, r.person_id, r.training_id, t.title, r.due_at, case when r.due_at < ${nowIso}::timestamptz then 'overdue' else 'soon' end as kind`,
  );
  const groups = new Map<string, typeof due>();
  for (const r of due) {
    const key = `${r.institution_id}|${r.training_id}|${r.kind}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  for (const rows of groups.values()) {
    const first = rows[0]!;
    await notify(
      { db, clock: deps.clock, config: deps.config },
      {
        institutionId: first.institution_id,
        key: 'COMPLIANCE_DUE',
        recipients: rows.map((r) => r.person_id),
        metadata: { trainingId: first.training_id, title: first.title, dueDate: new Date(first.due_at).toISOString().slice(0, 10), overdue: first.kind === 'overdue' },
        actionUrl: '/compliance',
        dedupeKey: `compliance:${first.training_id}:${first.kind}:${new Date(first.due_at).toISOString()}`,
      },
    );
  }
  // Recurrence: the next cycle opens `recurrence_months` after the completion of the latest one.
  const reopened = await rawRows<{ id: string }>(
    db,
    sql`insert into ${complianceRecords} (institution_id, id, training_id, person_id, class_id, section_id, cycle, assigned_at, due_at, created_at, updated_at)
        select r.institution_id, r.id || '-c' || (r.cycle + 1), r.training_id, r.person_id, r.class_id, r.section_id, r.cycle + 1,
          ${nowIso}::timestamptz, r.completed_at + make_interval(months => t.recurrence_months), ${nowIso}::timestamptz, ${nowIso}::timestamptz
        from ${complianceRecords} r join ${complianceTrainings} t on t.institution_id = r.institution_id and t.id = r.training_id
        where t.recurrence_months is not null and r.completed_at is not null and r.waived_at is null
          and r.completed_at + make_interval(months => t.recurrence_months) <= ${nowIso}::timestamptz
          and not exists (select 1 from ${complianceRecords} n where n.institution_id = r.institution_id and n.training_id = r.training_id and n.person_id = r.person_id and n.cycle > r.cycle)
        on conflict do nothing
        returning id`,
  );
  return { reminded: due.length, reopened: reopened.length };
}
