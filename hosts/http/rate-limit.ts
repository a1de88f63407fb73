import type { Request, RequestHandler, Response } from 'express';
import { rateLimit, type Store } from 'express-rate-limit';

export interface RateLimitSettings {
  /** Requests a minute per client address on public routes. */
  publicPerMinute: number;
  /** Requests a minute per token on authenticated routes. */
  perTokenPerMinute: number;
  /** Requests a minute per operator key, with a valid key (default 600); failed keys use the public budget. */
  operatorPerMinute?: number;
  /** A shared store (Redis) for several replicas; in memory when absent. */
  store?: (prefix: string) => Store;
}

const tooMany = (req: Request, res: Response): void => {
  const resetTime = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
  const seconds = resetTime ? Math.max(1, Math.ceil((resetTime.getTime() - Date.now()) / 1000)) : 60;
  res.set('Retry-After', String(seconds));
  res.status(429).json({ detail: `too many requests; retry after ${seconds} s` });
};

const limiter = (limit: number, keyGenerator: (req: Request, res: Response) => string, store?: Store): RequestHandler =>
  rateLimit({
    windowMs: 60_000,
    limit,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    keyGenerator,
    handler: tooMany,
    ...(store && { store }),
    // Keys here never come from a raw IPv6 address, so the library's IPv6 subnet check does not apply.
    validate: { keyGeneratorIpFallback: false },
  });

export const DEFAULT_OPERATOR_PER_MINUTE = 600;

export function rateLimiters(settings: RateLimitSettings): { byAddress: RequestHandler; byToken: RequestHandler; byOperator: RequestHandler } {
  return {
    byAddress: limiter(
      settings.publicPerMinute,
      (req) => `addr:${req.ip ?? req.socket.remoteAddress ?? 'unknown'}`,
      settings.store?.('rl:addr:'),
    ),
    byToken: limiter(
      settings.perTokenPerMinute,
      (_req, res) => `tok:${(res.locals.caller as { id: string } | undefined)?.id ?? 'none'}`,
      settings.store?.('rl:tok:'),
    ),
    byOperator: limiter(
      settings.operatorPerMinute ?? DEFAULT_OPERATOR_PER_MINUTE,
      (_req, res) => `op:${(res.locals.operatorKey as string | undefined) ?? 'none'}`,
      settings.store?.('rl:op:'),
    ),
  };
}
