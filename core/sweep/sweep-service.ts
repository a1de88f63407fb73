import { isolated } from '../billing/isolated.ts';
import { crashPoint } from '../crash-points.ts';
import { isDatabaseUnavailable } from '../errors.ts';
import { Budget } from '../budget.ts';
import { ALL_INTERACTIVE, type Background } from '../ports/call-priority.ts';
import type { Clock } from '../ports/clock.ts';
import { NO_METRICS, type Metrics, type SweepPassTimer } from '../ports/metrics.ts';
import type { Provider } from '../ports/providers.ts';
import type { Lease, Storage } from '../ports/storage.ts';
import type { CallDeadlines } from '../upstream/call-deadlines.ts';
import { addStepReport, emptyReport, passOutcome, type SweepReport } from './pass-report.ts';
import { passPlan, type PassPlan } from './pass-plan.ts';
import { DEFAULT_PASS_BUDGET_MS, DEFAULT_PROVIDER_CONCURRENCY, MAX_PASS_BUDGET_MS, type SweepSettings } from './settings.ts';
import type { Pass, SweepStep } from './step.ts';
import type { SweepRentals } from './sweep-rentals.ts';
import type { AutoRecharger } from './steps/auto-recharge.ts';
import type { BudgetEnforcement } from './steps/budgets.ts';
import type { LowBalanceAlerts } from './steps/low-balances.ts';
import type { ReservationStarts } from './steps/reservations.ts';
import type { RevocationAnnouncer } from './steps/idle-tokens.ts';
import type { RecoveryStarts } from './steps/recoveries.ts';
import type { CheckoutCatchUp } from './steps/settle-checkouts.ts';
import type { SpotClaimPass } from './steps/spot-claims.ts';
import type { UsageSettler } from './steps/usage.ts';
import type { VolumeStorageMeter } from './steps/volume-storage.ts';
import type { VolumeWindows } from './steps/volume-windows.ts';

/** The lock that lets one runner at a time, across processes, do the money steps. */
const LOCK = 'billing-sweep';

/**
 * The sweep, every minute: the conductor of the steps in core/sweep/pass-plan.ts (docs/decisions.md, "Slow clouds:
 * money first, deadlines, shared starts"). Every step is idempotent, so a pass that crashes half way and runs again
 * charges nothing twice; one item's failure is recorded and the others carry on; only one runner at a time, across
 * processes, does the money steps, and a runner that lost its lock stops before its next one.
 */
export class SweepService {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly metrics: Metrics;
  private readonly deadlines: CallDeadlines | null;
  private readonly background: Background;
  private readonly passBudgetMs: number;
  private readonly plan: PassPlan;
  private stopping = false;
  private readonly inFlight = new Set<Promise<SweepReport>>();

  constructor(deps: {
    storage: Storage;
    clock: Clock;
    rentals: SweepRentals;
    providers: readonly Provider[];
    settings: SweepSettings;
    payments: CheckoutCatchUp & AutoRecharger;
    metering: UsageSettler;
    volumes: VolumeStorageMeter;
    volumeWindows: VolumeWindows;
    reservations: ReservationStarts;
    balanceAlerts: LowBalanceAlerts;
    budgets: BudgetEnforcement;
    spotClaims: SpotClaimPass;
    /** Tells every replica of the tokens an idle timeout ended. */
    tenancy: RevocationAnnouncer;
    recoveries: RecoveryStarts;
    metrics?: Metrics;
    /** The deadlines every provider call goes through: the pass reports the calls they cut. */
    deadlines?: CallDeadlines;
    /** Runs the pass's provider calls behind interactive ones in each provider's pacer. */
    background?: Background;
  }) {
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.metrics = deps.metrics ?? NO_METRICS;
    this.deadlines = deps.deadlines ?? null;
    this.background = deps.background ?? ALL_INTERACTIVE;
    this.passBudgetMs = Math.min(MAX_PASS_BUDGET_MS, deps.settings.passBudgetMs ?? DEFAULT_PASS_BUDGET_MS);
    this.plan = passPlan({
      ...deps,
      metrics: this.metrics,
      provisioningDeadlineMs: deps.settings.provisioningDeadlineMs,
      defaultMaxBurnCentsPerHour: deps.settings.defaultMaxBurnCentsPerHour,
      providerConcurrency: Math.max(1, deps.settings.providerConcurrency ?? DEFAULT_PROVIDER_CONCURRENCY),
    });
  }

