CREATE TABLE "learning_path_courses" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"path_id" text NOT NULL,
	"course_id" text NOT NULL,
	"position" integer NOT NULL,
	CONSTRAINT "learning_path_courses_inst_id_uq" UNIQUE("institution_id","id"),
	CONSTRAINT "learning_path_courses_course_uq" UNIQUE("institution_id","path_id","course_id")
);
--> statement-breakpoint
CREATE TABLE "learning_path_enrollments" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"path_id" text NOT NULL,
	"student_id" text NOT NULL,
	"enrolled_at" timestamp with time zone NOT NULL,
	CONSTRAINT "learning_path_enrollments_inst_id_uq" UNIQUE("institution_id","id"),
	CONSTRAINT "learning_path_enrollments_student_uq" UNIQUE("institution_id","path_id","student_id")
);
--> statement-breakpoint
CREATE TABLE "learning_paths" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"title" text NOT NULL,
	"description" text,
	"status" text DEFAULT 'DRAFT' NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "learning_paths_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
ALTER TABLE "learning_path_courses" ADD CONSTRAINT "learning_path_courses_path_fk" FOREIGN KEY ("institution_id","path_id") REFERENCES "public"."learning_paths"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "learning_path_courses" ADD CONSTRAINT "learning_path_courses_course_fk" FOREIGN KEY ("institution_id","course_id") REFERENCES "public"."courses"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "learning_path_enrollments" ADD CONSTRAINT "learning_path_enrollments_path_fk" FOREIGN KEY ("institution_id","path_id") REFERENCES "public"."learning_paths"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "learning_paths_inst_status_idx" ON "learning_paths" USING btree ("institution_id","status","created_at");