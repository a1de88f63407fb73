import { isolated } from '../../billing/isolated.ts';
import { releaseBookingsOf } from '../../bookings/end-subtree.ts';
import type { Clock } from '../../ports/clock.ts';
import type { Storage } from '../../ports/storage.ts';
import type { PassCounts } from '../pass-report.ts';
import type { SweepStep } from '../step.ts';

export type ExpiredTokensReport = Pick<PassCounts, 'reservationsCancelled'> & { errors: string[] };

/** Tokens read per batch; a pass takes batches until none is left or its budget is over. */
const BATCH = 100;

/**
 * `expired-tokens` (docs/decisions.md, "One tree of authority"): a token past its expiry is ended as a revoked one
 * is, so the reservations still scheduled under a chain that expired are cancelled at the next pass, their commitments
 * given back along the chain (and its spot claims still pending released), by the same code a revocation runs
 * (end-subtree.ts). Nothing else is needed: an expired token authenticates nobody, and machines running keep running,
 * as after a revocation.
 */
export const expiredTokens = (deps: { storage: Storage; clock: Clock }): SweepStep<ExpiredTokensReport> => ({
  name: 'expired-tokens',
  report: () => ({ reservationsCancelled: 0, errors: [] }),
  async run(report, { budget }) {
    const now = deps.clock.now();
    const tried = new Set<string>();
    while (!budget.over()) {
      const due = (await deps.storage.read((uow) => uow.reservations.expiredMakers(now, BATCH + tried.size))).filter((maker) => !tried.has(maker.tokenId));
      if (due.length === 0) break;
      for (const { tenantId, tokenId } of due) {
        tried.add(tokenId);
        await isolated(report.errors, `bookings of expired token ${tokenId}`, async () => {
          const released = await deps.storage.transaction(async (uow) => {
            // the account first, as a rental takes it: a start in flight either committed before this, or sees it cancelled
            await uow.accounts.lock(tenantId, now);
            return releaseBookingsOf(uow, tenantId, [tokenId], now);
          });
          report.reservationsCancelled += released.reservations;
        });
      }
    }
  },
});
