CREATE TABLE "gamification_activity_days" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"student_id" text NOT NULL,
	"day" date NOT NULL,
	CONSTRAINT "gamification_activity_days_inst_id_uq" UNIQUE("institution_id","id"),
	CONSTRAINT "gamification_activity_days_day_uq" UNIQUE("institution_id","student_id","day")
);
--> statement-breakpoint
CREATE TABLE "gamification_badges" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"student_id" text NOT NULL,
	"badge_key" text NOT NULL,
	"awarded_at" timestamp with time zone NOT NULL,
	CONSTRAINT "gamification_badges_inst_id_uq" UNIQUE("institution_id","id"),
	CONSTRAINT "gamification_badges_student_uq" UNIQUE("institution_id","student_id","badge_key")
);
--> statement-breakpoint
CREATE TABLE "gamification_points" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"student_id" text NOT NULL,
	"event_key" text NOT NULL,
	"kind" text NOT NULL,
	"points" integer NOT NULL,
	"awarded_at" timestamp with time zone NOT NULL,
	CONSTRAINT "gamification_points_inst_id_uq" UNIQUE("institution_id","id"),
	CONSTRAINT "gamification_points_event_uq" UNIQUE("institution_id","student_id","event_key")
);
--> statement-breakpoint
CREATE INDEX "gamification_points_leaderboard_idx" ON "gamification_points" USING btree ("institution_id","awarded_at","student_id");