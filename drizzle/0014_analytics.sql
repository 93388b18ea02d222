CREATE TABLE "analytics_course_daily_snapshots" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"course_id" text NOT NULL,
	"day" date NOT NULL,
	"enrollments" integer NOT NULL,
	"active" integer NOT NULL,
	"completed" integer NOT NULL,
	"dropped" integer NOT NULL,
	"enrollments_today" integer NOT NULL,
	"completions_today" integer NOT NULL,
	"active_learners_today" integer NOT NULL,
	"average_progress" real,
	"average_score" real,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "analytics_course_daily_snapshots_inst_id_uq" UNIQUE("institution_id","id"),
	CONSTRAINT "analytics_course_daily_snapshots_day_uq" UNIQUE("institution_id","course_id","day")
);
--> statement-breakpoint
CREATE TABLE "analytics_report_alerts" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"report_id" text NOT NULL,
	"created_by" text NOT NULL,
	"name" text NOT NULL,
	"metric" text NOT NULL,
	"comparison" text NOT NULL,
	"threshold" real NOT NULL,
	"recipients" jsonb NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"state" text DEFAULT 'OK' NOT NULL,
	"last_value" real,
	"last_evaluated_at" timestamp with time zone,
	"last_error" text,
	"triggered_at" timestamp with time zone,
	"cleared_at" timestamp with time zone,
	"trigger_count" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "analytics_report_alerts_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
CREATE TABLE "analytics_report_runs" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"schedule_id" text NOT NULL,
	"report_id" text NOT NULL,
	"due_at" timestamp with time zone NOT NULL,
	"format" text NOT NULL,
	"status" text DEFAULT 'QUEUED' NOT NULL,
	"row_count" integer,
	"file_key" text,
	"file_name" text,
	"error" text,
	"created_at" timestamp with time zone NOT NULL,
	"completed_at" timestamp with time zone,
	CONSTRAINT "analytics_report_runs_inst_id_uq" UNIQUE("institution_id","id"),
	CONSTRAINT "analytics_report_runs_key_uq" UNIQUE("institution_id","schedule_id","due_at")
);
--> statement-breakpoint
CREATE TABLE "analytics_report_schedules" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"report_id" text NOT NULL,
	"created_by" text NOT NULL,
	"cadence" text NOT NULL,
	"time_of_day" text NOT NULL,
	"day_of_week" integer,
	"day_of_month" integer,
	"timezone" text NOT NULL,
	"format" text NOT NULL,
	"recipients" jsonb NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"next_run_at" timestamp with time zone NOT NULL,
	"last_run_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "analytics_report_schedules_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
CREATE TABLE "analytics_reports" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"owner_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"visibility" text DEFAULT 'PRIVATE' NOT NULL,
	"definition" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "analytics_reports_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
ALTER TABLE "notifications" ADD COLUMN "attachments" jsonb;--> statement-breakpoint
ALTER TABLE "analytics_course_daily_snapshots" ADD CONSTRAINT "analytics_course_daily_snapshots_course_fk" FOREIGN KEY ("institution_id","course_id") REFERENCES "public"."courses"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "analytics_report_alerts" ADD CONSTRAINT "analytics_report_alerts_report_fk" FOREIGN KEY ("institution_id","report_id") REFERENCES "public"."analytics_reports"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "analytics_report_runs" ADD CONSTRAINT "analytics_report_runs_schedule_fk" FOREIGN KEY ("institution_id","schedule_id") REFERENCES "public"."analytics_report_schedules"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "analytics_report_schedules" ADD CONSTRAINT "analytics_report_schedules_report_fk" FOREIGN KEY ("institution_id","report_id") REFERENCES "public"."analytics_reports"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "analytics_report_alerts_report_idx" ON "analytics_report_alerts" USING btree ("institution_id","report_id");--> statement-breakpoint
CREATE INDEX "analytics_report_schedules_due_idx" ON "analytics_report_schedules" USING btree ("next_run_at") WHERE is_active;--> statement-breakpoint
CREATE INDEX "analytics_report_schedules_report_idx" ON "analytics_report_schedules" USING btree ("institution_id","report_id");--> statement-breakpoint
CREATE INDEX "analytics_reports_inst_owner_idx" ON "analytics_reports" USING btree ("institution_id","owner_id","created_at");