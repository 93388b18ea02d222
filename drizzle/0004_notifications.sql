CREATE TABLE "notification_devices" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"device_id" text NOT NULL,
	"token" text NOT NULL,
	"platform" text NOT NULL,
	"provider" text NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "notification_devices_inst_id_uq" UNIQUE("institution_id","id"),
	CONSTRAINT "notification_devices_device_uq" UNIQUE("institution_id","device_id")
);
--> statement-breakpoint
CREATE TABLE "notification_digest_settings" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"daily_time" text,
	"weekly_day" text,
	"weekly_time" text,
	"timezone_override" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "notification_digest_settings_inst_id_uq" UNIQUE("institution_id","id"),
	CONSTRAINT "notification_digest_settings_user_uq" UNIQUE("institution_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "notification_preferences" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"key" text NOT NULL,
	"email_enabled" boolean,
	"push_enabled" boolean,
	"in_app_enabled" boolean,
	"frequency" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "notification_preferences_inst_id_uq" UNIQUE("institution_id","id"),
	CONSTRAINT "notification_preferences_user_key_uq" UNIQUE("institution_id","user_id","key")
);
--> statement-breakpoint
CREATE TABLE "notification_templates" (
	"institution_id" text,
	"id" text PRIMARY KEY NOT NULL,
	"key" text NOT NULL,
	"channel" text NOT NULL,
	"subject" text NOT NULL,
	"body" text NOT NULL,
	"html_body" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "notification_templates_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
CREATE TABLE "notifications" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"recipient_id" text NOT NULL,
	"key" text NOT NULL,
	"category" text NOT NULL,
	"channel" text NOT NULL,
	"status" text NOT NULL,
	"failure_reason" text,
	"title" text NOT NULL,
	"message" text NOT NULL,
	"html" text,
	"action_url" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"frequency" text NOT NULL,
	"digest_due_at" timestamp with time zone,
	"batch_id" text,
	"dedupe_key" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"is_read" boolean DEFAULT false NOT NULL,
	"read_at" timestamp with time zone,
	"sent_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "notifications_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
CREATE INDEX "notification_devices_user_idx" ON "notification_devices" USING btree ("institution_id","user_id");--> statement-breakpoint
CREATE INDEX "notification_devices_token_idx" ON "notification_devices" USING btree ("institution_id","token");--> statement-breakpoint
CREATE UNIQUE INDEX "notification_templates_inst_key_uq" ON "notification_templates" USING btree ("institution_id","key","channel") WHERE institution_id is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "notification_templates_system_key_uq" ON "notification_templates" USING btree ("key","channel") WHERE institution_id is null;--> statement-breakpoint
CREATE INDEX "notifications_inbox_idx" ON "notifications" USING btree ("institution_id","recipient_id","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST) WHERE channel = 'IN_APP';--> statement-breakpoint
CREATE INDEX "notifications_unread_idx" ON "notifications" USING btree ("institution_id","recipient_id") WHERE channel = 'IN_APP' and is_read = false and status in ('PENDING', 'SENT');--> statement-breakpoint
CREATE INDEX "notifications_batch_idx" ON "notifications" USING btree ("batch_id") WHERE batch_id is not null and status = 'PENDING';--> statement-breakpoint
CREATE INDEX "notifications_digest_idx" ON "notifications" USING btree ("institution_id","recipient_id","digest_due_at") WHERE digest_due_at is not null and status = 'PENDING';--> statement-breakpoint
CREATE UNIQUE INDEX "notifications_dedupe_uq" ON "notifications" USING btree ("institution_id","recipient_id","key","channel","dedupe_key") WHERE dedupe_key is not null;--> statement-breakpoint
INSERT INTO "notification_templates" ("institution_id", "id", "key", "channel", "subject", "body", "html_body") VALUES
  (null, 'tpl_assess_graded_in_app', 'ASSESS_GRADED', 'IN_APP', 'Graded: {{title}}', 'Your work "{{title}}" in {{courseTitle}} was graded: {{score}}{{#maxScore}} / {{maxScore}}{{/maxScore}}.', null),
  (null, 'tpl_assess_graded_email', 'ASSESS_GRADED', 'email', 'Graded: {{title}}', 'Your work "{{title}}" in {{courseTitle}} was graded: {{score}}{{#maxScore}} / {{maxScore}}{{/maxScore}}.', '<!doctype html><html><body style="font-family:sans-serif"><p>Your work "{{title}}" in {{courseTitle}} was graded: {{score}}{{#maxScore}} / {{maxScore}}{{/maxScore}}.</p>{{#actionUrl}}<p><a href="{{actionUrl}}">Open in the LMS</a></p>{{/actionUrl}}</body></html>'),
  (null, 'tpl_assess_graded_push', 'ASSESS_GRADED', 'push', 'Graded: {{title}}', 'Your work "{{title}}" in {{courseTitle}} was graded: {{score}}{{#maxScore}} / {{maxScore}}{{/maxScore}}.', null),
  (null, 'tpl_assess_peer_graded_in_app', 'ASSESS_PEER_GRADED', 'IN_APP', 'Peer reviews complete: {{title}}', 'All peer reviews of your submission "{{title}}" in {{courseTitle}} are in{{#score}}: {{score}}{{/score}}.', null),
  (null, 'tpl_assess_peer_graded_email', 'ASSESS_PEER_GRADED', 'email', 'Peer reviews complete: {{title}}', 'All peer reviews of your submission "{{title}}" in {{courseTitle}} are in{{#score}}: {{score}}{{/score}}.', '<!doctype html><html><body style="font-family:sans-serif"><p>All peer reviews of your submission "{{title}}" in {{courseTitle}} are in{{#score}}: {{score}}{{/score}}.</p>{{#actionUrl}}<p><a href="{{actionUrl}}">Open in the LMS</a></p>{{/actionUrl}}</body></html>'),
  (null, 'tpl_assess_peer_graded_push', 'ASSESS_PEER_GRADED', 'push', 'Peer reviews complete: {{title}}', 'All peer reviews of your submission "{{title}}" in {{courseTitle}} are in{{#score}}: {{score}}{{/score}}.', null),
  (null, 'tpl_peer_review_assigned_in_app', 'PEER_REVIEW_ASSIGNED', 'IN_APP', 'A peer review for you: {{title}}', 'A classmate’s submission for "{{title}}" in {{courseTitle}} is waiting for your review.', null),
  (null, 'tpl_peer_review_assigned_email', 'PEER_REVIEW_ASSIGNED', 'email', 'A peer review for you: {{title}}', 'A classmate’s submission for "{{title}}" in {{courseTitle}} is waiting for your review.', '<!doctype html><html><body style="font-family:sans-serif"><p>A classmate’s submission for "{{title}}" in {{courseTitle}} is waiting for your review.</p>{{#actionUrl}}<p><a href="{{actionUrl}}">Open in the LMS</a></p>{{/actionUrl}}</body></html>'),
  (null, 'tpl_peer_review_assigned_push', 'PEER_REVIEW_ASSIGNED', 'push', 'A peer review for you: {{title}}', 'A classmate’s submission for "{{title}}" in {{courseTitle}} is waiting for your review.', null),
  (null, 'tpl_assignment_due_reminder_in_app', 'ASSIGNMENT_DUE_REMINDER', 'IN_APP', 'Due soon: {{title}}', '"{{title}}" in {{courseTitle}} is due {{dueDate}}.', null),
  (null, 'tpl_assignment_due_reminder_email', 'ASSIGNMENT_DUE_REMINDER', 'email', 'Due soon: {{title}}', '"{{title}}" in {{courseTitle}} is due {{dueDate}}.', '<!doctype html><html><body style="font-family:sans-serif"><p>"{{title}}" in {{courseTitle}} is due {{dueDate}}.</p>{{#actionUrl}}<p><a href="{{actionUrl}}">Open in the LMS</a></p>{{/actionUrl}}</body></html>'),
  (null, 'tpl_assignment_due_reminder_push', 'ASSIGNMENT_DUE_REMINDER', 'push', 'Due soon: {{title}}', '"{{title}}" in {{courseTitle}} is due {{dueDate}}.', null),
  (null, 'tpl_teacher_new_submission_in_app', 'TEACHER_NEW_SUBMISSION', 'IN_APP', '{{#flagged}}Flagged peer review{{/flagged}}{{^flagged}}New submission{{/flagged}}: {{title}}', '{{#flagged}}A peer review of "{{title}}" in {{courseTitle}} was flagged{{#reason}}: {{reason}}{{/reason}}.{{/flagged}}{{^flagged}}A student submitted "{{title}}" in {{courseTitle}}.{{/flagged}}', null),
  (null, 'tpl_teacher_new_submission_email', 'TEACHER_NEW_SUBMISSION', 'email', '{{#flagged}}Flagged peer review{{/flagged}}{{^flagged}}New submission{{/flagged}}: {{title}}', '{{#flagged}}A peer review of "{{title}}" in {{courseTitle}} was flagged{{#reason}}: {{reason}}{{/reason}}.{{/flagged}}{{^flagged}}A student submitted "{{title}}" in {{courseTitle}}.{{/flagged}}', '<!doctype html><html><body style="font-family:sans-serif"><p>{{#flagged}}A peer review of "{{title}}" in {{courseTitle}} was flagged{{#reason}}: {{reason}}{{/reason}}.{{/flagged}}{{^flagged}}A student submitted "{{title}}" in {{courseTitle}}.{{/flagged}}</p>{{#actionUrl}}<p><a href="{{actionUrl}}">Open in the LMS</a></p>{{/actionUrl}}</body></html>'),
  (null, 'tpl_teacher_new_submission_push', 'TEACHER_NEW_SUBMISSION', 'push', '{{#flagged}}Flagged peer review{{/flagged}}{{^flagged}}New submission{{/flagged}}: {{title}}', '{{#flagged}}A peer review of "{{title}}" in {{courseTitle}} was flagged{{#reason}}: {{reason}}{{/reason}}.{{/flagged}}{{^flagged}}A student submitted "{{title}}" in {{courseTitle}}.{{/flagged}}', null),
  (null, 'tpl_live_class_recording_ready_in_app', 'LIVE_CLASS_RECORDING_READY', 'IN_APP', 'Recording ready: {{title}}', 'The recording of the live class "{{title}}" in {{courseTitle}} is ready to watch.', null),
  (null, 'tpl_live_class_recording_ready_email', 'LIVE_CLASS_RECORDING_READY', 'email', 'Recording ready: {{title}}', 'The recording of the live class "{{title}}" in {{courseTitle}} is ready to watch.', '<!doctype html><html><body style="font-family:sans-serif"><p>The recording of the live class "{{title}}" in {{courseTitle}} is ready to watch.</p>{{#actionUrl}}<p><a href="{{actionUrl}}">Open in the LMS</a></p>{{/actionUrl}}</body></html>'),
  (null, 'tpl_live_class_recording_ready_push', 'LIVE_CLASS_RECORDING_READY', 'push', 'Recording ready: {{title}}', 'The recording of the live class "{{title}}" in {{courseTitle}} is ready to watch.', null),
  (null, 'tpl_live_class_scheduled_in_app', 'LIVE_CLASS_SCHEDULED', 'IN_APP', 'Live class scheduled: {{title}}', 'A live class "{{title}}" in {{courseTitle}} is scheduled for {{scheduledAt}}.', null),
  (null, 'tpl_live_class_scheduled_email', 'LIVE_CLASS_SCHEDULED', 'email', 'Live class scheduled: {{title}}', 'A live class "{{title}}" in {{courseTitle}} is scheduled for {{scheduledAt}}.', '<!doctype html><html><body style="font-family:sans-serif"><p>A live class "{{title}}" in {{courseTitle}} is scheduled for {{scheduledAt}}.</p>{{#actionUrl}}<p><a href="{{actionUrl}}">Open in the LMS</a></p>{{/actionUrl}}</body></html>'),
  (null, 'tpl_live_class_scheduled_push', 'LIVE_CLASS_SCHEDULED', 'push', 'Live class scheduled: {{title}}', 'A live class "{{title}}" in {{courseTitle}} is scheduled for {{scheduledAt}}.', null),
  (null, 'tpl_enroll_welcome_in_app', 'ENROLL_WELCOME', 'IN_APP', 'Welcome to {{courseTitle}}', 'You are enrolled in {{courseTitle}}. Your first lesson is waiting.', null),
  (null, 'tpl_enroll_welcome_email', 'ENROLL_WELCOME', 'email', 'Welcome to {{courseTitle}}', 'You are enrolled in {{courseTitle}}. Your first lesson is waiting.', '<!doctype html><html><body style="font-family:sans-serif"><p>You are enrolled in {{courseTitle}}. Your first lesson is waiting.</p>{{#actionUrl}}<p><a href="{{actionUrl}}">Open in the LMS</a></p>{{/actionUrl}}</body></html>'),
  (null, 'tpl_enroll_welcome_push', 'ENROLL_WELCOME', 'push', 'Welcome to {{courseTitle}}', 'You are enrolled in {{courseTitle}}. Your first lesson is waiting.', null),
  (null, 'tpl_course_completed_in_app', 'COURSE_COMPLETED', 'IN_APP', 'Course completed: {{courseTitle}}', 'Congratulations! You completed {{courseTitle}}{{#certificateNumber}}; your certificate number is {{certificateNumber}}{{/certificateNumber}}.', null),
  (null, 'tpl_course_completed_email', 'COURSE_COMPLETED', 'email', 'Course completed: {{courseTitle}}', 'Congratulations! You completed {{courseTitle}}{{#certificateNumber}}; your certificate number is {{certificateNumber}}{{/certificateNumber}}.', '<!doctype html><html><body style="font-family:sans-serif"><p>Congratulations! You completed {{courseTitle}}{{#certificateNumber}}; your certificate number is {{certificateNumber}}{{/certificateNumber}}.</p>{{#actionUrl}}<p><a href="{{actionUrl}}">Open in the LMS</a></p>{{/actionUrl}}</body></html>'),
  (null, 'tpl_course_completed_push', 'COURSE_COMPLETED', 'push', 'Course completed: {{courseTitle}}', 'Congratulations! You completed {{courseTitle}}{{#certificateNumber}}; your certificate number is {{certificateNumber}}{{/certificateNumber}}.', null),
  (null, 'tpl_reengage_nudge_in_app', 'REENGAGE_NUDGE', 'IN_APP', 'Pick up where you left off', 'Your courses are waiting for you{{#courseTitle}}: continue {{courseTitle}}{{/courseTitle}}.', null),
  (null, 'tpl_reengage_nudge_email', 'REENGAGE_NUDGE', 'email', 'Pick up where you left off', 'Your courses are waiting for you{{#courseTitle}}: continue {{courseTitle}}{{/courseTitle}}.', '<!doctype html><html><body style="font-family:sans-serif"><p>Your courses are waiting for you{{#courseTitle}}: continue {{courseTitle}}{{/courseTitle}}.</p>{{#actionUrl}}<p><a href="{{actionUrl}}">Open in the LMS</a></p>{{/actionUrl}}</body></html>'),
  (null, 'tpl_reengage_nudge_push', 'REENGAGE_NUDGE', 'push', 'Pick up where you left off', 'Your courses are waiting for you{{#courseTitle}}: continue {{courseTitle}}{{/courseTitle}}.', null),
  (null, 'tpl_reengage_nudge_inactive_7d_in_app', 'REENGAGE_NUDGE_INACTIVE_7D', 'IN_APP', 'We miss you', 'You have not studied for 7 days{{#courseTitle}}; continue {{courseTitle}} where you left off{{/courseTitle}}.', null),
  (null, 'tpl_reengage_nudge_inactive_7d_email', 'REENGAGE_NUDGE_INACTIVE_7D', 'email', 'We miss you', 'You have not studied for 7 days{{#courseTitle}}; continue {{courseTitle}} where you left off{{/courseTitle}}.', '<!doctype html><html><body style="font-family:sans-serif"><p>You have not studied for 7 days{{#courseTitle}}; continue {{courseTitle}} where you left off{{/courseTitle}}.</p>{{#actionUrl}}<p><a href="{{actionUrl}}">Open in the LMS</a></p>{{/actionUrl}}</body></html>'),
  (null, 'tpl_reengage_nudge_inactive_7d_push', 'REENGAGE_NUDGE_INACTIVE_7D', 'push', 'We miss you', 'You have not studied for 7 days{{#courseTitle}}; continue {{courseTitle}} where you left off{{/courseTitle}}.', null),
  (null, 'tpl_course_announcement_in_app', 'COURSE_ANNOUNCEMENT', 'IN_APP', '{{courseTitle}}: {{title}}', '{{message}}', null),
  (null, 'tpl_course_announcement_email', 'COURSE_ANNOUNCEMENT', 'email', '{{courseTitle}}: {{title}}', '{{message}}', '<!doctype html><html><body style="font-family:sans-serif"><p>{{message}}</p>{{#actionUrl}}<p><a href="{{actionUrl}}">Open in the LMS</a></p>{{/actionUrl}}</body></html>'),
  (null, 'tpl_course_announcement_push', 'COURSE_ANNOUNCEMENT', 'push', '{{courseTitle}}: {{title}}', '{{message}}', null),
  (null, 'tpl_discussion_reply_in_app', 'DISCUSSION_REPLY', 'IN_APP', 'New reply: {{title}}', 'Someone replied to your discussion "{{title}}"{{#courseTitle}} in {{courseTitle}}{{/courseTitle}}.', null),
  (null, 'tpl_discussion_reply_email', 'DISCUSSION_REPLY', 'email', 'New reply: {{title}}', 'Someone replied to your discussion "{{title}}"{{#courseTitle}} in {{courseTitle}}{{/courseTitle}}.', '<!doctype html><html><body style="font-family:sans-serif"><p>Someone replied to your discussion "{{title}}"{{#courseTitle}} in {{courseTitle}}{{/courseTitle}}.</p>{{#actionUrl}}<p><a href="{{actionUrl}}">Open in the LMS</a></p>{{/actionUrl}}</body></html>'),
  (null, 'tpl_discussion_reply_push', 'DISCUSSION_REPLY', 'push', 'New reply: {{title}}', 'Someone replied to your discussion "{{title}}"{{#courseTitle}} in {{courseTitle}}{{/courseTitle}}.', null),
  (null, 'tpl_badge_earned_in_app', 'BADGE_EARNED', 'IN_APP', 'Badge earned: {{badgeName}}', 'You earned the badge "{{badgeName}}".', null),
  (null, 'tpl_badge_earned_email', 'BADGE_EARNED', 'email', 'Badge earned: {{badgeName}}', 'You earned the badge "{{badgeName}}".', '<!doctype html><html><body style="font-family:sans-serif"><p>You earned the badge "{{badgeName}}".</p>{{#actionUrl}}<p><a href="{{actionUrl}}">Open in the LMS</a></p>{{/actionUrl}}</body></html>'),
  (null, 'tpl_badge_earned_push', 'BADGE_EARNED', 'push', 'Badge earned: {{badgeName}}', 'You earned the badge "{{badgeName}}".', null),
  (null, 'tpl_compliance_due_in_app', 'COMPLIANCE_DUE', 'IN_APP', 'Training due: {{title}}', 'Required training "{{title}}" is due {{dueDate}}.', null),
  (null, 'tpl_compliance_due_email', 'COMPLIANCE_DUE', 'email', 'Training due: {{title}}', 'Required training "{{title}}" is due {{dueDate}}.', '<!doctype html><html><body style="font-family:sans-serif"><p>Required training "{{title}}" is due {{dueDate}}.</p>{{#actionUrl}}<p><a href="{{actionUrl}}">Open in the LMS</a></p>{{/actionUrl}}</body></html>'),
  (null, 'tpl_compliance_due_push', 'COMPLIANCE_DUE', 'push', 'Training due: {{title}}', 'Required training "{{title}}" is due {{dueDate}}.', null),
  (null, 'tpl_report_scheduled_in_app', 'REPORT_SCHEDULED', 'IN_APP', 'Report: {{title}}', 'Your scheduled report "{{title}}" is ready{{#rowCount}} ({{rowCount}} rows){{/rowCount}}.', null),
  (null, 'tpl_report_scheduled_email', 'REPORT_SCHEDULED', 'email', 'Report: {{title}}', 'Your scheduled report "{{title}}" is ready{{#rowCount}} ({{rowCount}} rows){{/rowCount}}.', '<!doctype html><html><body style="font-family:sans-serif"><p>Your scheduled report "{{title}}" is ready{{#rowCount}} ({{rowCount}} rows){{/rowCount}}.</p>{{#actionUrl}}<p><a href="{{actionUrl}}">Open in the LMS</a></p>{{/actionUrl}}</body></html>'),
  (null, 'tpl_report_scheduled_push', 'REPORT_SCHEDULED', 'push', 'Report: {{title}}', 'Your scheduled report "{{title}}" is ready{{#rowCount}} ({{rowCount}} rows){{/rowCount}}.', null),
  (null, 'tpl_report_alert_in_app', 'REPORT_ALERT', 'IN_APP', 'Alert: {{title}}', 'Your alert "{{title}}" fired: {{metric}} is {{value}} ({{condition}}).', null),
  (null, 'tpl_report_alert_email', 'REPORT_ALERT', 'email', 'Alert: {{title}}', 'Your alert "{{title}}" fired: {{metric}} is {{value}} ({{condition}}).', '<!doctype html><html><body style="font-family:sans-serif"><p>Your alert "{{title}}" fired: {{metric}} is {{value}} ({{condition}}).</p>{{#actionUrl}}<p><a href="{{actionUrl}}">Open in the LMS</a></p>{{/actionUrl}}</body></html>'),
  (null, 'tpl_report_alert_push', 'REPORT_ALERT', 'push', 'Alert: {{title}}', 'Your alert "{{title}}" fired: {{metric}} is {{value}} ({{condition}}).', null);
