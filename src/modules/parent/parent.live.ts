import { sql } from 'drizzle-orm';
import { DateTime } from 'luxon';
import type { ServiceContext } from '../../platform/context.js';
import { rawRows } from '../../platform/db/client.js';
import { inTenantAs } from '../../platform/db/tenancy.js';
import { iso } from '../../platform/dto.js';
import { getSettings } from '../institutions/institutions.service.js';
import { ATTENDED, MISSED } from '../live-sessions/live-sessions.attendance-rule.js';

/**
 * The live-class block of the parent overview (spec 4.6 rule 5): attended and missed among the
 * COMPLETED sessions of the current calendar month (the institution's time zone) of the child's
 * courses, and at most `upcoming` sessions still to come in PUBLISHED courses with an ACTIVE
 * enrollment (not in an archived or unpublished one; the counts keep every course).
 * Attended and missed as the live-session module counts them (live-sessions.attendance-rule.ts:
 * a class held before the child enrolled is not missed). Two queries.
 */
export async function liveClassesOf(ctx: ServiceContext, childId: string, upcoming: number) {
  const { timezone } = await getSettings(ctx.db, ctx.institutionId);
  const now = DateTime.fromJSDate(ctx.clock.now(), { zone: timezone });
  const from = now.startOf('month').toJSDate().toISOString();
  const to = now.startOf('month').plus({ months: 1 }).toJSDate().toISOString();
  const [[month], next] = await Promise.all([
    rawRows<{ attended: number; missed: number }>(
      ctx.db,
      sql`select (count(*) filter (where ${ATTENDED}))::int as attended, (count(*) filter (where ${MISSED}))::int as missed
          from live_sessions s
          join enrollments e on e.institution_id = s.institution_id and e.course_id = s.course_id and e.student_id = ${childId} and e.status in ('ACTIVE', 'COMPLETED')
          left join live_session_participants p on p.institution_id = s.institution_id and p.session_id = s.id and p.person_id = ${childId}
          where ${inTenantAs(ctx, 's')} and s.status = 'COMPLETED'
            and s.scheduled_at >= ${from}::timestamptz and s.scheduled_at < ${to}::timestamptz`,
    ),
    rawRows<{ id: string; title: string; course_id: string; course_title: string; scheduled_at: string; duration_minutes: number }>(
      ctx.db,
      sql`select s.id, s.title, s.course_id, c.title as course_title, s.scheduled_at, s.duration_minutes
          from live_sessions s
          join courses c on c.institution_id = s.institution_id and c.id = s.course_id
          join enrollments e on e.institution_id = s.institution_id and e.course_id = s.course_id and e.student_id = ${childId} and e.status = 'ACTIVE'
          where ${inTenantAs(ctx, 's')} and c.status = 'PUBLISHED' and s.status in ('SCHEDULED', 'LIVE') and s.scheduled_at >= ${ctx.clock.now().toISOString()}::timestamptz
          order by s.scheduled_at asc, s.id asc
          limit ${upcoming}`,
    ),
  ]);
  return {
    attendedThisMonth: Number(month?.attended ?? 0),
    missedThisMonth: Number(month?.missed ?? 0),
    upcoming: next.map((s) => ({
      sessionId: s.id,
      title: s.title,
      courseId: s.course_id,
      courseTitle: s.course_title,
      scheduledAt: iso(s.scheduled_at),
      durationMinutes: Number(s.duration_minutes),
    })),
  };
}
