import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { DomainError } from '../../core/errors.ts';
import type { TenancyService } from '../../core/tenancy/tenancy-service.ts';
import type { Scope } from '../../core/tenancy/scopes.ts';
import type { Token } from '../../core/tenancy/token.ts';
import { allowedMethods } from './allowed-methods.ts';
import { readJsonBody } from './json-body.ts';
import { operatorKeyMatcher } from './operator-keys.ts';
import { rateLimiters, type RateLimitSettings } from './rate-limit.ts';
import type { RouteDef } from './route.ts';
import { sendRaw } from './raw-body.ts';
import { parsePart } from './validation.ts';

export interface RouterDeps {
  tenancy: TenancyService;
  operatorKeys: readonly string[];
  rateLimits: RateLimitSettings;
}

export const OPERATOR_KEY_HEADER = 'x-service-operator-key';

const toExpressPath = (path: string): string => path.replace(/\{([a-z_]+)\}/g, ':$1');

const bearerOf = (req: Request): string | null | undefined => {
  const header = req.get('authorization');
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
};

const wrap =
  (fn: (req: Request, res: Response) => Promise<void>): RequestHandler =>
  (req, res, next) => {
    fn(req, res).then(() => next(), next);
  };

/** Builds the Express router for a route table: access, rate limits, validation, then the handler. */
export function buildRouter(routes: readonly RouteDef[], deps: RouterDeps): Router {
  const router = express.Router();
  const limiters = rateLimiters(deps.rateLimits);
  const methodsOf = allowedMethods(routes);

  // OPTIONS on a known path: the methods it takes, no body (Express's own answer is a text/plain list)
  router.use((req, res, next) => {
    const allowed = req.method === 'OPTIONS' ? methodsOf(req.path) : null;
    if (!allowed) {
      next();
      return;
    }
    res.set('Allow', allowed.join(', ')).status(204).end();
  });
  const operatorKeyOf = operatorKeyMatcher(deps.operatorKeys);

  /**
   * Reads the bearer, if any. A bad one is remembered rather than thrown at once, so that the
   * attempt still counts against the sender's address: guessing tokens is rate limited too.
   */
  const authenticate: RequestHandler = wrap(async (req, res) => {
    const bearer = bearerOf(req);
    if (bearer === undefined) return;
    if (bearer === null) {
      res.locals.authError = new DomainError('UNAUTHENTICATED', 'malformed Authorization header; send Authorization: Bearer <token>');
      return;
    }
    try {
      res.locals.caller = await deps.tenancy.authenticate(bearer);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      res.locals.authError = error;
    }
  });

  const limitByCallerOrAddress: RequestHandler = (req, res, next) =>
    res.locals.caller ? limiters.byToken(req, res, next) : limiters.byAddress(req, res, next);

  const requireCaller =
    (optional: boolean): RequestHandler =>
    (_req, res, next) => {
      if (res.locals.authError) next(res.locals.authError);
      else if (!res.locals.caller && !optional) {
        next(new DomainError('UNAUTHENTICATED', 'missing Authorization header; send Authorization: Bearer <token>'));
      } else next();
    };

  const requireScope =
    (scope: Scope | null): RequestHandler =>
    (_req, res, next) => {
      const caller = res.locals.caller as Token | undefined;
      if (scope && caller && !caller.scopes.includes(scope)) {
        next(new DomainError('SCOPE_REQUIRED', `this route needs a token with the ${scope} scope`));
        return;
      }
      next();
    };

  const operatorKeyRefused =
    deps.operatorKeys.length === 0
      ? 'no operator keys are configured on this server; set the OPERATOR_KEYS environment variable (comma-separated, each at least 16 characters) and restart it'
      : 'missing or wrong operator key; send the X-Service-Operator-Key header';

  /**
   * A valid key is limited on its own budget, so a busy back office is not locked out by the public limit;
   * a missing or wrong one counts against the sender's address, like any failed credential.
   */
  const requireOperator: RequestHandler = (req, res, next) => {
    const key = operatorKeyOf(req.get(OPERATOR_KEY_HEADER));
    if (key) {
      res.locals.operatorKey = key;
      limiters.byOperator(req, res, next);
      return;
    }
    limiters.byAddress(req, res, (error?: unknown) => next(error ?? new DomainError('OPERATOR_KEY_INVALID', operatorKeyRefused)));
  };

  for (const route of routes) {
    const chain: RequestHandler[] = [];
    switch (route.access.kind) {
      case 'public':
        if (!route.unlimited) chain.push(limiters.byAddress);
        break;
      case 'bearer':
        chain.push(authenticate, limitByCallerOrAddress, requireCaller(false), requireScope(route.access.scope));
        break;
      case 'bearer-or-body':
        // Without a bearer the route is public (bootstrap), and limited per address like one.
        chain.push(authenticate, limitByCallerOrAddress, requireCaller(true), requireScope(route.access.scope));
        break;
      case 'operator':
        chain.push(requireOperator);
        break;
    }
    // read only once the caller is known and within its limit; routes without a body ignore any sent
    if (route.body) chain.push(readJsonBody);

    const answer = async (req: Request, res: Response): Promise<void> => {
      // a part the route does not read is not checked either: `?utm=1&utm=2` on a route without a query is ignored
      const params = route.params ? parsePart(route.params, req.params, 'path') : {};
      const query = route.query ? parsePart(route.query, req.query, 'query') : {};
      const rawBody = req.body === undefined && route.bodyOptional ? {} : req.body;
      const body = route.body ? parsePart(route.body, rawBody, 'body') : undefined;
      const result = await route.handle({
        params,
        query,
        body,
        caller: (res.locals.caller as Token | undefined) ?? null,
        req,
        res,
      });
      if (result.headers) res.set(result.headers);
      if (result.raw) sendRaw(res.status(result.status), result.raw);
      else if (result.body === undefined) res.status(result.status).end();
      else res.status(result.status).json(result.body);
    };
    chain.push((req, res, next) => {
      answer(req, res).catch(next);
    });
    router[route.method](toExpressPath(route.path), ...chain);
  }
  return router;
}
