import { admitSpend } from '../spending/spend-gate.ts';
import { requestDigest, sameRequest } from '../spending/idempotency.ts';
import type { TemplateSearch } from '../catalog/records.ts';
import { DomainError, invalidInput, notFound } from '../errors.ts';
import type { MarketService } from '../market/market-service.ts';
import { NodeChooser, type PricedNode } from '../market/node-chooser.ts';
import { searchFilterOf } from '../market/search-terms.ts';
import { requireRentalsOpen } from '../market/rentals-open.ts';
import { checkNodeOrSearch, NO_RENTAL_OPTIONS } from '../bookings/booking-rental.ts';
import type { Cents } from '../money.ts';
import type { Clock } from '../ports/clock.ts';
import type { Ids, Secrets } from '../ports/ids.ts';
import type { Provider } from '../ports/providers.ts';
import type { Storage } from '../ports/storage.ts';
import { isLive } from '../rentals/instance.ts';
import { missingOptions, resolveRentalOptions, type RentalCatalog } from '../rentals/rental-options.ts';
import type { RentalService } from '../rentals/rental-service.ts';
import type { Token } from '../tenancy/token.ts';
import { RESERVATION_ID_PREFIX, RESERVATION_LIMITS as LIMITS, shownStatus, type Reservation, type ReservationView } from './reservation.ts';

const HOUR_MS = 3_600_000;
const LIST_LIMIT = 500;

export interface ReservationRequest {
  /** Exactly one of nodeId and search. */
  nodeId: string | null;
  search: TemplateSearch | null;
  startsAt: Date;
  hours: number;
  name: string;
  templateId: string | null;
  sshKeyId: string | null;
  idempotencyKey: string | null;
  maxPricePerGpuCents: Cents | null;
}

export interface Reserved {
  reservation: ReservationView;
  /** The answer to an earlier request with the same idempotency key. */
  replayed: boolean;
}

/**
 * Reservations: a machine booked for a window. Making one quotes it and takes the token
 * chain's cap commitment (quote x hours) at once; no money moves until the sweep starts it (ReservationStarter).
 * Cancelling before the start releases the commitment; during the window it terminates the rental.
 */
export class ReservationService {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly ids: Ids;
  private readonly secrets: Secrets;
  private readonly market: MarketService;
  private readonly rentals: RentalService;
  private readonly catalog: RentalCatalog;
  private readonly chooser: NodeChooser;

  constructor(deps: {
    storage: Storage;
    clock: Clock;
    ids: Ids;
    secrets: Secrets;
    market: MarketService;
    providers: readonly Provider[];
    rentals: RentalService;
    catalog: RentalCatalog;
  }) {
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.ids = deps.ids;
    this.secrets = deps.secrets;
    this.market = deps.market;
    this.rentals = deps.rentals;
    this.catalog = deps.catalog;
    this.chooser = new NodeChooser(deps.market, deps.providers);
  }

  async create(caller: Token, request: ReservationRequest): Promise<Reserved> {
    const digest = requestDigest(this.secrets, request);
    if (request.idempotencyKey) {
      const earlier = await this.storage.read((uow) => uow.reservations.byIdempotencyKey(caller.tenantId, request.idempotencyKey!));
      if (earlier) return replay(earlier, digest);
    }
    this.checkRequest(request);
    requireRentalsOpen(this.market.settings, 'Nothing was reserved.');
    const options = await resolveRentalOptions(this.catalog, caller.tenantId, { ...NO_RENTAL_OPTIONS, templateId: request.templateId, sshKeyId: request.sshKeyId });
    const quote = await this.quote(request);
    const missing = missingOptions(options, quote.node.provider.machineOptions);
    if (request.nodeId && missing.length > 0) {
      throw new DomainError('CONFLICT', `provider ${quote.node.provider.name} cannot carry out ${missing.join(', ')}; supported: see the node's supported_operations. Nothing was reserved.`);
    }
    const commitment = quote.rateCentsPerHour * request.hours;

    const made = await this.storage.transaction(async (uow): Promise<Reserved> => {
      const now = this.clock.now();
      const account = await uow.accounts.lock(caller.tenantId, now);
      if (!account) throw notFound(`tenant ${caller.tenantId}`);
      // the account lock serializes this tenant's reservations: a second request with the key sees the first
      if (request.idempotencyKey) {
        const earlier = await uow.reservations.byIdempotencyKey(caller.tenantId, request.idempotencyKey);
        if (earlier) return { reservation: earlier, replayed: true };
      }
      await admitSpend(
        uow,
        caller,
        {
          kind: 'reservation',
          // nothing is charged until the start, which passes the gate again as a rental
          fundsNeededCents: 0,
          fundsFor: 'a reservation needs',
          hours: request.hours,
          hoursField: ['body', 'hours'],
          commitmentCents: commitment,
          commitmentFor: `${quote.rateCentsPerHour} cents an hour x ${request.hours} hours`,
          burnCentsPerHour: 0,
          bookedBurnCentsPerHour: quote.rateCentsPerHour,
        },
        now,
        account,
      );
      const reservation: Reservation = {
        id: this.ids.newId(RESERVATION_ID_PREFIX),
        tenantId: caller.tenantId,
        tokenId: caller.id,
        name: request.name,
        status: 'scheduled',
        startsAt: request.startsAt,
        hours: request.hours,
        endsAt: new Date(request.startsAt.getTime() + request.hours * HOUR_MS),
        nodeId: request.nodeId,
        search: request.search,
        gpuType: quote.offer.gpuType,
        gpuCount: quote.offer.gpuCount,
        quotedPerGpuCents: quote.perGpuCents,
        maxPricePerGpuCents: request.maxPricePerGpuCents,
        rateCentsPerHour: quote.rateCentsPerHour,
        commitmentCents: commitment,
        templateId: request.templateId,
        sshKeyId: request.sshKeyId,
        idempotencyKey: request.idempotencyKey,
        requestDigest: digest,
        instanceId: null,
        failure: null,
        claimedAt: null,
        createdAt: now,
      };
      await uow.reservations.add(reservation);
      return { reservation: { ...reservation, rental: null }, replayed: false };
    });
    return made.replayed ? replay(made.reservation, digest) : made;
  }

