import { DomainError, messageOf } from '../errors.ts';
import type { MarketService } from '../market/market-service.ts';
import type { Clock } from '../ports/clock.ts';
import type { Provider } from '../ports/providers.ts';
import type { Storage } from '../ports/storage.ts';
import type { Instance } from '../rentals/instance.ts';
import type { RentalService } from '../rentals/rental-service.ts';
import type { Adoption } from '../rentals/rent-request.ts';
import { BookingPass } from '../bookings/booking-pass.ts';
import { bookingRentRequest, nodeRefused } from '../bookings/booking-rental.ts';
import { mayRent, type Token } from '../tenancy/token.ts';
import { billingEnded, ledgerNoteOf, rentalKeyOf, type SpotClaim, type SpotClaimView } from './spot-claim.ts';
import { closeClaim } from './spot-claim-service.ts';
import { SpotNodeFinder } from './spot-nodes.ts';
import { drainQueue } from '../in-parallel.ts';
import { NodeChooser, providerNameOf } from '../market/node-chooser.ts';
import { Budget } from '../budget.ts';

/** A pass called outside the sweep (tests, tools) keeps what is open for at most this long. */
const STANDALONE_BUDGET_MS = 120_000;
/** A claim a pass took up and left half way (its process died) is taken up again after this long. */
const STALE_CLAIM_MS = 5 * 60_000;
/** Offers a claim tries in turn in one pass when the one before is gone or dearer than the bid now. */
const MAX_NODES_TRIED = 3;

export interface SpotPassReport {
  rented: number;
  preempted: number;
  expired: number;
  errors: string[];
  /** Claims still waiting on their cloud when the budget ended: each finishes by itself. */
  leftRunning: number;
}

/**
 * The sweep's 'spot-claims' step, after the reconciler has ended preempted machines: an active
 * claim whose machine's billing ended counts a preemption (when it was one) and goes back to pending; a claim
 * whose hours ended expires, its machine removed; a pending claim rents the cheapest spot offer at or under its
 * bid through RentalService.rent as its token (funds, pause, caps), keyed by claim id and rental number, so two
 * sweeps racing rent it once. It never holds two machines: the rental records itself on the claim under the
 * claim's lock, only on a pending claim without a machine.
 */
export class SpotClaimKeeper {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly rentals: RentalService;
  private readonly market: MarketService;
  private readonly providers: readonly Provider[];
  private readonly chooser: NodeChooser;

  constructor(deps: { storage: Storage; clock: Clock; rentals: RentalService; market: MarketService; providers: readonly Provider[] }) {
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.rentals = deps.rentals;
    this.market = deps.market;
    this.providers = deps.providers;
    this.chooser = new NodeChooser(deps.market, deps.providers);
  }

  /**
   * Takes open claims one by one as hands free up, in id order (FOR UPDATE SKIP LOCKED: every runner shares them,
   * and a claim is kept by one runner at a time), until none is left or the budget ends.
   */
  async pass(budget: Budget = Budget.of(STANDALONE_BUDGET_MS)): Promise<SpotPassReport> {
    const report: SpotPassReport = { rented: 0, preempted: 0, expired: 0, errors: [], leftRunning: 0 };
    const finder = new SpotNodeFinder(this.chooser);
    const pass = new BookingPass(this.storage, this.market);
    // each claim once a pass: the cursor only moves forward
    let after = '';
    const drained = await drainQueue<SpotClaimView>({
      // a slow cloud holds its own hands only: the other providers' claims go on beside it
      ...BookingPass.hands(this.providers.length),
      laneOf: (claim) => (claim.status === 'pending' ? providerNameOf(claim.nodeId) : null),
      budget,
      take: async (count, busy) => {
        const now = this.clock.now();
        const taken = await this.storage.autocommit((uow) => uow.spotClaims.claimOpen(now, new Date(now.getTime() - STALE_CLAIM_MS), count, after, busy));
        if (taken.length === 0) return taken;
        after = taken[taken.length - 1]!.id;
        await pass.refreshMarket();
        return taken;
      },
      run: async (claim) => {
        let lastError: string | null = null;
        try {
          lastError = await this.keep(claim, finder, (id) => pass.tokenOf(id), report);
        } catch (error) {
          lastError = messageOf(error);
          report.errors.push(`spot claim ${claim.id}: ${lastError}`);
        }
        try {
          await this.storage.transaction(async (uow) => {
            const locked = await uow.spotClaims.lock(claim.tenantId, claim.id);
            if (locked) await uow.spotClaims.update({ ...locked, claimedAt: null, lastError: locked.status === 'pending' ? lastError : null });
          });
        } catch (error) {
          // left claimed: a later pass takes it up again once its claim is stale
          report.errors.push(`spot claim ${claim.id}: ${messageOf(error)}`);
        }
      },
    });
    report.leftRunning = drained.leftRunning;
    return report;
  }

