import { createClient, type RedisClientType } from 'redis';

export interface RedisSettings {
  url: string;
  /** Put before every key and channel, so deployments (or test runs) may share one Redis. Default `gcp:`. */
  prefix?: string;
}

export interface RedisConnection {
  /** Commands (rate-limit counters, publishing). Fails at once while Redis is unreachable, never queues. */
  commands: RedisClientType;
  /** A connection in subscriber mode (Redis takes one over for SUBSCRIBE); resubscribes after reconnecting. */
  subscriber: RedisClientType;
  prefix: string;
  close(): Promise<void>;
}

/** Reconnects forever, backing off to 2 s: Redis coming back must heal every replica without a restart. */
const reconnectStrategy = (retries: number): number => Math.min(50 * 2 ** retries, 2_000);

/**
 * A PING every half second, and a connection with nothing read for 2 s closed: a Redis that hangs (frozen, a network
 * partition) is noticed like one that went away, within the 5 s a revocation may take to reach every replica.
 */
const PING_INTERVAL_MS = 500;
const SILENCE_MS = 2_000;

/**
 * Two clients on REDIS_URL. Neither start waits for Redis: a replica whose Redis is down serves requests
 * (rate limits counted locally, tokens read from the database on every request, so a revocation anywhere holds at once) and
 * connects when Redis answers. `onError` hears every connection error; the caller decides how loudly to log.
 */
export function openRedis(settings: RedisSettings, onError: (error: unknown) => void): RedisConnection {
  const options = { url: settings.url, pingInterval: PING_INTERVAL_MS, socket: { connectTimeout: 2_000, socketTimeout: SILENCE_MS, reconnectStrategy } };
  // a command waiting for a reconnection would hold its request; failing fast lets the caller fall back
  const commands = createClient({ ...options, disableOfflineQueue: true }) as RedisClientType;
  const subscriber = createClient(options) as RedisClientType;
  for (const client of [commands, subscriber]) {
    client.on('error', onError);
    // connect() keeps trying until it succeeds or the client is closed; closing rejects it, which is expected
    client.connect().catch(() => undefined);
  }
  return {
    commands,
    subscriber,
    prefix: settings.prefix ?? 'gcp:',
    async close() {
      // a client still trying to connect has nothing to finish: close() would wait for the connection
      await Promise.all([commands, subscriber].map((client) => (client.isReady ? client.close().catch(() => client.destroy()) : client.isOpen ? client.destroy() : undefined)));
    },
  };
}
