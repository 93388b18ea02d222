import { sql } from 'drizzle-orm';

// Both rules are SQL over fixed aliases: `e` enrollments, `s` live_sessions and `p`
// live_session_participants (possibly a null outer-join row).

/** Attended: marked PRESENT, or not marked and joined at least once. Never null. */
const attended = `coalesce(p.mark = 'PRESENT' or (p.mark is null and coalesce(p.join_count, 0) > 0), false)`;

/**
 * A COMPLETED session the student did not attend counts as missed only when they were an active
 * learner while it ran: enrolled before it ended (its end time, else its planned end), and, for an
 * enrollment that is no longer ACTIVE, completed or dropped only after it began. A student who
 * joins a course this week has not missed last week's classes, and one who finished it (and may
 * no longer join) has not missed next week's.
 */
const activeWhileHeld = `e.enrolled_at <= coalesce(s.ended_at, s.scheduled_at + make_interval(mins => s.duration_minutes))
  and (e.status = 'ACTIVE' or coalesce(s.started_at, s.scheduled_at) < coalesce(e.completed_at, e.dropped_at))`;

export const ATTENDED = sql.raw(attended);
export const MISSED = sql.raw(`(not ${attended} and coalesce(${activeWhileHeld}, false))`);
