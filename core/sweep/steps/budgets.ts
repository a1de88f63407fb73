import type { StepReport } from '../pass-report.ts';
import { errorsOnly, type SweepStep } from '../step.ts';

/** What the step needs of budgets (core/billing/budgets/budget-watch.ts). */
export interface BudgetEnforcement {
  enforce(): Promise<{ errors: string[] }>;
}

/**
 * `budgets`: what a budget's stop or alert left undone after its charge committed (the process died) is done: the
 * machines of accounts paused for their budget are stopped, and the alerts' mail leaves. The charges themselves
 * already told the alerts and paused renting, in their transactions.
 */
export const budgets = (enforcement: BudgetEnforcement): SweepStep<StepReport> => ({
  name: 'budgets',
  report: errorsOnly,
  async run(report) {
    report.errors.push(...(await enforcement.enforce()).errors);
  },
});
