import { DomainError, messageOf } from '../errors.ts';
import type { MarketService } from '../market/market-service.ts';
import { perGpuCents } from '../market/pricing.ts';
import type { MarketFilter } from '../market/search-filter.ts';
import type { Clock } from '../ports/clock.ts';
import type { Provider } from '../ports/providers.ts';
import type { Storage, UnitOfWork } from '../ports/storage.ts';
import type { Instance } from '../rentals/instance.ts';
import type { RentalService } from '../rentals/rental-service.ts';
import type { Adoption } from '../rentals/rent-request.ts';
import { BookingPass } from '../bookings/booking-pass.ts';
import { bookingRentRequest, nodeRefused } from '../bookings/booking-rental.ts';
import { cancelForEndedCredential } from '../bookings/end-subtree.ts';
import { isActive, mayRent, type Token } from '../tenancy/token.ts';
import { drainQueue } from '../in-parallel.ts';
import { NodeChooser, MAX_NODES_TRIED, providerNameOf } from '../market/node-chooser.ts';
import { searchFilterOf } from '../market/search-terms.ts';
import { Budget } from '../budget.ts';
import { reservationEvent } from '../events/account-events.ts';
import { ceilingPerGpuCents, type Reservation } from './reservation.ts';

/** A start called outside a pass (tests, tools) takes what is due for at most this long. */
const STANDALONE_BUDGET_MS = 120_000;
/** A start left half way (its process died) is taken up again after this long. */
const STALE_CLAIM_MS = 10 * 60_000;
/** How long after starts_at a start that could not reach a provider is retried before it fails. */
const RETRY_FOR_MS = 15 * 60_000;

/** The node's price rose above the reservation's ceiling: the next node is tried. */
class AboveCeiling extends DomainError {
  constructor(nodeId: string, perGpu: number, ceiling: number) {
    super('CONFLICT', `node ${nodeId} costs ${perGpu} cents per GPU-hour now, above the ${ceiling} this reservation allows`);
  }
}

type Outcome = 'started' | 'failed' | 'retry' | 'cancelled';

export interface StartReport {
  started: number;
  failed: number;
  errors: string[];
  /** Starts still waiting on their cloud when the budget ended: each finishes by itself. */
  leftRunning: number;
}

/**
 * The sweep's reservation step: every due reservation (starts_at <= now) is rented through the same path as
 * POST /v1/instances (renting open, live price, funds, pause, caps, the first hour charged), made as the token
 * that reserved it, with the reservation id as the idempotency key and the window ending at ends_at. The
 * reservation's commitment becomes the rental's in the rental's transaction. A node that is gone or dearer
 * than the ceiling gives way to the cheapest match within it; when nothing can be rented the reservation
 * fails with why, nothing charged, its commitment released.
 */
export class ReservationStarter {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly rentals: RentalService;
  private readonly chooser: NodeChooser;
  private readonly market: MarketService;
  private readonly providerCount: number;

  constructor(deps: { storage: Storage; clock: Clock; rentals: RentalService; market: MarketService; providers: readonly Provider[] }) {
    this.providerCount = deps.providers.length;
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.rentals = deps.rentals;
    this.market = deps.market;
    this.chooser = new NodeChooser(deps.market, deps.providers);
  }

  /**
   * Takes due reservations one by one as hands free up (FOR UPDATE SKIP LOCKED: every runner, replica or daemon,
   * shares the queue, and a reservation is started by one of them) and starts each, until none is left or the
   * budget ends. A start whose cloud is slow holds one hand; the others go on.
   */
  async startDue(budget: Budget = Budget.of(STANDALONE_BUDGET_MS)): Promise<StartReport> {
    const report: StartReport = { started: 0, failed: 0, errors: [], leftRunning: 0 };
    // those to retry next pass are not taken up again in this one
    const retried: string[] = [];
    const pass = new BookingPass(this.storage, this.market);
    const drained = await drainQueue<Reservation>({
      // a slow cloud holds its own hands only: the other providers' starts go on beside it
      ...BookingPass.hands(this.providerCount),
      laneOf: (reservation) => providerNameOf(reservation.nodeId),
      budget,
      take: async (count, busy) => {
        const now = this.clock.now();
        const claimed = await this.storage.autocommit((uow) => uow.reservations.claimDue(now, new Date(now.getTime() - STALE_CLAIM_MS), count, retried, busy));
        if (claimed.length > 0) await pass.refreshMarket();
        return claimed;
      },
      run: async (reservation) => {
        try {
          const outcome = await this.start(reservation, await pass.tokenOf(reservation.tokenId), report, retried);
          if (outcome === 'started') report.started++;
          else if (outcome === 'failed') report.failed++;
        } catch (error) {
          // left starting: a later pass takes it up again once its claim is stale
          report.errors.push(`reservation ${reservation.id}: ${messageOf(error)}`);
        }
      },
    });
    report.leftRunning = drained.leftRunning;
    return report;
  }

