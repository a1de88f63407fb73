import type { StepReport } from '../pass-report.ts';
import { errorsOnly, type SweepStep } from '../step.ts';

/** What the step needs of events: balance.low told to accounts whose funds fell under an hour of their machines (core/events/balance-alerts.ts). */
export interface LowBalanceAlerts {
  tellLow(): Promise<{ told: number; errors: string[] }>;
}

/** `low balances`: accounts whose funds fell under an hour of their machines are told (balance.low); only failures are reported. */
export const lowBalances = (alerts: LowBalanceAlerts): SweepStep<StepReport> => ({
  name: 'low balances',
  report: errorsOnly,
  async run(report) {
    report.errors.push(...(await alerts.tellLow()).errors);
  },
});
