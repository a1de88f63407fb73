import type { IncomingHttpHeaders } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Request, RequestHandler, Response } from 'express';
import type { Level, Logger } from 'pino';

/** Credentials a log line never carries: their values are replaced, their presence is kept. */
const REDACTED_HEADERS = ['authorization', 'x-service-operator-key', 'cookie'] as const;
const REDACTED = '[Redacted]';

/** 5xx is an error, 4xx worth reading (info), a success only when debugging. */
const levelOf = (status: number): Level => (status >= 500 ? 'error' : status >= 400 ? 'info' : 'debug');

const redactedHeaders = (headers: IncomingHttpHeaders): IncomingHttpHeaders => {
  const copy: IncomingHttpHeaders = { ...headers };
  for (const name of REDACTED_HEADERS) if (copy[name] !== undefined) (copy as Record<string, string>)[name] = REDACTED;
  return copy;
};

/** What metrics see of each answered request: `route` is the route table's template, or `unmatched`. */
export type RequestObserver = (method: string, route: string, status: number, seconds: number) => void;

/**
 * One line per request, written once the answer is done: 5xx at error, 4xx at info, the rest at debug, with
 * the request (method, URL, query, headers without credentials, peer) and the answer (status, headers,
 * milliseconds). Nothing is built unless the line's level is enabled, and nothing at all is attached to the
 * request when even errors are not logged. pino-http logged the same, but created and serialized a child
 * logger per request before knowing whether it would log (about 40 µs of a 160 µs cached search).
 */
export function requestLog(logger: Logger, observe?: RequestObserver): RequestHandler {
  let lastId = 0;

  function closed(res: Response, started: number, id: number): void {
    if (observe) observe(res.req.method, (res.locals.route as string | undefined) ?? 'unmatched', res.statusCode, (performance.now() - started) / 1000);
    write(res, started, id);
  }

  function write(res: Response, started: number, id: number): void {
    const level = levelOf(res.statusCode);
    if (!logger.isLevelEnabled(level)) return;
    const req = res.req as Request;
    const socket = req.socket;
    const line: Record<string, unknown> = {
      req: {
        id,
        method: req.method,
        url: req.originalUrl,
        query: req.query,
        params: req.params ?? {},
        headers: redactedHeaders(req.headers),
        remoteAddress: socket?.remoteAddress,
        remotePort: socket?.remotePort,
      },
      res: { statusCode: res.statusCode, headers: res.getHeaders() },
      responseTime: Math.round(performance.now() - started),
    };
    if (res.statusCode >= 500) {
      line.err = new Error(`failed with status code ${res.statusCode}`);
      logger[level](line, 'request errored');
      return;
    }
    logger[level](line, !req.readableAborted && res.writableEnded ? 'request completed' : 'request aborted');
  }

  return (_req, res, next) => {
    if (observe || logger.isLevelEnabled('error')) {
      const started = performance.now();
      const id = (lastId = (lastId + 1) & 0x7fffffff);
      // 'close' comes once, after 'finish' for a finished answer and alone for an aborted one. What the line
      // needs is in the closure, not on `res`: two properties added to every response cost ~20 µs a request
      // (measured), as Node's code then meets responses of another shape. Metrics and the log share it.
      res.on('close', () => closed(res, started, id));
    }
    next();
  };
}
