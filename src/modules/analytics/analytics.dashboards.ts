/**
 * Dashboards (spec 4.9): the legacy course analytics endpoint of part 9 and the revenue
 * dashboard. Both are computed from the live tables and the daily snapshots, cached per
 * institution (analytics.cache.ts) until the next analytics-snapshot run.
 */
import { and, asc, eq, gte, lte, sql } from 'drizzle-orm';
import { DateTime } from 'luxon';
import type { ServiceContext } from '../../platform/context.js';
import { rawRows } from '../../platform/db/client.js';
import { inTenant } from '../../platform/db/tenancy.js';
import { validationError } from '../../platform/http/errors.js';
import { requireAccess } from '../access/access.service.js';
import { courseModules, lessons } from '../courses/courses.tables.js';
import { getSettings, requireInstitutionSlug } from '../institutions/institutions.service.js';
import { orderedLessons } from '../learn/drip.js';
import { cachedAnalytics } from './analytics.cache.js';
import { analyticsCourseDailySnapshots } from './analytics.tables.js';

const pct = (part: number, whole: number) => (whole > 0 ? Math.round((part / whole) * 10_000) / 100 : null);
const num = (v: unknown) => (v === null || v === undefined ? null : Math.round(Number(v) * 100) / 100);

/** The time-series window: `to` (default today in the zone) and `from` (default 29 days before), at most 366 days. */
function dayWindow(q: { from?: string; to?: string }, zone: string, now: Date, defaultDays: number) {
  const to = q.to ?? DateTime.fromJSDate(now, { zone }).toISODate()!;
  const from =
    q.from ??
    DateTime.fromISO(to)
      .minus({ days: defaultDays - 1 })
      .toISODate()!;
  if (from > to) throw validationError('from must not be after to', [{ field: 'querystring.from', message: 'after to' }]);
  if (DateTime.fromISO(to).diff(DateTime.fromISO(from), 'days').days > 366)
    throw validationError('At most 366 days', [{ field: 'querystring.from', message: 'window over 366 days' }]);
  return { from, to };
}

/**
 * GET /api/analytics/courses/{id}: enrollments by status, completion rate, average progress and
 * score, per-lesson completion and drop-off in reading order, and the daily series of the
 * course's snapshots.
 */
export async function courseAnalytics(ctx: ServiceContext, courseId: string, q: { from?: string; to?: string }) {
  const course = await requireAccess(ctx, 'analytics.course', courseId);
  const { timezone } = await getSettings(ctx.db, ctx.institutionId);
  const window = dayWindow(q, timezone, ctx.clock.now(), 30);
  return cachedAnalytics(ctx.cache, ctx.institutionId, `course:${course.id}:${window.from}:${window.to}`, async () => {
    const [[totals], mods, ls, progress, series] = await Promise.all([
      rawRows<{ total: number; active: number; completed: number; dropped: number; avg_progress: unknown; avg_score: unknown }>(
        ctx.db,
        sql`select count(*)::int as total,
            (count(*) filter (where status = 'ACTIVE'))::int as active,
            (count(*) filter (where status = 'COMPLETED'))::int as completed,
            (count(*) filter (where status = 'DROPPED'))::int as dropped,
            avg(progress) filter (where status <> 'DROPPED') as avg_progress,
            avg(final_score) as avg_score
          from enrollments where institution_id = ${ctx.institutionId} and course_id = ${course.id}`,
      ),
      ctx.db
        .select()
        .from(courseModules)
        .where(and(inTenant(ctx, courseModules), eq(courseModules.courseId, course.id))),
      ctx.db
        .select()
        .from(lessons)
        .where(and(inTenant(ctx, lessons), eq(lessons.courseId, course.id))),
      rawRows<{ lesson_id: string; started: number; completed: number }>(
        ctx.db,
        sql`select lp.lesson_id, count(*)::int as started, (count(*) filter (where lp.completed))::int as completed
          from lesson_progress lp
          join enrollments e on e.institution_id = lp.institution_id and e.id = lp.enrollment_id
          where lp.institution_id = ${ctx.institutionId} and e.course_id = ${course.id} and e.status <> 'DROPPED'
          group by lp.lesson_id`,
      ),
      ctx.db
        .select()
        .from(analyticsCourseDailySnapshots)
        .where(
          and(
            inTenant(ctx, analyticsCourseDailySnapshots),
            eq(analyticsCourseDailySnapshots.courseId, course.id),
            gte(analyticsCourseDailySnapshots.day, window.from),
            lte(analyticsCourseDailySnapshots.day, window.to),
          ),
        )
        .orderBy(asc(analyticsCourseDailySnapshots.day)),
    ]);
    const t = { total: Number(totals?.total ?? 0), active: Number(totals?.active ?? 0), completed: Number(totals?.completed ?? 0), dropped: Number(totals?.dropped ?? 0) };
    const learners = t.active + t.completed;
    const byLesson = new Map(progress.map((p) => [p.lesson_id, p]));
    const ordered = orderedLessons(mods, ls);
    const leftAfter = await learnersLeftAfter(
      ctx,
      course.id,
      ordered.map((l) => l.id),
    );
    let before = learners;
    const lessonRows = ordered.map((l, i) => {
      const p = byLesson.get(l.id);
      const completed = Number(p?.completed ?? 0);
      // The first lesson loses the learners who have not completed it; a later one, the learners
      // who completed the lesson before it but not this one (a set, not a difference of counts:
      // learners who complete out of order would otherwise hide each other).
      const dropOff = i === 0 ? Math.max(0, learners - completed) : (leftAfter.get(i - 1) ?? 0);
      const row = {
        lessonId: l.id,
        title: l.title,
        type: l.type,
        position: i + 1,
        started: Number(p?.started ?? 0),
        completed,
        completionRate: pct(completed, learners),
        dropOff,
        dropOffRate: pct(dropOff, before),
      };
      before = completed;
      return row;
    });
    return {
      course: { id: course.id, title: course.title, status: course.status },
      enrollments: t,
      completionRate: pct(t.completed, t.total),
      averageProgress: num(totals?.avg_progress),
      averageScore: num(totals?.avg_score),
      lessons: lessonRows,
      series: series.map((s) => ({
        day: s.day,
        enrollments: s.enrollments,
        active: s.active,
        completed: s.completed,
        dropped: s.dropped,
        enrollmentsToday: s.enrollmentsToday,
        completionsToday: s.completionsToday,
        activeLearnersToday: s.activeLearnersToday,
        averageProgress: num(s.averageProgress),
        averageScore: num(s.averageScore),
      })),
      generatedAt: ctx.clock.now().toISOString(),
    };
  });
}

