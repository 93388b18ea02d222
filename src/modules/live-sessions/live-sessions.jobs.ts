import type { ModuleJobs } from '../types.js';
import { sendRecordingReady } from './live-sessions.recording.js';

/** Worker jobs of live sessions: the LIVE_CLASS_RECORDING_READY fan-out after a recording became READY. */
export const liveSessionsJobs: ModuleJobs = (deps) => ({
  'liveSessions.recordingReady': async (job) => {
    await sendRecordingReady({ db: deps.database.db, clock: deps.clock, config: deps.config }, job.payload);
  },
});
