import type { TemplateSearch } from '../catalog/records.ts';
import { DomainError, invalidInput, notFound } from '../errors.ts';
import type { MarketService } from '../market/market-service.ts';
import type { Cents } from '../money.ts';
import type { Clock } from '../ports/clock.ts';
import type { Ids } from '../ports/ids.ts';
import { isSpotMarket, type Provider } from '../ports/providers.ts';
import type { Storage, UnitOfWork } from '../ports/storage.ts';
import { resolveRentalOptions, type RentalCatalog } from '../rentals/rental-options.ts';
import type { RentalService } from '../rentals/rental-service.ts';
import { NodeChooser } from '../market/node-chooser.ts';
import { requireRentalsOpen } from '../market/rentals-open.ts';
import { checkNodeOrSearch, NO_RENTAL_OPTIONS } from '../bookings/booking-rental.ts';
import type { Token } from '../tenancy/token.ts';
import { admitSpend } from '../spending/spend-gate.ts';
import { SPOT_CLAIM_ID_PREFIX, SPOT_CLAIM_LIMITS as LIMITS, billingEnded, type SpotClaim, type SpotClaimView } from './spot-claim.ts';
import { spotFilterOf } from './spot-nodes.ts';

const HOUR_MS = 3_600_000;
const LIST_LIMIT = 500;

export interface SpotClaimRequest {
  /** Exactly one of nodeId and search. */
  nodeId: string | null;
  search: TemplateSearch | null;
  bidCentsPerGpuHour: Cents;
  gpuCount: number;
  hours: number | null;
  name: string;
  templateId: string | null;
  sshKeyId: string | null;
}

/**
 * Spot claims: interruptible capacity at a bid. Making one checks what it asks and takes the token
 * chain's cap commitment (bid x gpu_count x hours) at once; the sweep rents its machines (SpotClaimKeeper).
 * Releasing it ends its machine, the unused minutes refunded, and leaves on the chain only what it spent.
 */
export class SpotClaimService {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly ids: Ids;
  private readonly market: MarketService;
  private readonly rentals: RentalService;
  private readonly catalog: RentalCatalog;
  private readonly chooser: NodeChooser;

  constructor(deps: {
    storage: Storage;
    clock: Clock;
    ids: Ids;
    market: MarketService;
    providers: readonly Provider[];
    rentals: RentalService;
    catalog: RentalCatalog;
  }) {
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.ids = deps.ids;
    this.market = deps.market;
    this.rentals = deps.rentals;
    this.catalog = deps.catalog;
    this.chooser = new NodeChooser(deps.market, deps.providers);
  }

  async create(caller: Token, request: SpotClaimRequest): Promise<SpotClaimView> {
    this.checkRequest(request);
    requireRentalsOpen(this.market.settings, 'Nothing was claimed.');
    // an unknown template or key is refused now, not at every pass
    await resolveRentalOptions(this.catalog, caller.tenantId, { ...NO_RENTAL_OPTIONS, templateId: request.templateId, sshKeyId: request.sshKeyId });
    const gpuType = request.nodeId ? await this.nodeType(request.nodeId, request.gpuCount) : null;
    if (request.search) this.checkSearch(request.search, request.gpuCount);
    const commitment = request.bidCentsPerGpuHour * request.gpuCount * (request.hours ?? 0);

    return this.storage.transaction(async (uow): Promise<SpotClaimView> => {
      const now = this.clock.now();
      await admitSpend(
        uow,
        caller,
        {
          kind: 'spot claim',
          // nothing is charged until the sweep rents a machine for it, which passes the gate again as a rental
          fundsNeededCents: 0,
          fundsFor: 'a spot claim needs',
          hours: request.hours,
          hoursField: ['body', 'hours'],
          commitmentCents: commitment,
          commitmentFor: `a bid of ${request.bidCentsPerGpuHour} cents per GPU-hour x ${request.gpuCount} GPUs x ${request.hours} hours`,
          burnCentsPerHour: 0,
          // its machine costs at most the bid: a bid whose whole machine passes a ceiling could only wait for a lower price
          bookedBurnCentsPerHour: request.bidCentsPerGpuHour * request.gpuCount,
        },
        now,
      );
      const claim: SpotClaim = {
        id: this.ids.newId(SPOT_CLAIM_ID_PREFIX),
        tenantId: caller.tenantId,
        tokenId: caller.id,
        name: request.name,
        status: 'pending',
        nodeId: request.nodeId,
        search: request.search,
        gpuType,
        gpuCount: request.gpuCount,
        bidCentsPerGpuHour: request.bidCentsPerGpuHour,
        hours: request.hours,
        endsAt: request.hours === null ? null : new Date(now.getTime() + request.hours * HOUR_MS),
        commitmentCents: commitment,
        templateId: request.templateId,
        sshKeyId: request.sshKeyId,
        instanceId: null,
        machines: 0,
        preemptions: 0,
        endedChargedCents: 0,
        lastError: null,
        claimedAt: null,
        createdAt: now,
        endedAt: null,
      };
      await uow.spotClaims.add(claim);
      return { ...claim, rental: null };
    });
  }

