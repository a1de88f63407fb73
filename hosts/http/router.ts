import type { Request, RequestHandler, Response } from 'express';
import { DomainError } from '../../core/errors.ts';
import { SecondAsking } from '../../core/market/admission.ts';
import type { TenancyService } from '../../core/tenancy/tenancy-service.ts';
import type { Token } from '../../core/tenancy/token.ts';
import { requireAccess } from './access-check.ts';
import { allowedMethods } from './allowed-methods.ts';
import { readJsonBody } from './json-body.ts';
import { monitoringAccess } from './monitoring-access.ts';
import { operatorKeyMatcher } from './operator-keys.ts';
import { rateLimiters, type RateLimiters, type RateLimitSettings } from './rate-limit.ts';
import type { RouteDef } from './route.ts';
import { sendRaw } from './raw-body.ts';
import { parsePart } from './validation.ts';

export interface RouterDeps {
  tenancy: TenancyService;
  operatorKeys: readonly string[];
  rateLimits: RateLimitSettings;
  /** Limiters shared with another endpoint (POST /mcp), so both spend one budget; made from rateLimits when absent. */
  limiters?: RateLimiters;
}

export const OPERATOR_KEY_HEADER = 'x-service-operator-key';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The bearer of a request: undefined without an Authorization header, null when it is not `Bearer <token>`. */
export const bearerOf = (req: Request): string | null | undefined => {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  return BEARER.exec(header)?.[1] ?? null;
};

