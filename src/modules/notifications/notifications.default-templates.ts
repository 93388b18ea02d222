/**
 * The system default templates (mustache), one entry per key: the source of the rows migration
 * 0004_notifications seeds with `institution_id` null (`npm run gen:templates` prints the SQL).
 * Each entry gives the title and text; the e-mail HTML wraps the same text, so every value is
 * HTML-escaped there (`{{x}}` escapes; nothing here uses the unescaped `{{{x}}}`).
 *
 * Values: the notification's `metadata` fields and `actionUrl` (absolute). Missing values
 * render as empty text.
 */
export const DEFAULT_TEMPLATES: Record<string, { subject: string; body: string }> = {
  ASSESS_GRADED: {
    subject: 'Graded: {{title}}',
    body: 'Your work "{{title}}" in {{courseTitle}} was graded: {{score}}{{#maxScore}} / {{maxScore}}{{/maxScore}}.',
  },
  ASSESS_PEER_GRADED: {
    subject: 'Peer reviews complete: {{title}}',
    body: 'All peer reviews of your submission "{{title}}" in {{courseTitle}} are in{{#score}}: {{score}}{{/score}}.',
  },
  PEER_REVIEW_ASSIGNED: {
    subject: 'A peer review for you: {{title}}',
    body: 'A classmate’s submission for "{{title}}" in {{courseTitle}} is waiting for your review.',
  },
  ASSIGNMENT_DUE_REMINDER: {
    subject: 'Due soon: {{title}}',
    body: '"{{title}}" in {{courseTitle}} is due {{dueDate}}.',
  },
  TEACHER_NEW_SUBMISSION: {
    subject: '{{#flagged}}Flagged peer review{{/flagged}}{{^flagged}}New submission{{/flagged}}: {{title}}',
    body: '{{#flagged}}A peer review of "{{title}}" in {{courseTitle}} was flagged{{#reason}}: {{reason}}{{/reason}}.{{/flagged}}{{^flagged}}A student submitted "{{title}}" in {{courseTitle}}.{{/flagged}}',
  },
  LIVE_CLASS_RECORDING_READY: {
    subject: 'Recording ready: {{title}}',
    body: 'The recording of the live class "{{title}}" in {{courseTitle}} is ready to watch.',
  },
  LIVE_CLASS_SCHEDULED: {
    subject: 'Live class scheduled: {{title}}',
    body: 'A live class "{{title}}" in {{courseTitle}} is scheduled for {{scheduledAt}}.',
  },
  ENROLL_WELCOME: {
    subject: 'Welcome to {{courseTitle}}',
    body: 'You are enrolled in {{courseTitle}}. Your first lesson is waiting.',
  },
  COURSE_COMPLETED: {
    subject: 'Course completed: {{courseTitle}}',
    body: 'Congratulations! You completed {{courseTitle}}{{#certificateNumber}}; your certificate number is {{certificateNumber}}{{/certificateNumber}}.',
  },
  REENGAGE_NUDGE: {
    subject: 'Pick up where you left off',
    body: 'Your courses are waiting for you{{#courseTitle}}: continue {{courseTitle}}{{/courseTitle}}.',
  },
  REENGAGE_NUDGE_INACTIVE_7D: {
    subject: 'We miss you',
    body: 'You have not studied for 7 days{{#courseTitle}}; continue {{courseTitle}} where you left off{{/courseTitle}}.',
  },
  COURSE_ANNOUNCEMENT: {
    subject: '{{courseTitle}}: {{title}}',
    body: '{{message}}',
  },
  DISCUSSION_REPLY: {
    subject: 'New reply: {{title}}',
    body: 'Someone replied to your discussion "{{title}}"{{#courseTitle}} in {{courseTitle}}{{/courseTitle}}.',
  },
  BADGE_EARNED: {
    subject: 'Badge earned: {{badgeName}}',
    body: 'You earned the badge "{{badgeName}}".',
  },
  COMPLIANCE_DUE: {
    subject: 'Training due: {{title}}',
    body: 'Required training "{{title}}" is due {{dueDate}}.',
  },
  REPORT_SCHEDULED: {
    subject: 'Report: {{title}}',
    body: 'Your scheduled report "{{title}}" is ready{{#rowCount}} ({{rowCount}} rows){{/rowCount}}.',
  },
  REPORT_ALERT: {
    subject: 'Alert: {{title}}',
    body: 'Your alert "{{title}}" fired: {{metric}} is {{value}} ({{condition}}).',
  },
};

/** The e-mail HTML around a template's text (escaped values; a link when there is an action). */
export const emailHtmlOf = (body: string) =>
  `<!doctype html><html><body style="font-family:sans-serif"><p>${body}</p>{{#actionUrl}}<p><a href="{{actionUrl}}">Open in the LMS</a></p>{{/actionUrl}}</body></html>`;
