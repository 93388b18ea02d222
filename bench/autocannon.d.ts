// The subset of autocannon 8's programmatic API that bench/run.ts uses (it ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  export interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    pipelining?: number;
    /** Seconds. */
    duration?: number;
    timeout?: number;
  }

  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p99: number;
    [percentile: string]: number;
  }

  export interface Result {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    resets: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
    /** Milliseconds, whole numbers (1 ms resolution), 2xx responses only. */
    latency: Histogram;
    /** Requests per one-second sample. */
    requests: Histogram & { sent: number };
    throughput: Histogram;
  }

  export interface Instance extends EventEmitter, PromiseLike<Result> {
    on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTimeMs: number) => void): this;
    on(event: string, listener: (...args: any[]) => void): this;
  }

  function autocannon(opts: Options): Instance;
  export default autocannon;
}
