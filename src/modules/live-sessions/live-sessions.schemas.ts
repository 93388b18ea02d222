import { z } from 'zod';
import { optionalFilter } from '../../platform/http/query-filters.js';
import { envelopeWithMeta } from '../../platform/http/envelope.js';
import { paginationFields, paginationFieldsFor } from '../../platform/http/pagination.js';
import { rangeInOrder, timeOrDay } from '../../platform/http/time-range.js';
import { ATTENDANCE_MARKS, LIVE_SESSION_STATUSES, RECORDING_STATUSES } from './live-sessions.tables.js';

const isoDateTime = z.string().datetime({ offset: true }).describe('ISO 8601 timestamp');
const id = z.string().min(1).max(200);

export const MAX_DURATION_MINUTES = 24 * 60;
export const MAX_ATTENDANCE_RECORDS = 500;

export const idParams = z.object({ id });

// ── session ──────────────────────────────────────────────────────────────────

export const createSessionBody = z
  .strictObject({
    courseId: id,
    title: z.string().trim().min(1).max(200),
    description: z.string().max(5000).nullable().optional(),
    scheduledAt: isoDateTime,
    durationMinutes: z.number().int().min(1).max(MAX_DURATION_MINUTES),
    hostId: id.optional().describe('the host’s person id: a staff user of the institution in the CRM, or a learner ACTIVE in the course (400 otherwise); default: the caller'),
  })
  // The calendar file writes the end as a four-digit year.
  .refine((b) => Date.parse(b.scheduledAt) + b.durationMinutes * 60_000 < Date.UTC(10_000, 0, 1), {
    message: 'the session must end before the year 10000',
    path: ['scheduledAt'],
  });
export type CreateSessionInput = z.infer<typeof createSessionBody>;

export const listSessionsQuery = z
  .object({
    courseId: optionalFilter(id),
    status: optionalFilter(z.enum(LIVE_SESSION_STATUSES)),
    from: optionalFilter(timeOrDay).describe('sessions scheduled at or after this time (a date: from the start of that day, UTC)'),
    to: optionalFilter(timeOrDay).describe('sessions scheduled before this time (a date: up to the end of that day, UTC)'),
    ...paginationFields,
  })
  .refine((q) => rangeInOrder(q.from, q.to), { message: 'from must not be after to', path: ['from'] });
export type ListSessionsQuery = z.infer<typeof listSessionsQuery>;

/** A live session with the recording fields of spec 2.7. */
export const sessionSchema = z.object({
  id: z.string(),
  courseId: z.string(),
  title: z.string(),
  description: z.string().nullable(),
  scheduledAt: z.string(),
  durationMinutes: z.number().int(),
  hostId: z.string(),
  status: z.enum(LIVE_SESSION_STATUSES),
  roomName: z.string().nullable().describe('<RECORDING_ROOM_PREFIX>-<institution slug>-<session id>, set on start'),
  startedAt: z.string().nullable(),
  endedAt: z.string().nullable(),
  recordingStatus: z.enum(RECORDING_STATUSES).nullable().describe('null (never recorded), PENDING, RECORDING, PROCESSING, READY, FAILED (spec 3.1)'),
  recordingStartedAt: z.string().nullable(),
  recordingStoppedAt: z.string().nullable(),
  recordingUrl: z.string().nullable(),
  recordingDuration: z.number().int().nullable().describe('seconds'),
  createdAt: z.string(),
  updatedAt: z.string(),
});

// ── participation ────────────────────────────────────────────────────────────

export const joinSchema = z.object({
  sessionId: z.string(),
  role: z.enum(['HOST', 'PARTICIPANT']),
  roomName: z.string().nullable(),
  joinUrl: z.string().describe('the session’s page in the web app, where the room opens'),
  joinedAt: z.string(),
  joinCount: z.number().int().describe('how often the caller joined this session'),
});

export const registrationSchema = z.object({
  sessionId: z.string(),
  studentId: z.string(),
  registeredAt: z.string(),
  alreadyRegistered: z.boolean(),
});

export const attendanceBody = z.strictObject({
  records: z
    .array(z.strictObject({ studentId: id, status: z.enum(ATTENDANCE_MARKS) }))
    .min(1)
    .max(MAX_ATTENDANCE_RECORDS)
    .refine((rs) => new Set(rs.map((r) => r.studentId)).size === rs.length, 'each studentId at most once'),
});
export type AttendanceInput = z.infer<typeof attendanceBody>;

