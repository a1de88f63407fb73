import type { CheckoutReport } from '../../billing/payments/settle-pending-checkouts.ts';
import type { PassCounts } from '../pass-report.ts';
import type { SweepStep } from '../step.ts';

/** What the step needs of payments: the catch-up for checkout webhooks that never came. */
export interface CheckoutCatchUp {
  settlePendingCheckouts(): Promise<CheckoutReport>;
}

export type SettleCheckoutsReport = Pick<PassCounts, 'checkoutsSettled'> & { errors: string[]; conflicts: string[] };

/**
 * `settle checkouts`: every pending card checkout is asked about once (a webhook may have been missed); a paid one
 * is credited, and one paid with another amount is left for an operator as a conflict.
 */
export const settleCheckouts = (payments: CheckoutCatchUp): SweepStep<SettleCheckoutsReport> => ({
  name: 'settle checkouts',
  report: () => ({ checkoutsSettled: 0, errors: [], conflicts: [] }),
  async run(report) {
    const checkouts = await payments.settlePendingCheckouts();
    report.checkoutsSettled += checkouts.settled;
    report.conflicts.push(...checkouts.conflicts);
    report.errors.push(...checkouts.errors);
  },
});
