import { iso } from '../../platform/dto.js';
import type { LiveSession } from './live-sessions.tables.js';

/** A live session as every endpoint answers it: lifecycle and the recording fields of spec 2.7. */
export const sessionDto = (s: LiveSession) => ({
  id: s.id,
  courseId: s.courseId,
  title: s.title,
  description: s.description,
  scheduledAt: iso(s.scheduledAt),
  durationMinutes: s.durationMinutes,
  hostId: s.hostId,
  status: s.status,
  roomName: s.roomName,
  startedAt: iso(s.startedAt),
  endedAt: iso(s.endedAt),
  recordingStatus: s.recordingStatus,
  recordingStartedAt: iso(s.recordingStartedAt),
  recordingStoppedAt: iso(s.recordingStoppedAt),
  recordingUrl: s.recordingUrl,
  recordingDuration: s.recordingDuration,
  createdAt: iso(s.createdAt),
  updatedAt: iso(s.updatedAt),
});
