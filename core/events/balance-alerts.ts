import { accountFigures } from '../billing/account-view.ts';
import { isolated } from '../billing/isolated.ts';
import type { Clock } from '../ports/clock.ts';
import type { Storage } from '../ports/storage.ts';
import { balanceLowEvent } from './account-events.ts';

/** Funds are low when they cover less than this many hours of the running machines. */
const LOW_HOURS = 1;

/**
 * balance.low, a step of the sweep: an account whose available funds cover less than an hour of
 * its running machines (or fall under its auto-recharge threshold) is told once, under its lock, with the mark
 * that it was told in the same transaction; the mark clears once funds are back (or no machine runs), so the
 * next fall is told again.
 */
export class BalanceAlerts {
  private readonly storage: Storage;
  private readonly clock: Clock;

  constructor(deps: { storage: Storage; clock: Clock }) {
    this.storage = deps.storage;
    this.clock = deps.clock;
  }

  async tellLow(): Promise<{ told: number; errors: string[] }> {
    const report = { told: 0, errors: [] as string[] };
    const candidates = await this.storage.read((uow) => uow.accounts.lowBalanceCandidates(this.clock.now(), LOW_HOURS));
    for (const tenantId of candidates) {
      await isolated(report.errors, `low balance of ${tenantId}`, async () => {
        const told = await this.storage.transaction(async (uow) => {
          const now = this.clock.now();
          const account = await uow.accounts.lock(tenantId, now);
          if (!account) return false;
          const figures = accountFigures(account.balanceCents, await uow.instances.live(tenantId), now, { stopsAt: false, unsettledUsageCents: await uow.usage.unsettledCents(tenantId) });
          const threshold = Math.max(figures.burnCentsPerHour * LOW_HOURS, account.autoRecharge.enabled ? account.autoRecharge.thresholdCents : 0);
          const low = figures.runningMachines > 0 && figures.availableCents < threshold;
          const marked = await uow.accounts.balanceLowSince(tenantId);
          if (low === (marked !== null)) return false;
          await uow.accounts.markBalanceLow(tenantId, low ? now : null);
          if (low) await uow.events.emit(balanceLowEvent(tenantId, { ...figures, thresholdCents: threshold }, now));
          return low;
        });
        if (told) report.told++;
      });
    }
    return report;
  }
}
