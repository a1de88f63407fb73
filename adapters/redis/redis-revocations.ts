import type { RevocationFeed } from '../../core/ports/revocations.ts';
import type { RedisConnection } from './redis-connection.ts';

/**
 * Revocations as messages on one Redis channel. Pub/sub delivers only to connected subscribers, so a
 * replica whose subscription was cut off drops its whole cache when it is back (null to the listener):
 * anything it cached may have been revoked meanwhile; while it is cut off, `live()` is false and tokens are read
 * from the database on every request.
 */
export class RedisRevocations implements RevocationFeed {
  private readonly redis: RedisConnection;
  private readonly channel: string;
  private readonly onError: (error: unknown) => void;
  private readonly listeners: ((tokenIds: readonly string[] | null) => void)[] = [];

  constructor(redis: RedisConnection, onError: (error: unknown) => void) {
    this.redis = redis;
    this.channel = `${redis.prefix}revoked-tokens`;
    this.onError = onError;
    let cutOff = false;
    redis.subscriber.on('error', () => (cutOff = true));
    redis.subscriber.on('ready', () => {
      if (!cutOff) return;
      cutOff = false;
      for (const listener of this.listeners) listener(null);
    });
    // queued until the subscriber first connects; node-redis subscribes again after every reconnection
    redis.subscriber.subscribe(this.channel, (message) => this.deliver(message)).catch(onError);
  }

  async publish(tokenIds: readonly string[]): Promise<void> {
    try {
      await this.redis.commands.publish(this.channel, JSON.stringify(tokenIds));
    } catch (error) {
      this.onError(error);
    }
  }

  live(): boolean {
    return this.redis.subscriber.isReady;
  }

  subscribe(listener: (tokenIds: readonly string[] | null) => void): void {
    this.listeners.push(listener);
  }

  private deliver(message: string): void {
    let ids: unknown;
    try {
      ids = JSON.parse(message);
    } catch {
      return;
    }
    if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) return;
    for (const listener of this.listeners) listener(ids);
  }
}
