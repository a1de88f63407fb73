import { MemoryStore, type ClientRateLimitInfo, type Options, type Store } from 'express-rate-limit';
import { RedisStore } from 'rate-limit-redis';
import type { RedisClientType } from 'redis';

/** A Redis answer slower than this counts as Redis being unreachable (on a LAN it takes well under 1 ms). */
const REDIS_TIMEOUT_MS = 250;
/** After a failure Redis is left alone this long: a Redis that hangs would otherwise cost every request the timeout. */
const RETRY_AFTER_MS = 2_000;

/**
 * `work`, or an error once `ms` passed. The timer's end waits for one more pass over the I/O already received
 * (setImmediate runs after it): when the process itself was stalled past `ms` (a loaded machine, a burst of
 * requests), Redis's answer is usually in the socket by then, and a late timer must not count it as a late Redis.
 */
const withTimeout = <T>(work: Promise<T>, ms: number): Promise<T> => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => setImmediate(() => reject(new Error(`Redis did not answer within ${ms} ms`))), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
};

/**
 * Counters every replica shares (rate-limit-redis), failing open: while Redis cannot be reached, each
 * replica counts in its own memory, so limits still hold per replica (N replicas: up to N times the budget)
 * and no request fails or waits because of Redis (after a failure it is asked again 2 s later, not per request). Limits protect capacity, not money (caps and balances are
 * checked in PostgreSQL), so an outage of Redis should not become an outage of the API.
 */
export class SharedRateLimitStore implements Store {
  private readonly shared: RedisStore;
  private readonly client: RedisClientType;
  private readonly local = new MemoryStore();
  private readonly onError: (error: unknown) => void;
  /** The last Redis call failed: its scripts may not be loaded (SCRIPT LOAD failed at init or Redis restarted empty). */
  private broken = false;
  /** Until then (Date.now()) requests are counted here without asking Redis. */
  private localUntil = 0;

  constructor(client: RedisClientType, prefix: string, onError: (error: unknown) => void) {
    this.client = client;
    this.shared = new RedisStore({ prefix, sendCommand: (...args: string[]) => client.sendCommand(args) as Promise<never> });
    this.onError = onError;
  }

  init(options: Options): void {
    this.local.init(options);
    // before the first connection SCRIPT LOAD fails at once: loaded again with the first count once connected
    this.shared.init(options).catch(() => (this.broken = true));
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    // not connected (starting, or reconnecting: the connection's errors are logged where it is made)
    if (!this.client.isReady || Date.now() < this.localUntil) return this.local.increment(key);
    try {
      if (this.broken) {
        this.broken = false;
        this.shared.incrementScriptSha = this.shared.loadIncrementScript();
      }
      return await withTimeout(this.shared.increment(key), REDIS_TIMEOUT_MS);
    } catch (error) {
      this.fail(error);
      return this.local.increment(key);
    }
  }

  async decrement(key: string): Promise<void> {
    await Promise.all([this.shared.decrement(key).catch(() => undefined), this.local.decrement(key)]);
  }

  async resetKey(key: string): Promise<void> {
    await Promise.all([this.shared.resetKey(key).catch(() => undefined), this.local.resetKey(key)]);
  }

  private fail(error: unknown): void {
    this.broken = true;
    this.localUntil = Date.now() + RETRY_AFTER_MS;
    this.onError(error);
  }
}
