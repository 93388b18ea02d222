import type { Deps } from '../../platform/context.js';
import { takeDailySnapshots } from '../analytics/analytics.snapshot.js';
import { runDueSchedules } from '../analytics/analytics.schedules.js';
import { evaluateAlerts } from '../analytics/analytics.alerts.js';
import { sendDueReminders } from '../assignments/assignments.reminders.js';

/**
 * `assignment-reminders`: an in-app ASSIGNMENT_DUE_REMINDER for every student with an ACTIVE
 * enrollment and no submission, for each assignment due in the next 24 hours, at most once per
 * assignment and student however often (or concurrently) the cron runs.
 */
export const sendAssignmentReminders = (deps: Deps) => sendDueReminders({ db: deps.database.db, clock: deps.clock, config: deps.config });

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