  async list(tenantId: string): Promise<ReservationView[]> {
    return this.storage.read((uow) => uow.reservations.list(tenantId, LIST_LIMIT));
  }

  /** The tenant's reservations still to start whose start is due within the hour (or passed, not yet started). */
  async due(tenantId: string): Promise<ReservationView[]> {
    const until = new Date(this.clock.now().getTime() + LIMITS.dueWithinMs);
    return this.storage.read((uow) => uow.reservations.scheduledUntil(tenantId, until, LIST_LIMIT));
  }

  async get(tenantId: string, reservationId: string): Promise<ReservationView> {
    const reservation = await this.storage.read((uow) => uow.reservations.get(tenantId, reservationId));
    if (!reservation) throw notFound(`reservation ${reservationId}`);
    return reservation;
  }

  /**
   * Before the start: cancelled, free, its commitment released. During the window: cancelled and its machine
   * terminated with the usual refund. Once it ended (completed, failed, cancelled): 409.
   */
  async cancel(tenantId: string, reservationId: string): Promise<ReservationView> {
    const terminate = await this.storage.transaction(async (uow) => {
      // the account first, as a rental takes it: a start in flight either committed before this, or sees it cancelled
      await uow.accounts.lock(tenantId, this.clock.now());
      const locked = await uow.reservations.lock(tenantId, reservationId);
      if (!locked) throw notFound(`reservation ${reservationId}`);
      if (locked.status === 'scheduled' || locked.status === 'starting') {
        await uow.tokens.addCommitment(locked.tokenId, -locked.commitmentCents);
        await uow.reservations.update({ ...locked, status: 'cancelled', commitmentCents: 0 });
        return null;
      }
      const rental = locked.instanceId ? await uow.instances.get(tenantId, locked.instanceId) : null;
      const shown = shownStatus({ ...locked, rental });
      if (shown !== 'active' || !rental || !isLive(rental.status)) {
        throw new DomainError('CONFLICT', `reservation ${reservationId} is ${shown}; there is nothing left to cancel`);
      }
      await uow.reservations.update({ ...locked, status: 'cancelled' });
      return rental.id;
    });
    if (terminate) await this.rentals.terminate(tenantId, terminate);
    return this.get(tenantId, reservationId);
  }

  private checkRequest(request: ReservationRequest): void {
    checkNodeOrSearch(request);
    const now = this.clock.now().getTime();
    const lead = request.startsAt.getTime() - now;
    if (Number.isNaN(lead) || lead < LIMITS.minLeadMs || lead > LIMITS.maxLeadMs) {
      throw invalidInput(
        ['body', 'starts_at'],
        `must be from ${new Date(now + LIMITS.minLeadMs).toISOString()} (5 minutes ahead) to ${new Date(now + LIMITS.maxLeadMs).toISOString()} (90 days ahead)`,
      );
    }
    if (!Number.isInteger(request.hours) || request.hours < LIMITS.minHours || request.hours > LIMITS.maxHours) {
      throw invalidInput(['body', 'hours'], `a whole number of hours from ${LIMITS.minHours} to ${LIMITS.maxHours}`);
    }
  }

  /** The price the reservation is made at: the node's live price, or the search's cheapest match now. */
  private async quote(request: ReservationRequest): Promise<PricedNode> {
    const max = request.maxPricePerGpuCents;
    if (request.nodeId) {
      const node = await this.chooser.quote(this.chooser.nodeOf(request.nodeId));
      if (!node) throw new DomainError('CONFLICT', `node ${request.nodeId} is not available now; search again with GET /v1/gpus`);
      if (max !== null && node.perGpuCents > max) {
        throw invalidInput(['body', 'max_price_per_gpu_hour'], `node ${request.nodeId} costs ${node.perGpuCents} cents per GPU-hour now, above this ceiling; raise it or leave it out`);
      }
      return node;
    }
    const filter = searchFilterOf(request.search!);
    const ceiling = max === null ? filter.maxPricePerGpuCents : Math.min(max, filter.maxPricePerGpuCents ?? max);
    const [cheapest] = await this.chooser.cheapest(ceiling === undefined ? filter : { ...filter, maxPricePerGpuCents: ceiling }, 1).catch((error: unknown) => {
      // the market names its query parameters; here they are the search's fields
      if (error instanceof DomainError && error.code === 'INVALID_INPUT') throw invalidInput(['body', 'search', ...error.problems.flatMap((p) => p.loc.slice(1))], error.problems[0]?.msg ?? error.message);
      throw error;
    });
    if (!cheapest) {
      throw new DomainError('CONFLICT', `no node matches this search${max === null ? '' : ' at or under max_price_per_gpu_hour'} now, so there is nothing to quote; widen it (GET /v1/gpus with the same filters shows what matches)`);
    }
    return cheapest;
  }
}

const replay = (earlier: ReservationView, digest: string): Reserved => ({ reservation: sameRequest(earlier, digest, 'reservation'), replayed: true });
