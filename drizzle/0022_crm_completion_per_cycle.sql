-- One completion push per completion, not per enrollment: an enrollment that a compliance cycle
-- reopened is completed again, and that completion is pushed too (spec 6.1). Rows written before
-- take their completion time from their payload.
DROP INDEX "crm_completions_enrollment_uq";--> statement-breakpoint
ALTER TABLE "crm_completions" ADD COLUMN "completed_at" timestamp with time zone;--> statement-breakpoint
UPDATE "crm_completions" SET "completed_at" = coalesce(("payload"->>'completedAt')::timestamptz, "created_at");--> statement-breakpoint
ALTER TABLE "crm_completions" ALTER COLUMN "completed_at" SET NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "crm_completions_completion_uq" ON "crm_completions" USING btree ("institution_id","enrollment_id","completed_at");
