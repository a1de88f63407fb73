import type { Budget } from '../../budget.ts';
import type { PassCounts } from '../pass-report.ts';
import type { SweepStep } from '../step.ts';

/** What the step needs of spot claims: back to pending after a preemption, expired ones ended, pending ones rented (core/spot). */
export interface SpotClaimPass {
  pass(budget?: Budget): Promise<{ rented: number; expired: number; errors: string[]; leftRunning?: number }>;
}

export type SpotClaimsReport = Pick<PassCounts, 'spotClaimsRented' | 'spotClaimsExpired' | 'startsLeftRunning'> & { errors: string[] };

/** `spot-claims`: each claim kept (a spot machine rented while the price is under its bid, ended when its hours are). */
export const spotClaims = (claims: SpotClaimPass): SweepStep<SpotClaimsReport> => ({
  name: 'spot-claims',
  report: () => ({ spotClaimsRented: 0, spotClaimsExpired: 0, startsLeftRunning: 0, errors: [] }),
  async run(report, { budget }) {
    const kept = await claims.pass(budget);
    report.spotClaimsRented += kept.rented;
    report.spotClaimsExpired += kept.expired;
    report.startsLeftRunning += kept.leftRunning ?? 0;
    report.errors.push(...kept.errors);
  },
});
