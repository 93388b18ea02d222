CREATE TABLE "compliance_records" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"training_id" text NOT NULL,
	"person_id" text NOT NULL,
	"class_id" text,
	"section_id" text,
	"cycle" integer DEFAULT 1 NOT NULL,
	"assigned_at" timestamp with time zone NOT NULL,
	"due_at" timestamp with time zone NOT NULL,
	"completed_at" timestamp with time zone,
	"waived_at" timestamp with time zone,
	"waived_by" text,
	"waive_reason" text,
	"reminded_at" timestamp with time zone,
	"overdue_notified_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "compliance_records_inst_id_uq" UNIQUE("institution_id","id"),
	CONSTRAINT "compliance_records_cycle_uq" UNIQUE("institution_id","training_id","person_id","cycle")
);
--> statement-breakpoint
CREATE TABLE "compliance_trainings" (
	"institution_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"course_id" text NOT NULL,
	"title" text NOT NULL,
	"class_ids" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"section_ids" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"roles" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"due_date" timestamp with time zone NOT NULL,
	"recurrence_months" integer,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "compliance_trainings_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
ALTER TABLE "compliance_records" ADD CONSTRAINT "compliance_records_training_fk" FOREIGN KEY ("institution_id","training_id") REFERENCES "public"."compliance_trainings"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "compliance_trainings" ADD CONSTRAINT "compliance_trainings_course_fk" FOREIGN KEY ("institution_id","course_id") REFERENCES "public"."courses"("institution_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "compliance_records_person_idx" ON "compliance_records" USING btree ("institution_id","person_id");