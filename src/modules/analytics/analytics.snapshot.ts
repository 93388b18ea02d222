import { and, avg, count, countDistinct, eq, gte, lt, sql } from 'drizzle-orm';
import { DateTime } from 'luxon';
import type { Clock } from '../../platform/clock.js';
import { rawRows, type Db } from '../../platform/db/client.js';
import { newId } from '../../platform/ids.js';
import { inTenant } from '../../platform/db/tenancy.js';
import { courses } from '../courses/courses.tables.js';
import { enrollments, lessonProgress } from '../enrollments/enrollments.tables.js';
import { certificates } from '../certificates/certificates.tables.js';
import { institutions } from '../institutions/institutions.tables.js';
import { settingsOf } from '../institutions/institutions.service.js';
import { notifications } from '../notifications/notifications.tables.js';
import type { CrmCache } from '../../platform/crm/cache.js';
import { quizAttempts } from '../quizzes/quizzes.tables.js';
import { submissions } from '../assignments/assignments.tables.js';
import { analyticsDailySnapshots } from './analytics.tables.js';
import { invalidateAnalytics } from './analytics.cache.js';

export interface SnapshotSummary {
  institutions: number;
  snapshotsWritten: number;
  courseSnapshotsWritten: number;
}

const round2 = (v: unknown) => (v === null || v === undefined ? null : Math.round(Number(v) * 100) / 100);

/** The metrics of one institution for its local day [from, to). */
async function metricsOf(db: Db, institutionId: string, from: Date, to: Date): Promise<Record<string, number | null>> {
  const tenant = { institutionId };
  const today = (column: Parameters<typeof gte>[0]) => and(gte(column, from), lt(column, to));
  const [[e], [c], [cert], [sent], [quiz], [sub], [lessons]] = await Promise.all([
    db
      .select({
        active: sql<number>`count(*) filter (where ${enrollments.status} = 'ACTIVE')::int`,
        completed: sql<number>`count(*) filter (where ${enrollments.status} = 'COMPLETED')::int`,
        dropped: sql<number>`count(*) filter (where ${enrollments.status} = 'DROPPED')::int`,
        enrolledToday: sql<number>`count(*) filter (where ${today(enrollments.enrolledAt)})::int`,
        completedToday: sql<number>`count(*) filter (where ${today(enrollments.completedAt)})::int`,
        activeLearnersToday: sql<number>`count(distinct ${enrollments.studentId}) filter (where ${today(enrollments.lastAccessedAt)})::int`,
        total: count(),
        averageProgress: sql<number | null>`avg(${enrollments.progress}) filter (where ${enrollments.status} <> 'DROPPED')`,
        averageFinalScore: avg(enrollments.finalScore),
      })
      .from(enrollments)
      .where(inTenant(tenant, enrollments)),
    db
      .select({ published: sql<number>`count(*) filter (where ${courses.status} = 'PUBLISHED')::int`, total: count() })
      .from(courses)
      .where(inTenant(tenant, courses)),
    db
      .select({ issuedToday: count() })
      .from(certificates)
      .where(and(inTenant(tenant, certificates), today(certificates.issuedAt))),
    db
      .select({ sentToday: count(), recipients: countDistinct(notifications.recipientId) })
      .from(notifications)
      .where(and(inTenant(tenant, notifications), eq(notifications.status, 'SENT'), today(notifications.sentAt))),
    db
      .select({ submitted: count(), averagePercentage: avg(quizAttempts.percentage) })
      .from(quizAttempts)
      .where(and(inTenant(tenant, quizAttempts), eq(quizAttempts.status, 'SUBMITTED'), today(quizAttempts.submittedAt))),
    db
      .select({ submitted: count() })
      .from(submissions)
      .where(and(inTenant(tenant, submissions), today(submissions.submittedAt))),
    db
      .select({ completed: count() })
      .from(lessonProgress)
      .where(and(inTenant(tenant, lessonProgress), eq(lessonProgress.completed, true), today(lessonProgress.completedAt))),
  ]);
  return {
    activeEnrollments: Number(e?.active ?? 0),
    completedEnrollments: Number(e?.completed ?? 0),
    droppedEnrollments: Number(e?.dropped ?? 0),
    enrollmentsToday: Number(e?.enrolledToday ?? 0),
    completionsToday: Number(e?.completedToday ?? 0),
    activeLearnersToday: Number(e?.activeLearnersToday ?? 0),
    publishedCourses: Number(c?.published ?? 0),
    courses: Number(c?.total ?? 0),
    certificatesIssuedToday: Number(cert?.issuedToday ?? 0),
    notificationsSentToday: Number(sent?.sentToday ?? 0),
    totalEnrollments: Number(e?.total ?? 0),
    averageProgress: round2(e?.averageProgress),
    averageFinalScore: round2(e?.averageFinalScore),
    quizAttemptsToday: Number(quiz?.submitted ?? 0),
    averageQuizPercentageToday: round2(quiz?.averagePercentage),
    submissionsToday: Number(sub?.submitted ?? 0),
    lessonsCompletedToday: Number(lessons?.completed ?? 0),
  };
}

