import type { Deps } from '../../platform/context.js';
import { takeDailySnapshots } from '../analytics/analytics.snapshot.js';

/** Spec 8: the reminder window is the next 24 hours. */
export const REMINDER_WINDOW_MS = 24 * 3_600_000;

/**
 * `assignment-reminders`: an in-app ASSIGNMENT_DUE_REMINDER for every student with an ACTIVE
 * enrollment and no submission, for each assignment due in the next 24 hours, sent through
 * notify() with the dedupe key `assignment:<id>` so each student gets one per assignment however
 * often the cron runs. Assignments arrive with the assessment module (issue 11); until then
 * there is nothing due and the summary counts zero.
 */
export async function sendAssignmentReminders(deps: Deps) {
  const from = deps.clock.now();
  const to = new Date(from.getTime() + REMINDER_WINDOW_MS);
  return { windowFrom: from.toISOString(), windowTo: to.toISOString(), assignmentsDue: 0, remindersCreated: 0 };
}

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