  /**
   * One pass: the money steps under the sweep's lock (one runner at a time), then the start steps outside it, in
   * every runner (a runner that found the lock held takes its share of the starts too). The starts stop at the
   * pass's budget; those in flight then go on by themselves. While the database does not answer the pass is skipped:
   * it throws DATABASE_UNAVAILABLE, counted in the metrics, for the host to log.
   */
  async run(): Promise<SweepReport> {
    const pass = this.background(() => this.pass());
    this.inFlight.add(pass);
    try {
      return await pass;
    } finally {
      this.inFlight.delete(pass);
    }
  }

  /**
   * For a process stopping: a pass in flight ends the money step it is in and stops before the next (each is
   * idempotent: the next pass, anywhere, carries on), takes no start; later passes do nothing. Resolves when every
   * pass in flight has ended.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.allSettled([...this.inFlight]);
  }

  private async pass(): Promise<SweepReport> {
    const pass: Pass = { budget: Budget.of(this.passBudgetMs) };
    const cutBefore = this.deadlines?.cut ?? 0;
    const timer = this.metrics.sweepPassStarted();
    const report = emptyReport(this.clock.now());
    let outcome: { ran: boolean };
    try {
      outcome = await this.storage.exclusive(LOCK, (lease) => this.moneySteps(lease, report, timer, pass));
    } catch (error) {
      // the lock could not even be asked for: the whole pass is skipped (no start either), the next one carries on
      if (isDatabaseUnavailable(error)) timer.finished({ ...passOutcome({ ...report, ran: false }), databaseUnavailable: true });
      throw error;
    }
    report.ran = outcome.ran;
    // side by side: a cloud slow to create holds up neither kind of start behind the other
    if (!this.stopping) await Promise.all(this.plan.starts.map((step) => this.step(step, report, timer, pass)));
    await isolated(report.errors, 'oldest due start', async () => {
      const now = this.clock.now();
      const oldest = await this.storage.read((uow) => uow.sweep.oldestDueStart(now));
      report.oldestDueStartSeconds = oldest === null ? null : Math.max(0, Math.floor((now.getTime() - oldest.getTime()) / 1000));
    });
    report.callsCut = (this.deadlines?.cut ?? 0) - cutBefore;
    report.durationMs = Math.round(pass.budget.elapsedMs());
    timer.finished(passOutcome(report));
    return report;
  }

  private async moneySteps(lease: Lease, report: SweepReport, timer: SweepPassTimer, pass: Pass): Promise<void> {
    for (const step of this.plan.money) {
      if (this.stopping) {
        report.errors.push(`the process is stopping: stopped before ${step.name} (the next pass carries on)`);
        break;
      }
      if (!(await lease.held())) {
        report.lockLost = true;
        report.errors.push(`the sweep lost its lock; stopped before ${step.name} (the next pass carries on)`);
        break;
      }
      await this.step(step, report, timer, pass);
      crashPoint('between-sweep-steps');
    }
  }

  /** Runs one step: its report added to the pass's, its failure recorded after its items' errors, its real time in the report and the metrics. */
  private async step(step: SweepStep, report: SweepReport, timer: SweepPassTimer, pass: Pass): Promise<void> {
    const startedMs = pass.budget.elapsedMs();
    const stepEnded = timer.step(step.name);
    const own = step.report();
    const failed: string[] = [];
    await isolated(failed, step.name, () => step.run(own, pass));
    addStepReport(report, own);
    report.errors.push(...failed);
    stepEnded();
    report.steps.push({ name: step.name, startedMs: Math.round(startedMs), durationMs: Math.round(pass.budget.elapsedMs() - startedMs) });
  }
}
