import type { Clock } from '../ports/clock.ts';
import { NO_METRICS, type Metrics, type SweepPassOutcome, type SweepPassTimer } from '../ports/metrics.ts';
import { isVolumeHost, type Provider } from '../ports/providers.ts';
import type { Lease, Storage } from '../ports/storage.ts';
import type { RentalService } from '../rentals/rental-service.ts';
import type { AutoRechargeReport } from './payments-service.ts';
import { isolated } from './isolated.ts';
import { breakerEvent } from '../events/account-events.ts';
import { Reconciler } from './reconciler.ts';
import { VolumeReconciler } from '../volumes/volume-reconciler.ts';
import { accountFigures, billedNow, removalAt } from './account-view.ts';

export interface SweepSettings {
  /** A rental whose machine never started is failed and refunded in full after this long. */
  provisioningDeadlineMs: number;
  /** Runaway protection for accounts without their own maximum, in cents per hour; null: none. */
  defaultMaxBurnCentsPerHour: number | null;
}

/** What the payment steps of a pass settled, and the conflicts they left for an operator. */
export interface CheckoutReport {
  settled: number;
  conflicts: string[];
  errors: string[];
}

/** The volume step of a pass: each started hour of each volume's storage becomes a usage record, once. */
export interface SweepVolumes {
  recordStorage(): Promise<{ recorded: number; errors: string[] }>;
}

/** The volume windows step of a pass: volumes whose hours ended are deleted (core/volumes/volume-expiry.ts). */
export interface SweepVolumeWindows {
  deleteExpired(): Promise<{ expired: number; errors: string[] }>;
}

/** The metering step of a pass: post unsettled usage records to the ledger while balances cover them. */
export interface SweepMetering {
  settleAll(): Promise<{ settled: number }>;
}

/** The reservation step of a pass: rent every reservation whose start has come (core/reservations). */
export interface SweepReservations {
  startDue(): Promise<{ started: number; failed: number; errors: string[] }>;
}

/** The spot claim step of a pass: claims back to pending after a preemption, expired ones ended, pending ones rented (core/spot). */
export interface SweepSpotClaims {
  pass(): Promise<{ rented: number; expired: number; errors: string[] }>;
}

/** The balance.low step of a pass: tell accounts whose funds fell under an hour of their machines (core/events). */
export interface SweepBalanceAlerts {
  tellLow(): Promise<{ told: number; errors: string[] }>;
}

/** The payment steps of a pass: catch missed checkout webhooks, then auto-recharge. */
export interface SweepPayments {
  settlePendingCheckouts(): Promise<CheckoutReport>;
  runAutoRecharge(): Promise<AutoRechargeReport>;
}

export interface SweepReport {
  /** false when another runner held the sweep; nothing was done. */
  ran: boolean;
  at: Date;
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
  autoRecharge: AutoRechargeReport;
  /** Items recorded for an operator to decide (a checkout paid with another amount). */
  conflicts: string[];
  /** Items that failed this pass (retried next pass); the other items carried on. */
  errors: string[];
  /** The pass lost its lock (its database session died) and stopped before its next step. */
  lockLost: boolean;
}

/** Enough for a sweep that was stopped for a month; each round pays at most one block per instance. */
const MAX_BLOCK_ROUNDS = 800;

type Step = readonly [name: string, run: (report: SweepReport) => Promise<void>];

/**
 * The billing sweep (DESIGN.md §7): reconcile with the providers, settle missed checkouts, carry out
 * removals that are due, pay due hourly blocks, auto-recharge, and trip breakers where funds ran out.
 * Every step is idempotent, so a pass that crashes half way and runs again charges nothing twice; one
 * item's failure is recorded and the others carry on; only one runner at a time, across processes, and a
 * runner that lost its lock stops before its next step.
 */
export class SweepService {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly rentals: RentalService;
  private readonly providers: readonly Provider[];
  private readonly settings: SweepSettings;
  private readonly payments: SweepPayments | null;
  private readonly metering: SweepMetering | null;
  private readonly volumes: SweepVolumes | null;
  private readonly volumeWindows: SweepVolumeWindows | null;
  private readonly reservations: SweepReservations | null;
  private readonly balanceAlerts: SweepBalanceAlerts | null;
  private readonly spotClaims: SweepSpotClaims | null;
  private readonly reconciler: Reconciler;
  private readonly volumeReconciler: VolumeReconciler;
  private readonly metrics: Metrics;

