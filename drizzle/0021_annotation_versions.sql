ALTER TABLE "student_annotation_counts" ADD COLUMN "notes_version" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "student_annotation_counts" ADD COLUMN "bookmarks_version" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Every statement that inserts, updates or deletes a student's notes (bookmarks) sets that
-- student's notes_version (bookmarks_version) to its transaction id, in the same upsert that
-- keeps the counts (an UPDATE changes no count: delta 0). A cached filtered total is valid only
-- while the version it was counted at is current (src/modules/notes/filtered-totals.ts).
CREATE OR REPLACE FUNCTION "student_annotation_counts_apply"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  delta integer := CASE TG_OP WHEN 'INSERT' THEN 1 WHEN 'DELETE' THEN -1 ELSE 0 END;
  is_note boolean := TG_TABLE_NAME = 'lesson_notes';
  version bigint := pg_current_xact_id()::text::bigint;
BEGIN
  INSERT INTO "student_annotation_counts" AS c ("institution_id", "id", "notes", "bookmarks", "notes_version", "bookmarks_version")
    SELECT "institution_id", "student_id",
           CASE WHEN is_note THEN delta * count(*) ELSE 0 END,
           CASE WHEN is_note THEN 0 ELSE delta * count(*) END,
           CASE WHEN is_note THEN version ELSE 0 END,
           CASE WHEN is_note THEN 0 ELSE version END
    FROM "changed_rows"
    GROUP BY "institution_id", "student_id"
    ORDER BY "institution_id", "student_id"
  ON CONFLICT ("institution_id", "id") DO UPDATE
    SET "notes" = c."notes" + excluded."notes", "bookmarks" = c."bookmarks" + excluded."bookmarks",
        "notes_version" = CASE WHEN is_note THEN version ELSE c."notes_version" END,
        "bookmarks_version" = CASE WHEN is_note THEN c."bookmarks_version" ELSE version END;
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE OR REPLACE FUNCTION "student_annotation_counts_move"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  is_note integer := CASE WHEN TG_TABLE_NAME = 'lesson_notes' THEN 1 ELSE 0 END;
  version bigint := pg_current_xact_id()::text::bigint;
BEGIN
  INSERT INTO "student_annotation_counts" AS c ("institution_id", "id", "notes", "bookmarks", "notes_version", "bookmarks_version")
    VALUES (OLD."institution_id", OLD."student_id", -is_note, is_note - 1, version * is_note, version * (1 - is_note)),
           (NEW."institution_id", NEW."student_id", is_note, 1 - is_note, version * is_note, version * (1 - is_note))
  ON CONFLICT ("institution_id", "id") DO UPDATE
    SET "notes" = c."notes" + excluded."notes", "bookmarks" = c."bookmarks" + excluded."bookmarks",
        "notes_version" = CASE WHEN is_note = 1 THEN version ELSE c."notes_version" END,
        "bookmarks_version" = CASE WHEN is_note = 1 THEN c."bookmarks_version" ELSE version END;
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE OR REPLACE FUNCTION "student_annotation_counts_truncate"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  version bigint := pg_current_xact_id()::text::bigint;
BEGIN
  IF TG_TABLE_NAME = 'lesson_notes' THEN
    UPDATE "student_annotation_counts" SET "notes" = 0, "notes_version" = version;
  ELSE
    UPDATE "student_annotation_counts" SET "bookmarks" = 0, "bookmarks_version" = version;
  END IF;
  RETURN NULL;
END;
$$;--> statement-breakpoint
-- No column list: PostgreSQL refuses transition tables on triggers with one. Any update counts
-- as a change (content, label, lesson, timestamp), which is what a filtered total may depend on.
CREATE TRIGGER "lesson_notes_version_update" AFTER UPDATE ON "lesson_notes" REFERENCING NEW TABLE AS "changed_rows" FOR EACH STATEMENT EXECUTE FUNCTION "student_annotation_counts_apply"();--> statement-breakpoint
CREATE TRIGGER "lesson_bookmarks_version_update" AFTER UPDATE ON "lesson_bookmarks" REFERENCING NEW TABLE AS "changed_rows" FOR EACH STATEMENT EXECUTE FUNCTION "student_annotation_counts_apply"();
