import type { Budget } from '../../budget.ts';
import type { PassCounts } from '../pass-report.ts';
import type { SweepStep } from '../step.ts';

/**
 * What the step needs of reservations: rent those whose start has come (core/reservations), taken one by one from
 * the queue every runner shares, until none is left or the budget ends.
 */
export interface ReservationStarts {
  startDue(budget?: Budget): Promise<{ started: number; failed: number; errors: string[]; leftRunning?: number }>;
}

export type ReservationsReport = Pick<PassCounts, 'reservationsStarted' | 'reservationsFailed' | 'startsLeftRunning'> & { errors: string[] };

/** `reservations`: due reservations are rented (a failed one charges nothing); starts in flight at the budget's end go on. */
export const reservations = (starts: ReservationStarts): SweepStep<ReservationsReport> => ({
  name: 'reservations',
  report: () => ({ reservationsStarted: 0, reservationsFailed: 0, startsLeftRunning: 0, errors: [] }),
  async run(report, { budget }) {
    const started = await starts.startDue(budget);
    report.reservationsStarted += started.started;
    report.reservationsFailed += started.failed;
    report.startsLeftRunning += started.leftRunning ?? 0;
    report.errors.push(...started.errors);
  },
});
