import { sql, type SQL, type SQLWrapper } from 'drizzle-orm';

/** The participant columns the attended rule reads: the teacher's mark and the join count. */
export interface ParticipantColumns {
  mark: SQLWrapper;
  joinCount: SQLWrapper;
}

/**
 * Attended: marked PRESENT, or not marked and joined at least once. Never null (a missing
 * participant row is not attended). Whether the session is COMPLETED is the caller's condition.
 */
export const attendedBy = ({ mark, joinCount }: ParticipantColumns): SQL => sql`coalesce(${mark} = 'PRESENT' or (${mark} is null and coalesce(${joinCount}, 0) > 0), false)`;

// The roster, course summary and parent overview write their SQL over fixed aliases: `e`
// enrollments, `s` live_sessions and `p` live_session_participants (possibly a null outer-join row).

/**
 * A COMPLETED session the student did not attend counts as missed only when they were an active
 * learner while it ran: enrolled before it ended (its end time, else its planned end), and, for an
 * enrollment that is no longer ACTIVE, completed or dropped only after it began. A student who
 * joins a course this week has not missed last week's classes, and one who finished it (and may
 * no longer join) has not missed next week's.
 */
const activeWhileHeld = sql.raw(`e.enrolled_at <= coalesce(s.ended_at, s.scheduled_at + make_interval(mins => s.duration_minutes))
  and (e.status = 'ACTIVE' or coalesce(s.started_at, s.scheduled_at) < coalesce(e.completed_at, e.dropped_at))`);

export const ATTENDED = attendedBy({ mark: sql.raw('p.mark'), joinCount: sql.raw('p.join_count') });
export const MISSED = sql`(not ${ATTENDED} and coalesce(${activeWhileHeld}, false))`;
