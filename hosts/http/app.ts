import express, { type Express, type Router } from 'express';
import type { Logger } from 'pino';
import { consoleSite } from './console-site.ts';
import { errorHandler, notFoundHandler } from './error-handler.ts';
import { requestLog } from './request-log.ts';
import type { RouteDef } from './route.ts';

/** Where answered requests are counted (GET /metrics): by method, route template and status. */
export interface HttpMetrics {
  httpRequest(method: string, route: string, status: number, seconds: number): void;
}

/** A standalone Express app around the control plane's router: logs, the console and /docs, unknown routes, errors. */
export function createHttpApp(plane: { router: Router; routes: readonly RouteDef[]; logger: Logger; metrics?: HttpMetrics }, options: { trustProxy?: boolean | number | string } = {}): Express {
  const app = express();
  app.disable('x-powered-by');
  // Answers carry ages that change every second: hashing each body (57 kB for a search) buys no revalidation.
  app.set('etag', false);
  app.set('trust proxy', options.trustProxy ?? false);
  const metrics = plane.metrics;
  app.use(requestLog(plane.logger, metrics && ((method, route, status, seconds) => metrics.httpRequest(method, route, status, seconds))));
  app.use(plane.router);
  // after the API: its requests never pass through the console's handlers
  app.use(consoleSite());
  app.use(notFoundHandler(plane.routes));
  app.use(errorHandler(plane.logger));
  return app;
}
