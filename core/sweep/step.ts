import type { Budget } from '../budget.ts';
import type { StepReport } from './pass-report.ts';

/** What every step of a pass is given: the pass's budget of real time (core/budget.ts). */
export interface Pass {
  budget: Budget;
}

/**
 * One step of a sweep pass, each in its own module under core/sweep/steps, all of one shape: its name (in the pass
 * report's `steps`, its errors and the metrics' `step` label), what it does in a pass, and its typed report, which
 * the conductor adds to the pass report when the step ends (core/sweep/pass-report.ts).
 *
 * The step fills a report the conductor hands it rather than answering one: what a step did before it failed (hour
 * blocks paid in earlier rounds, a breaker tripped before the machines could be stopped) is counted all the same,
 * and its failure is recorded after its items' errors.
 */
export interface SweepStep<R extends StepReport = StepReport> {
  readonly name: string;
  /** The step's report before it ran: every count it has at 0, no errors. */
  report(): R;
  /** What the step does in a pass. A throw is recorded as `<name>: <message>` and the pass carries on. */
  run(report: R, pass: Pass): Promise<void>;
}

/** A step whose report is errors alone (the steps whose items are not counted). */
export const errorsOnly = (): StepReport => ({ errors: [] });
