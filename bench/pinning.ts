import { execFileSync } from 'node:child_process';
import os from 'node:os';

/**
 * Whether the load generator and the servers can be pinned to separate cores with `taskset`
 * (at least 2 cores, util-linux present); `BENCH_PIN=0` turns pinning off.
 */
export function canPin(): boolean {
  if (process.env.BENCH_PIN === '0' || os.availableParallelism() < 2) return false;
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
