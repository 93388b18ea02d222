import { and, asc, count, eq, gte, inArray, lt, sql } from 'drizzle-orm';
import { withTx, type ServiceContext } from '../../platform/context.js';
import { rawRows } from '../../platform/db/client.js';
import { byId, inTenant, inTenantAs } from '../../platform/db/tenancy.js';
import { iso } from '../../platform/dto.js';
import { conflict, validationError } from '../../platform/http/errors.js';
import { pageMeta, pageOffset, toPage } from '../../platform/http/pagination.js';
import { endOf } from '../../platform/http/time-range.js';
import { newId } from '../../platform/ids.js';
import { requireAccess, visibleLiveSessions } from '../access/access.service.js';
import { enrollments } from '../enrollments/enrollments.tables.js';
import { institutionSlug } from '../institutions/institutions.service.js';
import { requireStaffUsers } from '../institutions/staff.js';
import { notify } from '../notifications/notify.js';
import { calendarFileName, sessionCalendar, sessionPath } from './live-sessions.calendar.js';
import { sessionDto } from './live-sessions.dto.js';
import { reload, stopActiveRecording } from './live-sessions.recording.js';
import { ATTENDANCE_PAGE_SIZE, type AttendanceInput, type CreateSessionInput, type ListSessionsQuery } from './live-sessions.schemas.js';
import { liveSessionParticipants, liveSessions, ROSTER_STATUSES, type LiveSession } from './live-sessions.tables.js';
import { ATTENDED, MISSED } from './live-sessions.attendance-rule.js';
import { audit, auditCreate, auditUpdate } from '../audit/audit.js';

async function isActiveLearner(ctx: ServiceContext, courseId: string, personId: string) {
  const [row] = await ctx.db
    .select({ id: enrollments.id })
    .from(enrollments)
    .where(and(inTenant(ctx, enrollments), eq(enrollments.courseId, courseId), eq(enrollments.studentId, personId), eq(enrollments.status, 'ACTIVE')))
    .limit(1);
  return row !== undefined;
}

/** `<RECORDING_ROOM_PREFIX>-<institution slug>-<session id>` (spec 2.7). */
export const roomNameOf = (prefix: string, slug: string, sessionId: string) => `${prefix}-${slug}-${sessionId}`;

// ── lifecycle ────────────────────────────────────────────────────────────────

/**
 * POST /api/live-sessions: canManageCourses; the host is the caller unless `hostId` names another
 * person. The host controls the session and sees its roster, so it must be staff of the
 * institution as the CRM knows them, or a learner ACTIVE in the course (a student-led session);
 * anyone else (a stranger, a parent, another institution's teacher) is 400. An archived course
 * takes no new sessions (409). In the same transaction every ACTIVE enrollment of the course gets
 * LIVE_CLASS_SCHEDULED (one bulk notify).
 */
