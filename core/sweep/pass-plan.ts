import { Reconciler } from '../billing/reconciler.ts';
import type { Clock } from '../ports/clock.ts';
import type { Metrics } from '../ports/metrics.ts';
import { isVolumeHost, type Provider } from '../ports/providers.ts';
import type { Storage } from '../ports/storage.ts';
import { VolumeReconciler } from '../volumes/volume-reconciler.ts';
import type { SweepStep } from './step.ts';
import type { SweepRentals } from './sweep-rentals.ts';
import { autoRecharge, type AutoRecharger } from './steps/auto-recharge.ts';
import { breakers } from './steps/breakers.ts';
import { budgetMail, budgetStops, type BudgetEnforcement } from './steps/budgets.ts';
import { hourBlocks } from './steps/hour-blocks.ts';
import { expiredQuotes } from './steps/expired-quotes.ts';
import { expiredTokens } from './steps/expired-tokens.ts';
import { idleTokens, type RevocationAnnouncer } from './steps/idle-tokens.ts';
import { lapsedEndpoints } from './steps/lapsed-endpoints.ts';
import { lowBalances, type LowBalanceAlerts } from './steps/low-balances.ts';
import { reconcileMachines } from './steps/reconcile-machines.ts';
import { reconcileVolumes } from './steps/reconcile-volumes.ts';
import { removals } from './steps/removals.ts';
import { recoveries, type RecoveryStarts } from './steps/recoveries.ts';
import { reservations, type ReservationStarts } from './steps/reservations.ts';
import { settleCheckouts, type CheckoutCatchUp } from './steps/settle-checkouts.ts';
import { spotClaims, type SpotClaimPass } from './steps/spot-claims.ts';
import { usage, type UsageSettler } from './steps/usage.ts';
import { volumeStorage, type VolumeStorageMeter } from './steps/volume-storage.ts';
import { volumeWindows, type VolumeWindows } from './steps/volume-windows.ts';

/** What the steps of a pass work with: the services of each area whose work the sweep conducts. */
export interface SweepParts {
  storage: Storage;
  clock: Clock;
  rentals: SweepRentals;
  providers: readonly Provider[];
  payments: CheckoutCatchUp & AutoRecharger;
  metering: UsageSettler;
  volumes: VolumeStorageMeter;
  volumeWindows: VolumeWindows;
  balanceAlerts: LowBalanceAlerts;
  budgets: BudgetEnforcement;
  reservations: ReservationStarts;
  spotClaims: SpotClaimPass;
  tenancy: RevocationAnnouncer;
  recoveries: RecoveryStarts;
  metrics: Metrics;
  provisioningDeadlineMs: number;
  defaultMaxBurnCentsPerHour: number | null;
  providerConcurrency: number;
}

/** The steps of a pass, in the two halves the conductor runs them in (core/sweep/sweep-service.ts). */
export interface PassPlan {
  /** Under the sweep's lock, one runner at a time, one after the other in this order. */
  money: readonly SweepStep[];
  /** After the lock is released, in every runner (whether it held the lock or not), side by side. */
  starts: readonly SweepStep[];
}

/**
 * The order of a pass, in one place (docs/decisions.md, "Slow clouds: money first, deadlines, shared starts"): the
 * money never waits for a create, so every money step is done before any start is taken.
 */
export function passPlan(parts: SweepParts): PassPlan {
  const machines = new Reconciler({ ...parts, providerConcurrency: parts.providerConcurrency });
  const volumes = new VolumeReconciler(parts);
  return {
    money: [
      ...parts.providers.map((provider) => reconcileMachines(machines, provider)),
      // before the storage step: an adopted volume's hours since its creation are recorded this pass
      ...parts.providers.filter(isVolumeHost).map((host) => reconcileVolumes(volumes, host)),
      settleCheckouts(parts.payments),
      // before the removals and the blocks: an idle token's machines end at its deadline, or at a removal time
      // before it; no block past it is taken
      idleTokens(parts),
      // a chain that expired holds no reservation: cancelled before any start of this pass could take one
      expiredTokens(parts),
      removals(parts),
      hourBlocks(parts),
      // before any breaker looks at an account: a recharge pays the blocks still owed
      autoRecharge(parts),
      volumeStorage(parts.volumes),
      // after the storage step: billing never runs past a window's end, whenever the volume goes
      volumeWindows(parts.volumeWindows),
      // after the blocks and any recharge, before the breakers: usage the balance covers is owed no more
      usage(parts.metering),
      breakers(parts),
      // after every step that charges: a budget stop a charge decided is carried out by now
      budgetStops(parts.budgets),
      // what the blocks, the usage and the breakers left is what the account has
      lowBalances(parts.balanceAlerts),
      // no money: housekeeping, once a pass in one runner
      expiredQuotes(parts),
      // webhook endpoints whose registrant's chain expired since the last pass (the idle step disables those of the tokens it ends)
      lapsedEndpoints(parts),
    ],
    starts: [
      reservations(parts.reservations),
      // after the reconcilers (preempted machines ended) and the removals (machines past ends_at)
      spotClaims(parts.spotClaims),
      budgetMail(parts.budgets),
      // after the reconcilers: they mark what is lost, preempted or failed; the replacements are rented here, no lock held
      recoveries(parts.recoveries),
    ],
  };
}
