import { and, desc, eq, gte, sql } from 'drizzle-orm';
import { DateTime } from 'luxon';
import type { ServiceContext } from '../../platform/context.js';
import { iso } from '../../platform/dto.js';
import { inTenant } from '../../platform/db/tenancy.js';
import { newId } from '../../platform/ids.js';
import { rawRows } from '../../platform/db/client.js';
import { pageMeta, pageTotal } from '../../platform/http/pagination.js';
import { getSettings } from '../institutions/institutions.service.js';
import { displayNames } from '../institutions/display-names.js';
import { notify } from '../notifications/notify.js';
import { activityDays, badgeAwards, pointAwards } from './gamification.tables.js';

/** Points per kind of learning event. */
export const POINTS = { LESSON_COMPLETED: 10, QUIZ_PASSED: 20, ASSIGNMENT_PASSED: 25, COURSE_COMPLETED: 100, STREAK_7: 50, STREAK_30: 200 } as const;
export type PointKind = keyof typeof POINTS;

/** The badges and what earns them. */
export const BADGES = [
  { key: 'FIRST_LESSON', name: 'First steps', description: 'Complete your first lesson.' },
  { key: 'FIRST_COURSE', name: 'Course finisher', description: 'Complete your first course.' },
  { key: 'PERFECT_QUIZ', name: 'Perfect score', description: 'Pass a quiz with 100 %.' },
  { key: 'STREAK_7', name: 'Week streak', description: 'Learn on 7 days in a row.' },
  { key: 'STREAK_30', name: 'Month streak', description: 'Learn on 30 days in a row.' },
] as const;
export type BadgeKey = (typeof BADGES)[number]['key'];

/** A learning event, as the progress module reports it inside its transaction. */
export type LearningEvent =
  | { kind: 'LESSON_COMPLETED'; enrollmentId: string; lessonId: string }
  | { kind: 'QUIZ_PASSED'; lessonId: string; scorePercent: number }
  | { kind: 'ASSIGNMENT_PASSED'; lessonId: string }
  | { kind: 'COURSE_COMPLETED'; courseId: string };

const eventKeyOf = (e: LearningEvent) => {
  switch (e.kind) {
    case 'LESSON_COMPLETED':
      return `lesson:${e.enrollmentId}:${e.lessonId}`;
    case 'QUIZ_PASSED':
      return `quiz:${e.lessonId}`;
    case 'ASSIGNMENT_PASSED':
      return `assignment:${e.lessonId}`;
    case 'COURSE_COMPLETED':
      return `course:${e.courseId}`;
  }
};

/** Longest and current runs of consecutive days, from distinct ISO days sorted ascending. */
export function streaksOf(days: string[], today: string): { currentStreak: number; longestStreak: number } {
  let longest = 0;
  let run = 0;
  let prev: DateTime | null = null;
  for (const d of days) {
    const day = DateTime.fromISO(d, { zone: 'UTC' });
    run = prev && day.diff(prev, 'days').days === 1 ? run + 1 : 1;
    longest = Math.max(longest, run);
    prev = day;
  }
  // The current streak is the run that ends today or yesterday (today may not have activity yet).
  const last = days[days.length - 1];
  const gap = last ? DateTime.fromISO(today, { zone: 'UTC' }).diff(DateTime.fromISO(last, { zone: 'UTC' }), 'days').days : Infinity;
  return { currentStreak: gap <= 1 ? run : 0, longestStreak: longest };
}

async function localToday(ctx: ServiceContext) {
  const { timezone } = await getSettings(ctx.db, ctx.institutionId);
  return { timezone, today: DateTime.fromJSDate(ctx.clock.now(), { zone: timezone }).toISODate()! };
}

async function daysOf(ctx: ServiceContext, studentId: string): Promise<string[]> {
  const rows = await ctx.db
    .select({ day: activityDays.day })
    .from(activityDays)
    .where(and(inTenant(ctx, activityDays), eq(activityDays.studentId, studentId)))
    .orderBy(activityDays.day);
  return rows.map((r) => r.day);
}

/**
 * Records a learner's activity and events in the caller's transaction: the day counts toward
 * streaks (institution time zone), each event's points are awarded once (its key is unique per
 * student, so replays add nothing), streak milestones and badges follow, and a new badge sends
 * BADGE_EARNED. `activeToday: false` is for events the learner did not cause today (a teacher's
 * grade, a course completed because its lessons changed): points and badges, but no streak day.
 */
