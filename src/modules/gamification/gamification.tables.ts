import { date, index, integer, pgTable, text, timestamp, unique } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * Points, one row per learning event. `event_key` names the event (`lesson:<enrollment>:<lesson>`,
 * `course:<course>`, `streak:7:<first day>` …) and is unique per student, so a replayed event
 * is awarded once.
 */
export const pointAwards = pgTable(
  'gamification_points',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    studentId: text('student_id').notNull(),
    eventKey: text('event_key').notNull(),
    kind: text('kind').notNull(),
    points: integer('points').notNull(),
    awardedAt: ts('awarded_at').notNull(),
  },
  (t) => [
    unique('gamification_points_inst_id_uq').on(t.institutionId, t.id),
    unique('gamification_points_event_uq').on(t.institutionId, t.studentId, t.eventKey),
    index('gamification_points_leaderboard_idx').on(t.institutionId, t.awardedAt, t.studentId),
  ],
);

/** Badges earned, once each per student. */
export const badgeAwards = pgTable(
  'gamification_badges',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    studentId: text('student_id').notNull(),
    badgeKey: text('badge_key').notNull(),
    awardedAt: ts('awarded_at').notNull(),
  },
  (t) => [unique('gamification_badges_inst_id_uq').on(t.institutionId, t.id), unique('gamification_badges_student_uq').on(t.institutionId, t.studentId, t.badgeKey)],
);

/** The calendar days (institution time zone) on which a student learned: streaks are runs of these. */
export const activityDays = pgTable(
  'gamification_activity_days',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    studentId: text('student_id').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
  },
  (t) => [unique('gamification_activity_days_inst_id_uq').on(t.institutionId, t.id), unique('gamification_activity_days_day_uq').on(t.institutionId, t.studentId, t.day)],
);
