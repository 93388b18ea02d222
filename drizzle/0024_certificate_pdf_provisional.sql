-- A certificate PDF rendered while the CRM could not name the holder is provisional: it is
-- rendered again, with the name, once the CRM answers.
ALTER TABLE "certificates" ADD COLUMN "pdf_provisional" boolean DEFAULT false NOT NULL;