CREATE TABLE "uploads" (
	"id" text PRIMARY KEY NOT NULL,
	"institution_id" text NOT NULL,
	"key" text NOT NULL,
	"presigned_by" text NOT NULL,
	"content_type" text NOT NULL,
	"size" bigint NOT NULL,
	"status" text DEFAULT 'PENDING' NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "uploads_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "uploads_key_uq" ON "uploads" USING btree ("key");--> statement-breakpoint
CREATE INDEX "uploads_inst_presigner_status_idx" ON "uploads" USING btree ("institution_id","presigned_by","status");