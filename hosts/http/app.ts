import express, { type Express, type Router } from 'express';
import type { Logger } from 'pino';
import { errorHandler, notFoundHandler } from './error-handler.ts';
import { requestLog } from './request-log.ts';
import type { RouteDef } from './route.ts';

/** A standalone Express app around the control plane's router: logs, unknown routes, errors. */
export function createHttpApp(plane: { router: Router; routes: readonly RouteDef[]; logger: Logger }, options: { trustProxy?: boolean | number | string } = {}): Express {
  const app = express();
  app.disable('x-powered-by');
  // Answers carry ages that change every second: hashing each body (57 kB for a search) buys no revalidation.
  app.set('etag', false);
  app.set('trust proxy', options.trustProxy ?? false);
  app.use(requestLog(plane.logger));
  app.use(plane.router);
  app.use(notFoundHandler(plane.routes));
  app.use(errorHandler(plane.logger));
  return app;
}
