import { and, count, countDistinct, eq, gte, lt, sql } from 'drizzle-orm';
import { DateTime } from 'luxon';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/client.js';
import { newId } from '../../platform/ids.js';
import { inTenant } from '../../platform/db/tenancy.js';
import { courses } from '../courses/courses.tables.js';
import { enrollments } from '../enrollments/enrollments.tables.js';
import { certificates } from '../certificates/certificates.tables.js';
import { institutions } from '../institutions/institutions.tables.js';
import { settingsOf } from '../institutions/institutions.service.js';
import { notifications } from '../notifications/notifications.tables.js';
import { analyticsDailySnapshots } from './analytics.tables.js';

export interface SnapshotSummary {
  institutions: number;
  snapshotsWritten: number;
}

/** The metrics of one institution for its local day [from, to). */
async function metricsOf(db: Db, institutionId: string, from: Date, to: Date): Promise<Record<string, number>> {
  const tenant = { institutionId };
  const today = (column: Parameters<typeof gte>[0]) => and(gte(column, from), lt(column, to));
  const [[e], [c], [cert], [sent]] = await Promise.all([
    db
      .select({
        active: sql<number>`count(*) filter (where ${enrollments.status} = 'ACTIVE')::int`,
        completed: sql<number>`count(*) filter (where ${enrollments.status} = 'COMPLETED')::int`,
        dropped: sql<number>`count(*) filter (where ${enrollments.status} = 'DROPPED')::int`,
        enrolledToday: sql<number>`count(*) filter (where ${today(enrollments.enrolledAt)})::int`,
        completedToday: sql<number>`count(*) filter (where ${today(enrollments.completedAt)})::int`,
        activeLearnersToday: sql<number>`count(distinct ${enrollments.studentId}) filter (where ${today(enrollments.lastAccessedAt)})::int`,
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
  };
}

/**
 * The `analytics-snapshot` cron (spec 4.8): for every institution, (re)write today's snapshot
 * row, today being the institution's local day. An upsert on (institution, day): running it
 * twice in an hour, or two runs at once, leaves one row with the latest numbers.
 */
export async function takeDailySnapshots(deps: { db: Db; clock: Clock }): Promise<SnapshotSummary> {
  const now = deps.clock.now();
  const all = await deps.db.select({ id: institutions.id, settings: institutions.settings }).from(institutions);
  let written = 0;
  for (const inst of all) {
    const local = DateTime.fromJSDate(now, { zone: settingsOf(inst.settings).timezone });
    const from = local.startOf('day');
    const metrics = await metricsOf(deps.db, inst.id, from.toJSDate(), from.plus({ days: 1 }).toJSDate());
    await deps.db
      .insert(analyticsDailySnapshots)
      .values({ institutionId: inst.id, id: newId(), day: from.toISODate()!, metrics, createdAt: now, updatedAt: now })
      .onConflictDoUpdate({ target: [analyticsDailySnapshots.institutionId, analyticsDailySnapshots.day], set: { metrics, updatedAt: now } });
    written++;
  }
  return { institutions: all.length, snapshotsWritten: written };
}