export async function createSession(ctx: ServiceContext, input: CreateSessionInput) {
  const course = await requireAccess(ctx, 'liveSession.create', input.courseId);
  if (course.status === 'ARCHIVED') throw conflict('An archived course cannot take new live sessions');
  if (input.hostId !== undefined && input.hostId !== ctx.actor.personId && !(await isActiveLearner(ctx, course.id, input.hostId))) {
    await requireStaffUsers(ctx, [input.hostId], 'body.hostId', { single: true });
  }
  return withTx(ctx, async (tx) => {
    const now = tx.clock.now();
    const [row] = await tx.db
      .insert(liveSessions)
      .values({
        institutionId: tx.institutionId,
        id: newId(),
        courseId: course.id,
        title: input.title,
        description: input.description ?? null,
        scheduledAt: new Date(input.scheduledAt),
        durationMinutes: input.durationMinutes,
        hostId: input.hostId ?? tx.actor.personId,
        createdBy: tx.actor.personId,
        status: 'SCHEDULED',
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    await auditCreate(tx, 'live_session', row!.id, row!, ['courseId', 'title', 'scheduledAt', 'durationMinutes', 'hostId']);
    const session = row!;
    const roster = await tx.db
      .select({ studentId: enrollments.studentId })
      .from(enrollments)
      .where(and(inTenant(tx, enrollments), eq(enrollments.courseId, course.id), eq(enrollments.status, 'ACTIVE')));
    await notify(tx, {
      institutionId: tx.institutionId,
      key: 'LIVE_CLASS_SCHEDULED',
      recipients: roster.map((r) => r.studentId),
      metadata: {
        sessionId: session.id,
        courseId: course.id,
        title: session.title,
        courseTitle: course.title,
        scheduledAt: session.scheduledAt.toISOString(),
        durationMinutes: session.durationMinutes,
      },
      actionUrl: sessionPath(session.id),
    });
    return sessionDto(session);
  });
}

/** GET /api/live-sessions: managers see the institution's sessions; others those they host and those of their courses. */
export async function listSessions(ctx: ServiceContext, query: ListSessionsQuery) {
  const page = toPage(query);
  const where = and(
    inTenant(ctx, liveSessions),
    visibleLiveSessions(ctx),
    query.courseId ? eq(liveSessions.courseId, query.courseId) : undefined,
    query.status ? eq(liveSessions.status, query.status) : undefined,
    query.from ? gte(liveSessions.scheduledAt, new Date(query.from)) : undefined,
    query.to ? lt(liveSessions.scheduledAt, endOf(query.to)) : undefined,
  );
  const [rows, [total]] = await Promise.all([
    ctx.db.select().from(liveSessions).where(where).orderBy(asc(liveSessions.scheduledAt), asc(liveSessions.id)).limit(page.perPage).offset(pageOffset(page)),
    ctx.db.select({ n: count() }).from(liveSessions).where(where),
  ]);
  return { rows: rows.map(sessionDto), meta: pageMeta(page, total?.n ?? 0) };
}

export async function getSession(ctx: ServiceContext, id: string) {
  const { session } = await requireAccess(ctx, 'liveSession.view', id);
  return sessionDto(session);
}

/**
 * POST /{id}/start: SCHEDULED → LIVE, `startedAt` and the room name stamped. Starting a LIVE
 * session again answers it unchanged; a COMPLETED one is 409. Without an institution slug
 * (the CRM does not know the institution) the session goes LIVE without a room, so it cannot
 * be recorded (recording/start answers 409).
 */
export async function startSession(ctx: ServiceContext, id: string) {
  const { session } = await requireAccess(ctx, 'liveSession.manage', id);
  if (session.status === 'LIVE') return sessionDto(session);
  if (session.status !== 'SCHEDULED') throw conflict(`The live session is ${session.status}; only a SCHEDULED session can start`, { status: session.status });
  const slug = await institutionSlug(ctx, ctx.institutionId).catch(() => null);
  if (!slug) ctx.log.warn({ sessionId: id }, 'live session started without a room name: the institution slug is unknown');
  const now = ctx.clock.now();
  const started = await withTx(ctx, async (tx) => {
    const [row] = await tx.db
      .update(liveSessions)
      .set({ status: 'LIVE', startedAt: now, roomName: slug ? roomNameOf(ctx.config.RECORDING_ROOM_PREFIX, slug, id) : null, updatedAt: now })
      .where(and(byId(tx, liveSessions, id), eq(liveSessions.status, 'SCHEDULED')))
      .returning();
    if (row) await auditUpdate(tx, 'live_session', id, session, row, ['status', 'startedAt', 'roomName'], 'start');
    return row;
  });
  if (started) return sessionDto(started);
  // Someone else changed it in between: a concurrent start is fine, anything else is a conflict.
  const current = await reload(ctx, id);
  if (current.status === 'LIVE') return sessionDto(current);
  throw conflict(`The live session is ${current.status}; only a SCHEDULED session can start`, { status: current.status });
}

/**
 * POST /{id}/end: LIVE → COMPLETED, `endedAt` stamped; ending a COMPLETED session answers it
 * unchanged; a SCHEDULED one is 409. A recording still PENDING or RECORDING is stopped as by
 * recording/stop (a recorder failure marks it FAILED but does not fail the end).
 */
export async function endSession(ctx: ServiceContext, id: string) {
  const { session } = await requireAccess(ctx, 'liveSession.manage', id);
  if (session.status === 'COMPLETED') return sessionDto(session);
  if (session.status !== 'LIVE') throw conflict('The live session has not started', { status: session.status });
  const now = ctx.clock.now();
  const ended = await withTx(ctx, async (tx) => {
    const [row] = await tx.db
      .update(liveSessions)
      .set({ status: 'COMPLETED', endedAt: now, updatedAt: now })
      .where(and(byId(tx, liveSessions, id), eq(liveSessions.status, 'LIVE')))
      .returning();
    if (row) await auditUpdate(tx, 'live_session', id, session, row, ['status', 'endedAt'], 'end');
    return row;
  });
  if (!ended) {
    const current = await reload(ctx, id);
    if (current.status === 'COMPLETED') return sessionDto(current);
    throw conflict('The live session has not started', { status: current.status });
  }
  if (ended.recordingStatus === 'PENDING' || ended.recordingStatus === 'RECORDING') {
    await stopActiveRecording(ctx, id, { failQuietly: true });
    return sessionDto(await reload(ctx, id));
  }
  return sessionDto(ended);
}

// ── participation ────────────────────────────────────────────────────────────

/**
 * POST /{id}/join: the host (or ADMIN) and students with an ACTIVE enrollment, while the session
 * is LIVE (else 409). Records the join (first, last, count) and answers how to get in.
 */
export async function joinSession(ctx: ServiceContext, id: string) {
  const { session, role } = await requireAccess(ctx, 'liveSession.join', id);
  if (session.status !== 'LIVE') throw conflict(session.status === 'SCHEDULED' ? 'The live session has not started yet' : 'The live session has ended', { status: session.status });
  const now = ctx.clock.now().toISOString();
  const [row] = await rawRows<{ join_count: number }>(
    ctx.db,
    sql`insert into live_session_participants as p (institution_id, id, session_id, person_id, first_joined_at, last_joined_at, join_count, created_at, updated_at)
        values (${ctx.institutionId}, ${newId()}, ${id}, ${ctx.actor.personId}, ${now}, ${now}, 1, ${now}, ${now})
        on conflict (institution_id, session_id, person_id) do update set
          first_joined_at = coalesce(p.first_joined_at, excluded.first_joined_at),
          last_joined_at = excluded.last_joined_at,
          join_count = p.join_count + 1,
          updated_at = excluded.updated_at
        returning join_count`,
  );
  return {
    sessionId: id,
    role,
    roomName: session.roomName,
    joinUrl: `${ctx.config.publicBaseUrl}${sessionPath(id)}`,
    joinedAt: now,
    joinCount: Number(row!.join_count),
  };
}

/** POST /{id}/register: a student with an ACTIVE enrollment signs up ahead; idempotent (the first time counts). */
export async function registerForSession(ctx: ServiceContext, id: string) {
  const { session } = await requireAccess(ctx, 'liveSession.register', id);
  if (session.status === 'COMPLETED') throw conflict('The live session has ended', { status: session.status });
  const now = ctx.clock.now().toISOString();
  const person = ctx.actor.personId;
  const [row] = await rawRows<{ registered_at: string | Date; prior: string | Date | null }>(
    ctx.db,
    sql`with prior as (
          select registered_at from live_session_participants
          where ${inTenantAs(ctx, 'live_session_participants')} and session_id = ${id} and person_id = ${person}
        )
        insert into live_session_participants as p (institution_id, id, session_id, person_id, registered_at, created_at, updated_at)
        values (${ctx.institutionId}, ${newId()}, ${id}, ${person}, ${now}, ${now}, ${now})
        on conflict (institution_id, session_id, person_id) do update set
          registered_at = coalesce(p.registered_at, excluded.registered_at),
          updated_at = case when p.registered_at is null then excluded.updated_at else p.updated_at end
        returning registered_at, (select registered_at from prior) as prior`,
  );
  return { sessionId: id, studentId: person, registeredAt: iso(row!.registered_at), alreadyRegistered: row!.prior !== null };
}

// ── attendance ───────────────────────────────────────────────────────────────

interface Totals {
  students: number;
  registered: number;
  joined: number;
  marked: number;
  attended: number;
  missed: number;
}

/** Spec 3.3: attendance is final (attended/missed) only once the session is COMPLETED. */
const isFinal = (s: LiveSession) => s.status === 'COMPLETED';

/** The roster of a session (ACTIVE and COMPLETED enrollments of its course) with each student's record. */
const rosterJoin = (ctx: ServiceContext, session: LiveSession) => sql`
  from enrollments e
  join live_sessions s on s.institution_id = e.institution_id and s.id = ${session.id}
  left join live_session_participants p
    on p.institution_id = e.institution_id and p.session_id = s.id and p.person_id = e.student_id
  where ${inTenantAs(ctx, 'e')} and e.course_id = ${session.courseId} and e.status in ('ACTIVE', 'COMPLETED')`;

async function totalsOf(ctx: ServiceContext, session: LiveSession): Promise<Totals> {
  const [row] = await rawRows<Record<keyof Totals, number>>(
    ctx.db,
    sql`select count(*)::int as students, count(p.registered_at)::int as registered,
          count(*) filter (where coalesce(p.join_count, 0) > 0)::int as joined, count(p.mark)::int as marked,
          count(*) filter (where ${ATTENDED})::int as attended, count(*) filter (where ${MISSED})::int as missed
        ${rosterJoin(ctx, session)}`,
  );
  const final = isFinal(session);
  return {
    students: Number(row!.students),
    registered: Number(row!.registered),
    joined: Number(row!.joined),
    marked: Number(row!.marked),
    attended: final ? Number(row!.attended) : 0,
    missed: final ? Number(row!.missed) : 0,
  };
}

/** GET /{id}/attendance: the roster with registrations, joins, marks and (once COMPLETED) attended/missed. */
export async function getAttendance(ctx: ServiceContext, id: string, query: { page: number; perPage?: number; limit?: number }) {
  const { session } = await requireAccess(ctx, 'liveSession.attendance', id);
  const page = toPage(query, ATTENDANCE_PAGE_SIZE);
  const final = isFinal(session);
  const [totals, rows] = await Promise.all([
    totalsOf(ctx, session),
    rawRows<{
      student_id: string;
      registered_at: string | null;
      first_joined_at: string | null;
      join_count: number | null;
      mark: 'PRESENT' | 'ABSENT' | null;
      marked_at: string | null;
      attended: boolean;
      missed: boolean;
    }>(
      ctx.db,
      sql`select e.student_id, p.registered_at, p.first_joined_at, p.join_count, p.mark, p.marked_at, ${ATTENDED} as attended, ${MISSED} as missed
          ${rosterJoin(ctx, session)}
          order by e.student_id limit ${page.perPage} offset ${pageOffset(page)}`,
    ),
  ]);
  return {
    data: {
      sessionId: session.id,
      sessionStatus: session.status,
      final,
      totals,
      students: rows.map((r) => ({
        studentId: r.student_id,
        registeredAt: iso(r.registered_at),
        firstJoinedAt: iso(r.first_joined_at),
        joinCount: Number(r.join_count ?? 0),
        mark: r.mark,
        markedAt: iso(r.marked_at),
        attendance: !final ? null : r.attended ? ('attended' as const) : r.missed ? ('missed' as const) : ('not-enrolled' as const),
      })),
    },
    meta: pageMeta(page, totals.students),
  };
}

/**
 * POST /{id}/attendance (host or ADMIN): marks students PRESENT or ABSENT, once the session is
 * LIVE or COMPLETED (409 before). Every student must be on the roster (400 otherwise). A mark
 * overrides what the joins say; students left unmarked count by their joins.
 */
export async function markAttendance(ctx: ServiceContext, id: string, input: AttendanceInput) {
  const { session } = await requireAccess(ctx, 'liveSession.manage', id);
  if (session.status === 'SCHEDULED') throw conflict('Attendance can be recorded once the live session has started', { status: session.status });
  const ids = input.records.map((r) => r.studentId);
  return withTx(ctx, async (tx) => {
    const enrolled = await tx.db
      .select({ studentId: enrollments.studentId })
      .from(enrollments)
      .where(and(inTenant(tx, enrollments), eq(enrollments.courseId, session.courseId), inArray(enrollments.status, [...ROSTER_STATUSES]), inArray(enrollments.studentId, ids)));
    const known = new Set(enrolled.map((e) => e.studentId));
    const unknown = ids.filter((s) => !known.has(s));
    if (unknown.length > 0) {
      throw validationError(
        `${unknown.length} of the students are not enrolled in this course`,
        unknown.slice(0, 20).map((s) => ({ field: `body.records.${ids.indexOf(s)}.studentId`, message: `${s} is not enrolled` })),
      );
    }
    const now = tx.clock.now().toISOString();
    const previous = await tx.db
      .select({ personId: liveSessionParticipants.personId, mark: liveSessionParticipants.mark })
      .from(liveSessionParticipants)
      .where(and(inTenant(tx, liveSessionParticipants), eq(liveSessionParticipants.sessionId, id), inArray(liveSessionParticipants.personId, ids)));
    await audit(tx, {
      action: 'live_session.attendance',
      targetType: 'live_session',
      targetId: id,
      before: { marks: Object.fromEntries(previous.map((p) => [p.personId, p.mark])) },
      after: { marks: Object.fromEntries(input.records.map((r) => [r.studentId, r.status])) },
    });
    await tx.db.execute(sql`
      insert into live_session_participants as p (institution_id, id, session_id, person_id, mark, marked_by, marked_at, created_at, updated_at)
      select ${tx.institutionId}, u.id, ${id}, u.person, u.mark, ${tx.actor.personId}, ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz
      from unnest(${sql.param(input.records.map(() => newId()))}::text[], ${sql.param(ids)}::text[], ${sql.param(input.records.map((r) => r.status))}::text[]) as u(id, person, mark)
      on conflict (institution_id, session_id, person_id) do update set
        mark = excluded.mark, marked_by = excluded.marked_by, marked_at = excluded.marked_at, updated_at = excluded.updated_at`);
    return { sessionId: id, updated: ids.length, final: isFinal(session), totals: await totalsOf(tx, session) };
  });
}

/**
 * GET /api/live-sessions/attendance-summary: per student of a course, how many of its COMPLETED
 * sessions they attended and missed (spec 3.3: only COMPLETED sessions count). Managers see
 * every ACTIVE or COMPLETED enrollment (or one `studentId`); a learner sees themself.
 */
export async function courseAttendance(ctx: ServiceContext, query: { courseId: string; studentId?: string; page: number; perPage?: number; limit?: number }) {
  const { course, studentId } = await requireAccess(ctx, 'liveSession.courseAttendance', { courseId: query.courseId, studentId: query.studentId });
  const page = toPage(query, ATTENDANCE_PAGE_SIZE);
  const [done] = await ctx.db
    .select({ n: count() })
    .from(liveSessions)
    .where(and(inTenant(ctx, liveSessions), eq(liveSessions.courseId, course.id), eq(liveSessions.status, 'COMPLETED')));
  const completed = done?.n ?? 0;
  const who = studentId !== null ? sql`e.student_id = ${studentId}` : sql`e.status in ('ACTIVE', 'COMPLETED')`;
  const from = sql`
    from enrollments e
    left join live_sessions s on s.institution_id = e.institution_id and s.course_id = e.course_id and s.status = 'COMPLETED'
    left join live_session_participants p on p.institution_id = e.institution_id and p.session_id = s.id and p.person_id = e.student_id
    where ${inTenantAs(ctx, 'e')} and e.course_id = ${course.id} and ${who}`;
  const [rows, [total]] = await Promise.all([
    rawRows<{ student_id: string; attended: number; missed: number }>(
      ctx.db,
      sql`select e.student_id, (count(*) filter (where ${ATTENDED}))::int as attended, (count(*) filter (where ${MISSED}))::int as missed ${from}
          group by e.student_id order by e.student_id limit ${page.perPage} offset ${pageOffset(page)}`,
    ),
    rawRows<{ n: number }>(ctx.db, sql`select count(*)::int as n from enrollments e where ${inTenantAs(ctx, 'e')} and e.course_id = ${course.id} and ${who}`),
  ]);
  return {
    data: {
      courseId: course.id,
      completedSessions: completed,
      students: rows.map((r) => {
        const attended = Number(r.attended);
        const missed = Number(r.missed);
        return { studentId: r.student_id, attended, missed, rate: attended + missed > 0 ? attended / (attended + missed) : null };
      }),
    },
    meta: pageMeta(page, Number(total?.n ?? 0)),
  };
}

// ── calendar ─────────────────────────────────────────────────────────────────

/** GET /{id}/ics: the session as an RFC 5545 calendar file. */
export async function sessionIcs(ctx: ServiceContext, id: string) {
  const { session, course } = await requireAccess(ctx, 'liveSession.view', id);
  return { fileName: calendarFileName(session), body: sessionCalendar(session, course, { publicBaseUrl: ctx.config.publicBaseUrl, now: ctx.clock.now() }) };
}
