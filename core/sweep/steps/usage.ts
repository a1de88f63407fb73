import type { PassCounts } from '../pass-report.ts';
import type { SweepStep } from '../step.ts';

/** What the step needs of metering: every tenant's unsettled usage posted in one set-based statement. */
export interface UsageSettler {
  settleAll(): Promise<{ settled: number }>;
}

export type UsageReport = Pick<PassCounts, 'usageSettled'> & { errors: string[] };

/** `usage`: unsettled usage records are posted to the ledger, oldest first, while each balance covers them. */
export const usage = (metering: UsageSettler): SweepStep<UsageReport> => ({
  name: 'usage',
  report: () => ({ usageSettled: 0, errors: [] }),
  async run(report) {
    report.usageSettled += (await metering.settleAll()).settled;
  },
});
