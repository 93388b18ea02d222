import { and, asc, eq, inArray } from 'drizzle-orm';
import { jobs } from '../../src/platform/queue/queue.tables.js';
import type { TestApp } from './app.js';

/**
 * Lets `ms` of time pass for the worker without waiting: runs what is due, moves the manual clock
 * to the next queued job's due time (retries and recurring jobs included), runs that, and so on,
 * ending with the clock `ms` later. Returns how many jobs ran.
 */
export async function runWorkerFor(t: Pick<TestApp, 'db' | 'clock' | 'worker'>, ms: number): Promise<number> {
  const end = t.clock.now().getTime() + ms;
  let ran = 0;
  for (;;) {
    const n = await t.worker.drain();
    ran += n;
    const [next] = await t.db
      .select({ name: jobs.name, runAt: jobs.runAt })
      .from(jobs)
      .where(and(eq(jobs.status, 'queued'), inArray(jobs.name, t.worker.jobNames)))
      .orderBy(asc(jobs.runAt))
      .limit(1);
    if (!next || next.runAt.getTime() > end) break;
    if (next.runAt.getTime() > t.clock.now().getTime()) t.clock.set(next.runAt);
    else if (n === 0) throw new Error(`job ${next.name} is due but the worker did not run it`);
  }
  t.clock.set(new Date(end));
  return ran + (await t.worker.drain());
}
