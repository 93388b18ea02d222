CREATE TABLE "institutions" (
	"id" text PRIMARY KEY NOT NULL,
	"slug" text,
	"name" text,
	"settings" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "institutions_slug_unique" UNIQUE("slug")
);
--> statement-breakpoint
CREATE TABLE "jobs" (
	"id" text PRIMARY KEY NOT NULL,
	"institution_id" text,
	"name" text NOT NULL,
	"payload" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"max_attempts" integer DEFAULT 5 NOT NULL,
	"run_at" timestamp with time zone NOT NULL,
	"locked_until" timestamp with time zone,
	"locked_by" text,
	"last_error" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "categories" (
	"id" text PRIMARY KEY NOT NULL,
	"institution_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "course_modules" (
	"id" text PRIMARY KEY NOT NULL,
	"institution_id" text NOT NULL,
	"course_id" text NOT NULL,
	"title" text NOT NULL,
	"order" integer NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "courses" (
	"id" text PRIMARY KEY NOT NULL,
	"institution_id" text NOT NULL,
	"title" text NOT NULL,
	"description" text,
	"category_id" text,
	"owner_id" text NOT NULL,
	"status" text DEFAULT 'DRAFT' NOT NULL,
	"max_enrollments" integer,
	"drip_mode" text DEFAULT 'NONE' NOT NULL,
	"certificate_enabled" boolean DEFAULT false NOT NULL,
	"certificate_validity_months" integer,
	"thumbnail_url" text,
	"estimated_duration" integer,
	"passing_score" integer,
	"published_at" timestamp with time zone,
	"archived_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "lessons" (
	"id" text PRIMARY KEY NOT NULL,
	"institution_id" text NOT NULL,
	"course_id" text NOT NULL,
	"module_id" text,
	"title" text NOT NULL,
	"type" text NOT NULL,
	"order" integer NOT NULL,
	"content" text,
	"video_url" text,
	"duration_seconds" integer,
	"is_required" boolean DEFAULT true NOT NULL,
	"unlock_after_days" integer,
	"unlock_at" timestamp with time zone,
	"blocks" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "block_answers" (
	"id" text PRIMARY KEY NOT NULL,
	"institution_id" text NOT NULL,
	"lesson_id" text NOT NULL,
	"block_id" text NOT NULL,
	"student_id" text NOT NULL,
	"answer" jsonb NOT NULL,
	"is_correct" boolean,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "enrollments" (
	"id" text PRIMARY KEY NOT NULL,
	"institution_id" text NOT NULL,
	"course_id" text NOT NULL,
	"student_id" text NOT NULL,
	"status" text DEFAULT 'ACTIVE' NOT NULL,
	"progress" integer DEFAULT 0 NOT NULL,
	"final_score" real,
	"enrolled_by" text,
	"enrolled_at" timestamp with time zone NOT NULL,
	"completed_at" timestamp with time zone,
	"dropped_at" timestamp with time zone,
	"last_accessed_at" timestamp with time zone,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "learner_events" (
	"id" text PRIMARY KEY NOT NULL,
	"institution_id" text NOT NULL,
	"lesson_id" text NOT NULL,
	"student_id" text NOT NULL,
	"type" text NOT NULL,
	"position_seconds" real,
	"data" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"occurred_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "lesson_interactions" (
	"id" text PRIMARY KEY NOT NULL,
	"institution_id" text NOT NULL,
	"lesson_id" text NOT NULL,
	"student_id" text NOT NULL,
	"kind" text NOT NULL,
	"target_id" text,
	"data" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "lesson_progress" (
	"id" text PRIMARY KEY NOT NULL,
	"institution_id" text NOT NULL,
	"enrollment_id" text NOT NULL,
	"lesson_id" text NOT NULL,
	"student_id" text NOT NULL,
	"completed" boolean DEFAULT false NOT NULL,
	"completed_at" timestamp with time zone,
	"progress_percent" integer DEFAULT 0 NOT NULL,
	"position_seconds" integer,
	"pdf_page" integer,
	"pdf_total_pages" integer,
	"score" real,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "certificates" (
	"id" text PRIMARY KEY NOT NULL,
	"institution_id" text NOT NULL,
	"course_id" text NOT NULL,
	"enrollment_id" text NOT NULL,
	"student_id" text NOT NULL,
	"course_title" text NOT NULL,
	"certificate_number" text NOT NULL,
	"verification_code" text NOT NULL,
	"final_score" real,
	"pdf_key" text,
	"issued_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "crm_completions" (
	"id" text PRIMARY KEY NOT NULL,
	"institution_id" text NOT NULL,
	"enrollment_id" text NOT NULL,
	"payload" jsonb NOT NULL,
	"status" text DEFAULT 'PENDING' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"claimed_until" timestamp with time zone,
	"sent_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "lesson_bookmarks" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"lesson_id" text NOT NULL,
	"student_id" text NOT NULL,
	"timestamp_seconds" integer NOT NULL,
	"label" text,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "lesson_notes" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"lesson_id" text NOT NULL,
	"student_id" text NOT NULL,
	"enrollment_id" text NOT NULL,
	"content" text NOT NULL,
	"timestamp_seconds" integer,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "caption_tracks" (
	"id" text PRIMARY KEY NOT NULL,
	"institution_id" text NOT NULL,
	"lesson_id" text NOT NULL,
	"block_id" text,
	"language" text NOT NULL,
	"label" text NOT NULL,
	"storage_key" text NOT NULL,
	"is_default" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"created_by" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "files" (
	"id" text PRIMARY KEY NOT NULL,
	"institution_id" text NOT NULL,
	"key" text NOT NULL,
	"name" text NOT NULL,
	"content_type" text NOT NULL,
	"size" bigint NOT NULL,
	"course_id" text,
	"lesson_id" text,
	"uploaded_by" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "course_modules" ADD CONSTRAINT "course_modules_course_id_courses_id_fk" FOREIGN KEY ("course_id") REFERENCES "public"."courses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lessons" ADD CONSTRAINT "lessons_course_id_courses_id_fk" FOREIGN KEY ("course_id") REFERENCES "public"."courses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lessons" ADD CONSTRAINT "lessons_module_id_course_modules_id_fk" FOREIGN KEY ("module_id") REFERENCES "public"."course_modules"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "enrollments" ADD CONSTRAINT "enrollments_course_id_courses_id_fk" FOREIGN KEY ("course_id") REFERENCES "public"."courses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lesson_progress" ADD CONSTRAINT "lesson_progress_enrollment_id_enrollments_id_fk" FOREIGN KEY ("enrollment_id") REFERENCES "public"."enrollments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lesson_progress" ADD CONSTRAINT "lesson_progress_lesson_id_lessons_id_fk" FOREIGN KEY ("lesson_id") REFERENCES "public"."lessons"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lesson_bookmarks" ADD CONSTRAINT "lesson_bookmarks_lesson_id_lessons_id_fk" FOREIGN KEY ("lesson_id") REFERENCES "public"."lessons"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lesson_notes" ADD CONSTRAINT "lesson_notes_lesson_id_lessons_id_fk" FOREIGN KEY ("lesson_id") REFERENCES "public"."lessons"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lesson_notes" ADD CONSTRAINT "lesson_notes_enrollment_id_enrollments_id_fk" FOREIGN KEY ("enrollment_id") REFERENCES "public"."enrollments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "caption_tracks" ADD CONSTRAINT "caption_tracks_lesson_id_lessons_id_fk" FOREIGN KEY ("lesson_id") REFERENCES "public"."lessons"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "files" ADD CONSTRAINT "files_course_id_courses_id_fk" FOREIGN KEY ("course_id") REFERENCES "public"."courses"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "files" ADD CONSTRAINT "files_lesson_id_lessons_id_fk" FOREIGN KEY ("lesson_id") REFERENCES "public"."lessons"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "jobs_claim_idx" ON "jobs" USING btree ("status","run_at");--> statement-breakpoint
CREATE INDEX "jobs_name_idx" ON "jobs" USING btree ("name","status");--> statement-breakpoint
CREATE UNIQUE INDEX "categories_inst_name_uq" ON "categories" USING btree ("institution_id","name");--> statement-breakpoint
CREATE INDEX "modules_inst_course_idx" ON "course_modules" USING btree ("institution_id","course_id","order");--> statement-breakpoint
CREATE INDEX "courses_inst_status_idx" ON "courses" USING btree ("institution_id","status","created_at");--> statement-breakpoint
CREATE INDEX "courses_inst_owner_idx" ON "courses" USING btree ("institution_id","owner_id");--> statement-breakpoint
CREATE INDEX "lessons_inst_course_idx" ON "lessons" USING btree ("institution_id","course_id","order");--> statement-breakpoint
CREATE UNIQUE INDEX "block_answers_uq" ON "block_answers" USING btree ("institution_id","lesson_id","block_id","student_id");--> statement-breakpoint
CREATE UNIQUE INDEX "enrollments_inst_course_student_uq" ON "enrollments" USING btree ("institution_id","course_id","student_id");--> statement-breakpoint
CREATE INDEX "enrollments_inst_student_idx" ON "enrollments" USING btree ("institution_id","student_id","status");--> statement-breakpoint
CREATE INDEX "enrollments_inst_course_status_idx" ON "enrollments" USING btree ("institution_id","course_id","status");--> statement-breakpoint
CREATE INDEX "learner_events_inst_lesson_student_idx" ON "learner_events" USING btree ("institution_id","lesson_id","student_id","created_at");--> statement-breakpoint
CREATE INDEX "lesson_interactions_inst_lesson_student_idx" ON "lesson_interactions" USING btree ("institution_id","lesson_id","student_id");--> statement-breakpoint
CREATE UNIQUE INDEX "lesson_progress_enrollment_lesson_uq" ON "lesson_progress" USING btree ("institution_id","enrollment_id","lesson_id");--> statement-breakpoint
CREATE UNIQUE INDEX "certificates_enrollment_uq" ON "certificates" USING btree ("institution_id","enrollment_id");--> statement-breakpoint
CREATE UNIQUE INDEX "certificates_code_uq" ON "certificates" USING btree ("verification_code");--> statement-breakpoint
CREATE UNIQUE INDEX "certificates_number_uq" ON "certificates" USING btree ("institution_id","certificate_number");--> statement-breakpoint
CREATE INDEX "certificates_inst_student_idx" ON "certificates" USING btree ("institution_id","student_id");--> statement-breakpoint
CREATE UNIQUE INDEX "crm_completions_enrollment_uq" ON "crm_completions" USING btree ("institution_id","enrollment_id");--> statement-breakpoint
CREATE INDEX "crm_completions_inst_status_idx" ON "crm_completions" USING btree ("institution_id","status");--> statement-breakpoint
CREATE INDEX "lesson_bookmarks_inst_student_created_idx" ON "lesson_bookmarks" USING btree ("institution_id","student_id","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "lesson_bookmarks_inst_student_lesson_idx" ON "lesson_bookmarks" USING btree ("institution_id","student_id","lesson_id","timestamp_seconds","created_at","id");--> statement-breakpoint
CREATE INDEX "lesson_notes_inst_student_updated_idx" ON "lesson_notes" USING btree ("institution_id","student_id","updated_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "lesson_notes_inst_student_lesson_idx" ON "lesson_notes" USING btree ("institution_id","student_id","lesson_id","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "caption_tracks_inst_lesson_idx" ON "caption_tracks" USING btree ("institution_id","lesson_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "caption_tracks_default_block_uq" ON "caption_tracks" USING btree ("institution_id","lesson_id","block_id") WHERE "caption_tracks"."is_default" and "caption_tracks"."block_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "caption_tracks_default_lesson_uq" ON "caption_tracks" USING btree ("institution_id","lesson_id") WHERE "caption_tracks"."is_default" and "caption_tracks"."block_id" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "files_key_uq" ON "files" USING btree ("key");--> statement-breakpoint
CREATE INDEX "files_inst_created_idx" ON "files" USING btree ("institution_id","created_at");--> statement-breakpoint
CREATE INDEX "files_inst_uploader_idx" ON "files" USING btree ("institution_id","uploaded_by","created_at");