  private async start(reservation: Reservation, caller: Token | null, report: StartReport, retried: string[]): Promise<Outcome> {
    const now = this.clock.now();
    if (now.getTime() >= reservation.endsAt.getTime()) return this.fail(reservation, 'its window ended before a sweep could start it');
    if (!caller) return this.fail(reservation, 'the token that made it is gone');
    // a chain that ended (expired between passes, or a runner without the sweep's lock took it first) rents for nobody:
    // cancelled as a revocation cancels it, never failed
    if (await this.credentialEnded(reservation, now)) return this.cancel(reservation);
    let last: unknown = null;
    let missed = false;
    const tried = new Set<string>();
    // a search the market cannot run now (its provider no longer enabled, the market down) decides like a rental's error
    const choose = (choice: () => Promise<string | null>) =>
      choice().catch((error: unknown) => {
        [last, missed] = [error, false];
        return null;
      });
    for (let next = await choose(() => this.firstNode(reservation)); next !== null && tried.size < MAX_NODES_TRIED; next = await choose(() => this.nextNode(reservation, tried))) {
      tried.add(next);
      try {
        await this.rentals.rent(caller, bookingRentRequest(reservation, next, reservation.id, now), this.adoption(reservation));
        return 'started';
      } catch (error) {
        last = error;
      }
      // the rental may have committed before it failed (the provider refused the machine): then it is the reservation's
      const current = await this.storage.read((uow) => uow.reservations.get(reservation.tenantId, reservation.id));
      if (current?.status === 'cancelled') return 'cancelled';
      if (current?.status !== 'starting') return current?.rental?.status === 'failed' ? 'failed' : 'started';
      missed = await this.missed(last, next);
      if (!missed) break;
    }
    const noneLeft = `no ${last === null ? '' : 'other '}node ${reservation.search ? 'matches its search' : `of ${reservation.gpuCount} x ${reservation.gpuType}`} at or under ${ceilingPerGpuCents(reservation)} cents per GPU-hour now`;
    if (last instanceof DomainError && last.code === 'UNAUTHENTICATED') return this.cancel(reservation);
    if (last === null) return this.fail(reservation, noneLeft);
    if (missed) return this.fail(reservation, `${messageOf(last)}; ${noneLeft}`);
    if (transient(last) && now.getTime() < reservation.startsAt.getTime() + RETRY_FOR_MS) {
      report.errors.push(`reservation ${reservation.id}: ${messageOf(last)} (retried next pass)`);
      // before it is scheduled again: this runner's next take must not find it
      retried.push(reservation.id);
      await this.storage.transaction(async (uow) => {
        const locked = await uow.reservations.lock(reservation.tenantId, reservation.id);
        if (locked?.status === 'starting') await uow.reservations.update({ ...locked, status: 'scheduled' });
      });
      return 'retry';
    }
    return this.fail(reservation, messageOf(last));
  }

  /** The node asked for, else the search's cheapest match within the ceiling now. */
  private async firstNode(reservation: Reservation): Promise<string | null> {
    return reservation.nodeId ?? this.nextNode(reservation, new Set());
  }

  /** The cheapest node not yet tried that matches: the search's, or a gone node's gpu type and count. */
  private async nextNode(reservation: Reservation, tried: ReadonlySet<string>): Promise<string | null> {
    const ceiling = ceilingPerGpuCents(reservation);
    const asked: MarketFilter = reservation.search
      ? searchFilterOf(reservation.search)
      : { gpuType: reservation.gpuType, gpuCount: reservation.gpuCount, extra: [] };
    const filter = { ...asked, maxPricePerGpuCents: Math.min(ceiling, asked.maxPricePerGpuCents ?? ceiling) };
    const nodes = await this.chooser.cheapest(filter, tried.size + 1);
    const fits = (offer: { gpuType: string; gpuCount: number }) => reservation.search !== null || (offer.gpuType === reservation.gpuType && offer.gpuCount === reservation.gpuCount);
    return nodes.find((node) => !tried.has(node.node.id) && fits(node.offer) && node.perGpuCents <= ceiling)?.node.id ?? null;
  }

