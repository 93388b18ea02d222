DROP INDEX "notification_devices_token_idx";--> statement-breakpoint
-- A token held by rows of several institutions keeps only its latest registration (spec 4.7).
DELETE FROM "notification_devices" d USING "notification_devices" n WHERE d."token" = n."token" AND (d."updated_at", d."id") < (n."updated_at", n."id");--> statement-breakpoint
CREATE UNIQUE INDEX "notification_devices_token_uq" ON "notification_devices" USING btree ("token");