  constructor(deps: {
    storage: Storage;
    clock: Clock;
    rentals: RentalService;
    providers: readonly Provider[];
    settings: SweepSettings;
    payments?: SweepPayments;
    metering?: SweepMetering;
    volumes?: SweepVolumes;
    volumeWindows?: SweepVolumeWindows;
    reservations?: SweepReservations;
    metrics?: Metrics;
    balanceAlerts?: SweepBalanceAlerts;
    spotClaims?: SweepSpotClaims;
  }) {
    this.metrics = deps.metrics ?? NO_METRICS;
    this.reservations = deps.reservations ?? null;
    this.balanceAlerts = deps.balanceAlerts ?? null;
    this.spotClaims = deps.spotClaims ?? null;
    this.volumes = deps.volumes ?? null;
    this.volumeWindows = deps.volumeWindows ?? null;
    this.payments = deps.payments ?? null;
    this.metering = deps.metering ?? null;
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.rentals = deps.rentals;
    this.providers = deps.providers;
    this.settings = deps.settings;
    this.reconciler = new Reconciler({ ...deps, provisioningDeadlineMs: deps.settings.provisioningDeadlineMs });
    this.volumeReconciler = new VolumeReconciler({ ...deps, provisioningDeadlineMs: deps.settings.provisioningDeadlineMs });
  }

  async run(): Promise<SweepReport> {
    const timer = this.metrics.sweepPassStarted();
    const outcome = await this.storage.exclusive('billing-sweep', (lease) => this.pass(lease, timer));
    const report = outcome.ran ? outcome.result : { ...emptyReport(this.clock.now()), ran: false };
    timer.finished(passOutcome(report));
    return report;
  }

  private async pass(lease: Lease, timer: SweepPassTimer): Promise<SweepReport> {
    const report = emptyReport(this.clock.now());
    const steps: Step[] = [
      ...this.providers.map((provider): Step => [`reconcile ${provider.name}`, (r) => this.reconciler.reconcile(provider, r)]),
      // before the storage step: an adopted volume's hours since its creation are recorded this pass
      ...this.providers.filter(isVolumeHost).map((host): Step => [`reconcile volumes ${host.name}`, (r) => this.volumeReconciler.reconcile(host, r)]),
      ['settle checkouts', (r) => this.settleCheckouts(r)],
      ['removals', (r) => this.executeRemovals(r)],
      // before the blocks: a rental started now has paid its first hour already
      ['reservations', (r) => this.startReservations(r)],
      // after the reconcilers (preempted machines ended) and the removals (machines past ends_at)
      ['spot-claims', (r) => this.keepSpotClaims(r)],
      ['hour blocks', (r) => this.payBlocks(r)],
      // before any breaker looks at an account: a recharge pays the blocks still owed
      ['auto-recharge', (r) => this.autoRecharge(r)],
      ['volume storage', (r) => this.recordVolumeStorage(r)],
      // after the storage step: billing never runs past a window's end, whenever the volume goes
      ['volume windows', (r) => this.endVolumeWindows(r)],
      // after the blocks and any recharge, before the breakers: usage the balance covers is owed no more
      ['usage', async (r) => void (r.usageSettled += (await this.metering?.settleAll())?.settled ?? 0)],
      ['breakers', (r) => this.tripBreakers(r)],
      // last: what the blocks, the usage and the breakers left is what the account has
      ['low balances', async (r) => void r.errors.push(...((await this.balanceAlerts?.tellLow())?.errors ?? []))],
    ];
    for (const [name, run] of steps) {
      if (!(await lease.held())) {
        report.lockLost = true;
        report.errors.push(`the sweep lost its lock; stopped before ${name} (the next pass carries on)`);
        break;
      }
      const stepEnded = timer.step(name);
      await isolated(report.errors, name, () => run(report));
      stepEnded();
    }
    return report;
  }

  private async settleCheckouts(report: SweepReport): Promise<void> {
    if (!this.payments) return;
    const checkouts = await this.payments.settlePendingCheckouts();
    report.checkoutsSettled += checkouts.settled;
    report.conflicts.push(...checkouts.conflicts);
    report.errors.push(...checkouts.errors);
  }

  private async startReservations(report: SweepReport): Promise<void> {
    if (!this.reservations) return;
    const started = await this.reservations.startDue();
    report.reservationsStarted += started.started;
    report.reservationsFailed += started.failed;
    report.errors.push(...started.errors);
  }

  private async keepSpotClaims(report: SweepReport): Promise<void> {
    if (!this.spotClaims) return;
    const kept = await this.spotClaims.pass();
    report.spotClaimsRented += kept.rented;
    report.spotClaimsExpired += kept.expired;
    report.errors.push(...kept.errors);
  }

