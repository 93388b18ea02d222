import { and, count, desc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { Deps, ServiceContext } from '../../platform/context.js';
import { serviceContext, withTx } from '../../platform/context.js';
import { serviceSession, type Session } from '../../platform/auth/tokens.js';
import { iso } from '../../platform/dto.js';
import { byId, inTenant, inTenantAs } from '../../platform/db/tenancy.js';
import { rawRows } from '../../platform/db/client.js';
import { conflict, notFound, validationError } from '../../platform/http/errors.js';
import { pageMeta, pageOffset, pageTotal, toPage } from '../../platform/http/pagination.js';
import { newId } from '../../platform/ids.js';
import { requireAccess } from '../access/access.service.js';
import { courses, type Course } from '../courses/courses.tables.js';
import { enrollments, lessonProgress } from '../enrollments/enrollments.tables.js';
import { enrollStudents, lockCourse } from '../enrollments/enrollments.service.js';
import { requireInstitutionSlug } from '../institutions/institutions.service.js';
import { isCrmError } from '../../platform/crm/client.js';
import type { CrmRosterEntry } from '../../platform/crm/types.js';
import { notify } from '../notifications/notify.js';
import { audit, snapshot } from '../audit/audit.js';
import { complianceCompletionSql, complianceStatusSql } from './compliance.status.js';
import { complianceRecords, complianceTrainings, type ComplianceStatus, type ComplianceTraining } from './compliance.tables.js';
import type { WaiveBody } from './compliance.schemas.js';

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

interface Targets {
  classIds: string[];
  sectionIds: string[];
  roles: string[];
}

type TargetedPeople = Map<string, { classId: string | null; sectionId: string }>;

const targetsStudents = (t: Targets) => t.classIds.length > 0 || t.sectionIds.length > 0 || t.roles.includes('STUDENT');

/**
 * Who a training targets, through the CRM roster (read fresh: rosters are no-store): every
 * student of its sections, of its classes' sections, and of every class for the STUDENT role,
 * each with the class and section they were found through. The class list (cached by the CRM
 * client) is always read, so a section-only target still knows its class and `?classId=` finds
 * it. `strict` (creation): an unknown class or section is 400; the sweep skips it instead.
 * `rosters` shares section rosters between the trainings of one sweep.
 */
async function targetedStudents(
  ctx: ServiceContext,
  slug: string,
  targets: Targets,
  opts: { strict: boolean; rosters?: Map<string, Promise<CrmRosterEntry[] | null>> },
): Promise<TargetedPeople> {
  const people: TargetedPeople = new Map();
  if (!targetsStudents(targets)) return people;
  const classes = await ctx.crm.getClasses(slug);
  const unknownClasses = targets.classIds.filter((id) => !classes.some((c) => c.id === id));
  if (opts.strict && unknownClasses.length > 0)
    throw validationError(
      'Unknown class',
      unknownClasses.map((id) => ({ field: 'body.classIds', message: `no class ${id} in the CRM` })),
    );
  const classOf = (sectionId: string) => classes.find((c) => c.sections.some((s) => s.id === sectionId))?.id ?? null;
  const sections = new Map<string, string | null>(targets.sectionIds.map((id) => [id, classOf(id)]));
  for (const c of classes) {
    if (targets.roles.includes('STUDENT') || targets.classIds.includes(c.id)) for (const s of c.sections) sections.set(s.id, c.id);
  }
  const rosterOf = async (sectionId: string): Promise<CrmRosterEntry[] | null> => {
    try {
      return await ctx.crm.getSectionRoster(slug, sectionId);
    } catch (err) {
      if (!isCrmError(err) || err.reason !== 'not_found') throw err;
      if (opts.strict) throw validationError('Unknown section', [{ field: 'body.sectionIds', message: `no section ${sectionId} in the CRM` }]);
      return null;
    }
  };
  const rosters = await Promise.all(
    [...sections].map(async ([sectionId, classId]) => {
      let roster = opts.rosters?.get(sectionId);
      if (!roster) {
        roster = rosterOf(sectionId);
        opts.rosters?.set(sectionId, roster);
      }
      return { sectionId, classId, roster: (await roster) ?? [] };
    }),
  );
  for (const { sectionId, classId, roster } of rosters) {
    for (const entry of roster) if (!people.has(entry.studentContactId)) people.set(entry.studentContactId, { classId, sectionId });
  }
  return people;
}

/** How long each cycle after the first lasts: the time the first cycle gave (due date minus creation; none for a training created past its due date). */
const windowMs = (t: ComplianceTraining) => Math.max(t.dueDate.getTime() - t.createdAt.getTime(), 0);

/** The due date of someone assigned after the training began (a newcomer, a staff member): the training's while it is ahead, else a full window from now. */
const lateDueDate = (t: ComplianceTraining, now: Date) => (t.dueDate.getTime() > now.getTime() ? t.dueDate : new Date(now.getTime() + windowMs(t)));

/**
 * Records (cycle 1) for people newly assigned to a training, with the class and section they
 * were found through; people who already have one are left alone. Returns who got one.
 */
async function insertFirstCycle(tx: ServiceContext, training: ComplianceTraining, people: TargetedPeople, dueAt: Date): Promise<string[]> {
  if (people.size === 0) return [];
  const now = tx.clock.now();
  const rows = await tx.db
    .insert(complianceRecords)
    .values(
      [...people].map(([personId, where]) => ({
        institutionId: tx.institutionId,
        id: newId(),
        trainingId: training.id,
        personId,
        ...where,
        assignedAt: now,
        dueAt,
        createdAt: now,
        updatedAt: now,
      })),
    )
    .onConflictDoNothing()
    .returning({ personId: complianceRecords.personId });
  return rows.map((r) => r.personId);
}

/**
 * Enrolls newly assigned people in the training's course (when it is PUBLISHED, within its
 * seats), with one `enrollment.create` audit row per enrollment made (`source` says what made it). A learner who already
 * completed the course is credited when that completion still counts (no recurrence, or within
 * `recurrenceMonths`); an older completion is reopened so the course can be taken again.
 */
async function enrollAssigned(tx: ServiceContext, training: ComplianceTraining, course: Course, personIds: string[], source: AuditSource) {
  if (personIds.length === 0) return;
  // The course as it is under its lock: published, or archived meanwhile.
  const locked = await lockCourse(tx, course.id);
  const outcomes = locked.status === 'PUBLISHED' ? await enrollStudents(tx, locked, personIds) : new Map();
  await audit(
    tx,
    [...outcomes.values()].flatMap((o) =>
      o.kind === 'enrolled'
        ? [
            {
              action: 'enrollment.create',
              targetType: 'enrollment',
              targetId: o.enrollment.id,
              after: { courseId: course.id, studentId: o.enrollment.studentId, status: o.enrollment.status, trainingId: training.id, source },
            },
          ]
        : [],
    ),
  );
  const nowIso = tx.clock.now().toISOString();
  const stillValid = training.recurrenceMonths === null ? sql`true` : sql`e.completed_at + make_interval(months => ${training.recurrenceMonths}) > ${nowIso}::timestamptz`;
  await tx.db.execute(sql`update ${complianceRecords} r set completed_at = e.completed_at, updated_at = ${nowIso}::timestamptz
    from ${enrollments} e
    where r.institution_id = ${tx.institutionId} and r.training_id = ${training.id} and r.cycle = 1 and r.completed_at is null and r.person_id = any(${sql.param(personIds)}::text[])
      and e.institution_id = r.institution_id and e.course_id = ${course.id} and e.student_id = r.person_id and e.status = 'COMPLETED' and ${stillValid}`);
  const expired = await rawRows<{ student_id: string }>(
    tx.db,
    sql`select e.student_id from ${enrollments} e where e.institution_id = ${tx.institutionId} and e.course_id = ${course.id}
      and e.student_id = any(${sql.param(personIds)}::text[]) and e.status = 'COMPLETED' and not (${stillValid})`,
  );
  await reopenEnrollments(
    tx,
    training,
    expired.map((r) => ({ personId: r.student_id, cycle: 1 })),
    source,
  );
}

/** Who a sweep-made change is recorded as: the sweep itself, on behalf of the training's creator. */
type AuditSource = 'compliance.training' | 'compliance.sweep';

/**
 * Opens learners' enrollments again for a new cycle: a COMPLETED enrollment in the training's
 * course goes back to ACTIVE with its lesson completions (and scores) cleared, so the course can
 * be completed inside the cycle (`reopened_at` set: the cycle's quiz attempts count afresh against
 * `maxAttempts`), and an `enrollment.reopen` audit row is written for each. The
 * certificate of the earlier completion is kept (certificates are one per enrollment), so a
 * completion in a later cycle issues none; it is pushed to the CRM as a completion of its own
 * (one push per completion), with no certificate number.
 */
async function reopenEnrollments(tx: ServiceContext, training: ComplianceTraining, people: Array<{ personId: string; cycle: number }>, source: AuditSource) {
  if (people.length === 0) return;
  const cycleOf = new Map(people.map((p) => [p.personId, p.cycle]));
  const nowIso = tx.clock.now().toISOString();
  const reopened = await rawRows<{ id: string; student_id: string; completed_at: string | Date | null; final_score: number | null }>(
    tx.db,
    sql`with old as (
          select id, completed_at, final_score from ${enrollments}
          where institution_id = ${tx.institutionId} and course_id = ${training.courseId} and student_id = any(${sql.param([...cycleOf.keys()])}::text[]) and status = 'COMPLETED'
          for update)
        update ${enrollments} e set status = 'ACTIVE', progress = 0, completed_at = null, final_score = null, reopened_at = ${nowIso}::timestamptz, updated_at = ${nowIso}::timestamptz
        from old where e.institution_id = ${tx.institutionId} and e.id = old.id
        returning e.id, e.student_id, old.completed_at, old.final_score`,
  );
  if (reopened.length === 0) return;
  await tx.db
    .update(lessonProgress)
    .set({ completed: false, completedAt: null, progressPercent: 0, score: null, updatedAt: tx.clock.now() })
    .where(
      and(
        inTenant(tx, lessonProgress),
        inArray(
          lessonProgress.enrollmentId,
          reopened.map((r) => r.id),
        ),
      ),
    );
  await audit(
    tx,
    reopened.map((r) => ({
      action: 'enrollment.reopen',
      targetType: 'enrollment',
      targetId: r.id,
      before: { status: 'COMPLETED', completedAt: r.completed_at ? new Date(r.completed_at) : null, finalScore: r.final_score },
      after: { status: 'ACTIVE', progress: 0, trainingId: training.id, cycle: cycleOf.get(r.student_id) ?? null, source },
    })),
  );
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
 * inside one), get a record (cycle 1) and an enrollment in the course; the training and each
 * enrollment made are audited in the same transaction. Students who join a targeted class or
 * section later are assigned by the hourly sweep. Staff roles have no CRM listing: a TEACHER or
 * ADMIN target gets their record when they first read their records.
 */
export async function createTraining(ctx: ServiceContext, input: TrainingInput) {
  await requireAccess(ctx, 'institution.admin', null);
  const [course] = await ctx.db
    .select()
    .from(courses)
    .where(byId(ctx, courses, input.courseId));
  if (!course) throw notFound('Course');
  // A due date already past is accepted: an obligation recorded late (a deadline that was the
  // start of term) is OVERDUE for everyone it targets from the start.
  const due = new Date(input.dueDate);
  const people = targetsStudents(input) ? await targetedStudents(ctx, await requireInstitutionSlug(ctx, ctx.institutionId), input, { strict: true }) : new Map();
  return withTx(ctx, async (tx) => {
    // The course lock first: the training's insert takes a key-share lock on the course row (its
    // foreign key), and two creations upgrading that to enrollAssigned's lock would deadlock.
    await lockCourse(tx, course.id);
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
    const assigned = await insertFirstCycle(tx, training!, people, due);
    await audit(tx, {
      action: 'compliance_training.create',
      targetType: 'compliance_training',
      targetId: training!.id,
      after: { ...snapshot(training!, ['courseId', 'title', 'classIds', 'sectionIds', 'roles', 'dueDate', 'recurrenceMonths']), assignedCount: assigned.length },
    });
    await enrollAssigned(tx, training!, course, assigned, 'compliance.training');
    return trainingDto(training!, assigned.length);
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
        // Qualified by hand: in a one-table select Drizzle writes column names bare, so
        // `training_id = id` would compare the records' own columns.
        assigned: sql<number>`(select count(*)::int from compliance_records cr where cr.institution_id = compliance_trainings.institution_id and cr.training_id = compliance_trainings.id and cr.cycle = 1)`,
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
 * then COMPLETED (a completion recorded for the cycle, or the course completed since the cycle
 * began), then OVERDUE (past due), else ASSIGNED.
 */
const recordColumns = {
  waivedAt: sql`r.waived_at`,
  completedAt: sql`r.completed_at`,
  assignedAt: sql`r.assigned_at`,
  dueAt: sql`r.due_at`,
  enrollmentCompletedAt: sql`e.completed_at`,
};
const completionSql = complianceCompletionSql(recordColumns);
const statusSql = (now: Date) => complianceStatusSql(recordColumns, now);

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
      ${completionSql} as completed_at,
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
  studentId: r.person_id,
  classId: r.class_id,
  sectionId: r.section_id,
  cycle: r.cycle,
  status: r.status,
  assignedAt: iso(r.assigned_at),
  dueAt: iso(r.due_at),
  dueDate: iso(r.due_at),
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
  // The caller's own staff records exist before any listing, theirs or everyone's.
  await assignStaffRole(ctx);
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
  const total = await pageTotal(rows, page, async () => {
    const [row] = await rawRows<{ n: number }>(ctx.db, sql`select count(*)::int as n from (${currentRecords(ctx.institutionId, now, filters)}) y`);
    return Number(row?.n ?? 0);
  });
  return { rows: rows.map(recordDto), meta: pageMeta(page, total) };
}

/**
 * Staff roles have no roster: a targeted TEACHER or ADMIN gets their records when they first
 * read them, due by the training's date while it is ahead, else a full window from now.
 */
async function assignStaffRole(ctx: ServiceContext) {
  if (ctx.actor.role !== 'TEACHER' && ctx.actor.role !== 'ADMIN') return;
  const now = ctx.clock.now().toISOString();
  await ctx.db.execute(sql`insert into ${complianceRecords} (institution_id, id, training_id, person_id, cycle, assigned_at, due_at, created_at, updated_at)
    select t.institution_id, ${newId()} || '-' || t.id, t.id, ${ctx.actor.personId}, 1, ${now}::timestamptz,
      case when t.due_date > ${now}::timestamptz then t.due_date else ${now}::timestamptz + greatest(t.due_date - t.created_at, interval '0') end, ${now}::timestamptz, ${now}::timestamptz
    from ${complianceTrainings} t where ${inTenantAs(ctx, 't')} and t.roles ? ${ctx.actor.role}
    on conflict do nothing`);
}

/** POST /api/compliance/waive (ADMIN): the current cycle of a record is waived, with the reason. */
export async function waive(ctx: ServiceContext, body: WaiveBody) {
  await requireAccess(ctx, 'institution.admin', null);
  return withTx(ctx, async (tx) => {
    const personId = body.personId ?? body.studentId;
    const [record] = await tx.db
      .select()
      .from(complianceRecords)
      .where(
        body.recordId !== undefined
          ? byId(tx, complianceRecords, body.recordId)
          : and(inTenant(tx, complianceRecords), eq(complianceRecords.trainingId, body.trainingId!), eq(complianceRecords.personId, personId!)),
      )
      .orderBy(desc(complianceRecords.cycle))
      .limit(1)
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

/** The session a sweep step runs as: the training's creator (the admin who required it), outside any request. */
const creatorOf = (t: Pick<ComplianceTraining, 'institutionId' | 'createdBy'>): Session => serviceSession(t.institutionId, t.createdBy);

type SweepDeps = Deps;

export interface SweepSummary {
  /** People newly assigned (students who joined a targeted class or section). */
  assigned: number;
  /** Next cycles opened. */
  reopened: number;
  /** Records reminded (due soon or overdue). */
  reminded: number;
  /** Steps that failed (logged; the job fails after the others ran, so the queue retries it). */
  failed: number;
}

/**
 * The hourly sweep (worker job `compliance.sweep`), in order: records completions; assigns
 * students who joined a targeted class or section since (the CRM roster read again); opens the
 * next cycle of a recurring training once a completion expires; reminds people whose obligation
 * is due within 7 days (once per cycle) and those who became overdue (once). Each step is
 * conditional, so a second run in the hour does nothing new, and each training's changes are
 * one transaction with their audit rows and notifications: a failure loses nothing and the next
 * run (or the queue's retry) picks it up.
 */
export async function sweepCompliance(deps: SweepDeps): Promise<SweepSummary> {
  const db = deps.database.db;
  const nowIso = deps.clock.now().toISOString();
  await db.execute(sql`update ${complianceRecords} r set completed_at = e.completed_at, updated_at = ${nowIso}::timestamptz
    from ${complianceTrainings} t, enrollments e
    where t.institution_id = r.institution_id and t.id = r.training_id and e.institution_id = r.institution_id and e.course_id = t.course_id
      and e.student_id = r.person_id and e.status = 'COMPLETED' and e.completed_at >= r.assigned_at and r.completed_at is null`);
  const failures: unknown[] = [];
  const attempt = async <T>(what: string, fallback: T, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (err) {
      deps.log.error({ err }, `[lms] compliance sweep: ${what} failed`);
      failures.push(err);
      return fallback;
    }
  };
  const assigned = await assignNewcomers(deps, attempt);
  const reopened = await openNextCycles(deps, attempt);
  const reminded = await sendReminders(deps, attempt);
  if (failures.length > 0) throw new Error(`compliance sweep: ${failures.length} step(s) failed; see the log`, { cause: failures[0] });
  return { assigned, reopened, reminded, failed: failures.length };
}

type Attempt = <T>(what: string, fallback: T, run: () => Promise<T>) => Promise<T>;

/** Students who joined a targeted class or section since the training began get their first cycle and an enrollment. */
async function assignNewcomers(deps: SweepDeps, attempt: Attempt): Promise<number> {
  const trainings = await deps.database.db
    .select()
    .from(complianceTrainings)
    .where(sql`jsonb_array_length(${complianceTrainings.classIds}) > 0 or jsonb_array_length(${complianceTrainings.sectionIds}) > 0 or ${complianceTrainings.roles} ? 'STUDENT'`)
    .orderBy(complianceTrainings.institutionId, complianceTrainings.createdAt);
  const byInstitution = new Map<string, ComplianceTraining[]>();
  for (const t of trainings) byInstitution.set(t.institutionId, [...(byInstitution.get(t.institutionId) ?? []), t]);
  let assigned = 0;
  for (const [institutionId, list] of byInstitution) {
    const base = serviceContext(deps, creatorOf(list[0]!), deps.log, null);
    const slug = await attempt(`institution slug of ${institutionId}`, null, () => requireInstitutionSlug(base, institutionId));
    if (!slug) continue;
    const rosters = new Map<string, Promise<CrmRosterEntry[] | null>>();
    for (const training of list) {
      const ctx = serviceContext(deps, creatorOf(training), deps.log, null);
      const people = await attempt(`roster of training ${training.id}`, null, () => targetedStudents(ctx, slug, training, { strict: false, rosters }));
      if (!people || people.size === 0) continue;
      assigned += await attempt(`assigning newcomers to training ${training.id}`, 0, () =>
        withTx(ctx, async (tx) => {
          const now = tx.clock.now();
          const fresh = await insertFirstCycle(tx, training, people, lateDueDate(training, now));
          const [course] = await tx.db
            .select()
            .from(courses)
            .where(byId(tx, courses, training.courseId));
          // Newcomers, and anyone of the roster never enrolled (the course was not yet published when they were assigned).
          const enrolled = await tx.db
            .select({ studentId: enrollments.studentId })
            .from(enrollments)
            .where(and(inTenant(tx, enrollments), sql`${enrollments.courseId} = ${training.courseId}`, inArray(enrollments.studentId, [...people.keys()])));
          const known = new Set(enrolled.map((e) => e.studentId));
          const toEnroll = [...new Set([...fresh, ...[...people.keys()].filter((id) => !known.has(id))])];
          if (course) await enrollAssigned(tx, training, course, toEnroll, 'compliance.sweep');
          return fresh.length;
        }),
      );
    }
  }
  return assigned;
}

/**
 * Recurrence: once a cycle's completion expires (`completed_at + recurrenceMonths`), the next
 * cycle opens then, due a full window later (the training's due date minus its creation; none
 * for a training created past its due date, whose next cycles are due as they open), and
 * the learner's COMPLETED enrollment is reopened so the course can be completed again. A waiver
 * covers one cycle: a waived cycle that was never completed counts from the waiver, so the
 * obligation comes back `recurrenceMonths` after it (a one-off training's waiver is final).
 */
async function openNextCycles(deps: SweepDeps, attempt: Attempt): Promise<number> {
  const nowIso = deps.clock.now().toISOString();
  const due = await deps.database.db
    .selectDistinct({ training: complianceTrainings })
    .from(complianceRecords)
    .innerJoin(complianceTrainings, sql`${complianceTrainings.institutionId} = ${complianceRecords.institutionId} and ${complianceTrainings.id} = ${complianceRecords.trainingId}`)
    .where(
      sql`${complianceTrainings.recurrenceMonths} is not null
        and coalesce(${complianceRecords.completedAt}, ${complianceRecords.waivedAt}) + make_interval(months => ${complianceTrainings.recurrenceMonths}) <= ${nowIso}::timestamptz`,
    );
  let reopened = 0;
  for (const { training } of due) {
    const ctx = serviceContext(deps, creatorOf(training), deps.log, null);
    reopened += await attempt(`next cycle of training ${training.id}`, 0, () =>
      withTx(ctx, async (tx) => {
        const now = tx.clock.now().toISOString();
        const opened = await rawRows<{ person_id: string; cycle: number }>(
          tx.db,
          sql`insert into ${complianceRecords} (institution_id, id, training_id, person_id, class_id, section_id, cycle, assigned_at, due_at, created_at, updated_at)
              select r.institution_id, r.id || '-c' || (r.cycle + 1), r.training_id, r.person_id, r.class_id, r.section_id, r.cycle + 1,
                coalesce(r.completed_at, r.waived_at) + make_interval(months => t.recurrence_months),
                coalesce(r.completed_at, r.waived_at) + make_interval(months => t.recurrence_months) + greatest(t.due_date - t.created_at, interval '0'),
                ${now}::timestamptz, ${now}::timestamptz
              from ${complianceRecords} r join ${complianceTrainings} t on t.institution_id = r.institution_id and t.id = r.training_id
              where r.institution_id = ${tx.institutionId} and r.training_id = ${training.id} and t.recurrence_months is not null
                and coalesce(r.completed_at, r.waived_at) + make_interval(months => t.recurrence_months) <= ${now}::timestamptz
                and not exists (select 1 from ${complianceRecords} n where n.institution_id = r.institution_id and n.training_id = r.training_id and n.person_id = r.person_id and n.cycle > r.cycle)
              on conflict do nothing
              returning person_id, cycle`,
        );
        await reopenEnrollments(
          tx,
          training,
          opened.map((o) => ({ personId: o.person_id, cycle: Number(o.cycle) })),
          'compliance.sweep',
        );
        return opened.length;
      }),
    );
  }
  return reopened;
}

/**
 * `COMPLIANCE_DUE` once within 7 days of a cycle's due date and once when it is overdue. The mark
 * (`reminded_at`, `overdue_notified_at`) and the notification are written in one transaction per
 * training, due date and kind, so a failure leaves the mark unset and the next run sends it.
 */
async function sendReminders(deps: SweepDeps, attempt: Attempt): Promise<number> {
  const now = deps.clock.now();
  const nowIso = now.toISOString();
  const soon = new Date(now.getTime() + REMINDER_LEAD_MS).toISOString();
  const candidates = await rawRows<{ id: string; institution_id: string; training_id: string; created_by: string; title: string; due_at: string | Date; kind: 'soon' | 'overdue' }>(
    deps.database.db,
    sql`select r.id, r.institution_id, r.training_id, t.created_by, t.title, r.due_at,
          case when r.due_at < ${nowIso}::timestamptz then 'overdue' else 'soon' end as kind
        from ${complianceRecords} r join ${complianceTrainings} t on t.institution_id = r.institution_id and t.id = r.training_id
        where r.waived_at is null and r.completed_at is null
          and ((r.due_at >= ${nowIso}::timestamptz and r.due_at < ${soon}::timestamptz and r.reminded_at is null)
            or (r.due_at < ${nowIso}::timestamptz and r.overdue_notified_at is null))
        order by r.institution_id, r.training_id, r.due_at, r.id`,
  );
  const groups = new Map<string, typeof candidates>();
  for (const r of candidates) {
    const key = `${r.institution_id}|${r.training_id}|${r.kind}|${new Date(r.due_at).toISOString()}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  let reminded = 0;
  for (const rows of groups.values()) {
    const first = rows[0]!;
    const dueAt = new Date(first.due_at);
    const overdue = first.kind === 'overdue';
    const ctx = serviceContext(deps, creatorOf({ institutionId: first.institution_id, createdBy: first.created_by }), deps.log, null);
    reminded += await attempt(`reminders of training ${first.training_id}`, 0, () =>
      withTx(ctx, async (tx) => {
        const marked = await tx.db
          .update(complianceRecords)
          .set(overdue ? { overdueNotifiedAt: now, updatedAt: now } : { remindedAt: now, updatedAt: now })
          .where(
            and(
              inTenant(tx, complianceRecords),
              inArray(
                complianceRecords.id,
                rows.map((r) => r.id),
              ),
              overdue ? sql`${complianceRecords.overdueNotifiedAt} is null` : sql`${complianceRecords.remindedAt} is null`,
              sql`${complianceRecords.completedAt} is null and ${complianceRecords.waivedAt} is null`,
            ),
          )
          .returning({ personId: complianceRecords.personId });
        await notify(tx, {
          institutionId: tx.institutionId,
          key: 'COMPLIANCE_DUE',
          recipients: marked.map((r) => r.personId),
          metadata: { trainingId: first.training_id, title: first.title, dueDate: dueAt.toISOString().slice(0, 10), overdue },
          actionUrl: '/compliance',
          dedupeKey: `compliance:${first.training_id}:${first.kind}:${dueAt.toISOString()}`,
        });
        return marked.length;
      }),
    );
  }
  return reminded;
}
