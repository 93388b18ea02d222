import { sql } from 'drizzle-orm';
import { serviceContext, withTx, type Deps, type ServiceContext } from '../../platform/context.js';
import { rawRows } from '../../platform/db/client.js';
import { byId } from '../../platform/db/tenancy.js';
import { enqueue } from '../../platform/queue/queue.js';
import { serviceSession } from '../../platform/auth/tokens.js';
import { courses } from '../courses/courses.tables.js';
import { enrollments } from '../enrollments/enrollments.tables.js';
import { recordLearning } from '../gamification/gamification.service.js';
import type { ModuleJobs } from '../types.js';
import { recomputeEnrollment } from './completion.js';

export const COMPLETE_ENROLLMENTS_JOB = 'progress.completeEnrollments' as const;
/** Enrollment ids per job (the job payload limit). */
const IDS_PER_JOB = 5_000;

/**
 * After a course's set of lessons changed (a lesson added or deleted, made required or
 * optional), or for `only` these enrollments once reactivated (the lessons may have changed
 * while they were DROPPED), in the caller's transaction: every ACTIVE or COMPLETED
 * enrollment's progress is again completed required lessons / required lessons (all lessons
 * when none is required), in one statement, with `recomputeEnrollment`'s formula and rounding
 * (learning.test checks that the two agree); a COMPLETED one never goes down. An ACTIVE
 * enrollment whose required lessons are now all complete is completed by a job enqueued in the
 * same transaction (certificate, CRM push, notification and points, as a progress write would
 * do), so a teacher's edit does not issue hundreds of certificates inline.
 */
export async function refreshCourseProgress(tx: ServiceContext, courseId: string, only?: string[]): Promise<void> {
  const now = tx.clock.now().toISOString();
  const complete = await rawRows<{ id: string }>(
    tx.db,
    sql`with c as (
          select count(*)::int as total, (count(*) filter (where is_required))::int as required
          from lessons where institution_id = ${tx.institutionId} and course_id = ${courseId}
        ),
        n as (
          select e.id, e.status, e.progress,
            case when c.required > 0 then c.required else c.total end as needed,
            (select count(*)::int from lesson_progress lp
               join lessons l on l.institution_id = lp.institution_id and l.id = lp.lesson_id
               where lp.institution_id = e.institution_id and lp.enrollment_id = e.id and lp.completed
                 and (c.required = 0 or l.is_required)) as done
          from enrollments e cross join c
          where e.institution_id = ${tx.institutionId} and e.course_id = ${courseId} and e.status in ('ACTIVE', 'COMPLETED')
            ${only ? sql`and e.id = any(${sql.param(only)}::text[])` : sql``}
        ),
        v as (
          select id, status, progress, needed, done,
            case when needed = 0 then 0 else round(done * 100.0 / needed)::int end as value
          from n
        ),
        target as (
          select id, status, needed, done, case when status = 'COMPLETED' then greatest(progress, value) else value end as progress
          from v
        ),
        changed as (
          update enrollments e
          set progress = target.progress, updated_at = ${now}::timestamptz
          from target
          where e.institution_id = ${tx.institutionId} and e.id = target.id and e.progress <> target.progress
          returning e.id
        )
        select id from target where status = 'ACTIVE' and needed > 0 and done >= needed`,
  );
  const ids = complete.map((r) => r.id);
  for (let i = 0; i < ids.length; i += IDS_PER_JOB) {
    const payload = { institutionId: tx.institutionId, courseId, enrollmentIds: ids.slice(i, i + IDS_PER_JOB) };
    await enqueue(tx.db, tx.clock, COMPLETE_ENROLLMENTS_JOB, payload, { institutionId: tx.institutionId });
  }
}

/**
 * Completes the listed enrollments that are still ACTIVE, each in its own transaction under
 * its row lock, through `recomputeEnrollment` (which completes at most once), and awards the
 * course-completion points. A retry redoes only what is left.
 */
export async function completeEnrollments(deps: Deps, institutionId: string, courseId: string, enrollmentIds: string[]): Promise<number> {
  const base = serviceContext(deps, serviceSession(institutionId, 'system'), deps.log, null);
  const [course] = await base.db
    .select()
    .from(courses)
    .where(byId(base, courses, courseId));
  if (!course) return 0;
  let completed = 0;
  for (const id of enrollmentIds) {
    await withTx(base, async (tx) => {
      const [enrollment] = await tx.db
        .select()
        .from(enrollments)
        .where(byId(tx, enrollments, id))
        .for('update');
      if (!enrollment || enrollment.status !== 'ACTIVE') return;
      const result = await recomputeEnrollment(tx, course, enrollment, { touch: false });
      if (!result.completedNow) return;
      completed++;
      await recordLearning(tx, enrollment.studentId, [{ kind: 'COURSE_COMPLETED', courseId: course.id }], { activeToday: false });
    });
  }
  return completed;
}

export const progressJobs: ModuleJobs = (deps) => ({
  [COMPLETE_ENROLLMENTS_JOB]: async ({ payload }) => {
    await completeEnrollments(deps, payload.institutionId, payload.courseId, payload.enrollmentIds);
  },
});
