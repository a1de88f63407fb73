import type { Request, Response } from 'express';
import { MemoryStore, type Options, type Store } from 'express-rate-limit';

export interface RateLimitSettings {
  /** Requests a minute per client address on public routes. */
  publicPerMinute: number;
  /** Requests a minute per token on authenticated routes. */
  perTokenPerMinute: number;
  /** Requests a minute per operator key, with a valid key (default 600); failed keys use the public budget. */
  operatorPerMinute?: number;
  /** A shared store (Redis) for several replicas; in memory when absent. Any express-rate-limit store. */
  store?: (prefix: string) => Store;
}

const WINDOW_MS = 60_000;
const WINDOW_SECONDS = WINDOW_MS / 1000;

/**
 * Counts a request against `key`'s budget and sets the RateLimit and RateLimit-Policy headers (IETF draft 7,
 * as express-rate-limit's `standardHeaders: 'draft-7'` did). Over budget it answers 429 with Retry-After
 * itself and says false: the request goes no further.
 */
export type Limiter = (key: string, res: Response) => Promise<boolean>;

/**
 * The counting is express-rate-limit's store (its MemoryStore, or a shared one); the middleware around it is
 * ours. Its own middleware measured 3-5 µs a request (several awaits, per-request validations and debug
 * calls, a request property) where this takes one store call, and it works only as Express middleware while
 * the router decides which budget applies after authentication.
 */
function limiter(limit: number, store: Store): Limiter {
  store.init?.({ windowMs: WINDOW_MS } as Options);
  const policy = `${limit};w=${WINDOW_SECONDS}`;
  return async (key, res) => {
    const counted = store.increment(key);
    const { totalHits, resetTime } = counted instanceof Promise ? await counted : counted;
    const seconds = resetTime ? Math.max(0, Math.ceil((resetTime.getTime() - Date.now()) / 1000)) : WINDOW_SECONDS;
    res.setHeader('RateLimit-Policy', policy);
    res.setHeader('RateLimit', `limit=${limit}, remaining=${Math.max(limit - totalHits, 0)}, reset=${seconds}`);
    if (totalHits <= limit) return true;
    const retryAfter = Math.max(1, seconds);
    res.setHeader('Retry-After', String(retryAfter));
    res.status(429).json({ detail: `too many requests; retry after ${retryAfter} s` });
    return false;
  };
}

export const DEFAULT_OPERATOR_PER_MINUTE = 600;

/** The client's address as the rate limit keys it (behind a proxy, what `trust proxy` makes of it). */
export const addressOf = (req: Request): string => req.ip ?? req.socket.remoteAddress ?? 'unknown';

export interface RateLimiters {
  /** Per client address: public routes, the bootstrap exchange, failed credentials. */
  byAddress(req: Request, res: Response): Promise<boolean>;
  byToken(tokenId: string, res: Response): Promise<boolean>;
  /** Per valid operator key, named by a digest. */
  byOperator(keyName: string, res: Response): Promise<boolean>;
}

export function rateLimiters(settings: RateLimitSettings): RateLimiters {
  const storeFor = (prefix: string): Store => settings.store?.(prefix) ?? new MemoryStore();
  const address = limiter(settings.publicPerMinute, storeFor('rl:addr:'));
  const token = limiter(settings.perTokenPerMinute, storeFor('rl:tok:'));
  const operator = limiter(settings.operatorPerMinute ?? DEFAULT_OPERATOR_PER_MINUTE, storeFor('rl:op:'));
  return {
    byAddress: (req, res) => address(`addr:${addressOf(req)}`, res),
    byToken: (tokenId, res) => token(`tok:${tokenId}`, res),
    byOperator: (keyName, res) => operator(`op:${keyName}`, res),
  };
}
