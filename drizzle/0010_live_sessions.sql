CREATE TABLE "live_session_participants" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"session_id" text NOT NULL,
	"person_id" text NOT NULL,
	"registered_at" timestamp with time zone,
	"first_joined_at" timestamp with time zone,
	"last_joined_at" timestamp with time zone,
	"join_count" integer DEFAULT 0 NOT NULL,
	"mark" text,
	"marked_by" text,
	"marked_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "live_session_participants_inst_id_uq" UNIQUE("institution_id","id"),
	CONSTRAINT "live_session_participants_person_uq" UNIQUE("institution_id","session_id","person_id")
);
--> statement-breakpoint
CREATE TABLE "live_sessions" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"course_id" text NOT NULL,
	"title" text NOT NULL,
	"description" text,
	"scheduled_at" timestamp with time zone NOT NULL,
	"duration_minutes" integer NOT NULL,
	"host_id" text NOT NULL,
	"created_by" text NOT NULL,
	"status" text DEFAULT 'SCHEDULED' NOT NULL,
	"room_name" text,
	"started_at" timestamp with time zone,
	"ended_at" timestamp with time zone,
	"recording_status" text,
	"recording_started_at" timestamp with time zone,
	"recording_stopped_at" timestamp with time zone,
	"recording_url" text,
	"recording_duration" integer,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "live_sessions_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
ALTER TABLE "live_session_participants" ADD CONSTRAINT "live_session_participants_session_fk" FOREIGN KEY ("institution_id","session_id") REFERENCES "public"."live_sessions"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "live_sessions" ADD CONSTRAINT "live_sessions_course_fk" FOREIGN KEY ("institution_id","course_id") REFERENCES "public"."courses"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "live_session_participants_person_idx" ON "live_session_participants" USING btree ("institution_id","person_id");--> statement-breakpoint
CREATE INDEX "live_sessions_inst_course_scheduled_idx" ON "live_sessions" USING btree ("institution_id","course_id","scheduled_at");--> statement-breakpoint
CREATE INDEX "live_sessions_inst_scheduled_idx" ON "live_sessions" USING btree ("institution_id","scheduled_at");