  private async recordVolumeStorage(report: SweepReport): Promise<void> {
    if (!this.volumes) return;
    const storage = await this.volumes.recordStorage();
    report.volumeHoursRecorded += storage.recorded;
    report.errors.push(...storage.errors);
  }

  private async endVolumeWindows(report: SweepReport): Promise<void> {
    if (!this.volumeWindows) return;
    const ended = await this.volumeWindows.deleteExpired();
    report.volumesExpired += ended.expired;
    report.errors.push(...ended.errors);
  }

  private async autoRecharge(report: SweepReport): Promise<void> {
    if (!this.payments) return;
    report.autoRecharge = await this.payments.runAutoRecharge();
    report.errors.push(...report.autoRecharge.errors);
    if (report.autoRecharge.succeeded > 0) await this.payBlocks(report);
  }

  private async payBlocks(report: SweepReport): Promise<void> {
    for (let round = 0; round < MAX_BLOCK_ROUNDS; round++) {
      const paid = await this.storage.transaction((uow) => uow.sweep.payDueBlocks(this.clock.now()));
      report.blocksPaid += paid;
      if (paid === 0) break;
    }
  }

  /** Removals whose time has come: billing ends at the removal time (the locked row's), the last block pro rata. */
  private async executeRemovals(report: SweepReport): Promise<void> {
    const now = this.clock.now();
    const due = await this.storage.read((uow) => uow.instances.dueForRemoval(now));
    for (const instance of due) {
      await isolated(report.errors, `removal of ${instance.id}`, async () => {
        const ended = await this.storage.transaction(async (uow) => {
          await uow.accounts.lock(instance.tenantId, now);
          const locked = await uow.instances.lock(instance.tenantId, instance.id);
          const at = locked ? removalAt(locked) : null;
          if (!locked || !at || at.getTime() > now.getTime() || billedNow([locked]).length === 0) return null;
          return this.rentals.endBilling(uow, locked, at, 'terminating');
        });
        if (!ended) return;
        report.removals++;
        await this.rentals.removeUpstream(ended);
      });
    }
  }

  /**
   * Accounts whose funds ran out under running machines, or that burn beyond their maximum. The decision
   * is taken under the account's lock, so a deposit that lands meanwhile saves the machines.
   */
  private async tripBreakers(report: SweepReport): Promise<void> {
    const now = this.clock.now();
    const candidates = await this.storage.read((uow) => uow.sweep.breakerCandidates(now, this.settings.defaultMaxBurnCentsPerHour));
    for (const tenantId of candidates) {
      await isolated(report.errors, `breaker of ${tenantId}`, async () => {
        const trip = await this.storage.transaction(async (uow) => {
          const account = await uow.accounts.lock(tenantId, now);
          if (!account) return false;
          const instances = await uow.instances.live(tenantId);
          if (billedNow(instances).length === 0) return false;
          // machines left running under a pause (a stop that could not reach every one) are stopped again
          if (account.pause) return true;
          const figures = accountFigures(account.balanceCents, instances, now, { stopsAt: false, unsettledUsageCents: await uow.usage.unsettledCents(tenantId) });
          const maxBurn = account.maxBurnCentsPerHour ?? this.settings.defaultMaxBurnCentsPerHour;
          const exhausted = figures.owedCents > 0 && figures.availableCents <= 0;
          const runaway = maxBurn !== null && figures.burnCentsPerHour > maxBurn;
          if (!exhausted && !runaway) return false;
          const reason = exhausted
            ? `funds exhausted: ${figures.owedCents} cents owed, ${figures.availableCents} available`
            : `burn ${figures.burnCentsPerHour} cents/hour over the maximum of ${maxBurn}`;
          await uow.accounts.setPause(tenantId, { kind: 'breaker', reason, at: now });
          await uow.events.emit(breakerEvent(tenantId, reason, billedNow(instances).length, now));
          report.breakersTripped++;
          return true;
        });
        if (trip) await this.rentals.terminateAll(tenantId);
      });
    }
  }
}

/** What a pass did, item by item, for monitoring (sweep_items_total). */
const passOutcome = (report: SweepReport): SweepPassOutcome => ({
  ran: report.ran,
  lockLost: report.lockLost,
  errors: report.errors.length,
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
    conflicts: report.conflicts.length,
  },
});

const emptyReport = (at: Date): SweepReport => ({
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
  autoRecharge: { attempted: 0, succeeded: 0, failed: 0, errors: [] },
  conflicts: [],
  errors: [],
  lockLost: false,
});