/**
 * Per reading position p (0-based) of `lessonIds`: how many learners (enrollments not DROPPED)
 * completed lesson p but not lesson p + 1. One grouped query over the course's completions.
 */
async function learnersLeftAfter(ctx: ServiceContext, courseId: string, lessonIds: string[]): Promise<Map<number, number>> {
  if (lessonIds.length < 2) return new Map();
  const ids = sql.join(
    lessonIds.map((id) => sql`${id}`),
    sql`, `,
  );
  const rows = await rawRows<{ pos: number; left_count: number }>(
    ctx.db,
    sql`with ord as (select lesson_id, (pos - 1)::int as pos from unnest(array[${ids}]::text[]) with ordinality as o(lesson_id, pos)),
      done as (
        select lp.enrollment_id, ord.pos
        from lesson_progress lp
        join enrollments e on e.institution_id = lp.institution_id and e.id = lp.enrollment_id
        join ord on ord.lesson_id = lp.lesson_id
        where lp.institution_id = ${ctx.institutionId} and e.course_id = ${courseId} and e.status <> 'DROPPED' and lp.completed
      )
      select prev.pos, count(*)::int as left_count
      from done prev
      where prev.pos < ${lessonIds.length - 1}
        and not exists (select 1 from done cur where cur.enrollment_id = prev.enrollment_id and cur.pos = prev.pos + 1)
      group by prev.pos`,
  );
  return new Map(rows.map((r) => [Number(r.pos), Number(r.left_count)]));
}

/** Students whose fee status one revenue dashboard reads from the CRM, at most. */
export const FEE_LOOKUP_MAX = 500;
const FEE_LOOKUP_CONCURRENCY = 8;

export const REVENUE_DEFINITION =
  'This service stores no prices and no payments, so it computes no money of its own. "Revenue" here is the enrollment volume fees pay for: ' +
  'new enrollments, completions and new learners per period (from the enrollments, in the institution time zone), and, with includeFees=true, ' +
  "the fee standing of the students with an ACTIVE enrollment as the institution's CRM reports it (PAID, PARTIAL, OVERDUE, and the sum of " +
  'the outstanding amounts it gives, in its currency). With fee gating on, every enrollment is fee-gated, so feeGatedEnrollments counts them.';

type Period = 'day' | 'week' | 'month';

/** The first day (YYYY-MM-DD) of every bucket of the window, as date_trunc gives it (ISO weeks start on Monday). */
function bucketsOf(period: Period, from: string, to: string): string[] {
  const out: string[] = [];
  const last = DateTime.fromISO(to, { zone: 'utc' });
  for (let day = DateTime.fromISO(from, { zone: 'utc' }).startOf(period); day <= last; day = day.plus({ [`${period}s`]: 1 })) out.push(day.toISODate()!);
  return out;
}