  /** One claim's turn; answers why it is left without a machine, if it is. */
  private async keep(view: SpotClaimView, finder: SpotNodeFinder, tokenOf: (id: string) => Promise<Token | null>, report: SpotPassReport): Promise<string | null> {
    const now = this.clock.now();
    if (view.endsAt && view.endsAt.getTime() <= now.getTime()) {
      // its machine's window ended at ends_at too: billed to then at most
      const removed = await this.storage.transaction((uow) => closeClaim(uow, this.rentals, view.tenantId, view.id, 'expired', now));
      if (removed) await this.rentals.removeUpstream(removed);
      report.expired++;
      return null;
    }
    let claim: SpotClaim = view;
    if (view.status === 'active') {
      const next = await this.machineEnded(view);
      if (!next) return null;
      if (next.preempted) report.preempted++;
      claim = next.claim;
    }
    if (claim.status !== 'pending') return null;
    const caller = await tokenOf(claim.tokenId);
    if (!caller) return 'the token that made it is gone';
    if (!mayRent(caller, now)) {
      // its credential ended (revoked, expired, timed out) or can no longer rent (its person was demoted): nobody is left
      // to rent for, so it is released, never left pending
      await this.storage.transaction((uow) => closeClaim(uow, this.rentals, claim.tenantId, claim.id, 'released', now));
      return null;
    }
    return this.rent(claim, caller, finder, report);
  }

  /** An active claim whose machine's billing ended goes back to pending, a preemption counted when it was one. */
  private async machineEnded(view: SpotClaimView): Promise<{ claim: SpotClaim; preempted: boolean } | null> {
    return this.storage.transaction(async (uow) => {
      const locked = await uow.spotClaims.lock(view.tenantId, view.id);
      if (!locked || locked.status !== 'active' || !locked.instanceId) return null;
      const machine = await uow.instances.get(locked.tenantId, locked.instanceId);
      if (!machine || !billingEnded(machine.status)) return null;
      const preempted = machine.preemptedAt !== null;
      const claim: SpotClaim = {
        ...locked,
        status: 'pending',
        instanceId: null,
        preemptions: locked.preemptions + (preempted ? 1 : 0),
        endedChargedCents: locked.endedChargedCents + machine.chargedCents,
      };
      await uow.spotClaims.update(claim);
      return { claim, preempted };
    });
  }

  /** Rents the cheapest spot offer at or under the bid that takes it; answers why not when none did. */
  private async rent(first: SpotClaim, caller: Token, finder: SpotNodeFinder, report: SpotPassReport): Promise<string | null> {
    let claim = first;
    const candidates = (await finder.cheapest(claim, Number.MAX_SAFE_INTEGER)).map((node) => node.nodeId);
    // the node asked for first when the market has it at or under the bid now (a waiting claim costs no live call)
    const nodes = (claim.nodeId && candidates.includes(claim.nodeId) ? [claim.nodeId, ...candidates.filter((id) => id !== claim.nodeId)] : candidates).slice(0, MAX_NODES_TRIED);
    let last: unknown = null;
    for (const nodeId of nodes) {
      try {
        await this.rentals.rent(caller, bookingRentRequest(claim, nodeId, rentalKeyOf(claim), this.clock.now()), this.adoption(claim));
        report.rented++;
        return null;
      } catch (error) {
        last = error;
      }
      // a rental that committed and whose machine the provider then refused let the claim go in the transaction that
      // failed it (pending again, its rental counted): the next node is rented under the next key
      const current = await this.storage.read((uow) => uow.spotClaims.get(claim.tenantId, claim.id));
      if (current?.status !== 'pending' || current.instanceId !== null) return null;
      claim = current;
      // a node that is gone or dearer than the bid now gives way to the next; anything else ends this pass's try
      if (!nodeRefused(last)) break;
    }
    if (last === null) return `no spot offer ${claim.search ? 'matches its search' : `of ${claim.gpuCount} x ${claim.gpuType}`} at or under ${claim.bidCentsPerGpuHour} cents per GPU-hour now`;
    return messageOf(last);
  }

  /** The rental records itself on the claim in its own transaction; the claim keeps its commitment on itself. */
  private adoption(claim: SpotClaim): Adoption {
    return {
      heldCents: 0,
      commitmentCents: 0,
      windowEndsAt: claim.endsAt,
      ledgerNote: ledgerNoteOf(claim.id),
      spot: { bidCentsPerGpuHour: claim.bidCentsPerGpuHour },
      async adopt(uow, instance: Instance) {
        const locked = await uow.spotClaims.lock(claim.tenantId, claim.id);
        if (!locked || locked.status !== 'pending' || locked.instanceId !== null || locked.machines !== claim.machines) {
          throw new DomainError('CONFLICT', `spot claim ${claim.id} is ${locked?.status ?? 'gone'}${locked?.instanceId ? ` with machine ${locked.instanceId}` : ''}; nothing was rented`);
        }
        await uow.spotClaims.update({ ...locked, status: 'active', instanceId: instance.id, machines: locked.machines + 1, lastError: null });
      },
      // the provider refused the machine (no unit left, the spot price past the bid): the claim is pending again in
      // that transaction, never seen active on a machine that was refunded; no preemption, it never ran
      async refused(uow, failed: Instance) {
        const locked = await uow.spotClaims.lock(claim.tenantId, claim.id);
        if (!locked || locked.status !== 'active' || locked.instanceId !== failed.id) return;
        await uow.spotClaims.update({ ...locked, status: 'pending', instanceId: null, endedChargedCents: locked.endedChargedCents + failed.chargedCents, lastError: failed.failure });
      },
    };
  }
}
