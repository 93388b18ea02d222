// Dates and numbers through the browser's Intl, in the reader's locale.

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

export const formatDateTime = (iso: string | null | undefined) => (iso ? dateTime.format(new Date(iso)) : '—');
export const formatDate = (iso: string | null | undefined) => (iso ? dateOnly.format(new Date(iso)) : '—');

/** A position in a video as m:ss or h:mm:ss (what players show). */
export function formatTimestamp(totalSeconds: number): string {
  const s = Math.max(0, Math.floor(totalSeconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

export const lessonTypeLabel: Record<string, string> = {
  VIDEO: 'Video',
  TEXT: 'Reading',
  PDF: 'PDF',
  QUIZ: 'Quiz',
  ASSIGNMENT: 'Assignment',
  SCORM: 'SCORM package',
  LIVE: 'Live class',
  INTERACTIVE: 'Interactive',
};
