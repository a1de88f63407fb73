import type { Clock } from '../ports/clock.ts';
import { NO_METRICS, type Metrics } from '../ports/metrics.ts';
import type { Machine, Provider } from '../ports/providers.ts';
import type { Storage } from '../ports/storage.ts';
import { isInstanceId, type Instance } from '../rentals/instance.ts';
import type { RentalService } from '../rentals/rental-service.ts';
import { isolated } from './isolated.ts';
import { createHeld, holderOf } from '../rentals/launch-lease.ts';
import type { Budget } from '../budget.ts';
import { inParallel } from '../in-parallel.ts';

/** What one reconciliation did, added to the sweep's report. */
export interface ReconcileCounts {
  adopted: number;
  failedProvisioning: number;
  goneUpstream: number;
  orphansTerminated: number;
  terminationsRetried: number;
  /** Spot machines the provider took back: billing ended, the machine removed. */
  preempted: number;
  errors: string[];
}

const BILLED = new Set(['provisioning', 'running', 'rebooting']);
const isGone = (machine: Machine): boolean => machine.status === 'terminated' || machine.status === 'failed';

/**
 * Brings our records and each provider's machines together (docs/decisions.md, "Accounts, ledger, rentals"):
 * adopts machines of ambiguous creates by their label, fails rentals whose machine never started (full refund),
 * closes machines gone upstream, retries terminations, and removes labelled machines nobody pays for.
 *
 * Every decision is taken from our records read after the provider's listing: a machine in the listing
 * was created after its instance was committed, so a rental made while this runs is never taken for an
 * orphan; and an orphan's label is checked again under its row lock before the machine is removed.
 */
export class Reconciler {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly rentals: Pick<RentalService, 'endBilling' | 'removeUpstream' | 'launchingHere'>;
  private readonly provisioningDeadlineMs: number;
  private readonly metrics: Metrics;
  private readonly concurrency: number;

  constructor(deps: { storage: Storage; clock: Clock; rentals: Pick<RentalService, 'endBilling' | 'removeUpstream' | 'launchingHere'>; provisioningDeadlineMs: number; metrics?: Metrics; providerConcurrency?: number }) {
    this.metrics = deps.metrics ?? NO_METRICS;
    this.concurrency = Math.max(1, deps.providerConcurrency ?? 4);
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.rentals = deps.rentals;
    this.provisioningDeadlineMs = deps.provisioningDeadlineMs;
  }

  /**
   * One provider: its listing, then each instance that needs a decision and each orphan, a few at a time (the
   * provider's calls in parallel, within its pacing). Past `budget` no further item is taken up: the next pass
   * does what is left (every decision is taken again from the records then).
   */
  async reconcile(provider: Provider, counts: ReconcileCounts, budget?: Budget): Promise<void> {
    const machines = await provider.listMachines();
    const live = await this.storage.read((uow) => uow.instances.liveAt(provider.name));
    const byLabel = new Map(machines.filter((m) => m.label).map((m) => [m.label!, m]));
    const seen: string[] = [];
    const undecided: { instance: Instance; machine: Machine | null }[] = [];
    for (const instance of live) {
      const machine = byLabel.get(instance.id) ?? null;
      // the common case, a running machine still there: recorded for all of them in one statement
      if (machine && instance.status === 'running' && instance.machineId === machine.machineId && machine.status === 'running') seen.push(instance.id);
      else undecided.push({ instance, machine });
    }
    await this.storage.transaction((uow) => uow.sweep.markSeen(seen, this.clock.now()));
    await inParallel(undecided, this.concurrency, async ({ instance, machine }) => {
      if (budget?.over()) return;
      await isolated(counts.errors, `${provider.name}: instance ${instance.id}`, () => this.reconcileOne(provider, instance, machine, counts));
    });
    const known = new Set(live.map((instance) => instance.id));
    const orphans = machines.filter((machine) => isInstanceId(machine.label) && !known.has(machine.label) && machine.status !== 'terminated');
    await inParallel(orphans, this.concurrency, async (machine) => {
      if (budget?.over()) return;
      await isolated(counts.errors, `${provider.name}: orphan ${machine.machineId}`, () => this.removeOrphan(provider, machine, counts));
    });
  }

