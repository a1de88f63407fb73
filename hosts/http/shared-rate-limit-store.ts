import { MemoryStore, type ClientRateLimitInfo, type Options, type Store } from 'express-rate-limit';
import { RedisStore } from 'rate-limit-redis';
import type { RedisClientType } from 'redis';

/** A Redis answer slower than this counts as Redis being unreachable (on a LAN it takes well under 1 ms). */
const REDIS_TIMEOUT_MS = 250;

const withTimeout = <T>(work: Promise<T>, ms: number): Promise<T> => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
};

/**
 * Counters every replica shares (rate-limit-redis), failing open: while Redis cannot be reached, each
 * replica counts in its own memory, so limits still hold per replica (N replicas: up to N times the budget)
 * and no request fails because of Redis. Limits protect capacity, not money (caps and balances are
 * checked in PostgreSQL), so an outage of Redis should not become an outage of the API.
 */
export class SharedRateLimitStore implements Store {
  private readonly shared: RedisStore;
  private readonly local = new MemoryStore();
  private readonly onError: (error: unknown) => void;
  /** The last Redis call failed: its scripts may not be loaded (SCRIPT LOAD failed at init or Redis restarted empty). */
  private broken = false;

  constructor(client: RedisClientType, prefix: string, onError: (error: unknown) => void) {
    this.shared = new RedisStore({ prefix, sendCommand: (...args: string[]) => client.sendCommand(args) as Promise<never> });
    this.onError = onError;
  }

  init(options: Options): void {
    this.local.init(options);
    this.shared.init(options).catch((error: unknown) => this.fail(error));
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
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
    this.onError(error);
  }
}