const totalsSchema = z.object({
  students: z.number().int().describe('ACTIVE or COMPLETED enrollments of the course'),
  registered: z.number().int(),
  joined: z.number().int(),
  marked: z.number().int().describe('students the host marked PRESENT or ABSENT'),
  attended: z.number().int().describe('once COMPLETED: marked PRESENT, or unmarked and joined; 0 before'),
  missed: z.number().int().describe('once COMPLETED: the students who did not attend and were active learners while it ran; 0 before'),
});

export const attendanceRowSchema = z.object({
  studentId: z.string(),
  registeredAt: z.string().nullable(),
  firstJoinedAt: z.string().nullable(),
  joinCount: z.number().int(),
  mark: z.enum(ATTENDANCE_MARKS).nullable(),
  markedAt: z.string().nullable(),
  attendance: z
    .enum(['attended', 'missed', 'not-enrolled'])
    .nullable()
    .describe(
      'null until the session is COMPLETED; `not-enrolled`: did not attend and was not an active learner while it ran (enrolled after it ended, or completed or dropped the course before it began), so not counted as missed',
    ),
});

/** Attendance lists (a session's roster, a course's totals) come 50 students a page unless perPage or limit says otherwise. */
export const ATTENDANCE_PAGE_SIZE = 50;

export const attendanceQuery = z.object({ ...paginationFieldsFor(ATTENDANCE_PAGE_SIZE) });

export const attendanceListSchema = z.object({
  sessionId: z.string(),
  sessionStatus: z.enum(LIVE_SESSION_STATUSES),
  final: z.boolean().describe('true once the session is COMPLETED'),
  totals: totalsSchema,
  students: z.array(attendanceRowSchema),
});
/** GET /api/live-sessions/{id}/attendance: the roster, with page meta. */
export const attendanceListEnvelope = envelopeWithMeta(attendanceListSchema);

export const attendanceUpdateSchema = z.object({
  sessionId: z.string(),
  updated: z.number().int(),
  final: z.boolean(),
  totals: totalsSchema,
});

export const courseAttendanceQuery = z.object({ courseId: id, studentId: optionalFilter(id), ...paginationFieldsFor(ATTENDANCE_PAGE_SIZE) });

export const courseAttendanceSchema = z.object({
  courseId: z.string(),
  completedSessions: z.number().int().describe('only COMPLETED sessions count (spec 3.3)'),
  students: z.array(
    z.object({
      studentId: z.string(),
      attended: z.number().int(),
      missed: z.number().int(),
      rate: z.number().nullable().describe('attended / completedSessions, null without completed sessions'),
    }),
  ),
});
/** GET /api/live-sessions/attendance-summary: per student, with page meta. */
export const courseAttendanceEnvelope = envelopeWithMeta(courseAttendanceSchema);

// ── recording ────────────────────────────────────────────────────────────────

export const recordingStartSchema = z.object({
  recordingStatus: z.enum(RECORDING_STATUSES).nullable(),
  recordingStartedAt: z.string().nullable(),
  alreadyRecording: z.boolean(),
});

export const recordingStopSchema = z.object({
  recordingStatus: z.enum(RECORDING_STATUSES).nullable(),
  recordingStoppedAt: z.string().nullable(),
  alreadyStopped: z.boolean(),
});

export const WEBHOOK_EVENTS = ['recording_uploaded', 'recording_failed'] as const;

/** Spec 4.5 webhook body; an event this service does not know is answered 200 `ignored` (the recorder retries on any non-2xx). */
export const webhookBody = z.object({
  event: z.string().min(1).max(100),
  sessionId: id,
  roomName: z.string().min(1).max(300),
  recordingUrl: z
    .string()
    .url()
    .max(2000)
    .regex(/^https?:\/\//i, 'must be an http(s) URL')
    .nullish()
    .describe('only on recording_uploaded (required there); null or absent otherwise'),
  duration: z.number().finite().min(0).max(1e7).nullish().describe('seconds; null or absent when the recorder does not know'),
});
export type WebhookInput = z.infer<typeof webhookBody>;

export const webhookResultSchema = z.object({
  ok: z.literal(true),
  status: z.enum(RECORDING_STATUSES).nullable().describe('the recording status after this event'),
  ignored: z.boolean(),
  reason: z.enum(['unknown_session', 'unknown_event', 'not_applicable']).nullable().describe('why an ignored event changed nothing'),
});

/** GET /api/live-sessions/{id}/ics: the calendar file's body. */
export const icsSchema = z.string().describe('iCalendar text (RFC 5545)');
