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
import { Budget } from '../budget.ts';
import { inParallelBy } from '../in-parallel.ts';
import { ALL_INTERACTIVE, type Background } from '../ports/call-priority.ts';
import type { CallDeadlines } from '../upstream/call-deadlines.ts';

export interface SweepSettings {
  /** A rental whose machine never started is failed and refunded in full after this long. */
  provisioningDeadlineMs: number;
  /** Runaway protection for accounts without their own maximum, in cents per hour; null: none. */
  defaultMaxBurnCentsPerHour: number | null;
  /**
   * Real time a pass may take (at most MAX_PASS_BUDGET_MS). Starts not taken by then, and cloud clean-up not yet
   * done, wait for the next pass; starts in flight go on by themselves. Default DEFAULT_PASS_BUDGET_MS: under the
   * minute between scheduled passes, so a pass never makes the next one skip.
   */
  passBudgetMs?: number;
  /** Cloud calls at once per provider in reconcile, removals and breakers (each provider's own pacing still applies). Default 4. */
  providerConcurrency?: number;
}

export const MAX_PASS_BUDGET_MS = 120_000;
export const DEFAULT_PASS_BUDGET_MS = 50_000;
export const DEFAULT_PROVIDER_CONCURRENCY = 4;

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

/**
 * The reservation step of a pass: rent the reservations whose start has come (core/reservations), taken one by one
 * from the queue every runner shares, until none is left or the budget ends.
 */
export interface SweepReservations {
  startDue(budget?: Budget): Promise<{ started: number; failed: number; errors: string[]; leftRunning?: number }>;
}

/** The spot claim step of a pass: claims back to pending after a preemption, expired ones ended, pending ones rented (core/spot). */
export interface SweepSpotClaims {
  pass(budget?: Budget): Promise<{ rented: number; expired: number; errors: string[]; leftRunning?: number }>;
}

