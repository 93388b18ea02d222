CREATE TABLE "quiz_attempts" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"quiz_id" text NOT NULL,
	"enrollment_id" text NOT NULL,
	"student_id" text NOT NULL,
	"attempt_number" integer NOT NULL,
	"status" text NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"deadline_at" timestamp with time zone,
	"submitted_at" timestamp with time zone,
	"answers" jsonb,
	"results" jsonb,
	"score" real,
	"max_score" real,
	"percentage" real,
	"passed" boolean,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "quiz_attempts_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
CREATE TABLE "quizzes" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"title" text NOT NULL,
	"description" text,
	"passing_score" real NOT NULL,
	"max_attempts" integer,
	"time_limit_minutes" integer,
	"shuffle_questions" boolean DEFAULT false NOT NULL,
	"shuffle_options" boolean DEFAULT false NOT NULL,
	"questions" jsonb NOT NULL,
	"updated_by" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "quizzes_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
ALTER TABLE "quiz_attempts" ADD CONSTRAINT "quiz_attempts_quiz_fk" FOREIGN KEY ("institution_id","quiz_id") REFERENCES "public"."quizzes"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "quiz_attempts" ADD CONSTRAINT "quiz_attempts_enrollment_fk" FOREIGN KEY ("institution_id","enrollment_id") REFERENCES "public"."enrollments"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "quizzes" ADD CONSTRAINT "quizzes_lesson_fk" FOREIGN KEY ("institution_id","id") REFERENCES "public"."lessons"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "quiz_attempts_number_uq" ON "quiz_attempts" USING btree ("institution_id","quiz_id","student_id","attempt_number");--> statement-breakpoint
CREATE UNIQUE INDEX "quiz_attempts_open_uq" ON "quiz_attempts" USING btree ("institution_id","quiz_id","student_id") WHERE status = 'IN_PROGRESS';--> statement-breakpoint
CREATE INDEX "quiz_attempts_inst_quiz_started_idx" ON "quiz_attempts" USING btree ("institution_id","quiz_id","started_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);