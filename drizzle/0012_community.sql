CREATE TABLE "audit_log" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"actor_id" text NOT NULL,
	"actor_role" text NOT NULL,
	"action" text NOT NULL,
	"target_type" text NOT NULL,
	"target_id" text NOT NULL,
	"before" jsonb,
	"after" jsonb,
	"request_id" text,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "audit_log_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
CREATE TABLE "announcement_recipients" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"announcement_id" text NOT NULL,
	"student_id" text NOT NULL,
	CONSTRAINT "announcement_recipients_inst_id_uq" UNIQUE("institution_id","id"),
	CONSTRAINT "announcement_recipients_uq" UNIQUE("institution_id","announcement_id","student_id")
);
--> statement-breakpoint
CREATE TABLE "announcements" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"course_id" text NOT NULL,
	"author_id" text NOT NULL,
	"title" text NOT NULL,
	"body" text NOT NULL,
	"is_pinned" boolean DEFAULT false NOT NULL,
	"target_type" text NOT NULL,
	"class_ids" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"section_ids" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"recipient_count" integer DEFAULT 0 NOT NULL,
	"edited_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "announcements_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
CREATE TABLE "discussion_replies" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"thread_id" text NOT NULL,
	"parent_reply_id" text,
	"author_id" text NOT NULL,
	"author_role" text NOT NULL,
	"body" text NOT NULL,
	"is_hidden" boolean DEFAULT false NOT NULL,
	"edited_at" timestamp with time zone,
	"deleted_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "discussion_replies_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
CREATE TABLE "discussion_threads" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"course_id" text NOT NULL,
	"lesson_id" text,
	"author_id" text NOT NULL,
	"author_role" text NOT NULL,
	"title" text NOT NULL,
	"body" text NOT NULL,
	"is_pinned" boolean DEFAULT false NOT NULL,
	"is_locked" boolean DEFAULT false NOT NULL,
	"is_hidden" boolean DEFAULT false NOT NULL,
	"last_activity_at" timestamp with time zone NOT NULL,
	"edited_at" timestamp with time zone,
	"deleted_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "discussion_threads_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
CREATE TABLE "course_reviews" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"course_id" text NOT NULL,
	"student_id" text NOT NULL,
	"rating" integer NOT NULL,
	"comment" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "course_reviews_inst_id_uq" UNIQUE("institution_id","id"),
	CONSTRAINT "course_reviews_student_uq" UNIQUE("institution_id","course_id","student_id"),
	CONSTRAINT "course_reviews_rating_ck" CHECK ("course_reviews"."rating" between 1 and 5)
);
--> statement-breakpoint
ALTER TABLE "announcement_recipients" ADD CONSTRAINT "announcement_recipients_announcement_fk" FOREIGN KEY ("institution_id","announcement_id") REFERENCES "public"."announcements"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "announcements" ADD CONSTRAINT "announcements_course_fk" FOREIGN KEY ("institution_id","course_id") REFERENCES "public"."courses"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "discussion_replies" ADD CONSTRAINT "discussion_replies_thread_fk" FOREIGN KEY ("institution_id","thread_id") REFERENCES "public"."discussion_threads"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "discussion_replies" ADD CONSTRAINT "discussion_replies_parent_fk" FOREIGN KEY ("institution_id","parent_reply_id") REFERENCES "public"."discussion_replies"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "discussion_threads" ADD CONSTRAINT "discussion_threads_course_fk" FOREIGN KEY ("institution_id","course_id") REFERENCES "public"."courses"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "discussion_threads" ADD CONSTRAINT "discussion_threads_lesson_fk" FOREIGN KEY ("institution_id","lesson_id") REFERENCES "public"."lessons"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "course_reviews" ADD CONSTRAINT "course_reviews_course_fk" FOREIGN KEY ("institution_id","course_id") REFERENCES "public"."courses"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_log_inst_created_idx" ON "audit_log" USING btree ("institution_id","created_at","id");--> statement-breakpoint
CREATE INDEX "audit_log_inst_actor_idx" ON "audit_log" USING btree ("institution_id","actor_id","created_at");--> statement-breakpoint
CREATE INDEX "audit_log_inst_action_idx" ON "audit_log" USING btree ("institution_id","action","created_at");--> statement-breakpoint
CREATE INDEX "audit_log_inst_target_idx" ON "audit_log" USING btree ("institution_id","target_type","target_id","created_at");--> statement-breakpoint
CREATE INDEX "announcement_recipients_student_idx" ON "announcement_recipients" USING btree ("institution_id","student_id","announcement_id");--> statement-breakpoint
CREATE INDEX "announcements_course_idx" ON "announcements" USING btree ("institution_id","course_id","is_pinned","created_at");--> statement-breakpoint
CREATE INDEX "discussion_replies_thread_idx" ON "discussion_replies" USING btree ("institution_id","thread_id","created_at");--> statement-breakpoint
CREATE INDEX "discussion_threads_course_idx" ON "discussion_threads" USING btree ("institution_id","course_id","is_pinned","last_activity_at");--> statement-breakpoint
CREATE INDEX "discussion_threads_lesson_idx" ON "discussion_threads" USING btree ("institution_id","lesson_id","is_pinned","last_activity_at");--> statement-breakpoint
CREATE INDEX "course_reviews_course_idx" ON "course_reviews" USING btree ("institution_id","course_id","updated_at");--> statement-breakpoint
CREATE FUNCTION "audit_log_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only: % is not allowed', TG_OP;
END;
$$;--> statement-breakpoint
CREATE TRIGGER "audit_log_no_update_delete" BEFORE UPDATE OR DELETE ON "audit_log" FOR EACH ROW EXECUTE FUNCTION "audit_log_append_only"();--> statement-breakpoint
CREATE TRIGGER "audit_log_no_truncate" BEFORE TRUNCATE ON "audit_log" FOR EACH STATEMENT EXECUTE FUNCTION "audit_log_append_only"();
