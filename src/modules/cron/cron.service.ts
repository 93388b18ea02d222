import type { Deps } from '../../platform/context.js';
import { takeDailySnapshots } from '../analytics/analytics.snapshot.js';
import { sendDueReminders } from '../assignments/assignments.reminders.js';

/**
 * `assignment-reminders`: an in-app ASSIGNMENT_DUE_REMINDER for every student with an ACTIVE
 * enrollment and no submission, for each assignment due in the next 24 hours, at most once per
 * assignment and student however often (or concurrently) the cron runs.
 */
export const sendAssignmentReminders = (deps: Deps) => sendDueReminders({ db: deps.database.db, clock: deps.clock, config: deps.config });

/**
 * `report-schedules`: runs due report schedules and evaluates alerts. Saved reports, schedules
 * and alerts arrive with the analytics module (issue 16); until then nothing is due.
 */
export async function runReportSchedules(deps: Deps) {
  return { at: deps.clock.now().toISOString(), schedulesRun: 0, alertsEvaluated: 0, alertsFired: 0 };
}

/** `analytics-snapshot`: today's metric snapshot of every institution (idempotent per day). */
export async function runAnalyticsSnapshot(deps: Deps) {
  const summary = await takeDailySnapshots({ db: deps.database.db, clock: deps.clock });
  return { at: deps.clock.now().toISOString(), ...summary };
}
