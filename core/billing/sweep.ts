import { messageOf } from '../errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { Machine, Provider } from '../ports/providers.ts';
import type { Storage } from '../ports/storage.ts';
import type { AutoRechargeReport } from './payments-service.ts';
import { isInstanceId, type Instance } from '../rentals/instance.ts';
import type { RentalService } from '../rentals/rental-service.ts';
import { accountFigures, billedNow, removalAt } from './account-view.ts';

export interface SweepSettings {
  /** A rental whose machine the provider never showed is failed and refunded after this long. */
  provisioningDeadlineMs: number;
  /** Runaway protection for accounts without their own maximum, in cents per hour; null: none. */
  defaultMaxBurnCentsPerHour: number | null;
}

/** The payment steps of a pass: catch missed checkout webhooks, then auto-recharge. */
export interface SweepPayments {
  settlePendingCheckouts(): Promise<number>;
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
  /** Card checkouts settled by asking the processor (missed webhooks). */
  checkoutsSettled: number;
  autoRecharge: AutoRechargeReport;
  /** Providers that could not be asked this pass (retried next pass). */
  errors: string[];
}

/** Enough for a sweep that was stopped for a month; each round pays at most one block per instance. */
const MAX_BLOCK_ROUNDS = 800;

/**
 * The billing sweep (DESIGN.md §7): reconcile with the providers, carry out removals that are due, pay
 * due hourly blocks, and trip breakers where funds ran out. Every step is idempotent, so a pass that
 * crashes half way and runs again charges nothing twice; only one runner at a time, across processes.
 */
export class SweepService {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly rentals: RentalService;
  private readonly providers: readonly Provider[];
  private readonly settings: SweepSettings;
  private readonly payments: SweepPayments | null;

  constructor(deps: { storage: Storage; clock: Clock; rentals: RentalService; providers: readonly Provider[]; settings: SweepSettings; payments?: SweepPayments }) {
    this.payments = deps.payments ?? null;
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.rentals = deps.rentals;
    this.providers = deps.providers;
    this.settings = deps.settings;
  }

  async run(): Promise<SweepReport> {
    const outcome = await this.storage.exclusive('billing-sweep', () => this.pass());
    return outcome.ran ? outcome.result : { ...emptyReport(this.clock.now()), ran: false };
  }

  private async pass(): Promise<SweepReport> {
    const report = emptyReport(this.clock.now());
    await this.reconcile(report);
    if (this.payments) report.checkoutsSettled = await this.payments.settlePendingCheckouts();
    await this.executeRemovals(report);
    await this.payBlocks(report);
    if (this.payments) {
      report.autoRecharge = await this.payments.runAutoRecharge();
      // what a recharge brought in pays the blocks still owed, before any breaker looks at the account
      if (report.autoRecharge.succeeded > 0) await this.payBlocks(report);
    }
    await this.tripBreakers(report);
    return report;
  }

  private async payBlocks(report: SweepReport): Promise<void> {
    for (let round = 0; round < MAX_BLOCK_ROUNDS; round++) {
      const paid = await this.storage.transaction((uow) => uow.sweep.payDueBlocks(this.clock.now()));
      report.blocksPaid += paid;
      if (paid === 0) break;
    }
  }

  /** Removals whose time has come: billing ends at the removal time, the last block pro rata. */
  private async executeRemovals(report: SweepReport): Promise<void> {
    const now = this.clock.now();
    const due = await this.storage.read((uow) => uow.instances.dueForRemoval(now));
    for (const instance of due) {
      const at = removalAt(instance)!;
      const ended = await this.storage.transaction(async (uow) => {
        await uow.accounts.lock(instance.tenantId, now);
        const locked = await uow.instances.lock(instance.tenantId, instance.id);
        if (!locked || (locked.status !== 'provisioning' && locked.status !== 'running' && locked.status !== 'rebooting')) return null;
        return this.rentals.endBilling(uow, locked, at, 'terminating');
      });
      if (ended) {
        report.removals++;
        await this.rentals.removeUpstream(ended);
      }
    }
  }

  /** Accounts whose funds ran out under running machines, or that burn beyond their maximum. */
  private async tripBreakers(report: SweepReport): Promise<void> {
    const now = this.clock.now();
    const candidates = await this.storage.read((uow) => uow.sweep.breakerCandidates(now, this.settings.defaultMaxBurnCentsPerHour));
    for (const tenantId of candidates) {
      const { account, instances } = await this.storage.read(async (uow) => ({ account: await uow.accounts.get(tenantId), instances: await uow.instances.live(tenantId) }));
      if (!account || billedNow(instances).length === 0) continue;
      const figures = accountFigures(account.balanceCents, instances, now, { stopsAt: false });
      const maxBurn = account.maxBurnCentsPerHour ?? this.settings.defaultMaxBurnCentsPerHour;
      const exhausted = figures.owedCents > 0 && figures.availableCents <= 0;
      const runaway = maxBurn !== null && figures.burnCentsPerHour > maxBurn;
      if (!exhausted && !runaway) continue;
      const reason = exhausted
        ? `funds exhausted: ${figures.owedCents} cents owed, ${figures.availableCents} available`
        : `burn ${figures.burnCentsPerHour} cents/hour over the maximum of ${maxBurn}`;
      await this.storage.transaction(async (uow) => {
        const locked = await uow.accounts.lock(tenantId, now);
        if (locked && !locked.pause) await uow.accounts.setPause(tenantId, { kind: 'breaker', reason, at: now });
      });
      await this.rentals.terminateAll(tenantId);
      report.breakersTripped++;
    }
  }

