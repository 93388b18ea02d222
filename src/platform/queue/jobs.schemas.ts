import { z } from 'zod';
import { retryFor } from './retry.js';

/**
 * The registry of job definitions: every job name, the zod schema of its payload, and how it
 * runs. `enqueue` is type-checked against it and validates the payload before inserting; the
 * worker parses the stored payload again and hands the handler the typed value.
 *
 * Payload schemas describe JSON (no transforms, no dates): a payload is stored as jsonb.
 * Handlers live with their domain (`modules/<domain>/<domain>.jobs.ts`); only names and payload
 * shapes live here, so platform code knows no domain.
 */

/** A recurring job: every `everyMs` (aligned to the epoch, so replicas agree), or a cron expression (UTC unless `tz`). */
export type JobSchedule = { everyMs: number } | { cron: string; tz?: string };

export interface JobDefinition<S extends z.ZodType = z.ZodType> {
  payload: S;
  /** A handler still running after this is failed (the attempt counts) and its signal aborted. Default 60 s. */
  timeoutMs?: number;
  /** Attempts before the job moves to dead (default 5); `enqueue` options may override. */
  maxAttempts?: number;
  /** Longest wait between two attempts (retry n waits 2^n s up to this; default 1 h). */
  maxRetryDelayMs?: number;
  /** Recurring job: the worker keeps exactly one pending occurrence, across every replica. */
  schedule?: JobSchedule;
}

export type JobDefinitions = Record<string, JobDefinition>;

/** Keeps the literal names and schema types of a definitions map. */
export const defineJobs = <const D extends JobDefinitions>(definitions: D): D => definitions;

export const DEFAULT_JOB_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_ATTEMPTS = 5;

/** The queue's own recurring job: purges finished jobs past their retention. */
export const QUEUE_MAINTENANCE_JOB = 'queue.maintenance';

/**
 * The institution of a job's target row. Every new job carries it, and the handler looks the
 * row up within it. Optional only for jobs queued before payloads carried it: their handlers
 * fall back to the job row's `institution_id`, then to the id alone (`byIdForJob`).
 */
const jobInstitution = z.string().min(1).optional();

/**
 * Jobs whose work waits on a dependency (SMTP, the CRM, a push service, storage) keep retrying
 * through an outage of up to 24 h, at most 10 min apart (153 attempts), so nothing is lost and
 * the work goes out within 10 min of the dependency's return. Their handlers keep permanent
 * failures out of the retries (they record them and return); only the last attempt gives up.
 */
export const OUTAGE_RETRY = retryFor(24 * 3_600_000, 10 * 60_000);

export const jobDefinitions = defineJobs({
  /** Push one recorded completion (crm_completions outbox row) to the CRM. */
  'crm.pushCompletion': {
    payload: z.object({ completionId: z.string().min(1), institutionId: jobInstitution }),
    ...OUTAGE_RETRY,
    timeoutMs: 60_000,
  },
  /** Render and store a certificate's PDF. */
  'certificates.renderPdf': {
    payload: z.object({ certificateId: z.string().min(1), institutionId: jobInstitution }),
    timeoutMs: 120_000,
    // Only this job renders the PDF: storage down for a while must not leave pdfUrl null for good.
    ...OUTAGE_RETRY,
  },
  /** Remove stored objects no row refers to any more (the caption files of a deleted lesson). */
  'storage.deleteObjects': {
    payload: z.object({ keys: z.array(z.string().min(1)).min(1).max(10_000) }),
    timeoutMs: 120_000,
  },
  /**
   * A course's lessons changed and these ACTIVE enrollments now have every required lesson
   * complete: complete them (certificate, CRM push, notification, points), each once.
   */
  'progress.completeEnrollments': {
    payload: z.object({ institutionId: z.string().min(1), courseId: z.string().min(1), enrollmentIds: z.array(z.string().min(1)).min(1).max(5_000) }),
    timeoutMs: 10 * 60_000,
    maxAttempts: 8,
  },
  /** A day after a presign: remove the object if the upload was never registered. */
  'files.removeUnregistered': {
    payload: z.object({ uploadId: z.string().min(1), institutionId: jobInstitution }),
    timeoutMs: 60_000,
  },
  /** Deliver one batch of notification rows (one notify() call writes a batch per 200 recipients). */
  'notifications.deliver': {
    payload: z.object({ institutionId: z.string().min(1), batchId: z.string().min(1) }),
    timeoutMs: 10 * 60_000,
    ...OUTAGE_RETRY,
  },
  /** Send one person's held digest e-mail rows as one e-mail (queued for their digest time). */
  'notifications.sendDigest': {
    payload: z.object({ institutionId: z.string().min(1), recipientId: z.string().min(1), kind: z.enum(['DAILY', 'WEEKLY']) }),
    timeoutMs: 5 * 60_000,
    ...OUTAGE_RETRY,
  },
  /** Hourly: compliance completions, due-soon and overdue reminders, recurrence cycles. */
  'compliance.sweep': {
    payload: z.object({}),
    timeoutMs: 10 * 60_000,
    maxAttempts: 3,
    schedule: { cron: '41 * * * *' },
  },
  /**
   * A live session's recording became READY: send LIVE_CLASS_RECORDING_READY to its course's
   * ACTIVE and COMPLETED enrollments (one bulk notify, deduplicated per recording).
   */
  'liveSessions.recordingReady': {
    payload: z.object({ institutionId: z.string().min(1), sessionId: z.string().min(1), recordingUrl: z.string().min(1), recordingStartedAt: z.string().nullable() }),
    timeoutMs: 5 * 60_000,
    maxAttempts: 8,
  },
  /** Export a due report schedule's run to storage and e-mail it (REPORT_SCHEDULED with the file attached). */
  'analytics.sendScheduledReport': {
    payload: z.object({ institutionId: z.string().min(1), runId: z.string().min(1) }),
    timeoutMs: 10 * 60_000,
    maxAttempts: 4,
  },
  [QUEUE_MAINTENANCE_JOB]: {
    payload: z.object({}),
    timeoutMs: 10 * 60_000,
    maxAttempts: 3,
    schedule: { cron: '17 * * * *' },
  },
});

export type AppJobDefinitions = typeof jobDefinitions;
export type JobName = keyof AppJobDefinitions & string;
/** What `enqueue` accepts for job `N` of definitions `D`. */
export type PayloadInputOf<D extends JobDefinitions, N extends keyof D> = z.input<D[N]['payload']>;
/** What the handler of job `N` of definitions `D` receives. */
export type PayloadOf<D extends JobDefinitions, N extends keyof D> = z.output<D[N]['payload']>;
/** The payload the handler of the application's job `N` receives. */
export type JobPayload<N extends JobName> = PayloadOf<AppJobDefinitions, N>;
