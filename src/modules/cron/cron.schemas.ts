import { z } from 'zod';

/** GET /api/cron/assignment-reminders: the 24-hour window and what it found and created. */
export const remindersSchema = z.object({
  windowFrom: z.string(),
  windowTo: z.string(),
  assignmentsDue: z.number().int(),
  remindersCreated: z.number().int(),
});

/** GET /api/cron/report-schedules: schedules run and alerts evaluated, fired and cleared. */
export const schedulesSchema = z.object({
  at: z.string(),
  schedulesRun: z.number().int().describe('due schedule runs this call claimed and queued'),
  alertsEvaluated: z.number().int(),
  alertsFired: z.number().int().describe('alerts that crossed their threshold now (each notified once)'),
  alertsCleared: z.number().int().describe('triggered alerts found back within their threshold'),
});

/** GET /api/cron/analytics-snapshot: institutions seen and snapshot rows written (institution and course rows). */
export const snapshotSchema = z.object({ at: z.string(), institutions: z.number().int(), snapshotsWritten: z.number().int(), courseSnapshotsWritten: z.number().int() });
