import ical, { ICalCalendarMethod, ICalEventStatus, escape } from 'ical-generator';
import type { Course } from '../courses/courses.tables.js';
import type { LiveSession } from './live-sessions.tables.js';

/** The session's page in the web app (join link, calendar URL, notification target). */
export const sessionPath = (id: string) => `/live-sessions/${encodeURIComponent(id)}`;

/** `live-session-<id>.ics`, with only file-name-safe characters. */
export const calendarFileName = (session: LiveSession) => `live-session-${session.id.replace(/[^\w.-]/g, '_')}.ics`;

/**
 * An RFC 5545 calendar with the session as its one event, made with ical-generator: start,
 * end (start + duration), title, course, the session's URL and a UID that stays the same for
 * the session whatever changes (`<id>@<host of PUBLIC_BASE_URL>`), so calendars update the
 * event instead of adding a second one.
 */
export function sessionCalendar(session: LiveSession, course: Course, opts: { publicBaseUrl: string; now: Date }): string {
  const host = new URL(opts.publicBaseUrl).hostname || 'lms';
  const url = `${opts.publicBaseUrl}${sessionPath(session.id)}`;
  // ical-generator (10.x) writes the calendar's NAME and X-WR-CALNAME as given, while it escapes
  // the event's SUMMARY: a title's comma, semicolon, backslash or line break is escaped here.
  const cal = ical({ name: escape(session.title, false), prodId: { company: 'LMS', product: 'live-sessions', language: 'EN' }, method: ICalCalendarMethod.PUBLISH });
  cal.createEvent({
    id: `${session.id}@${host}`,
    start: session.scheduledAt,
    end: new Date(session.scheduledAt.getTime() + session.durationMinutes * 60_000),
    stamp: opts.now,
    created: session.createdAt,
    lastModified: session.updatedAt,
    summary: session.title,
    description: [`Live class of ${course.title}`, session.description ?? '', `Join: ${url}`].filter(Boolean).join('\n\n'),
    url,
    location: url,
    status: ICalEventStatus.CONFIRMED,
  });
  return cal.toString();
}
