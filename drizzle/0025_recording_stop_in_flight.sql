-- Set while a recording stop's call to the recorder is in flight, so a start made meanwhile
-- waits for it rather than reaching the recorder first.
ALTER TABLE "live_sessions" ADD COLUMN "recording_stop_until" timestamp with time zone;