  async list(tenantId: string): Promise<SpotClaimView[]> {
    return this.storage.read((uow) => uow.spotClaims.list(tenantId, LIST_LIMIT));
  }

  async get(tenantId: string, claimId: string): Promise<SpotClaimView> {
    const claim = await this.storage.read((uow) => uow.spotClaims.get(tenantId, claimId));
    if (!claim) throw notFound(`spot claim ${claimId}`);
    return claim;
  }

  /** Released: its machine (if any) terminated now, the unused minutes refunded; 409 once it ended (released, expired). */
  async release(tenantId: string, claimId: string): Promise<SpotClaimView> {
    const current = await this.get(tenantId, claimId);
    if (current.status === 'released' || current.status === 'expired') {
      throw new DomainError('CONFLICT', `spot claim ${claimId} is ${current.status}; there is nothing left to release`);
    }
    // a machine that came up since we last looked has started: that decides what it costs
    if (current.instanceId) await this.rentals.get(tenantId, current.instanceId);
    const removed = await this.storage.transaction((uow) => closeClaim(uow, this.rentals, tenantId, claimId, 'released', this.clock.now()));
    if (removed) await this.rentals.removeUpstream(removed);
    return this.get(tenantId, claimId);
  }

  private checkRequest(request: SpotClaimRequest): void {
    checkNodeOrSearch(request);
    if (!Number.isInteger(request.gpuCount) || request.gpuCount < 1 || request.gpuCount > LIMITS.maxGpuCount) {
      throw invalidInput(['body', 'gpu_count'], `a whole number of GPUs from 1 to ${LIMITS.maxGpuCount}`);
    }
    if (request.hours !== null && (!Number.isInteger(request.hours) || request.hours < LIMITS.minHours || request.hours > LIMITS.maxHours)) {
      throw invalidInput(['body', 'hours'], `a whole number of hours from ${LIMITS.minHours} to ${LIMITS.maxHours}`);
    }
  }

  /** A node_id claim's GPU type: the node must exist now, on a spot market, with the claim's GPU count. */
  private async nodeType(nodeId: string, gpuCount: number): Promise<string> {
    const found = this.chooser.nodeOf(nodeId);
    if (!isSpotMarket(found.provider)) {
      throw invalidInput(['body', 'node_id'], `provider ${found.provider.name} has no spot market; pick a node whose supported_operations lists spot`);
    }
    const node = await this.chooser.quote(found);
    if (!node) throw new DomainError('CONFLICT', `node ${nodeId} is not available now; search again with GET /v1/gpus`);
    if (node.offer.gpuCount !== gpuCount) throw invalidInput(['body', 'gpu_count'], `node ${nodeId} has ${node.offer.gpuCount} GPUs; gpu_count is the machine's exact count`);
    return node.offer.gpuType;
  }

  private checkSearch(search: TemplateSearch, gpuCount: number): void {
    if (search.max_price_per_gpu_hour !== undefined) {
      throw invalidInput(['body', 'search', 'max_price_per_gpu_hour'], "a claim's ceiling is its bid: send max_price_per_gpu_hour beside search, not in it");
    }
    if (search.gpu_count !== undefined && Number(search.gpu_count) !== gpuCount) {
      throw invalidInput(['body', 'search', 'gpu_count'], `differs from gpu_count (${gpuCount}); leave it out of search`);
    }
    spotFilterOf({ search, gpuType: null, gpuCount });
  }
}

/**
 * Ends a claim (released or expired) in the caller's transaction: its machine's billing ends now (or at its window
 * end, when that came first), the unused minutes refunded, and the commitment shrinks to what the claim spent.
 * Answers the machine to remove upstream once committed, if it had a live one.
 */
export async function closeClaim(uow: UnitOfWork, rentals: Pick<RentalService, 'endBilling'>, tenantId: string, claimId: string, how: 'released' | 'expired', now: Date) {
  await uow.accounts.lock(tenantId, now); // always the account before its instances
  const claim = await uow.spotClaims.lock(tenantId, claimId);
  if (!claim) throw notFound(`spot claim ${claimId}`);
  if (claim.status === 'released' || claim.status === 'expired') {
    if (how === 'released') throw new DomainError('CONFLICT', `spot claim ${claimId} is ${claim.status}; there is nothing left to release`);
    return null;
  }
  let machine = claim.instanceId ? await uow.instances.lock(tenantId, claim.instanceId) : null;
  const removed = machine && !billingEnded(machine.status) ? await rentals.endBilling(uow, machine, now, 'terminating') : null;
  machine = removed ?? machine;
  const spent = claim.endedChargedCents + (machine?.chargedCents ?? 0);
  const kept = Math.min(claim.commitmentCents, spent);
  // a machine preempted since the last pass (the claim still active on it) is counted here, as the pass would
  const preempted = claim.status === 'active' && machine?.preemptedAt ? 1 : 0;
  await uow.tokens.addCommitment(claim.tokenId, kept - claim.commitmentCents);
  await uow.spotClaims.update({ ...claim, status: how, commitmentCents: kept, preemptions: claim.preemptions + preempted, claimedAt: null, endedAt: now });
  return removed;
}
