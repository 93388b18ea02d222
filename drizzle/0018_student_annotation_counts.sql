CREATE TABLE "student_annotation_counts" (
	"institution_id" text NOT NULL,
	"id" text NOT NULL,
	"notes" integer DEFAULT 0 NOT NULL,
	"bookmarks" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "student_annotation_counts_pk" PRIMARY KEY("institution_id","id")
);
--> statement-breakpoint
-- Kept by statement-level triggers (transition tables), so a statement that inserts or deletes
-- many rows (a course deleted: its lessons' notes cascade) changes each student's row once.
-- Rows are changed in key order (the upsert's ORDER BY), so two such statements touching the
-- same students never lock them in opposite orders. Deletes subtract through the same upsert.
CREATE FUNCTION "student_annotation_counts_apply"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  delta integer := CASE TG_OP WHEN 'INSERT' THEN 1 ELSE -1 END;
  is_note boolean := TG_TABLE_NAME = 'lesson_notes';
BEGIN
  INSERT INTO "student_annotation_counts" AS c ("institution_id", "id", "notes", "bookmarks")
    SELECT "institution_id", "student_id",
           CASE WHEN is_note THEN delta * count(*) ELSE 0 END,
           CASE WHEN is_note THEN 0 ELSE delta * count(*) END
    FROM "changed_rows"
    GROUP BY "institution_id", "student_id"
    ORDER BY "institution_id", "student_id"
  ON CONFLICT ("institution_id", "id") DO UPDATE
    SET "notes" = c."notes" + excluded."notes", "bookmarks" = c."bookmarks" + excluded."bookmarks";
  RETURN NULL;
END;
$$;--> statement-breakpoint
-- A row moved to another student or institution (no service does that; raw SQL could).
CREATE FUNCTION "student_annotation_counts_move"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  is_note integer := CASE WHEN TG_TABLE_NAME = 'lesson_notes' THEN 1 ELSE 0 END;
BEGIN
  INSERT INTO "student_annotation_counts" AS c ("institution_id", "id", "notes", "bookmarks")
    VALUES (OLD."institution_id", OLD."student_id", -is_note, is_note - 1),
           (NEW."institution_id", NEW."student_id", is_note, 1 - is_note)
  ON CONFLICT ("institution_id", "id") DO UPDATE
    SET "notes" = c."notes" + excluded."notes", "bookmarks" = c."bookmarks" + excluded."bookmarks";
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE FUNCTION "student_annotation_counts_truncate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'lesson_notes' THEN
    UPDATE "student_annotation_counts" SET "notes" = 0 WHERE "notes" <> 0;
  ELSE
    UPDATE "student_annotation_counts" SET "bookmarks" = 0 WHERE "bookmarks" <> 0;
  END IF;
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE TRIGGER "lesson_notes_count_insert" AFTER INSERT ON "lesson_notes" REFERENCING NEW TABLE AS "changed_rows" FOR EACH STATEMENT EXECUTE FUNCTION "student_annotation_counts_apply"();--> statement-breakpoint
CREATE TRIGGER "lesson_notes_count_delete" AFTER DELETE ON "lesson_notes" REFERENCING OLD TABLE AS "changed_rows" FOR EACH STATEMENT EXECUTE FUNCTION "student_annotation_counts_apply"();--> statement-breakpoint
CREATE TRIGGER "lesson_notes_count_move" AFTER UPDATE OF "institution_id", "student_id" ON "lesson_notes" FOR EACH ROW WHEN (OLD."institution_id" IS DISTINCT FROM NEW."institution_id" OR OLD."student_id" IS DISTINCT FROM NEW."student_id") EXECUTE FUNCTION "student_annotation_counts_move"();--> statement-breakpoint
CREATE TRIGGER "lesson_notes_count_truncate" AFTER TRUNCATE ON "lesson_notes" FOR EACH STATEMENT EXECUTE FUNCTION "student_annotation_counts_truncate"();--> statement-breakpoint
CREATE TRIGGER "lesson_bookmarks_count_insert" AFTER INSERT ON "lesson_bookmarks" REFERENCING NEW TABLE AS "changed_rows" FOR EACH STATEMENT EXECUTE FUNCTION "student_annotation_counts_apply"();--> statement-breakpoint
CREATE TRIGGER "lesson_bookmarks_count_delete" AFTER DELETE ON "lesson_bookmarks" REFERENCING OLD TABLE AS "changed_rows" FOR EACH STATEMENT EXECUTE FUNCTION "student_annotation_counts_apply"();--> statement-breakpoint
CREATE TRIGGER "lesson_bookmarks_count_move" AFTER UPDATE OF "institution_id", "student_id" ON "lesson_bookmarks" FOR EACH ROW WHEN (OLD."institution_id" IS DISTINCT FROM NEW."institution_id" OR OLD."student_id" IS DISTINCT FROM NEW."student_id") EXECUTE FUNCTION "student_annotation_counts_move"();--> statement-breakpoint
CREATE TRIGGER "lesson_bookmarks_count_truncate" AFTER TRUNCATE ON "lesson_bookmarks" FOR EACH STATEMENT EXECUTE FUNCTION "student_annotation_counts_truncate"();--> statement-breakpoint
-- Backfill after the triggers exist: CREATE TRIGGER locks both tables against writes until this
-- migration commits, so no insert or delete falls between the count and the triggers.
INSERT INTO "student_annotation_counts" ("institution_id", "id", "notes", "bookmarks")
  SELECT "institution_id", "student_id", sum("notes"), sum("bookmarks") FROM (
    SELECT "institution_id", "student_id", count(*) AS "notes", 0 AS "bookmarks" FROM "lesson_notes" GROUP BY 1, 2
    UNION ALL
    SELECT "institution_id", "student_id", 0, count(*) FROM "lesson_bookmarks" GROUP BY 1, 2
  ) t
  GROUP BY "institution_id", "student_id";
