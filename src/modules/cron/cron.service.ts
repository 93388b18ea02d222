import type { Deps } from '../../platform/context.js';
import { takeDailySnapshots } from '../analytics/analytics.snapshot.js';
import { runDueSchedules } from '../analytics/analytics.schedules.js';
import { evaluateAlerts } from '../analytics/analytics.alerts.js';

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
 * `report-schedules`: claims each due report schedule once for its due time (a conditional
 * UPDATE of its next due time, plus a unique run key) and enqueues its export e-mail, then
 * evaluates every active alert (one notification per trigger, none again until it clears).
 */
export async function runReportSchedules(deps: Deps) {
  const at = deps.clock.now().toISOString();
  const schedulesRun = await runDueSchedules(deps);
  const alerts = await evaluateAlerts(deps);
  return { at, schedulesRun, alertsEvaluated: alerts.evaluated, alertsFired: alerts.fired, alertsCleared: alerts.cleared };
}

/** `analytics-snapshot`: today's metric snapshot of every institution (idempotent per day). */
export async function runAnalyticsSnapshot(deps: Deps) {
  const summary = await takeDailySnapshots({ db: deps.database.db, clock: deps.clock, cache: deps.cache });
  return { at: deps.clock.now().toISOString(), ...summary };
}
