import type { AutoRechargeReport } from '../billing/payments/charge-attempt.ts';
import type { SweepPassOutcome } from '../ports/metrics.ts';

/** What the steps of a pass count; each count of the pass report is the sum of its steps' (core/sweep/steps). */
export interface PassCounts {
  blocksPaid: number;
  removals: number;
  breakersTripped: number;
  adopted: number;
  failedProvisioning: number;
  goneUpstream: number;
  orphansTerminated: number;
  terminationsRetried: number;
  /** Spot machines found preempted: billing ended to the started minute, the rest refunded. */
  preempted: number;
  /** Volumes whose create had no answer, found upstream by their label and adopted (billed from their creation). */
  volumesAdopted: number;
  /** Volumes whose create had no answer and that were never found upstream by the deadline: failed, nothing billed. */
  volumesFailed: number;
  /** Upstream volumes carrying one of our ids that nobody pays for, deleted. */
  volumeOrphansDeleted: number;
  /** Volumes whose window (hours) ended, deleted. */
  volumesExpired: number;
  /** Card checkouts settled by asking the processor (missed webhooks). */
  checkoutsSettled: number;
  /** Usage records posted to the ledger. */
  usageSettled: number;
  /** Hours of volume storage recorded as usage this pass. */
  volumeHoursRecorded: number;
  /** Reservations rented this pass, and those that could not be (nothing charged). */
  reservationsStarted: number;
  reservationsFailed: number;
  /** Spot machines rented for claims this pass, and claims whose hours ended. */
  spotClaimsRented: number;
  spotClaimsExpired: number;
  /** Replacements rented for machines with managed recovery that were lost, preempted or failed; and those that could not be. */
  machinesRecovered: number;
  recoveriesFailed: number;
  /** Starts still waiting on their cloud when the budget ended: they go on by themselves. */
  startsLeftRunning: number;
  /** Tokens ended by their dead-man switch (each with its subtree, machines, reservations and spot claims). */
  idleTimeouts: number;
  /** Unused quotes a day past their expiry, deleted. */
  quotesPruned: number;
  /** Scheduled reservations cancelled because the token that made them (or one that issued it) expired. */
  reservationsCancelled: number;
}

/**
 * What one step reports: some of the pass's counts, the items that failed (retried next pass), and those left
 * for an operator. A step's own report type names which counts it has (e.g. `Pick<PassCounts, 'blocksPaid'>`).
 */
export type StepReport = Partial<PassCounts> & {
  errors: string[];
  conflicts?: string[];
  autoRecharge?: AutoRechargeReport;
};

/** One step of a pass, in real time: when it began (milliseconds into the pass) and how long it took. */
export interface StepTiming {
  name: string;
  startedMs: number;
  durationMs: number;
}

/** A pass, as POST /v1/operator/sweep answers it and the sweep daemon logs it. */
export interface SweepReport extends PassCounts {
  /** false when another runner held the money steps' lock: only the start steps (shared work) ran here. */
  ran: boolean;
  at: Date;
  autoRecharge: AutoRechargeReport;
  /** Items recorded for an operator to decide (a checkout paid with another amount). */
  conflicts: string[];
  /** Items that failed this pass (retried next pass); the other items carried on. */
  errors: string[];
  /** The pass lost its lock (its database session died) and stopped before its next step. */
  lockLost: boolean;
  /** Each step that ran, in order, with its real time. */
  steps: StepTiming[];
  /** The pass's real time, from its start to its answer. */
  durationMs: number;
  /** Calls to providers this process stopped waiting for at their deadline while the pass ran. */
  callsCut: number;
  /** How long the oldest due start not yet taken has waited, at the pass's end, in seconds; null: none. */
  oldestDueStartSeconds: number | null;
}

