import { and, eq, gte, lt, notExists, sql } from 'drizzle-orm';
import type { Config } from '../../config.js';
import type { Clock } from '../../platform/clock.js';
import { withTx } from '../../platform/context.js';
import type { DbOrTx } from '../../platform/db/client.js';
import { sameTenantRef } from '../../platform/db/tenancy.js';
import { courses } from '../courses/courses.tables.js';
import { enrollments } from '../enrollments/enrollments.tables.js';
import { notifications } from '../notifications/notifications.tables.js';
import { notify } from '../notifications/notify.js';
import { assignments, submissions } from './assignments.tables.js';

/** Spec 8: the reminder window is the next 24 hours. */
export const REMINDER_WINDOW_MS = 24 * 3_600_000;

const REMINDER_KEY = 'ASSIGNMENT_DUE_REMINDER';

/** The dedupe key of an assignment's reminders: one per assignment and student, whenever and however often the cron runs. */
export const reminderDedupeKey = (assignmentId: string) => `assignment:${assignmentId}`;

export interface ReminderSummary {
  windowFrom: string;
  windowTo: string;
  /** Assignments due in the window, in every institution. */
  assignmentsDue: number;
  /** Students reminded by this run (those reminded before are not counted again). */
  remindersCreated: number;
}

/**
 * The `assignment-reminders` cron (spec 4.8): for every assignment due in [now, now + 24 h), in
 * every institution, the students with an ACTIVE enrollment in its course and no submission get
 * an in-app ASSIGNMENT_DUE_REMINDER. One query finds every assignment with the students still
 * to remind (those without a reminder yet); then one notify() per assignment, in its own
 * transaction, with the dedupe key `assignment:<id>`: the unique index behind it keeps a
 * student to one reminder per assignment, also when two runs overlap (the later insert waits
 * for the earlier one and writes nothing).
 */
export async function sendDueReminders(scope: { db: DbOrTx; clock: Clock; config: Pick<Config, 'publicBaseUrl'> }): Promise<ReminderSummary> {
  const from = scope.clock.now();
  const to = new Date(from.getTime() + REMINDER_WINDOW_MS);
  const submitted = scope.db
    .select({ one: sql`1` })
    .from(submissions)
    .where(and(eq(submissions.institutionId, assignments.institutionId), eq(submissions.assignmentId, assignments.id), eq(submissions.studentId, enrollments.studentId)));
  const reminded = scope.db
    .select({ one: sql`1` })
    .from(notifications)
    .where(
      and(
        eq(notifications.institutionId, assignments.institutionId),
        eq(notifications.recipientId, enrollments.studentId),
        eq(notifications.key, REMINDER_KEY),
        sql`${notifications.channel} = 'IN_APP'`,
        eq(notifications.dedupeKey, sql`${reminderDedupeKey('')} || ${assignments.id}`),
      ),
    );
  const due = await scope.db
    .select({
      institutionId: assignments.institutionId,
      id: assignments.id,
      courseId: assignments.courseId,
      title: assignments.title,
      dueDate: assignments.dueDate,
      courseTitle: courses.title,
      students: sql<string[]>`coalesce(array_agg(${enrollments.studentId} order by ${enrollments.studentId}) filter (where ${enrollments.studentId} is not null), '{}')`,
    })
    .from(assignments)
    .innerJoin(courses, sameTenantRef(assignments.courseId, assignments.institutionId, courses))
    .leftJoin(
      enrollments,
      and(
        eq(enrollments.institutionId, assignments.institutionId),
        eq(enrollments.courseId, assignments.courseId),
        eq(enrollments.status, 'ACTIVE'),
        notExists(submitted),
        notExists(reminded),
      ),
    )
    .where(and(gte(assignments.dueDate, from), lt(assignments.dueDate, to)))
    .groupBy(assignments.institutionId, assignments.id, courses.title)
    .orderBy(assignments.dueDate, assignments.id);

  let remindersCreated = 0;
  for (const a of due) {
    if (a.students.length === 0) continue;
    const sent = await withTx(scope, (tx) =>
      notify(tx, {
        institutionId: a.institutionId,
        key: REMINDER_KEY,
        recipients: a.students,
        metadata: { assignmentId: a.id, courseId: a.courseId, title: a.title, courseTitle: a.courseTitle, dueDate: a.dueDate.toISOString() },
        actionUrl: `/assignments/${a.id}`,
        dedupeKey: reminderDedupeKey(a.id),
      }),
    );
    remindersCreated += sent.newRecipients;
  }
  return { windowFrom: from.toISOString(), windowTo: to.toISOString(), assignmentsDue: due.length, remindersCreated };
}
