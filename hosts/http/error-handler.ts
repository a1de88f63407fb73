import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { allowedMethods } from './allowed-methods.ts';
import { loggableError } from './error-log.ts';
import { BODY_LIMIT_KB } from './json-body.ts';
import { isDomainError, toHttpError } from './error-mapper.ts';
import type { RouteDef } from './route.ts';

interface HttpishError {
  status?: number;
  statusCode?: number;
  type?: string;
  message?: string;
}

/** Every error leaves as `{detail}`; only bugs and outages become 5xx, and those are logged. */
/** A database outage fails every request: its cause is logged once per interval, not once per request. */
const OUTAGE_LOG_INTERVAL_MS = 10_000;

export function errorHandler(logger: Logger): ErrorRequestHandler {
  let outageLogged = -Infinity;
  return (error: unknown, req, res, _next) => {
    if (res.headersSent) return;
    if (isDomainError(error)) {
      if (error.code === 'DATABASE_UNAVAILABLE' && performance.now() - outageLogged > OUTAGE_LOG_INTERVAL_MS) {
        outageLogged = performance.now();
        logger.warn({ err: loggableError(error.cause), method: req.method, path: req.path }, 'the database is unavailable: answering 503');
      }
      const { status, body } = toHttpError(error);
      if (error.retryAfterSeconds !== null) res.set('Retry-After', String(error.retryAfterSeconds));
      res.status(status).json(body);
      return;
    }
    const httpish = (error ?? {}) as HttpishError;
    const status = httpish.status ?? httpish.statusCode;
    if (httpish.type === 'entity.parse.failed') {
      res.status(400).json({ detail: `the request body is not valid JSON: ${httpish.message ?? 'parse error'}` });
      return;
    }
    if (httpish.type === 'entity.too.large') {
      res.status(413).json({ detail: `the request body is over ${BODY_LIMIT_KB} kB; send a smaller one` });
      return;
    }
    if (error instanceof URIError && status === 400) {
      // Express's router could not decode a path parameter
      res.status(400).json({ detail: `${error.message}: a path segment is not valid percent-encoding of UTF-8; encode it with encodeURIComponent` });
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
  const methodsOf = allowedMethods(routes);
  return (req, res) => {
    const allowed = methodsOf(req.path);
    if (allowed) {
      res.set('Allow', allowed.join(', '));
      res.status(405).json({ detail: `${req.method} is not allowed on ${req.path}; use ${allowed.join(' or ')}` });
      return;
    }
    res.status(404).json({ detail: `no route ${req.method} ${req.path}; see /openapi.json` });
  };
}