const COUNTS = [
  'blocksPaid',
  'removals',
  'breakersTripped',
  'adopted',
  'failedProvisioning',
  'goneUpstream',
  'orphansTerminated',
  'terminationsRetried',
  'preempted',
  'volumesAdopted',
  'volumesFailed',
  'volumeOrphansDeleted',
  'volumesExpired',
  'checkoutsSettled',
  'usageSettled',
  'volumeHoursRecorded',
  'reservationsStarted',
  'reservationsFailed',
  'spotClaimsRented',
  'spotClaimsExpired',
  'machinesRecovered',
  'recoveriesFailed',
  'startsLeftRunning',
  'idleTimeouts',
  'quotesPruned',
  'reservationsCancelled',
] as const satisfies readonly (keyof PassCounts)[];

/** Adds a step's report to the pass's: counts summed, errors and conflicts appended in the order they came. */
export function addStepReport(pass: SweepReport, step: StepReport): void {
  for (const key of COUNTS) pass[key] += step[key] ?? 0;
  if (step.autoRecharge) {
    pass.autoRecharge = {
      attempted: pass.autoRecharge.attempted + step.autoRecharge.attempted,
      succeeded: pass.autoRecharge.succeeded + step.autoRecharge.succeeded,
      failed: pass.autoRecharge.failed + step.autoRecharge.failed,
      errors: [...pass.autoRecharge.errors, ...step.autoRecharge.errors],
    };
  }
  pass.conflicts.push(...(step.conflicts ?? []));
  pass.errors.push(...step.errors);
}

export const emptyReport = (at: Date): SweepReport => ({
  ran: true,
  at,
  blocksPaid: 0,
  removals: 0,
  breakersTripped: 0,
  adopted: 0,
  failedProvisioning: 0,
  goneUpstream: 0,
  orphansTerminated: 0,
  terminationsRetried: 0,
  preempted: 0,
  volumesAdopted: 0,
  volumesFailed: 0,
  volumeOrphansDeleted: 0,
  volumesExpired: 0,
  checkoutsSettled: 0,
  usageSettled: 0,
  volumeHoursRecorded: 0,
  reservationsStarted: 0,
  reservationsFailed: 0,
  spotClaimsRented: 0,
  spotClaimsExpired: 0,
  machinesRecovered: 0,
  recoveriesFailed: 0,
  autoRecharge: { attempted: 0, succeeded: 0, failed: 0, errors: [] },
  conflicts: [],
  errors: [],
  lockLost: false,
  steps: [],
  durationMs: 0,
  callsCut: 0,
  startsLeftRunning: 0,
  idleTimeouts: 0,
  quotesPruned: 0,
  reservationsCancelled: 0,
  oldestDueStartSeconds: null,
});

/** What a pass did, item by item, for monitoring (sweep_items_total). */
export const passOutcome = (report: SweepReport): SweepPassOutcome => ({
  ran: report.ran,
  lockLost: report.lockLost,
  errors: report.errors.length,
  oldestDueStartSeconds: report.oldestDueStartSeconds,
  items: {
    blocks_paid: report.blocksPaid,
    removals: report.removals,
    breakers_tripped: report.breakersTripped,
    adopted: report.adopted,
    failed_provisioning: report.failedProvisioning,
    gone_upstream: report.goneUpstream,
    orphans_terminated: report.orphansTerminated,
    terminations_retried: report.terminationsRetried,
    checkouts_settled: report.checkoutsSettled,
    usage_settled: report.usageSettled,
    volume_hours_recorded: report.volumeHoursRecorded,
    reservations_started: report.reservationsStarted,
    reservations_failed: report.reservationsFailed,
    auto_recharges_succeeded: report.autoRecharge.succeeded,
    auto_recharges_failed: report.autoRecharge.failed,
    preempted: report.preempted,
    volumes_adopted: report.volumesAdopted,
    volumes_failed: report.volumesFailed,
    volume_orphans_deleted: report.volumeOrphansDeleted,
    volumes_expired: report.volumesExpired,
    spot_claims_rented: report.spotClaimsRented,
    spot_claims_expired: report.spotClaimsExpired,
    idle_timeouts: report.idleTimeouts,
    quotes_pruned: report.quotesPruned,
    reservations_cancelled: report.reservationsCancelled,
    machines_recovered: report.machinesRecovered,
    recoveries_failed: report.recoveriesFailed,
    conflicts: report.conflicts.length,
    calls_cut: report.callsCut,
  },
});