/** A route's path as Express matched it: case-insensitive, an optional trailing slash, `{name}` one segment. */
const patternOf = (path: string): RegExp =>
  new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[a-z_]+\}/g, '([^/]+)')}/?$`, 'i');

/** Like Express's router: a path parameter is percent-decoded, and one that cannot be is a 400 (error-handler.ts). */
function decodeParam(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch (error) {
    if (error instanceof URIError) {
      error.message = `Failed to decode param '${value}'`;
      Object.assign(error, { status: 400, statusCode: 400 });
    }
    throw error;
  }
}

/** The method a route table entry answers: HEAD is answered by GET, as Express does. */
const routeMethodOf = (method: string): string => (method === 'HEAD' ? 'get' : method.toLowerCase());

interface Match {
  route: RouteDef;
  params: Record<string, string>;
}

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** Parsed queries kept per route: many callers send the same few (`?limit=20`, a dashboard's filters). */
const QUERIES_KEPT = 1_024;

const deepFreeze = <T>(value: T): T => {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
};

/**
 * A route's query as its schema reads it, parsed once per query text: the parse is a pure function of the
 * text (Express's query parser, then the schema), and a query sent again costs a map lookup instead of both.
 * A query is kept from its second asking (as the market keeps answers, core/market/admission.ts): a one-off
 * query leaves nothing that would outlive its request. What is kept is frozen, so a handler that tried to
 * change a shared query would fail its tests, not leak into another request; the frozen object also tells
 * the handler it will see this query again (market-routes.ts keeps its filter). Refused queries are not
 * kept: they throw each time.
 */
function queryParser(route: RouteDef): (req: Request) => unknown {
  const schema = route.query!;
  const kept = new Map<string, unknown>();
  const admission = new SecondAsking(2 * QUERIES_KEPT);
  return (req) => {
    const at = req.url.indexOf('?');
    const text = at < 0 ? '' : req.url.slice(at + 1);
    let query = kept.get(text);
    if (query === undefined) {
      query = parsePart(schema, req.query, 'query');
      if (admission.admit(text)) {
        deepFreeze(query);
        if (kept.size >= QUERIES_KEPT) kept.delete(kept.keys().next().value!);
        kept.set(text, query);
      }
    }
    return query;
  };
}

/**
 * Finds the route for a method and path with Express's rules: routes in table order, the first whose path
 * matches and that answers the method wins; a matching path whose parameter cannot be decoded is a 400 even
 * when that route is for another method. Paths of routes without parameters are looked up in a map
 * prepared from those rules, so a request to one of them tries no pattern at all.
 */
function routeFinder(routes: readonly RouteDef[]): (method: string, path: string) => Match | null {
  const compiled = routes.map((route) => ({ route, pattern: patternOf(route.path), names: [...route.path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]!) }));

  const search = (method: string, path: string): Match | null => {
    const wanted = routeMethodOf(method);
    for (const { route, pattern, names } of compiled) {
      const found = pattern.exec(path);
      if (!found) continue;
      let params = NO_PARAMS;
      if (names.length > 0) {
        params = {};
        for (const [i, name] of names.entries()) params[name] = decodeParam(found[i + 1]!);
      }
      if (route.method === wanted) return { route, params };
    }
    return null;
  };

  const exact = new Map<string, Map<string, Match>>();
  for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']) {
    const byPath = new Map<string, Match>();
    for (const route of routes) {
      if (route.path.includes('{')) continue;
      const match = search(method, route.path);
      if (match) byPath.set(route.path, match);
    }
    exact.set(method, byPath);
  }
  return (method, path) => exact.get(method)?.get(path) ?? search(method, path);
}

/**
 * The control plane's routes as one request handler: the route is found by method and path (see
 * routeFinder), then access, rate limit, body, validation and the handler run in turn as plain calls. An
 * Express router tried each route's layer in order and passed every request through five middleware
 * functions per route; this does the same checks in the same order for a fraction of the cost.
 * A path no route has (or another method) goes on to the next handler: 404, 405 (error-handler.ts).
 */
export function buildRouter(routes: readonly RouteDef[], deps: RouterDeps): RequestHandler {
  const limiters = deps.limiters ?? rateLimiters(deps.rateLimits);
  const methodsOf = allowedMethods(routes);
  const find = routeFinder(routes);
  const queryOf = new Map(routes.filter((route) => route.query).map((route) => [route, queryParser(route)]));
  const operatorKeyOf = operatorKeyMatcher(deps.operatorKeys);
  const monitoringOf = new Map(
    routes.flatMap((route) => (route.access.kind === 'monitoring' ? [[route, monitoringAccess(deps.operatorKeys, route.access.metricsToken ?? undefined)] as const] : [])),
  );
  const operatorKeyRefused =
    deps.operatorKeys.length === 0
      ? 'no operator keys are configured on this server; set the OPERATOR_KEYS environment variable (comma-separated, each at least 16 characters) and restart it'
      : 'missing or wrong operator key; send the X-Service-Operator-Key header';

  /**
   * Who calls, and whether within their budget; false once a 429 has been sent. A bad bearer is not thrown
   * before it is counted: guessing tokens is rate limited too (per address, as is every failed credential).
   * A valid operator key has its own budget, so a busy back office is not locked out by the public limit.
   */
  async function admit(route: RouteDef, req: Request, res: Response): Promise<{ caller: Token | null } | false> {
    const access = route.access;
    switch (access.kind) {
      case 'public':
        if (!route.unlimited && !(await limiters.byAddress(req, res))) return false;
        return { caller: null };
      case 'operator': {
        const key = operatorKeyOf(req.get(OPERATOR_KEY_HEADER));
        if (key) return (await limiters.byOperator(key, res)) && { caller: null };
        if (!(await limiters.byAddress(req, res))) return false;
        throw new DomainError('OPERATOR_KEY_INVALID', operatorKeyRefused);
      }
      case 'monitoring': {
        const monitoring = monitoringOf.get(route)!;
        const scraper = monitoring.callerOf(req.get(OPERATOR_KEY_HEADER), req.headers.authorization);
        if (scraper) return (await limiters.byOperator(scraper, res)) && { caller: null };
        if (!(await limiters.byAddress(req, res))) return false;
        throw new DomainError('UNAUTHENTICATED', monitoring.refusal);
      }
      case 'bearer':
      case 'bearer-or-body': {
        const bearer = bearerOf(req);
        let caller: Token | null = null;
        let refused: DomainError | null = null;
        if (bearer === null) refused = new DomainError('UNAUTHENTICATED', 'malformed Authorization header; send Authorization: Bearer <token>');
        else if (bearer !== undefined) {
          try {
            caller = await deps.tenancy.authenticate(bearer);
          } catch (error) {
            if (!(error instanceof DomainError)) throw error;
            refused = error;
          }
        }
        if (!(await (caller ? limiters.byToken(caller.id, res) : limiters.byAddress(req, res)))) return false;
        if (refused) throw refused;
        // without a bearer the bootstrap route is public, and was limited per address like one
        if (!caller && access.kind === 'bearer') throw new DomainError('UNAUTHENTICATED', 'missing Authorization header; send Authorization: Bearer <token>');
        if (caller) await requireAccess(access, caller, 'route', deps.tenancy);
        return { caller };
      }
    }
  }

  const readBody = (req: Request, res: Response): Promise<void> =>
    new Promise((resolve, reject) => readJsonBody(req, res, (error?: unknown) => (error ? reject(error) : resolve())));

  async function serve({ route, params: rawParams }: Match, req: Request, res: Response): Promise<void> {
    const admitted = await admit(route, req, res);
    if (!admitted) return;
    // read only once the caller is known and within its limit; routes without a body ignore any sent
    if (route.body) await readBody(req, res);
    // a part the route does not read is not checked either: `?utm=1&utm=2` on a route without a query is ignored
    const params = route.params ? parsePart(route.params, rawParams, 'path') : {};
    const query = queryOf.get(route)?.(req) ?? {};
    const rawBody = req.body === undefined && route.bodyOptional ? {} : req.body;
    const body = route.body ? parsePart(route.body, rawBody, 'body') : undefined;
    const result = await route.handle({ params, query, body, caller: admitted.caller, req, res });
    if (result.headers) res.set(result.headers);
    if (result.raw) sendRaw(res.status(result.status), result.raw);
    else if (result.body === undefined) res.status(result.status).end();
    else res.status(result.status).json(result.body);
  }

  return (req, res, next) => {
    const method = req.method;
    if (method === 'OPTIONS') {
      // the methods a known path takes, no body (Express's own answer is a text/plain list)
      const allowed = methodsOf(req.path);
      if (allowed) res.set('Allow', allowed.join(', ')).status(204).end();
      else next();
      return;
    }
    let match: Match | null;
    try {
      match = find(method, req.path);
    } catch (error) {
      next(error);
      return;
    }
    if (!match) {
      next();
      return;
    }
    // the template, for metrics (request-log.ts): never the raw path, whose ids would make a series each
    res.locals.route = match.route.path;
    serve(match, req, res).catch(next);
  };
}
