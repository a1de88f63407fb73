import type { AutoRechargeReport } from '../../billing/payments/charge-attempt.ts';
import type { Clock } from '../../ports/clock.ts';
import type { Storage } from '../../ports/storage.ts';
import type { PassCounts } from '../pass-report.ts';
import type { SweepStep } from '../step.ts';
import { payDueBlocks } from './hour-blocks.ts';

/** What the step needs of payments: one auto-recharge run over the accounts under their threshold. */
export interface AutoRecharger {
  runAutoRecharge(): Promise<AutoRechargeReport>;
}

export type AutoRechargeStepReport = Pick<PassCounts, 'blocksPaid'> & { errors: string[]; autoRecharge?: AutoRechargeReport };

/**
 * `auto-recharge`: accounts under their threshold, or with a block due that the balance could not pay, are charged
 * on their saved card; when any payment succeeded, the blocks still owed are paid at once, before a breaker looks.
 */
export const autoRecharge = (deps: { storage: Storage; clock: Clock; payments: AutoRecharger }): SweepStep<AutoRechargeStepReport> => ({
  name: 'auto-recharge',
  report: () => ({ blocksPaid: 0, errors: [] }),
  async run(report) {
    report.autoRecharge = await deps.payments.runAutoRecharge();
    report.errors.push(...report.autoRecharge.errors);
    if (report.autoRecharge.succeeded > 0) await payDueBlocks(deps, report);
  },
});
