import type { StepReport } from '../pass-report.ts';
import { errorsOnly, type SweepStep } from '../step.ts';

/** What the steps need of budgets (core/billing/budgets/budget-watch.ts). */
export interface BudgetEnforcement {
  /** Stops the machines still live under a budget pause. */
  stopPaused(): Promise<{ errors: string[] }>;
  /** Mails the alerts told and not mailed yet. */
  mailAlerts(): Promise<{ errors: string[] }>;
}

/**
 * `budget stops`: machines found live under a budget pause are stopped (the charge that reached the limit paused
 * renting in its transaction; the process that was to stop them after the commit died, or a stop was cut short).
 */
export const budgetStops = (enforcement: BudgetEnforcement): SweepStep<StepReport> => ({
  name: 'budget stops',
  report: errorsOnly,
  async run(report) {
    report.errors.push(...(await enforcement.stopPaused()).errors);
  },
});

/**
 * `budget mail`: the alerts told and not mailed yet leave (after a process died, or an SMTP server failed). Among
 * the start steps, outside the lock: SMTP is a network edge the money steps never wait on, and each alert is
 * taken by one sender at a time, so every runner may take a share.
 */
export const budgetMail = (enforcement: BudgetEnforcement): SweepStep<StepReport> => ({
  name: 'budget mail',
  report: errorsOnly,
  async run(report) {
    report.errors.push(...(await enforcement.mailAlerts()).errors);
  },
});
