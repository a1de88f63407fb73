import { accountFigures, billedNow } from '../../billing/account-view.ts';
import { isolated } from '../../billing/isolated.ts';
import { breakerEvent } from '../../events/account-events.ts';
import type { Clock } from '../../ports/clock.ts';
import type { Storage } from '../../ports/storage.ts';
import type { PassCounts } from '../pass-report.ts';
import type { SweepStep } from '../step.ts';
import type { SweepRentals } from '../sweep-rentals.ts';

export type BreakersReport = Pick<PassCounts, 'breakersTripped'> & { errors: string[] };

/**
 * `breakers`: accounts whose funds ran out under running machines, or that burn beyond their maximum, are paused.
 * The decision is taken under the account's lock, so a deposit that lands meanwhile saves the machines. The machines
 * of every account tripped are then stopped together, a few at a time per provider.
 */
export const breakers = (deps: { storage: Storage; clock: Clock; rentals: SweepRentals; defaultMaxBurnCentsPerHour: number | null }): SweepStep<BreakersReport> => ({
  name: 'breakers',
  report: () => ({ breakersTripped: 0, errors: [] }),
  async run(report) {
    const now = deps.clock.now();
    const candidates = await deps.storage.read((uow) => uow.sweep.breakerCandidates(now, deps.defaultMaxBurnCentsPerHour));
    const tripped: string[] = [];
    for (const tenantId of candidates) {
      await isolated(report.errors, `breaker of ${tenantId}`, async () => {
        const trip = await deps.storage.transaction(async (uow) => {
          const account = await uow.accounts.lock(tenantId, now);
          if (!account) return false;
          const instances = await uow.instances.live(tenantId);
          if (billedNow(instances).length === 0) return false;
          // machines left running under a pause (a stop that could not reach every one) are stopped again
          if (account.pause) return true;
          const figures = accountFigures(account.balanceCents, instances, now, { stopsAt: false, unsettledUsageCents: await uow.usage.unsettledCents(tenantId) });
          const maxBurn = account.maxBurnCentsPerHour ?? deps.defaultMaxBurnCentsPerHour;
          const exhausted = figures.owedCents > 0 && figures.availableCents <= 0;
          const runaway = maxBurn !== null && figures.burnCentsPerHour > maxBurn;
          if (!exhausted && !runaway) return false;
          const reason = exhausted
            ? `funds exhausted: ${figures.owedCents} cents owed, ${figures.availableCents} available`
            : `burn ${figures.burnCentsPerHour} cents/hour over the maximum of ${maxBurn}`;
          await uow.accounts.setPause(tenantId, { kind: 'breaker', reason, at: now });
          await uow.events.emit(breakerEvent(tenantId, reason, billedNow(instances).length, now));
          report.breakersTripped++;
          return true;
        });
        if (trip) tripped.push(tenantId);
      });
    }
    if (tripped.length === 0) return;
    const stopped = await deps.rentals.terminateAllOf(tripped);
    report.errors.push(...stopped.errors.map((error) => `breaker: ${error}`));
  },
});
