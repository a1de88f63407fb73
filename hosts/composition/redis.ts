import type { Logger } from 'pino';
import type { Store } from 'express-rate-limit';
import { openRedis, type RedisSettings } from '../../adapters/redis/redis-connection.ts';
import { RedisRevocations } from '../../adapters/redis/redis-revocations.ts';
import type { RevocationFeed } from '../../core/ports/revocations.ts';
import { SharedRateLimitStore } from '../http/shared-rate-limit-store.ts';

export interface SharedState {
  rateLimitStore(prefix: string): Store;
  revocations: RevocationFeed;
  /** Whether both connections (counters, revocations) are up, for GET /readyz. */
  connected(): boolean;
  close(): Promise<void>;
}

/** An unreachable Redis fails every request's counter: said once per interval, not once per request. */
const ERROR_LOG_INTERVAL_MS = 10_000;

/** What the replicas share through REDIS_URL: rate-limit counters and revocation messages. */
export function sharedState(settings: RedisSettings, logger: Logger): SharedState {
  let lastLogged = 0;
  const onError = (error: unknown) => {
    const now = Date.now();
    if (now - lastLogged < ERROR_LOG_INTERVAL_MS) return;
    lastLogged = now;
    logger.error({ err: error }, 'Redis unreachable: rate limits counted in this replica alone, tokens read from the database on every request');
  };
  const redis = openRedis(settings, onError);
  return {
    rateLimitStore: (prefix) => new SharedRateLimitStore(redis.commands, `${redis.prefix}${prefix}`, onError),
    revocations: new RedisRevocations(redis, onError),
    connected: () => redis.commands.isReady && redis.subscriber.isReady,
    close: () => redis.close(),
  };
}
