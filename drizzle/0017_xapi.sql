CREATE TABLE "xapi_activities" (
	"id" text PRIMARY KEY NOT NULL,
	"institution_id" text NOT NULL,
	"activity_key" uuid NOT NULL,
	"activity_id" text NOT NULL,
	"definition" jsonb NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "xapi_activities_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
CREATE TABLE "xapi_attachments" (
	"id" text PRIMARY KEY NOT NULL,
	"institution_id" text NOT NULL,
	"sha2" text NOT NULL,
	"content_type" text NOT NULL,
	"length" integer NOT NULL,
	"storage_key" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "xapi_attachments_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
CREATE TABLE "xapi_credentials" (
	"id" text PRIMARY KEY NOT NULL,
	"institution_id" text NOT NULL,
	"key" text NOT NULL,
	"secret_hash" text NOT NULL,
	"name" text NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "xapi_credentials_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
CREATE TABLE "xapi_documents" (
	"id" text PRIMARY KEY NOT NULL,
	"institution_id" text NOT NULL,
	"kind" text NOT NULL,
	"scope_key" uuid NOT NULL,
	"activity_key" uuid,
	"agent_key" uuid,
	"registration" uuid,
	"document_id" text NOT NULL,
	"content_type" text NOT NULL,
	"content" "bytea" NOT NULL,
	"etag" text NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "xapi_documents_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
CREATE TABLE "xapi_statement_activities" (
	"institution_id" text NOT NULL,
	"id" bigserial NOT NULL,
	"statement_seq" bigint NOT NULL,
	"activity_key" uuid NOT NULL,
	"direct" boolean NOT NULL,
	CONSTRAINT "xapi_statement_activities_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
CREATE TABLE "xapi_statement_agents" (
	"institution_id" text NOT NULL,
	"id" bigserial NOT NULL,
	"statement_seq" bigint NOT NULL,
	"agent_key" uuid NOT NULL,
	"as_actor" boolean NOT NULL,
	"direct" boolean NOT NULL,
	CONSTRAINT "xapi_statement_agents_inst_id_uq" UNIQUE("institution_id","id")
);
--> statement-breakpoint
CREATE TABLE "xapi_statements" (
	"institution_id" text NOT NULL,
	"id" uuid NOT NULL,
	"seq" bigserial NOT NULL,
	"stored" timestamp with time zone NOT NULL,
	"verb_key" uuid NOT NULL,
	"registration" uuid,
	"voided" boolean DEFAULT false NOT NULL,
	"ref_target" uuid,
	"voids_id" uuid,
	"statement" jsonb NOT NULL,
	CONSTRAINT "xapi_statements_pk" PRIMARY KEY("institution_id","id"),
	CONSTRAINT "xapi_statements_inst_seq_uq" UNIQUE("institution_id","seq")
);
--> statement-breakpoint
ALTER TABLE "lessons" ADD COLUMN "xapi_completion" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "xapi_statement_activities" ADD CONSTRAINT "xapi_statement_activities_statement_fk" FOREIGN KEY ("institution_id","statement_seq") REFERENCES "public"."xapi_statements"("institution_id","seq") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "xapi_statement_agents" ADD CONSTRAINT "xapi_statement_agents_statement_fk" FOREIGN KEY ("institution_id","statement_seq") REFERENCES "public"."xapi_statements"("institution_id","seq") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "xapi_activities_key_uq" ON "xapi_activities" USING btree ("institution_id","activity_key");--> statement-breakpoint
CREATE UNIQUE INDEX "xapi_attachments_sha2_uq" ON "xapi_attachments" USING btree ("institution_id","sha2");--> statement-breakpoint
CREATE UNIQUE INDEX "xapi_credentials_key_uq" ON "xapi_credentials" USING btree ("key");--> statement-breakpoint
CREATE INDEX "xapi_credentials_inst_created_idx" ON "xapi_credentials" USING btree ("institution_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "xapi_documents_scope_uq" ON "xapi_documents" USING btree ("institution_id","scope_key");--> statement-breakpoint
CREATE INDEX "xapi_documents_list_idx" ON "xapi_documents" USING btree ("institution_id","kind","activity_key","agent_key","updated_at");--> statement-breakpoint
CREATE UNIQUE INDEX "xapi_statement_activities_key_uq" ON "xapi_statement_activities" USING btree ("institution_id","activity_key","statement_seq");--> statement-breakpoint
CREATE UNIQUE INDEX "xapi_statement_agents_key_uq" ON "xapi_statement_agents" USING btree ("institution_id","agent_key","statement_seq");--> statement-breakpoint
CREATE INDEX "xapi_statements_inst_verb_idx" ON "xapi_statements" USING btree ("institution_id","verb_key","seq");--> statement-breakpoint
CREATE INDEX "xapi_statements_inst_registration_idx" ON "xapi_statements" USING btree ("institution_id","registration","seq") WHERE registration is not null;--> statement-breakpoint
CREATE INDEX "xapi_statements_inst_stored_idx" ON "xapi_statements" USING btree ("institution_id","stored");--> statement-breakpoint
CREATE INDEX "xapi_statements_inst_ref_idx" ON "xapi_statements" USING btree ("institution_id","seq") WHERE ref_target is not null;--> statement-breakpoint
CREATE INDEX "xapi_statements_inst_voids_idx" ON "xapi_statements" USING btree ("institution_id","voids_id") WHERE voids_id is not null;