/** One step of a pass, in real time: when it began (milliseconds into the pass) and how long it took. */
export interface StepTiming {
  name: string;
  startedMs: number;
  durationMs: number;
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
  /** false when another runner held the money steps' lock: only the start steps (shared work) ran here. */
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
  /** Each step that ran, in order, with its real time. */
  steps: StepTiming[];
  /** The pass's real time, from its start to its answer. */
  durationMs: number;
  /** Calls to providers this process stopped waiting for at their deadline while the pass ran. */
  callsCut: number;
  /** Starts still waiting on their cloud when the budget ended: they go on by themselves. */
  startsLeftRunning: number;
  /** How long the oldest due start not yet taken has waited, at the pass's end, in seconds; null: none. */
  oldestDueStartSeconds: number | null;
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
  private readonly deadlines: CallDeadlines | null;
  private readonly background: Background;
  private readonly passBudgetMs: number;
  private readonly providerConcurrency: number;

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
    /** The deadlines every provider call goes through: the pass reports the calls they cut. */
    deadlines?: CallDeadlines;
    /** Runs the pass's provider calls behind interactive ones in each provider's pacer. */
    background?: Background;
  }) {
    this.metrics = deps.metrics ?? NO_METRICS;
    this.deadlines = deps.deadlines ?? null;
    this.background = deps.background ?? ALL_INTERACTIVE;
    this.passBudgetMs = Math.min(MAX_PASS_BUDGET_MS, deps.settings.passBudgetMs ?? DEFAULT_PASS_BUDGET_MS);
    this.providerConcurrency = Math.max(1, deps.settings.providerConcurrency ?? DEFAULT_PROVIDER_CONCURRENCY);
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
    this.reconciler = new Reconciler({ ...deps, provisioningDeadlineMs: deps.settings.provisioningDeadlineMs, providerConcurrency: this.providerConcurrency });
    this.volumeReconciler = new VolumeReconciler({ ...deps, provisioningDeadlineMs: deps.settings.provisioningDeadlineMs });
  }

  /**
   * One pass: the money steps under the sweep's lock (one runner at a time), then the start steps outside it, in
   * every runner (a runner that found the lock held takes its share of the starts too). The money never waits for
   * a create: reconcile, removals, hour blocks, auto-recharge, storage, usage, breakers and balance alerts are done
   * before any start is taken. The starts stop at the pass's budget; those in flight then go on by themselves.
   */
  async run(): Promise<SweepReport> {
    return this.background(() => this.pass());
  }

  private async pass(): Promise<SweepReport> {
    const budget = Budget.of(this.passBudgetMs);
    const cutBefore = this.deadlines?.cut ?? 0;
    const timer = this.metrics.sweepPassStarted();
    const report = emptyReport(this.clock.now());
    const outcome = await this.storage.exclusive('billing-sweep', (lease) => this.moneySteps(lease, report, timer, budget));
    report.ran = outcome.ran;
    // side by side: a cloud slow to create holds up neither kind of start behind the other
    await Promise.all([
      this.step(report, timer, budget, 'reservations', () => this.startReservations(report, budget)),
      // after the reconcilers (preempted machines ended) and the removals (machines past ends_at)
      this.step(report, timer, budget, 'spot-claims', () => this.keepSpotClaims(report, budget)),
    ]);
    await isolated(report.errors, 'oldest due start', async () => {
      const now = this.clock.now();
      const oldest = await this.storage.read((uow) => uow.sweep.oldestDueStart(now));
      report.oldestDueStartSeconds = oldest === null ? null : Math.max(0, Math.floor((now.getTime() - oldest.getTime()) / 1000));
    });
    report.callsCut = (this.deadlines?.cut ?? 0) - cutBefore;
    report.durationMs = Math.round(budget.elapsedMs());
    timer.finished(passOutcome(report));
    return report;
  }

  private async moneySteps(lease: Lease, report: SweepReport, timer: SweepPassTimer, budget: Budget): Promise<void> {
    const steps: Step[] = [
      ...this.providers.map((provider): Step => [`reconcile ${provider.name}`, (r) => this.reconciler.reconcile(provider, r, budget)]),
      // before the storage step: an adopted volume's hours since its creation are recorded this pass
      ...this.providers.filter(isVolumeHost).map((host): Step => [`reconcile volumes ${host.name}`, (r) => this.volumeReconciler.reconcile(host, r)]),
      ['settle checkouts', (r) => this.settleCheckouts(r)],
      ['removals', (r) => this.executeRemovals(r, budget)],
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
      await this.step(report, timer, budget, name, () => run(report));
    }
  }

  /** Runs one step, its failure recorded in errors, its real time in the report and the metrics. */
  private async step(report: SweepReport, timer: SweepPassTimer, budget: Budget, name: string, run: () => Promise<void>): Promise<void> {
    const startedMs = budget.elapsedMs();
    const stepEnded = timer.step(name);
    await isolated(report.errors, name, run);
    stepEnded();
    report.steps.push({ name, startedMs: Math.round(startedMs), durationMs: Math.round(budget.elapsedMs() - startedMs) });
  }

  private async settleCheckouts(report: SweepReport): Promise<void> {
    if (!this.payments) return;
    const checkouts = await this.payments.settlePendingCheckouts();
    report.checkoutsSettled += checkouts.settled;
    report.conflicts.push(...checkouts.conflicts);
    report.errors.push(...checkouts.errors);
  }

  private async startReservations(report: SweepReport, budget: Budget): Promise<void> {
    if (!this.reservations) return;
    const started = await this.reservations.startDue(budget);
    report.reservationsStarted += started.started;
    report.reservationsFailed += started.failed;
    report.startsLeftRunning += started.leftRunning ?? 0;
    report.errors.push(...started.errors);
  }

  private async keepSpotClaims(report: SweepReport, budget: Budget): Promise<void> {
    if (!this.spotClaims) return;
    const kept = await this.spotClaims.pass(budget);
    report.spotClaimsRented += kept.rented;
    report.spotClaimsExpired += kept.expired;
    report.startsLeftRunning += kept.leftRunning ?? 0;
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

  /**
   * Removals whose time has come: billing ends at the removal time (the locked row's), the last block pro rata. The
   * machines are removed upstream a few at a time per provider; past the budget they are left terminating, for the
   * reconciler of the next pass.
   */
  private async executeRemovals(report: SweepReport, budget: Budget): Promise<void> {
    const now = this.clock.now();
    const due = await this.storage.read((uow) => uow.instances.dueForRemoval(now));
    await inParallelBy(due, (instance) => instance.provider, this.providerConcurrency, async (instance) => {
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
        if (!budget.over()) await this.rentals.removeUpstream(ended);
      });
    });
  }

  /**
   * Accounts whose funds ran out under running machines, or that burn beyond their maximum. The decision
   * is taken under the account's lock, so a deposit that lands meanwhile saves the machines. The machines of
   * every account tripped are then stopped together, a few at a time per provider.
   */
  private async tripBreakers(report: SweepReport): Promise<void> {
    const now = this.clock.now();
    const candidates = await this.storage.read((uow) => uow.sweep.breakerCandidates(now, this.settings.defaultMaxBurnCentsPerHour));
    const tripped: string[] = [];
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
        if (trip) tripped.push(tenantId);
      });
    }
    if (tripped.length === 0) return;
    const stopped = await this.rentals.terminateAllOf(tripped);
    report.errors.push(...stopped.errors.map((error) => `breaker: ${error}`));
  }
}

/** What a pass did, item by item, for monitoring (sweep_items_total). */
const passOutcome = (report: SweepReport): SweepPassOutcome => ({
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
    conflicts: report.conflicts.length,
    calls_cut: report.callsCut,
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
  steps: [],
  durationMs: 0,
  callsCut: 0,
  startsLeftRunning: 0,
  oldestDueStartSeconds: null,
});