  private async reconcileOne(provider: Provider, instance: Instance, listed: Machine | null, counts: ReconcileCounts): Promise<void> {
    if (instance.status === 'terminating') {
      const target = instance.machineId ?? listed?.machineId ?? null;
      if (target) {
        const done = await this.rentals.removeUpstream({ ...instance, machineId: target });
        if (done.status === 'terminated') counts.terminationsRetried++;
      } else {
        // ended before any machine was made: nothing upstream carries its label
        await this.update(instance, (locked) => (locked.status === 'terminating' ? { ...locked, status: 'terminated' } : locked));
      }
      return;
    }
    // not in the listing: asked by its id (a transient error is retried next pass, never taken for "gone")
    const machine = listed ?? (instance.machineId ? await provider.getMachine(instance.machineId) : null);
    if (machine?.status === 'preempted') {
      const ended = await this.endPreempted(instance);
      if (ended) counts.preempted++;
      // it may still exist upstream, stopped (its disk billed): removed now, or by the terminating branch next pass
      if (ended?.status === 'terminating') await this.rentals.removeUpstream({ ...ended, machineId: ended.machineId ?? machine.machineId });
      return;
    }
    const now = this.clock.now();
    const pastDeadline = now.getTime() - instance.createdAt.getTime() >= this.provisioningDeadlineMs;
    const neverStarted = instance.startedAt === null && machine?.status !== 'running';

    if (machine && !isGone(machine) && !(neverStarted && pastDeadline)) {
      const running = machine.status === 'running';
      await this.update(instance, (locked) =>
        BILLED.has(locked.status)
          ? {
              ...locked,
              machineId: locked.machineId ?? machine.machineId,
              status: running && (locked.status === 'provisioning' || locked.status === 'rebooting') ? 'running' : locked.status,
              startedAt: running ? (locked.startedAt ?? now) : locked.startedAt,
              sshHost: machine.sshHost ?? locked.sshHost,
              sshPort: machine.sshPort ?? locked.sshPort,
              sshUser: machine.sshUser ?? locked.sshUser ?? null,
              lastSeenAt: now,
            }
          : locked,
      );
      if (instance.machineId === null) counts.adopted++;
      return;
    }
    if (neverStarted) {
      // never ran: nothing is owed. Without any machine, wait out the deadline (an ambiguous create may still land),
      // unless its create died with its process: nobody will record a machine for it
      if (!machine && instance.machineId === null && !pastDeadline) {
        if (instance.launch === null && !this.rentals.launchingHere(instance.id) && (await this.failAbandoned(instance))) {
          counts.failedProvisioning++;
          this.metrics.rentalFailed(provider.name, 'abandoned');
        }
        return;
      }
      const target = instance.machineId ?? machine?.machineId ?? null;
      if (await this.end(instance, 'failed')) {
        counts.failedProvisioning++;
        this.metrics.rentalFailed(provider.name, 'never_started');
      }
      if (target && machine?.status !== 'terminated') await provider.terminateMachine(target);
      return;
    }
    // it ran, and the provider no longer has it: billing ends when we last saw it
    if (await this.end(instance, 'gone')) counts.goneUpstream++;
    if (machine?.status === 'failed') await provider.terminateMachine(machine.machineId);
  }

  /** A machine carrying one of our ids whose rental is over (or never existed): removed, after a check under lock. */
  private async removeOrphan(provider: Provider, machine: Machine, counts: ReconcileCounts): Promise<void> {
    const billed = await this.storage.transaction(async (uow) => {
      const record = await uow.instances.lockById(machine.label!);
      return record !== null && BILLED.has(record.status);
    });
    if (billed) return; // a rental that began after our read: the next pass adopts it
    await provider.terminateMachine(machine.machineId);
    counts.orphansTerminated++;
  }

