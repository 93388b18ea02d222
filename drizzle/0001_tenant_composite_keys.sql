-- Tenancy enforced by the schema: every tenant table gets a unique (institution_id, id), and
-- every foreign key between tenant tables becomes (institution_id, x_id) -> (institution_id, id),
-- so a row can only point at a row of its own institution. Existing data is kept.
-- SET NULL actions name the id column only (PostgreSQL 15+), since institution_id is NOT NULL.
ALTER TABLE "categories" ADD CONSTRAINT "categories_inst_id_uq" UNIQUE("institution_id","id");
--> statement-breakpoint
ALTER TABLE "course_modules" ADD CONSTRAINT "course_modules_inst_id_uq" UNIQUE("institution_id","id");
--> statement-breakpoint
ALTER TABLE "courses" ADD CONSTRAINT "courses_inst_id_uq" UNIQUE("institution_id","id");
--> statement-breakpoint
ALTER TABLE "lessons" ADD CONSTRAINT "lessons_inst_id_uq" UNIQUE("institution_id","id");
--> statement-breakpoint
ALTER TABLE "block_answers" ADD CONSTRAINT "block_answers_inst_id_uq" UNIQUE("institution_id","id");
--> statement-breakpoint
ALTER TABLE "enrollments" ADD CONSTRAINT "enrollments_inst_id_uq" UNIQUE("institution_id","id");
--> statement-breakpoint
ALTER TABLE "learner_events" ADD CONSTRAINT "learner_events_inst_id_uq" UNIQUE("institution_id","id");
--> statement-breakpoint
ALTER TABLE "lesson_interactions" ADD CONSTRAINT "lesson_interactions_inst_id_uq" UNIQUE("institution_id","id");
--> statement-breakpoint
ALTER TABLE "lesson_progress" ADD CONSTRAINT "lesson_progress_inst_id_uq" UNIQUE("institution_id","id");
--> statement-breakpoint
ALTER TABLE "certificates" ADD CONSTRAINT "certificates_inst_id_uq" UNIQUE("institution_id","id");
--> statement-breakpoint
ALTER TABLE "crm_completions" ADD CONSTRAINT "crm_completions_inst_id_uq" UNIQUE("institution_id","id");
--> statement-breakpoint
ALTER TABLE "lesson_bookmarks" ADD CONSTRAINT "lesson_bookmarks_inst_id_uq" UNIQUE("institution_id","id");
--> statement-breakpoint
ALTER TABLE "lesson_notes" ADD CONSTRAINT "lesson_notes_inst_id_uq" UNIQUE("institution_id","id");
--> statement-breakpoint
ALTER TABLE "caption_tracks" ADD CONSTRAINT "caption_tracks_inst_id_uq" UNIQUE("institution_id","id");
--> statement-breakpoint
ALTER TABLE "files" ADD CONSTRAINT "files_inst_id_uq" UNIQUE("institution_id","id");
--> statement-breakpoint
ALTER TABLE "course_modules" DROP CONSTRAINT "course_modules_course_id_courses_id_fk";
--> statement-breakpoint
ALTER TABLE "lessons" DROP CONSTRAINT "lessons_course_id_courses_id_fk";
--> statement-breakpoint
ALTER TABLE "lessons" DROP CONSTRAINT "lessons_module_id_course_modules_id_fk";
--> statement-breakpoint
ALTER TABLE "enrollments" DROP CONSTRAINT "enrollments_course_id_courses_id_fk";
--> statement-breakpoint
ALTER TABLE "lesson_progress" DROP CONSTRAINT "lesson_progress_enrollment_id_enrollments_id_fk";
--> statement-breakpoint
ALTER TABLE "lesson_progress" DROP CONSTRAINT "lesson_progress_lesson_id_lessons_id_fk";
--> statement-breakpoint
ALTER TABLE "lesson_bookmarks" DROP CONSTRAINT "lesson_bookmarks_lesson_id_lessons_id_fk";
--> statement-breakpoint
ALTER TABLE "lesson_notes" DROP CONSTRAINT "lesson_notes_lesson_id_lessons_id_fk";
--> statement-breakpoint
ALTER TABLE "lesson_notes" DROP CONSTRAINT "lesson_notes_enrollment_id_enrollments_id_fk";
--> statement-breakpoint
ALTER TABLE "caption_tracks" DROP CONSTRAINT "caption_tracks_lesson_id_lessons_id_fk";
--> statement-breakpoint
ALTER TABLE "files" DROP CONSTRAINT "files_course_id_courses_id_fk";
--> statement-breakpoint
ALTER TABLE "files" DROP CONSTRAINT "files_lesson_id_lessons_id_fk";
--> statement-breakpoint
ALTER TABLE "course_modules" ADD CONSTRAINT "course_modules_course_fk" FOREIGN KEY ("institution_id","course_id") REFERENCES "public"."courses"("institution_id","id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "courses" ADD CONSTRAINT "courses_category_fk" FOREIGN KEY ("institution_id","category_id") REFERENCES "public"."categories"("institution_id","id") ON DELETE SET NULL ("category_id") ON UPDATE no action NOT VALID;
--> statement-breakpoint
ALTER TABLE "lessons" ADD CONSTRAINT "lessons_course_fk" FOREIGN KEY ("institution_id","course_id") REFERENCES "public"."courses"("institution_id","id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "lessons" ADD CONSTRAINT "lessons_module_fk" FOREIGN KEY ("institution_id","module_id") REFERENCES "public"."course_modules"("institution_id","id") ON DELETE SET NULL ("module_id") ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "block_answers" ADD CONSTRAINT "block_answers_lesson_fk" FOREIGN KEY ("institution_id","lesson_id") REFERENCES "public"."lessons"("institution_id","id") ON DELETE cascade ON UPDATE no action NOT VALID;
--> statement-breakpoint
ALTER TABLE "enrollments" ADD CONSTRAINT "enrollments_course_fk" FOREIGN KEY ("institution_id","course_id") REFERENCES "public"."courses"("institution_id","id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "learner_events" ADD CONSTRAINT "learner_events_lesson_fk" FOREIGN KEY ("institution_id","lesson_id") REFERENCES "public"."lessons"("institution_id","id") ON DELETE cascade ON UPDATE no action NOT VALID;
--> statement-breakpoint
ALTER TABLE "lesson_interactions" ADD CONSTRAINT "lesson_interactions_lesson_fk" FOREIGN KEY ("institution_id","lesson_id") REFERENCES "public"."lessons"("institution_id","id") ON DELETE cascade ON UPDATE no action NOT VALID;
--> statement-breakpoint
ALTER TABLE "lesson_progress" ADD CONSTRAINT "lesson_progress_enrollment_fk" FOREIGN KEY ("institution_id","enrollment_id") REFERENCES "public"."enrollments"("institution_id","id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "lesson_progress" ADD CONSTRAINT "lesson_progress_lesson_fk" FOREIGN KEY ("institution_id","lesson_id") REFERENCES "public"."lessons"("institution_id","id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "certificates" ADD CONSTRAINT "certificates_enrollment_fk" FOREIGN KEY ("institution_id","enrollment_id") REFERENCES "public"."enrollments"("institution_id","id") ON DELETE cascade ON UPDATE no action NOT VALID;
--> statement-breakpoint
ALTER TABLE "crm_completions" ADD CONSTRAINT "crm_completions_enrollment_fk" FOREIGN KEY ("institution_id","enrollment_id") REFERENCES "public"."enrollments"("institution_id","id") ON DELETE cascade ON UPDATE no action NOT VALID;
--> statement-breakpoint
ALTER TABLE "lesson_bookmarks" ADD CONSTRAINT "lesson_bookmarks_lesson_fk" FOREIGN KEY ("institution_id","lesson_id") REFERENCES "public"."lessons"("institution_id","id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "lesson_notes" ADD CONSTRAINT "lesson_notes_lesson_fk" FOREIGN KEY ("institution_id","lesson_id") REFERENCES "public"."lessons"("institution_id","id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "lesson_notes" ADD CONSTRAINT "lesson_notes_enrollment_fk" FOREIGN KEY ("institution_id","enrollment_id") REFERENCES "public"."enrollments"("institution_id","id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "caption_tracks" ADD CONSTRAINT "caption_tracks_lesson_fk" FOREIGN KEY ("institution_id","lesson_id") REFERENCES "public"."lessons"("institution_id","id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "files" ADD CONSTRAINT "files_course_fk" FOREIGN KEY ("institution_id","course_id") REFERENCES "public"."courses"("institution_id","id") ON DELETE SET NULL ("course_id") ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "files" ADD CONSTRAINT "files_lesson_fk" FOREIGN KEY ("institution_id","lesson_id") REFERENCES "public"."lessons"("institution_id","id") ON DELETE SET NULL ("lesson_id") ON UPDATE no action;
