// Preloaded into `lms start` by bench/rss.ts (NODE_OPTIONS=--import): appends the process's
// memoryUsage() as one JSON line to LMS_MEMORY_PROBE every LMS_MEMORY_PROBE_MS (250) ms.
import { appendFileSync } from 'node:fs';

const file = process.env.LMS_MEMORY_PROBE;
if (file) {
  const every = Number(process.env.LMS_MEMORY_PROBE_MS ?? 250);
  setInterval(() => appendFileSync(file, `${JSON.stringify({ t: Date.now(), ...process.memoryUsage() })}\n`), every).unref();
}
