import { billedNow, removalAt } from '../../billing/account-view.ts';
import { isolated } from '../../billing/isolated.ts';
import { inParallelBy } from '../../in-parallel.ts';
import type { Clock } from '../../ports/clock.ts';
import type { Storage } from '../../ports/storage.ts';
import type { PassCounts } from '../pass-report.ts';
import type { SweepStep } from '../step.ts';
import type { SweepRentals } from '../sweep-rentals.ts';

export type RemovalsReport = Pick<PassCounts, 'removals'> & { errors: string[] };

/**
 * `removals`: machines whose removal time has come (ends_at, a spot claim's end). Billing ends at the removal time
 * (the locked row's), the last block pro rata. The machines are removed upstream a few at a time per provider; past
 * the budget they are left terminating, for the reconciler of the next pass.
 */
export const removals = (deps: { storage: Storage; clock: Clock; rentals: SweepRentals; providerConcurrency: number }): SweepStep<RemovalsReport> => ({
  name: 'removals',
  report: () => ({ removals: 0, errors: [] }),
  async run(report, { budget }) {
    const now = deps.clock.now();
    const due = await deps.storage.read((uow) => uow.instances.dueForRemoval(now));
    await inParallelBy(due, (instance) => instance.provider, deps.providerConcurrency, async (instance) => {
      await isolated(report.errors, `removal of ${instance.id}`, async () => {
        const ended = await deps.storage.transaction(async (uow) => {
          await uow.accounts.lock(instance.tenantId, now);
          const locked = await uow.instances.lock(instance.tenantId, instance.id);
          const at = locked ? removalAt(locked) : null;
          if (!locked || !at || at.getTime() > now.getTime() || billedNow([locked]).length === 0) return null;
          return deps.rentals.endBilling(uow, locked, at, 'terminating');
        });
        if (!ended) return;
        report.removals++;
        if (!budget.over()) await deps.rentals.removeUpstream(ended);
      });
    });
  },
});