  /**
   * A create nobody holds any more (docs/decisions.md, "Crash anywhere, lose nothing"): its process is known dead, or
   * its lease ran out, so the process that committed it died (or hung) before the provider answered. Taken from our records under the row's lock: still
   * provisioning, no machine and no answer recorded. Failed with a full refund; a machine its create made after all
   * carries the label of a rental that is over, and the next pass removes it as an orphan.
   */
  private async failAbandoned(instance: Instance): Promise<boolean> {
    // asked before the transaction (on PGlite a transaction must not wait on another query): a dead holder stays dead
    if (await createHeld(this.storage, instance.id, this.clock.now())) return false;
    const dead = await this.storage.read((uow) => uow.launchLeases.of(instance.id));
    return this.storage.transaction(async (uow) => {
      const now = this.clock.now();
      await uow.accounts.lock(instance.tenantId, now);
      const locked = await uow.instances.lock(instance.tenantId, instance.id);
      if (!locked || locked.status !== 'provisioning' || locked.machineId !== null || locked.launch !== null) return false;
      const holder = await holderOf(uow, locked.id, now);
      if (holder !== null && holder !== dead?.holder) return false;
      await uow.launchLeases.release(locked.id);
      await uow.recoveries.markDue(locked.id, now);
      await this.rentals.endBilling(uow, locked, now, 'failed', 'the create died with the process that made it (no machine was found upstream); the charge was refunded in full');
      return true;
    });
  }

  /** Ends a rental: `failed` costs nothing; `gone` is billed up to when the machine was last seen. */
  private async end(instance: Instance, how: 'failed' | 'gone'): Promise<boolean> {
    return this.storage.transaction(async (uow) => {
      await uow.accounts.lock(instance.tenantId, this.clock.now());
      const locked = await uow.instances.lock(instance.tenantId, instance.id);
      if (!locked || !BILLED.has(locked.status)) return false;
      // the starts half of the pass rents its replacement, if it asked for one (docs/decisions.md, "Managed recovery")
      await uow.recoveries.markDue(locked.id, this.clock.now());
      if (how === 'failed') {
        await this.rentals.endBilling(uow, locked, this.clock.now(), 'failed', 'the machine never started at the provider; the charge was refunded in full');
        return true;
      }
      const ended = await this.rentals.endBilling(uow, locked, locked.lastSeenAt ?? locked.createdAt, 'terminating');
      await uow.instances.update({ ...ended, status: 'terminated' });
      return true;
    });
  }

  /**
   * A spot machine the provider took back: billed to the started minute up to when it was last seen running (no
   * minimum), the rest of its paid block refunded, marked preempted; a machine that never ran costs nothing.
   */
  private async endPreempted(instance: Instance): Promise<Instance | null> {
    return this.storage.transaction(async (uow) => {
      const now = this.clock.now();
      await uow.accounts.lock(instance.tenantId, now);
      const locked = await uow.instances.lock(instance.tenantId, instance.id);
      if (!locked || !BILLED.has(locked.status)) return null;
      const ended = await this.rentals.endBilling(uow, locked, locked.lastSeenAt ?? locked.createdAt, 'terminating', 'preempted: the provider took the spot machine back');
      const preempted: Instance = { ...ended, preemptedAt: now };
      await uow.instances.update(preempted);
      await uow.recoveries.markDue(locked.id, now);
      return preempted;
    });
  }

  private async update(instance: Instance, change: (locked: Instance) => Instance): Promise<void> {
    await this.storage.transaction(async (uow) => {
      const locked = await uow.instances.lock(instance.tenantId, instance.id);
      if (locked) await uow.instances.update(change(locked));
    });
  }
}
