CREATE TABLE "scorm_attempts" (
	"id" text PRIMARY KEY NOT NULL,
	"institution_id" text NOT NULL,
	"package_id" text NOT NULL,
	"sco_id" text NOT NULL,
	"lesson_id" text NOT NULL,
	"enrollment_id" text NOT NULL,
	"student_id" text NOT NULL,
	"attempt_number" integer NOT NULL,
	"status" text DEFAULT 'IN_PROGRESS' NOT NULL,
	"cmi" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"completion_status" text NOT NULL,
	"success_status" text NOT NULL,
	"score_percent" real,
	"completed" boolean DEFAULT false NOT NULL,
	"total_time_seconds" real DEFAULT 0 NOT NULL,
	"last_exit" text,
	"started_at" timestamp with time zone NOT NULL,
	"ended_at" timestamp with time zone,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "scorm_attempts_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
CREATE TABLE "scorm_package_files" (
	"id" text PRIMARY KEY NOT NULL,
	"institution_id" text NOT NULL,
	"package_id" text NOT NULL,
	"path" text NOT NULL,
	"storage_key" text NOT NULL,
	"content_type" text NOT NULL,
	"size" bigint NOT NULL,
	CONSTRAINT "scorm_package_files_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
CREATE TABLE "scorm_packages" (
	"id" text PRIMARY KEY NOT NULL,
	"institution_id" text NOT NULL,
	"lesson_id" text NOT NULL,
	"status" text DEFAULT 'CURRENT' NOT NULL,
	"version" text NOT NULL,
	"schema_version" text NOT NULL,
	"manifest_identifier" text NOT NULL,
	"title" text NOT NULL,
	"organization_identifier" text,
	"organization" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"sequencing" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"file_count" integer NOT NULL,
	"total_bytes" bigint NOT NULL,
	"uploaded_by" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "scorm_packages_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
CREATE TABLE "scorm_scos" (
	"id" text PRIMARY KEY NOT NULL,
	"institution_id" text NOT NULL,
	"package_id" text NOT NULL,
	"identifier" text NOT NULL,
	"resource_identifier" text NOT NULL,
	"title" text NOT NULL,
	"position" integer NOT NULL,
	"launch_path" text NOT NULL,
	"launch_query" text DEFAULT '' NOT NULL,
	"scorm_type" text NOT NULL,
	"is_visible" boolean DEFAULT true NOT NULL,
	"mastery_score" real,
	"scaled_passing_score" real,
	"completion_threshold" real,
	"launch_data" text,
	"max_time_allowed" text,
	"time_limit_action" text,
	"sequencing" jsonb,
	CONSTRAINT "scorm_scos_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
ALTER TABLE "scorm_attempts" ADD CONSTRAINT "scorm_attempts_package_fk" FOREIGN KEY ("institution_id","package_id") REFERENCES "public"."scorm_packages"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scorm_attempts" ADD CONSTRAINT "scorm_attempts_sco_fk" FOREIGN KEY ("institution_id","sco_id") REFERENCES "public"."scorm_scos"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scorm_attempts" ADD CONSTRAINT "scorm_attempts_lesson_fk" FOREIGN KEY ("institution_id","lesson_id") REFERENCES "public"."lessons"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scorm_attempts" ADD CONSTRAINT "scorm_attempts_enrollment_fk" FOREIGN KEY ("institution_id","enrollment_id") REFERENCES "public"."enrollments"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scorm_package_files" ADD CONSTRAINT "scorm_package_files_package_fk" FOREIGN KEY ("institution_id","package_id") REFERENCES "public"."scorm_packages"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scorm_packages" ADD CONSTRAINT "scorm_packages_lesson_fk" FOREIGN KEY ("institution_id","lesson_id") REFERENCES "public"."lessons"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scorm_scos" ADD CONSTRAINT "scorm_scos_package_fk" FOREIGN KEY ("institution_id","package_id") REFERENCES "public"."scorm_packages"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "scorm_attempts_number_uq" ON "scorm_attempts" USING btree ("institution_id","sco_id","student_id","attempt_number");--> statement-breakpoint
CREATE INDEX "scorm_attempts_student_package_idx" ON "scorm_attempts" USING btree ("institution_id","package_id","student_id");--> statement-breakpoint
CREATE UNIQUE INDEX "scorm_package_files_path_uq" ON "scorm_package_files" USING btree ("institution_id","package_id","path");--> statement-breakpoint
CREATE UNIQUE INDEX "scorm_packages_current_uq" ON "scorm_packages" USING btree ("institution_id","lesson_id") WHERE status = 'CURRENT';--> statement-breakpoint
CREATE UNIQUE INDEX "scorm_scos_package_identifier_uq" ON "scorm_scos" USING btree ("institution_id","package_id","identifier");