-- pg_trgm (trigrams for ILIKE '%…%') and btree_gin (equality on text in the same GIN index), both
-- contrib extensions marked trusted: the database owner may create them. PGlite loads both
-- (src/platform/db/client.ts, PGLITE_EXTENSIONS).
CREATE EXTENSION IF NOT EXISTS "pg_trgm";--> statement-breakpoint
CREATE EXTENSION IF NOT EXISTS "btree_gin";--> statement-breakpoint
CREATE INDEX "lesson_bookmarks_search_idx" ON "lesson_bookmarks" USING gin ("institution_id","student_id","label" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "lesson_notes_search_idx" ON "lesson_notes" USING gin ("institution_id","student_id","content" gin_trgm_ops);