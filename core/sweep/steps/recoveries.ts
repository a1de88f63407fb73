import type { Budget } from '../../budget.ts';
import type { PassCounts } from '../pass-report.ts';
import type { SweepStep } from '../step.ts';

/**
 * What the step needs of managed recovery (core/recovery): rent a replacement for each machine the reconciler marked
 * lost, preempted or failed at its provider, taken one by one from the queue every runner shares.
 */
export interface RecoveryStarts {
  recoverDue(budget?: Budget): Promise<{ recovered: number; failed: number; errors: string[]; leftRunning?: number }>;
}

export type RecoveriesReport = Pick<PassCounts, 'machinesRecovered' | 'recoveriesFailed' | 'startsLeftRunning'> & { errors: string[] };

/** `recoveries`: a replacement rented for each machine due (or why not recorded on it); replacements in flight at the budget's end go on. */
export const recoveries = (starts: RecoveryStarts): SweepStep<RecoveriesReport> => ({
  name: 'recoveries',
  report: () => ({ machinesRecovered: 0, recoveriesFailed: 0, startsLeftRunning: 0, errors: [] }),
  async run(report, { budget }) {
    const done = await starts.recoverDue(budget);
    report.machinesRecovered += done.recovered;
    report.recoveriesFailed += done.failed;
    report.startsLeftRunning += done.leftRunning ?? 0;
    report.errors.push(...done.errors);
  },
});