  /** Brings our records and each provider's machines together (DESIGN.md §5 and §7). */
  private async reconcile(report: SweepReport): Promise<void> {
    const live = await this.storage.read((uow) => uow.instances.allLive());
    for (const provider of this.providers) {
      let machines: Machine[];
      try {
        machines = await provider.listMachines();
      } catch (error) {
        report.errors.push(`${provider.name}: ${messageOf(error)}`);
        continue;
      }
      const ours = live.filter((instance) => instance.provider === provider.name);
      const byLabel = new Map(machines.filter((m) => m.label).map((m) => [m.label!, m]));
      const known = new Set(ours.map((instance) => instance.id));
      const seen: string[] = [];
      for (const instance of ours) {
        const machine = byLabel.get(instance.id) ?? null;
        // the common case, a running machine still there: recorded for all of them in one statement
        if (machine && instance.status === 'running' && instance.machineId === machine.machineId && machine.status === 'running') seen.push(instance.id);
        else await this.reconcileOne(provider, instance, machine, report);
      }
      await this.storage.transaction((uow) => uow.sweep.markSeen(seen, this.clock.now()));
      for (const machine of machines) {
        if (!isInstanceId(machine.label) || known.has(machine.label)) continue;
        if (machine.status === 'terminated') continue;
        // ours by its label, with no live rental behind it: nobody pays for it, so it goes
        await provider.terminateMachine(machine.machineId).then(
          () => report.orphansTerminated++,
          (error: unknown) => report.errors.push(`${provider.name}: terminate orphan ${machine.machineId}: ${messageOf(error)}`),
        );
      }
    }
  }

  private async reconcileOne(provider: Provider, instance: Instance, machine: Machine | null, report: SweepReport): Promise<void> {
    const now = this.clock.now();
    if (instance.status === 'terminating') {
      const target = instance.machineId ?? machine?.machineId ?? null;
      if (target) {
        const done = await this.rentals.removeUpstream({ ...instance, machineId: target });
        if (done.status === 'terminated') report.terminationsRetried++;
      } else {
        await this.update(instance, (locked) => ({ ...locked, status: 'terminated' }));
      }
      return;
    }
    if (!machine && instance.machineId) machine = await provider.getMachine(instance.machineId).catch(() => machine);
    if (machine && machine.status !== 'terminated' && machine.status !== 'failed') {
      const running = machine.status === 'running';
      const adopted = instance.machineId === null;
      await this.update(instance, (locked) => ({
        ...locked,
        machineId: locked.machineId ?? machine.machineId,
        status: running && (locked.status === 'provisioning' || locked.status === 'rebooting') ? 'running' : locked.status,
        startedAt: running ? (locked.startedAt ?? now) : locked.startedAt,
        sshHost: machine.sshHost ?? locked.sshHost,
        sshPort: machine.sshPort ?? locked.sshPort,
        lastSeenAt: now,
      }));
      if (adopted) report.adopted++;
      return;
    }
    if (instance.machineId === null) {
      // the create never answered and no machine carries our label: past the deadline, nothing runs
      if (now.getTime() - instance.createdAt.getTime() < this.settings.provisioningDeadlineMs) return;
      await this.end(instance, instance.createdAt, 'failed');
      report.failedProvisioning++;
      return;
    }
    // the provider no longer has the machine: billing ends when we last saw it
    await this.end(instance, instance.lastSeenAt ?? instance.createdAt, 'gone');
    report.goneUpstream++;
  }

  private async end(instance: Instance, at: Date, how: 'failed' | 'gone'): Promise<void> {
    await this.storage.transaction(async (uow) => {
      await uow.accounts.lock(instance.tenantId, this.clock.now());
      const locked = await uow.instances.lock(instance.tenantId, instance.id);
      if (!locked || locked.status === 'terminated' || locked.status === 'failed' || locked.status === 'terminating') return;
      const ended = await this.rentals.endBilling(uow, locked, at, how === 'failed' ? 'failed' : 'terminating');
      if (how === 'gone') await uow.instances.update({ ...ended, status: 'terminated' });
    });
  }

  private async update(instance: Instance, change: (locked: Instance) => Instance): Promise<void> {
    await this.storage.transaction(async (uow) => {
      const locked = await uow.instances.lock(instance.tenantId, instance.id);
      if (locked) await uow.instances.update(change(locked));
    });
  }
}

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
  checkoutsSettled: 0,
  autoRecharge: { attempted: 0, succeeded: 0, failed: 0 },
  errors: [],
});
