import { z } from 'zod';

/** GET /api/cron/assignment-reminders: the 24-hour window and what it found and created. */
export const remindersSchema = z.object({
  windowFrom: z.string(),
  windowTo: z.string(),
  assignmentsDue: z.number().int(),
  remindersCreated: z.number().int(),
});

/** GET /api/cron/report-schedules: schedules run and alerts evaluated and fired. */
export const schedulesSchema = z.object({ at: z.string(), schedulesRun: z.number().int(), alertsEvaluated: z.number().int(), alertsFired: z.number().int() });

/** GET /api/cron/analytics-snapshot: institutions seen and snapshot rows written. */
export const snapshotSchema = z.object({ at: z.string(), institutions: z.number().int(), snapshotsWritten: z.number().int() });
