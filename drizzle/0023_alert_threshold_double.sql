-- Alert thresholds (and the metric values compared with them) are double precision: a real
-- rejected numbers above 3.4e38 and rounded others (16777217 became 16777216).
ALTER TABLE "analytics_report_alerts" ALTER COLUMN "threshold" SET DATA TYPE double precision;--> statement-breakpoint
ALTER TABLE "analytics_report_alerts" ALTER COLUMN "last_value" SET DATA TYPE double precision;