  /** Whether a rental failed because of the node itself (gone, or dearer than the ceiling): another may do. */
  private async missed(error: unknown, nodeId: string): Promise<boolean> {
    if (error instanceof AboveCeiling) return true;
    if (!nodeRefused(error)) return false;
    const node = this.chooser.parse(nodeId);
    return node === null || (await this.chooser.quote(node).catch(() => undefined)) === null;
  }

  /** The rental takes the reservation's commitment and records itself on it, in its own transaction. */
  private adoption(reservation: Reservation): Adoption {
    const ceiling = ceilingPerGpuCents(reservation);
    return {
      heldCents: reservation.commitmentCents,
      windowEndsAt: reservation.endsAt,
      ledgerNote: `reservation ${reservation.id}`,
      async adopt(uow, instance: Instance) {
        const locked = await uow.reservations.lock(reservation.tenantId, reservation.id);
        if (!locked || locked.status !== 'starting') throw new DomainError('CONFLICT', `reservation ${reservation.id} is ${locked?.status ?? 'gone'}; it was not started`);
        const perGpu = perGpuCents(instance.rateCentsPerHour, instance.gpuCount);
        if (perGpu > ceiling) throw new AboveCeiling(instance.nodeId, perGpu, ceiling);
        const active: Reservation = { ...locked, status: 'active', instanceId: instance.id, rateCentsPerHour: instance.rateCentsPerHour, commitmentCents: 0, failure: null };
        await uow.reservations.update(active);
        await uow.events.emit(reservationEvent(active, 'started', instance.createdAt));
      },
    };
  }

  /**
   * Whether the token that made it, or one that issued it, was revoked, expired or timed out by `now`, or it can no
   * longer rent (its person was demoted): either way nobody is left to rent for.
   */
  private async credentialEnded(reservation: Reservation, now: Date): Promise<boolean> {
    const chain = await this.storage.read((uow) => uow.tokens.chain(reservation.tenantId, reservation.tokenId));
    return !chain.every((token) => isActive(token, now)) || !(chain[0] && mayRent(chain[0], now));
  }

  /** Failed with why: nothing was charged, and the commitment it held is released. */
  private async fail(reservation: Reservation, why: string): Promise<Outcome> {
    return this.end(reservation, async (uow, locked) => {
      await uow.tokens.addCommitment(locked.tokenId, -locked.commitmentCents);
      const failed: Reservation = { ...locked, status: 'failed', commitmentCents: 0, failure: `not started, nothing charged: ${why}` };
      await uow.reservations.update(failed);
      await uow.events.emit(reservationEvent(failed, 'failed', this.clock.now()));
      return 'failed';
    });
  }

  /** Cancelled because its credential ended (end-subtree.ts): nothing was charged, the commitment is given back. */
  private async cancel(reservation: Reservation): Promise<Outcome> {
    return this.end(reservation, async (uow, locked) => {
      await cancelForEndedCredential(uow, locked);
      return 'cancelled';
    });
  }

  /** Ends a start under the account's lock, unless something else ended or started it meanwhile. */
  private async end(reservation: Reservation, how: (uow: UnitOfWork, locked: Reservation) => Promise<Outcome>): Promise<Outcome> {
    return this.storage.transaction(async (uow) => {
      await uow.accounts.lock(reservation.tenantId, this.clock.now());
      const locked = await uow.reservations.lock(reservation.tenantId, reservation.id);
      if (!locked || locked.status !== 'starting') return locked?.status === 'cancelled' ? 'cancelled' : 'started';
      return how(uow, locked);
    });
  }
}

/** Upstream or database trouble: the next pass may do better. */
const transient = (error: unknown): boolean => !(error instanceof DomainError) || error.code === 'UPSTREAM_UNAVAILABLE' || error.code === 'MARKET_UNAVAILABLE';
