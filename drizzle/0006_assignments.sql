CREATE TABLE "assignments" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"course_id" text NOT NULL,
	"title" text NOT NULL,
	"instructions" text NOT NULL,
	"max_score" real NOT NULL,
	"passing_score" real,
	"due_date" timestamp with time zone NOT NULL,
	"allow_late" boolean DEFAULT false NOT NULL,
	"is_peer_assessed" boolean DEFAULT false NOT NULL,
	"peer_review_count" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "assignments_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
CREATE TABLE "peer_reviews" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"assignment_id" text NOT NULL,
	"submission_id" text NOT NULL,
	"reviewer_id" text NOT NULL,
	"status" text DEFAULT 'PENDING' NOT NULL,
	"score" real,
	"rubric_scores" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"feedback" text,
	"flag_reason" text,
	"assigned_at" timestamp with time zone NOT NULL,
	"submitted_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "peer_reviews_inst_id_uq" UNIQUE("institution_id","id"),
	CONSTRAINT "peer_reviews_submission_reviewer_uq" UNIQUE("institution_id","submission_id","reviewer_id")
);
--> statement-breakpoint
CREATE TABLE "rubric_criteria" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"rubric_id" text NOT NULL,
	"title" text NOT NULL,
	"description" text NOT NULL,
	"max_points" real NOT NULL,
	"order" integer NOT NULL,
	CONSTRAINT "rubric_criteria_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
CREATE TABLE "rubrics" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"assignment_id" text NOT NULL,
	"title" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "rubrics_inst_id_uq" UNIQUE("institution_id","id"),
	CONSTRAINT "rubrics_assignment_uq" UNIQUE("institution_id","assignment_id")
);
--> statement-breakpoint
CREATE TABLE "assignment_submissions" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"assignment_id" text NOT NULL,
	"enrollment_id" text NOT NULL,
	"student_id" text NOT NULL,
	"text_content" text,
	"files" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"is_late" boolean NOT NULL,
	"status" text DEFAULT 'SUBMITTED' NOT NULL,
	"score" real,
	"instructor_score" real,
	"feedback" text,
	"graded_by" text,
	"graded_at" timestamp with time zone,
	"peer_score_average" real,
	"peer_reviews_completed" integer DEFAULT 0 NOT NULL,
	"peer_finalised_at" timestamp with time zone,
	"submitted_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "assignment_submissions_inst_id_uq" UNIQUE("institution_id","id"),
	CONSTRAINT "assignment_submissions_student_uq" UNIQUE("institution_id","assignment_id","student_id")
);
--> statement-breakpoint
ALTER TABLE "assignments" ADD CONSTRAINT "assignments_lesson_fk" FOREIGN KEY ("institution_id","id") REFERENCES "public"."lessons"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "assignments" ADD CONSTRAINT "assignments_course_fk" FOREIGN KEY ("institution_id","course_id") REFERENCES "public"."courses"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "peer_reviews" ADD CONSTRAINT "peer_reviews_submission_fk" FOREIGN KEY ("institution_id","submission_id") REFERENCES "public"."assignment_submissions"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "peer_reviews" ADD CONSTRAINT "peer_reviews_assignment_fk" FOREIGN KEY ("institution_id","assignment_id") REFERENCES "public"."assignments"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rubric_criteria" ADD CONSTRAINT "rubric_criteria_rubric_fk" FOREIGN KEY ("institution_id","rubric_id") REFERENCES "public"."rubrics"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rubrics" ADD CONSTRAINT "rubrics_assignment_fk" FOREIGN KEY ("institution_id","assignment_id") REFERENCES "public"."assignments"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "assignment_submissions" ADD CONSTRAINT "assignment_submissions_assignment_fk" FOREIGN KEY ("institution_id","assignment_id") REFERENCES "public"."assignments"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "assignment_submissions" ADD CONSTRAINT "assignment_submissions_enrollment_fk" FOREIGN KEY ("institution_id","enrollment_id") REFERENCES "public"."enrollments"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "assignments_inst_due_idx" ON "assignments" USING btree ("institution_id","due_date");--> statement-breakpoint
CREATE INDEX "peer_reviews_reviewer_idx" ON "peer_reviews" USING btree ("institution_id","reviewer_id","status","assigned_at");--> statement-breakpoint
CREATE INDEX "peer_reviews_assignment_idx" ON "peer_reviews" USING btree ("institution_id","assignment_id");--> statement-breakpoint
CREATE INDEX "rubric_criteria_rubric_idx" ON "rubric_criteria" USING btree ("institution_id","rubric_id","order");--> statement-breakpoint
CREATE INDEX "assignment_submissions_assignment_idx" ON "assignment_submissions" USING btree ("institution_id","assignment_id","submitted_at");