import type { Clock } from '../../ports/clock.ts';
import type { MailAllowance, Mailer } from '../../ports/mailer.ts';
import type { ChargeWatcher, Storage, UnitOfWork } from '../../ports/storage.ts';
import type { RentalService } from '../../rentals/rental-service.ts';
import { mailDueAlerts } from './alert-mail.ts';
import { watchCharges, watchMonth, type Watched } from './watch-charges.ts';

/** Called with what failed in the background, after the request or pass that charged was answered. */
export type BudgetErrorReporter = (error: unknown) => void;

/**
 * Monthly budgets kept (docs/decisions.md, "Monthly budgets"). The storage tells it of every transaction that charged
 * (`charged`, before the commit); once committed, the machines of an account it paused are stopped as an emergency
 * stop stops them, and the alerts' mail leaves, in the background so the request that charged is not held. The sweep
 * does both again each pass (`stopPaused`, `mailAlerts`): whatever a process that died after the commit left undone.
 */
export class BudgetWatch implements ChargeWatcher {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly rentals: Pick<RentalService, 'terminateAllOf'>;
  private readonly mailer: Mailer;
  private readonly allowance: MailAllowance;
  private readonly onError: BudgetErrorReporter;
  private readonly running = new Set<Promise<void>>();

  constructor(deps: {
    storage: Storage;
    clock: Clock;
    rentals: Pick<RentalService, 'terminateAllOf'>;
    mailer: Mailer;
    /** The per-address allowance every mail takes from, alerts included. */
    allowance: MailAllowance;
    onError?: BudgetErrorReporter;
  }) {
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.rentals = deps.rentals;
    this.mailer = deps.mailer;
    this.allowance = deps.allowance;
    this.onError = deps.onError ?? (() => {});
  }

  async charged(uow: UnitOfWork): Promise<(() => void) | null> {
    return this.afterCommit(await watchCharges(uow, this.clock.now()));
  }

  /**
   * What is left once a transaction that told alerts or paused renting for a budget committed: the machines of the
   * accounts it paused stopped, the alerts mailed, in the background. null: nothing to do.
   */
  afterCommit(watched: Watched): (() => void) | null {
    if (watched.stopped.length === 0 && watched.told === 0) return null;
    return () =>
      this.background(async () => {
        const errors: string[] = [];
        if (watched.stopped.length > 0) errors.push(...(await this.rentals.terminateAllOf(watched.stopped)).errors);
        if (watched.told > 0) errors.push(...(await mailDueAlerts(this.mailContext())).errors);
        if (errors.length > 0) throw new Error(`budget: ${errors.join('; ')}`);
      });
  }

  /**
   * The sweep's share: each budget's month is judged again as it stands (first hours in flight at their charge count
   * once their machines are up; refunds count), then machines still live under a budget pause are stopped.
   */
  async stopPaused(): Promise<{ errors: string[] }> {
    await this.storage.transaction((uow) => watchMonth(uow, this.clock.now()));
    const paused = await this.storage.read((uow) => uow.budgets.pausedWithMachines());
    if (paused.length === 0) return { errors: [] };
    return { errors: (await this.rentals.terminateAllOf(paused)).errors.map((error) => `budget stop: ${error}`) };
  }

  /** The sweep's share: alerts not mailed yet leave. */
  async mailAlerts(): Promise<{ errors: string[] }> {
    return { errors: (await mailDueAlerts(this.mailContext())).errors };
  }

  private mailContext() {
    return { storage: this.storage, clock: this.clock, mailer: this.mailer, allowance: this.allowance };
  }

  /** Resolves once the work begun after commits so far is done (tests, a graceful stop). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  private background(work: () => Promise<void>): void {
    const running: Promise<void> = Promise.resolve()
      .then(work)
      .catch((error: unknown) => {
        try {
          this.onError(error);
        } catch {
          // a reporter that throws must not become an unhandled rejection
        }
      })
      .finally(() => this.running.delete(running));
    this.running.add(running);
  }
}