/**
 * Today's row of every course of the institution in one statement: enrollments by status, today's
 * enrollments, completions and active learners, average progress and score. The upsert on
 * (institution, course, day) makes reruns rewrite the row. Row ids carry this run's own suffix:
 * a conflict on any other unique key (a shared id) would fail a concurrent run instead of updating.
 */
async function courseSnapshots(db: Db, institutionId: string, day: string, from: Date, to: Date, now: Date): Promise<number> {
  const f = from.toISOString();
  const t = to.toISOString();
  const runId = newId();
  const rows = await rawRows<{ id: string }>(
    db,
    sql`insert into analytics_course_daily_snapshots (institution_id, id, course_id, day, enrollments, active, completed, dropped,
        enrollments_today, completions_today, active_learners_today, average_progress, average_score, created_at, updated_at)
      select c.institution_id, 'cs_' || c.id || '_' || ${runId}, c.id, ${day}::date,
        count(e.id)::int,
        (count(*) filter (where e.status = 'ACTIVE'))::int,
        (count(*) filter (where e.status = 'COMPLETED'))::int,
        (count(*) filter (where e.status = 'DROPPED'))::int,
        (count(*) filter (where e.enrolled_at >= ${f}::timestamptz and e.enrolled_at < ${t}::timestamptz))::int,
        (count(*) filter (where e.completed_at >= ${f}::timestamptz and e.completed_at < ${t}::timestamptz))::int,
        (count(distinct e.student_id) filter (where e.last_accessed_at >= ${f}::timestamptz and e.last_accessed_at < ${t}::timestamptz))::int,
        round((avg(e.progress) filter (where e.status <> 'DROPPED'))::numeric, 2)::real,
        round(avg(e.final_score)::numeric, 2)::real,
        ${now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz
      from courses c
      left join enrollments e on e.institution_id = c.institution_id and e.course_id = c.id
      where c.institution_id = ${institutionId}
      group by c.institution_id, c.id
      on conflict (institution_id, course_id, day) do update set
        enrollments = excluded.enrollments, active = excluded.active, completed = excluded.completed, dropped = excluded.dropped,
        enrollments_today = excluded.enrollments_today, completions_today = excluded.completions_today,
        active_learners_today = excluded.active_learners_today, average_progress = excluded.average_progress,
        average_score = excluded.average_score, updated_at = excluded.updated_at
      returning id`,
  );
  return rows.length;
}

/**
 * The `analytics-snapshot` cron (spec 4.8): for every institution, (re)write today's snapshot
 * row and today's row of each of its courses, today being the institution's local day, then
 * invalidate the institution's analytics cache. Upserts on (institution[, course], day):
 * running it twice in an hour, or two runs at once, leaves one row with the latest numbers.
 */
export async function takeDailySnapshots(deps: { db: Db; clock: Clock; cache: CrmCache }): Promise<SnapshotSummary> {
  const now = deps.clock.now();
  const all = await deps.db.select({ id: institutions.id, settings: institutions.settings }).from(institutions);
  let written = 0;
  let courseRows = 0;
  for (const inst of all) {
    const local = DateTime.fromJSDate(now, { zone: settingsOf(inst.settings).timezone });
    const from = local.startOf('day');
    const to = from.plus({ days: 1 });
    const day = from.toISODate()!;
    const metrics = await metricsOf(deps.db, inst.id, from.toJSDate(), to.toJSDate());
    await deps.db
      .insert(analyticsDailySnapshots)
      .values({ institutionId: inst.id, id: newId(), day, metrics, createdAt: now, updatedAt: now })
      .onConflictDoUpdate({ target: [analyticsDailySnapshots.institutionId, analyticsDailySnapshots.day], set: { metrics, updatedAt: now } });
    courseRows += await courseSnapshots(deps.db, inst.id, day, from.toJSDate(), to.toJSDate(), now);
    await invalidateAnalytics(deps.cache, inst.id);
    written++;
  }
  return { institutions: all.length, snapshotsWritten: written, courseSnapshotsWritten: courseRows };
}
