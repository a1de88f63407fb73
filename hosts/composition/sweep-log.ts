import type { Logger } from 'pino';
import { isDatabaseUnavailable } from '../../core/errors.ts';

/**
 * What a sweep pass that threw is logged as: a database that does not answer skips the pass (a warning; the
 * metric sweep_passes_total{outcome="database_unavailable"} counts them), anything else is an error.
 */
export const sweepFailed =
  (logger: Logger) =>
  (error: unknown): void => {
    if (isDatabaseUnavailable(error)) logger.warn({ err: (error as Error).cause }, 'billing sweep skipped: the database is unavailable; the next pass carries on');
    else logger.error({ err: error }, 'billing sweep failed');
  };
