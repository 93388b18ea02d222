import { LRUCache } from 'lru-cache';
import { Redis } from 'ioredis';
import type { Clock } from '../clock.js';

/**
 * Read cache of CRM records (spec 4.10 "revalidate" windows). Expiry is measured with the
 * injected Clock, so tests move time instead of sleeping. Values must be JSON-serialisable.
 * A cache failure never fails a CRM call: implementations answer a miss instead.
 */
export interface CrmCache {
  /** The stored value, or undefined when absent or expired. */
  get(key: string): Promise<unknown | undefined>;
  set(key: string, value: unknown, ttlSeconds: number): Promise<void>;
  /** Releases connections, if any. */
  close?(): Promise<void>;
}

type Log = Pick<Console, 'warn'>;

interface Entry {
  value: unknown;
  expiresAt: number;
}

/** In-process LRU; each replica has its own. */
export class MemoryCrmCache implements CrmCache {
  private readonly lru: LRUCache<string, Entry>;

  constructor(
    private readonly clock: Clock,
    max = 10_000,
  ) {
    // No lru-cache `ttl`: its timer reads real time, and ours must follow the Clock.
    this.lru = new LRUCache<string, Entry>({ max });
  }

  async get(key: string): Promise<unknown | undefined> {
    const entry = this.lru.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.clock.now().getTime()) {
      this.lru.delete(key);
      return undefined;
    }
    // Copies in and out, so a caller mutating a record cannot change what others read.
    return structuredClone(entry.value);
  }

  async set(key: string, value: unknown, ttlSeconds: number): Promise<void> {
    this.lru.set(key, { value: structuredClone(value), expiresAt: this.clock.now().getTime() + ttlSeconds * 1000 });
  }
}

const FIRST_CONNECT_WAIT_MS = 2000;

/** Shared by every replica through Redis (`REDIS_URL`). */
export class RedisCrmCache implements CrmCache {
  private readonly redis: Redis;
  private lastErrorLoggedAt = 0;
  private failedOnce = false;
  private firstConnect: Promise<boolean> | undefined;

  constructor(
    redis: Redis | string,
    private readonly clock: Clock,
    private readonly opts: { prefix?: string; log?: Log } = {},
  ) {
    this.redis =
      typeof redis === 'string'
        ? new Redis(redis, {
            // A cache must not stall requests while Redis is away: fail fast and count a miss
            // (no queueing of commands until a reconnect).
            enableOfflineQueue: false,
            maxRetriesPerRequest: 1,
            commandTimeout: 500,
            connectTimeout: FIRST_CONNECT_WAIT_MS,
          })
        : redis;
    // Without a listener ioredis reports connection errors as unhandled 'error' events.
    this.redis.on('error', (err: Error) => {
      this.failedOnce = true;
      this.warn('connection', err);
    });
  }

  /**
   * Whether to talk to Redis now. Right after start-up we wait (briefly) for the first
   * connection; once a connection has failed, anything but 'ready' is an immediate miss,
   * so a Redis outage never adds latency to CRM calls.
   */
  private async usable(): Promise<boolean> {
    const status = this.redis.status;
    if (status === 'ready') return true;
    if (this.failedOnce || (status !== 'connecting' && status !== 'connect')) return false;
    this.firstConnect ??= new Promise<boolean>((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.redis.off('ready', onReady).off('error', onError);
        resolve(ok);
      };
      const onReady = () => done(true);
      const onError = () => done(false);
      const timer = setTimeout(() => done(false), FIRST_CONNECT_WAIT_MS);
      timer.unref();
      this.redis.once('ready', onReady).once('error', onError);
    });
    return this.firstConnect;
  }

  /** Resolves once the first connection is up (true) or has failed (false). */
  ready(): Promise<boolean> {
    return this.usable();
  }

  private key(key: string) {
    return `${this.opts.prefix ?? 'lms:'}${key}`;
  }

  private warn(what: string, err: unknown) {
    const now = Date.now();
    if (now - this.lastErrorLoggedAt < 60_000) return;
    this.lastErrorLoggedAt = now;
    (this.opts.log ?? console).warn(`[lms] CRM cache (redis) ${what} failed, treating as a miss: ${(err as Error)?.message ?? err}`);
  }

  async get(key: string): Promise<unknown | undefined> {
    if (!(await this.usable())) return undefined;
    try {
      const raw = await this.redis.get(this.key(key));
      if (raw === null) return undefined;
      const entry = JSON.parse(raw) as { v: unknown; e: number };
      // Redis's own expiry runs on real time; the stored deadline follows the Clock.
      if (typeof entry?.e !== 'number' || entry.e <= this.clock.now().getTime()) return undefined;
      return entry.v;
    } catch (err) {
      this.warn('get', err);
      return undefined;
    }
  }

  async set(key: string, value: unknown, ttlSeconds: number): Promise<void> {
    if (!(await this.usable())) return;
    try {
      const entry = { v: value, e: this.clock.now().getTime() + ttlSeconds * 1000 };
      // The Redis TTL only reclaims memory; freshness is decided by `e` above.
      await this.redis.set(this.key(key), JSON.stringify(entry), 'EX', Math.max(1, Math.ceil(ttlSeconds)));
    } catch (err) {
      this.warn('set', err);
    }
  }

  async close(): Promise<void> {
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }
}

/** Redis when `redisUrl` is set (shared across replicas), otherwise an in-memory LRU. */
export function createCrmCache(opts: { redisUrl?: string; clock: Clock; max?: number; prefix?: string; log?: Log }): CrmCache {
  if (opts.redisUrl) return new RedisCrmCache(opts.redisUrl, opts.clock, { prefix: opts.prefix, log: opts.log });
  return new MemoryCrmCache(opts.clock, opts.max);
}