export async function recordLearning(tx: ServiceContext, studentId: string, events: LearningEvent[], opts: { activeToday?: boolean } = {}) {
  const now = tx.clock.now();
  const { today } = await localToday(tx);
  if (opts.activeToday !== false) {
    await tx.db.insert(activityDays).values({ institutionId: tx.institutionId, id: newId(), studentId, day: today }).onConflictDoNothing();
  }
  const days = await daysOf(tx, studentId);
  const { currentStreak } = streaksOf(days, today);
  const awards: Array<{ key: string; kind: PointKind }> = events.map((e) => ({ key: eventKeyOf(e), kind: e.kind }));
  const badges = new Set<BadgeKey>();
  for (const milestone of [7, 30] as const) {
    if (currentStreak >= milestone) {
      const start = DateTime.fromISO(today)
        .minus({ days: currentStreak - 1 })
        .toISODate();
      awards.push({ key: `streak:${milestone}:${start}`, kind: `STREAK_${milestone}` });
      badges.add(`STREAK_${milestone}`);
    }
  }
  for (const e of events) {
    if (e.kind === 'LESSON_COMPLETED') badges.add('FIRST_LESSON');
    if (e.kind === 'COURSE_COMPLETED') badges.add('FIRST_COURSE');
    if (e.kind === 'QUIZ_PASSED' && e.scorePercent >= 100) badges.add('PERFECT_QUIZ');
  }
  if (awards.length > 0) {
    await tx.db
      .insert(pointAwards)
      .values(awards.map((a) => ({ institutionId: tx.institutionId, id: newId(), studentId, eventKey: a.key, kind: a.kind, points: POINTS[a.kind], awardedAt: now })))
      .onConflictDoNothing();
  }
  if (badges.size > 0) {
    const earned = await tx.db
      .insert(badgeAwards)
      .values([...badges].map((badgeKey) => ({ institutionId: tx.institutionId, id: newId(), studentId, badgeKey, awardedAt: now })))
      .onConflictDoNothing()
      .returning({ badgeKey: badgeAwards.badgeKey });
    for (const { badgeKey } of earned) {
      const badge = BADGES.find((b) => b.key === badgeKey)!;
      await notify(tx, { institutionId: tx.institutionId, key: 'BADGE_EARNED', recipients: [studentId], metadata: { badgeKey, badgeName: badge.name }, actionUrl: '/badges' });
    }
  }
}

/** Totals of a student (the parent overview's gamification block, and /streak). */
export async function totalsOf(ctx: ServiceContext, studentId: string) {
  const [{ today }, days, [points], [badges]] = await Promise.all([
    localToday(ctx),
    daysOf(ctx, studentId),
    ctx.db
      .select({ total: sql<number>`coalesce(sum(${pointAwards.points}), 0)::int` })
      .from(pointAwards)
      .where(and(inTenant(ctx, pointAwards), eq(pointAwards.studentId, studentId))),
    ctx.db
      .select({ n: sql<number>`count(*)::int` })
      .from(badgeAwards)
      .where(and(inTenant(ctx, badgeAwards), eq(badgeAwards.studentId, studentId))),
  ]);
  return { ...streaksOf(days, today), totalPoints: Number(points?.total ?? 0), totalBadges: Number(badges?.n ?? 0), lastActiveDay: days[days.length - 1] ?? null, today };
}

/** GET /api/gamification/streak */
export async function myStreak(ctx: ServiceContext) {
  const t = await totalsOf(ctx, ctx.actor.personId);
  return { currentStreak: t.currentStreak, longestStreak: t.longestStreak, lastActiveDay: t.lastActiveDay, today: t.today };
}

/** GET /api/gamification/badges: mine with earned dates, and the ones not yet earned. */
export async function myBadges(ctx: ServiceContext) {
  const rows = await ctx.db
    .select()
    .from(badgeAwards)
    .where(and(inTenant(ctx, badgeAwards), eq(badgeAwards.studentId, ctx.actor.personId)))
    .orderBy(desc(badgeAwards.awardedAt));
  const earnedKeys = new Set(rows.map((r) => r.badgeKey));
  return {
    earned: rows.flatMap((r) => {
      const b = BADGES.find((x) => x.key === r.badgeKey);
      return b ? [{ ...b, earnedAt: iso(r.awardedAt) }] : [];
    }),
    available: BADGES.filter((b) => !earnedKeys.has(b.key)).map((b) => ({ ...b })),
  };
}

export type LeaderboardPeriod = 'all' | 'month' | 'week';

/**
 * GET /api/gamification/leaderboard: points per student of the caller's institution over the
 * period (this calendar month or ISO week in the institution's zone, or all time), highest
 * first; ties by who reached the total first, then by id, so the order is stable. Names from
 * the CRM through `displayNames` (one optional lookup per distinct person on the page, cached by
 * the CRM client; the generic label when the CRM does not answer).
 */
export async function leaderboard(ctx: ServiceContext, q: { period: LeaderboardPeriod; page: number; perPage: number }) {
  const { timezone } = await localToday(ctx);
  const local = DateTime.fromJSDate(ctx.clock.now(), { zone: timezone });
  const since = q.period === 'month' ? local.startOf('month').toJSDate() : q.period === 'week' ? local.startOf('week').toJSDate() : null;
  const where = and(inTenant(ctx, pointAwards), since ? gte(pointAwards.awardedAt, since) : undefined);
  const offset = (q.page - 1) * q.perPage;
  const rows = await rawRows<{ student_id: string; points: number; reached: string; total: number }>(
    ctx.db,
    sql`select student_id, sum(points)::int as points, max(awarded_at) as reached, count(*) over ()::int as total
        from ${pointAwards} where ${where!}
        group by student_id
        order by points desc, reached asc, student_id asc
        limit ${q.perPage} offset ${offset}`,
  );
  const total = await pageTotal(rows, q, async () => {
    const [row] = await rawRows<{ n: number }>(ctx.db, sql`select count(distinct student_id)::int as n from ${pointAwards} where ${where!}`);
    return Number(row?.n ?? 0);
  });
  const names = await displayNames(
    ctx,
    rows.map((r) => ({ id: r.student_id, label: 'Student' })),
  );
  return {
    rows: rows.map((r, i) => ({
      rank: offset + i + 1,
      studentId: r.student_id,
      name: names.get(r.student_id)!,
      points: Number(r.points),
      isMe: r.student_id === ctx.actor.personId,
    })),
    meta: pageMeta(q, total),
  };
}