/** GET /api/analytics/dashboard/revenue (ADMIN): every bucket of the window, those without events at zero. */
export async function revenueDashboard(ctx: ServiceContext, q: { period?: Period; from?: string; to?: string; includeFees?: 'true' | 'false' }) {
  await requireAccess(ctx, 'analytics.revenue', null);
  const settings = await getSettings(ctx.db, ctx.institutionId);
  const period = q.period ?? 'month';
  const zone = settings.timezone;
  const today = DateTime.fromJSDate(ctx.clock.now(), { zone });
  const to = q.to ?? today.toISODate()!;
  const from =
    q.from ??
    DateTime.fromISO(to, { zone })
      .startOf(period === 'week' ? 'week' : period)
      .minus({ [`${period}s`]: 11 })
      .toISODate()!;
  if (from > to) throw validationError('from must not be after to', [{ field: 'querystring.from', message: 'after to' }]);
  if (DateTime.fromISO(to).diff(DateTime.fromISO(from), 'days').days > 3 * 366) {
    throw validationError('At most three years', [{ field: 'querystring.from', message: 'window over three years' }]);
  }
  const includeFees = q.includeFees === 'true';
  return cachedAnalytics(ctx.cache, ctx.institutionId, `revenue:${period}:${from}:${to}:${includeFees}`, async () => {
    const start = DateTime.fromISO(from, { zone }).toJSDate().toISOString();
    const end = DateTime.fromISO(to, { zone }).plus({ days: 1 }).toJSDate().toISOString();
    const bucket = (column: string) => sql`to_char(date_trunc(${period}, ${sql.raw(column)} at time zone ${zone}), 'YYYY-MM-DD')`;
    const [periods, [totals], activeStudents] = await Promise.all([
      rawRows<{ period: string; new_enrollments: number; completions: number; new_learners: number }>(
        ctx.db,
        sql`with firsts as (
              select student_id, min(enrolled_at) as first_at from enrollments where institution_id = ${ctx.institutionId} group by student_id
            ), events as (
              select ${bucket('enrolled_at')} as period, 1 as enrolled, 0 as completed, 0 as learner
                from enrollments where institution_id = ${ctx.institutionId} and enrolled_at >= ${start}::timestamptz and enrolled_at < ${end}::timestamptz
              union all
              select ${bucket('completed_at')}, 0, 1, 0
                from enrollments where institution_id = ${ctx.institutionId} and completed_at >= ${start}::timestamptz and completed_at < ${end}::timestamptz
              union all
              select ${bucket('first_at')}, 0, 0, 1
                from firsts where first_at >= ${start}::timestamptz and first_at < ${end}::timestamptz
            )
            select period, sum(enrolled)::int as new_enrollments, sum(completed)::int as completions, sum(learner)::int as new_learners
            from events group by period order by period`,
      ),
      rawRows<{ enrollments: number; active: number; learners: number; active_learners: number }>(
        ctx.db,
        sql`select count(*)::int as enrollments, (count(*) filter (where status = 'ACTIVE'))::int as active,
            count(distinct student_id)::int as learners, (count(distinct student_id) filter (where status = 'ACTIVE'))::int as active_learners
          from enrollments where institution_id = ${ctx.institutionId}`,
      ),
      includeFees
        ? rawRows<{ student_id: string }>(
            ctx.db,
            sql`select distinct student_id from enrollments where institution_id = ${ctx.institutionId} and status = 'ACTIVE' order by student_id`,
          )
        : Promise.resolve([]),
    ]);
    const byPeriod = new Map(periods.map((p) => [p.period, p]));
    return {
      definition: REVENUE_DEFINITION,
      currency: null,
      feeGatingEnabled: settings.feeGatingEnabled,
      period,
      from,
      to,
      periods: bucketsOf(period, from, to).map((label) => {
        const p = byPeriod.get(label);
        const newEnrollments = Number(p?.new_enrollments ?? 0);
        return {
          period: label,
          newEnrollments,
          completions: Number(p?.completions ?? 0),
          newLearners: Number(p?.new_learners ?? 0),
          feeGatedEnrollments: settings.feeGatingEnabled ? newEnrollments : 0,
        };
      }),
      totals: {
        enrollments: Number(totals?.enrollments ?? 0),
        activeEnrollments: Number(totals?.active ?? 0),
        learners: Number(totals?.learners ?? 0),
        activeLearners: Number(totals?.active_learners ?? 0),
      },
      fees: includeFees
        ? await feeStanding(
            ctx,
            activeStudents.map((s) => s.student_id),
          )
        : null,
      generatedAt: ctx.clock.now().toISOString(),
    };
  });
}

/** Fee status of students through the CRM (never cached there, spec 4.10): UNKNOWN when it has no answer for one. */
async function feeStanding(ctx: ServiceContext, students: string[]) {
  const slug = await requireInstitutionSlug(ctx, ctx.institutionId);
  const checked = students.slice(0, FEE_LOOKUP_MAX);
  const byStatus = { PAID: 0, PARTIAL: 0, OVERDUE: 0, UNKNOWN: 0 };
  let outstanding = 0;
  for (let i = 0; i < checked.length; i += FEE_LOOKUP_CONCURRENCY) {
    const answers = await Promise.all(checked.slice(i, i + FEE_LOOKUP_CONCURRENCY).map((id) => ctx.crm.getFeeStatus(slug, id).catch(() => null)));
    for (const a of answers) {
      if (!a) byStatus.UNKNOWN++;
      else {
        byStatus[a.status]++;
        outstanding += a.outstanding;
      }
    }
  }
  return { students: students.length, checked: checked.length, byStatus, outstandingTotal: Math.round(outstanding * 100) / 100 };
}
