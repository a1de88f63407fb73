import type { Clock } from '../../ports/clock.ts';
import type { Storage } from '../../ports/storage.ts';
import { KEEP_EXPIRED_MS } from '../../quotes/quote.ts';
import type { PassCounts } from '../pass-report.ts';
import type { SweepStep } from '../step.ts';

export type ExpiredQuotesReport = Pick<PassCounts, 'quotesPruned'> & { errors: string[] };

/** Quotes one statement deletes; a pass takes batches until none is left or its budget is over. */
const BATCH = 1_000;

/**
 * `expired quotes`: unused quotes a day past their expiry are deleted (docs/decisions.md, "Rent by specification
 * and quotes"), whoever made them and whether or not they quote again, so the table holds what may still be asked
 * about and no more.
 */
export const expiredQuotes = (deps: { storage: Storage; clock: Clock }): SweepStep<ExpiredQuotesReport> => ({
  name: 'expired quotes',
  report: () => ({ quotesPruned: 0, errors: [] }),
  async run(report, { budget }) {
    const before = new Date(deps.clock.now().getTime() - KEEP_EXPIRED_MS);
    while (!budget.over()) {
      const pruned = await deps.storage.autocommit((uow) => uow.quotes.prune(before, BATCH));
      report.quotesPruned += pruned;
      if (pruned < BATCH) break;
    }
  },
});
