CREATE TABLE "analytics_daily_snapshots" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"day" date NOT NULL,
	"metrics" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "analytics_daily_snapshots_inst_id_uq" UNIQUE("institution_id","id"),
	CONSTRAINT "analytics_daily_snapshots_day_uq" UNIQUE("institution_id","day")
);
