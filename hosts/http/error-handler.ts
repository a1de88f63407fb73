import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { loggableError } from './error-log.ts';
import { isDomainError, toHttpError } from './error-mapper.ts';
import type { RouteDef } from './route.ts';

interface HttpishError {
  status?: number;
  statusCode?: number;
  type?: string;
  message?: string;
}

/** Every error leaves as `{detail}`; only bugs and outages become 5xx, and those are logged. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    if (res.headersSent) return;
    if (isDomainError(error)) {
      const { status, body } = toHttpError(error);
      res.status(status).json(body);
      return;
    }
    const httpish = (error ?? {}) as HttpishError;
    const status = httpish.status ?? httpish.statusCode;
    if (httpish.type === 'entity.parse.failed') {
      res.status(400).json({ detail: `the request body is not valid JSON: ${httpish.message ?? 'parse error'}` });
      return;
    }
    if (typeof status === 'number' && status >= 400 && status < 500) {
      res.status(status).json({ detail: httpish.message ?? 'bad request' });
      return;
    }
    // not `err: error`: a database error carries the statement's values; the URL's query is left out for the same reason
    logger.error({ err: loggableError(error), method: req.method, path: req.path }, 'request failed');
    res.status(500).json({ detail: 'internal error; it has been logged' });
  };
}

/** 405 with Allow for a known path and another method; 404 for anything else. */
export function notFoundHandler(routes: readonly RouteDef[]): RequestHandler {
  const matchers = routes.map((route) => ({
    method: route.method.toUpperCase(),
    pattern: new RegExp(`^${route.path.replace(/\{[a-z_]+\}/g, '[^/]+')}/?$`),
  }));
  return (req, res) => {
    const allowed = matchers.filter((m) => m.pattern.test(req.path)).map((m) => m.method);
    if (allowed.length > 0) {
      if (allowed.includes('GET')) allowed.push('HEAD');
      res.set('Allow', [...new Set(allowed)].join(', '));
      res.status(405).json({ detail: `${req.method} is not allowed on ${req.path}; use ${allowed.join(' or ')}` });
      return;
    }
    res.status(404).json({ detail: `no route ${req.method} ${req.path}; see /openapi.json` });
  };
}
