import { foreignKey, index, integer, pgTable, text, timestamp, unique } from 'drizzle-orm/pg-core';
import { courses } from '../courses/courses.tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** Session lifecycle: SCHEDULED → LIVE (start) → COMPLETED (end). Spec 3.3 names LIVE and COMPLETED. */
export const LIVE_SESSION_STATUSES = ['SCHEDULED', 'LIVE', 'COMPLETED'] as const;
export type LiveSessionStatus = (typeof LIVE_SESSION_STATUSES)[number];

/** Spec 3.1: null (never recorded), PENDING, RECORDING, PROCESSING, READY, FAILED. */
export const RECORDING_STATUSES = ['PENDING', 'RECORDING', 'PROCESSING', 'READY', 'FAILED'] as const;
export type RecordingStatus = (typeof RECORDING_STATUSES)[number];

/**
 * A live class of a course (spec 2.7 for the recording fields, 3.1 for their states). The
 * webhook finds a session by `id` alone (it carries no institution): ids are UUIDv7, unique
 * across institutions, and the row's institution scopes everything after.
 */
export const liveSessions = pgTable(
  'live_sessions',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    courseId: text('course_id').notNull(),
    title: text('title').notNull(),
    description: text('description'),
    scheduledAt: ts('scheduled_at').notNull(),
    durationMinutes: integer('duration_minutes').notNull(),
    /** The host's person id (canManageSession: the host or ADMIN). */
    hostId: text('host_id').notNull(),
    createdBy: text('created_by').notNull(),
    status: text('status', { enum: LIVE_SESSION_STATUSES }).notNull().default('SCHEDULED'),
    /** `<RECORDING_ROOM_PREFIX>-<institution slug>-<id>`, set on start (null when the slug is unknown). */
    roomName: text('room_name'),
    startedAt: ts('started_at'),
    endedAt: ts('ended_at'),
    recordingStatus: text('recording_status', { enum: RECORDING_STATUSES }),
    recordingStartedAt: ts('recording_started_at'),
    recordingStoppedAt: ts('recording_stopped_at'),
    recordingUrl: text('recording_url'),
    /** Seconds. */
    recordingDuration: integer('recording_duration'),
    /**
     * Set while a stop's call to the recorder is in flight (until its timeout at the latest), so
     * a start made meanwhile waits for it instead of overtaking it (the recorder would hand the
     * start the recording the stop is about to end). Not part of the API.
     */
    recordingStopUntil: ts('recording_stop_until'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('live_sessions_inst_id_uq').on(t.institutionId, t.id),
    foreignKey({ name: 'live_sessions_course_fk', columns: [t.institutionId, t.courseId], foreignColumns: [courses.institutionId, courses.id] }).onDelete('cascade'),
    index('live_sessions_inst_course_scheduled_idx').on(t.institutionId, t.courseId, t.scheduledAt),
    index('live_sessions_inst_scheduled_idx').on(t.institutionId, t.scheduledAt),
  ],
);

/** Enrollment statuses that put a student on a session's roster (attendance, the recording notification). */
export const ROSTER_STATUSES = ['ACTIVE', 'COMPLETED'] as const;

export const ATTENDANCE_MARKS = ['PRESENT', 'ABSENT'] as const;
export type AttendanceMark = (typeof ATTENDANCE_MARKS)[number];

/**
 * One person's record for one session: registration ahead (`register`), joins (`join`: first,
 * last and count) and the host's mark (`attendance`). Attendance is the mark when there is one,
 * else derived from the joins.
 */
export const liveSessionParticipants = pgTable(
  'live_session_participants',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    sessionId: text('session_id').notNull(),
    personId: text('person_id').notNull(),
    registeredAt: ts('registered_at'),
    firstJoinedAt: ts('first_joined_at'),
    lastJoinedAt: ts('last_joined_at'),
    joinCount: integer('join_count').notNull().default(0),
    mark: text('mark', { enum: ATTENDANCE_MARKS }),
    markedBy: text('marked_by'),
    markedAt: ts('marked_at'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('live_session_participants_inst_id_uq').on(t.institutionId, t.id),
    unique('live_session_participants_person_uq').on(t.institutionId, t.sessionId, t.personId),
    foreignKey({ name: 'live_session_participants_session_fk', columns: [t.institutionId, t.sessionId], foreignColumns: [liveSessions.institutionId, liveSessions.id] }).onDelete(
      'cascade',
    ),
    index('live_session_participants_person_idx').on(t.institutionId, t.personId),
  ],
);

export type LiveSession = typeof liveSessions.$inferSelect;
export type LiveSessionParticipant = typeof liveSessionParticipants.$inferSelect;
