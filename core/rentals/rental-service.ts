import { removalAt } from '../billing/account-view.ts';
import { admitSpend } from '../spending/spend-gate.ts';
import { requestDigest, sameRequest } from '../spending/idempotency.ts';
import { earliest, instanceCostUntil, ON_DEMAND_MINIMUM_MINUTES, SPOT_MINIMUM_MINUTES } from '../billing/charges.ts';
import { DomainError, invalidInput, messageOf, notFound, upstreamUnavailable } from '../errors.ts';
import { postEntry } from '../billing/ledger.ts';
import type { MarketService } from '../market/market-service.ts';
import { perGpuCents, rateCentsPerHour } from '../market/pricing.ts';
import type { Cents } from '../money.ts';
import type { Clock } from '../ports/clock.ts';
import { NO_METRICS, type Metrics } from '../ports/metrics.ts';
import type { Ids, Secrets } from '../ports/ids.ts';
import { isRebootable, isSelfRemoving, isSpotMarket, ProviderFailure, supportedOperations, type Machine, type Provider } from '../ports/providers.ts';
import type { Offer } from '../market/offer.ts';
import type { Storage, UnitOfWork } from '../ports/storage.ts';
import type { Token } from '../tenancy/token.ts';
import { INSTANCE_ID_PREFIX, isLive, ledgerDescription, type Instance, type LaunchOutcome } from './instance.ts';
import { missingOptions, resolveRentalOptions, type MachineSetup, type RentalCatalog, type RentalOptionsRequest } from './rental-options.ts';
import type { VolumeService } from '../volumes/volume-service.ts';
import { inParallelBy } from '../in-parallel.ts';
import { MAX_CREATE_MS } from '../upstream/call-deadlines.ts';

const HOUR_MS = 3_600_000;
/** How often a retry reads the row of a first request that another process is launching. */
const LAUNCH_POLL_MS = 50;

/** The first request with this key is still waiting for the provider's create. */
const inFlight = (instance: Instance): boolean => instance.launch === null && instance.status === 'provisioning' && instance.machineId === null;

export interface RentRequest extends RentalOptionsRequest {
  nodeId: string;
  name: string | null;
  idempotencyKey: string | null;
}

/**
 * A rental that takes over a booking made earlier (a reservation): the commitment the booking holds on the
 * caller's token chain becomes the rental's in the rental's own transaction, so it is counted once.
 */
export interface Adoption {
  /** Cents the booking holds on the caller's chain: free for this rental's cap check, and released by it. */
  heldCents: Cents;
  /** The window ends here (the booking's end) rather than termination_hours from now (the hours are still its commitment); null: none. */
  windowEndsAt: Date | null;
  /**
   * The rental's own commitment on the chain instead of rate x termination hours (a spot claim keeps its
   * commitment on itself for its life, so its machines add none).
   */
  commitmentCents?: Cents;
  /**
   * A spot rental (DESIGN.md §12): priced at the offer's spot price now, refused (CONFLICT) above this bid per
   * GPU-hour, made with the provider's createSpotMachine at the bid, billed by the started minute (no minimum).
   */
  spot?: { bidCentsPerGpuHour: Cents };
  /** Named in the description of each ledger entry of the rental ("reservation res_…"). */
  ledgerNote: string;
  /** Runs in the rental's transaction once the instance is added (the booking records it); throwing undoes the rental. */
  adopt(uow: UnitOfWork, instance: Instance): Promise<void>;
}

export interface Rented {
  instance: Instance;
  /** The answer to an earlier request with the same idempotency key. */
  replayed: boolean;
}

const unsupported = (provider: string, operation: string) =>
  new DomainError('CONFLICT', `provider ${provider} does not support ${operation}; supported: see the instance's supported_operations`);


/** The ledger posting that brings an instance's charges to `cost` (a refund when it paid more). */
export function settlementOf(instance: Instance, cost: number, key: string, at: Date) {
  const amount = instance.chargedCents - cost;
  return amount === 0
    ? null
    : {
        tenantId: instance.tenantId,
        kind: amount > 0 ? ('refund' as const) : ('usage' as const),
        amountCents: amount,
        reference: instance.id,
        description: ledgerDescription(amount > 0 ? 'unused time refunded' : 'usage beyond the paid time', instance),
        uniqueKey: key,
        at,
      };
}

/**
 * Renting machines and acting on them (DESIGN.md §5). The order of work of a rental: renting open,
 * the price checked live upstream, then one transaction that locks the account and the token chain,
 * checks pause, funds and caps, inserts the instance and charges the first hour; only then the provider
 * is called, with our instance id as its label.
 */
export class RentalService {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly ids: Ids;
  private readonly secrets: Secrets;
  private readonly market: MarketService;
  private readonly providers: Map<string, Provider>;
  /** Creates in flight in this process, by instance id: a retry with the same key waits for its answer. */
  private readonly launching = new Map<string, Promise<unknown>>();
  /** How long a retry waits for the first request's create before it answers 409 "still in progress". */
  private readonly launchWaitMs: number;
  private readonly catalog: RentalCatalog;
  private readonly volumes: VolumeService;
  private readonly metrics: Metrics;
  /** The longest rent() waits for the provider's create before it answers with the instance provisioning. */
  private readonly answerWithinMs: number;
  /** Machines stopped at once per provider when a whole account stops (emergency stop, hold, breaker). */
  private readonly providerConcurrency: number;

  constructor(deps: {
    storage: Storage;
    clock: Clock;
    ids: Ids;
    secrets: Secrets;
    market: MarketService;
    providers: readonly Provider[];
    catalog: RentalCatalog;
    volumes: VolumeService;
    launchWaitMs?: number;
    metrics?: Metrics;
    /** At most MAX_CREATE_MS (60 s), the default. */
    answerWithinMs?: number;
    providerConcurrency?: number;
  }) {
    this.launchWaitMs = deps.launchWaitMs ?? 60_000;
    this.answerWithinMs = Math.min(MAX_CREATE_MS, deps.answerWithinMs ?? MAX_CREATE_MS);
    this.providerConcurrency = Math.max(1, deps.providerConcurrency ?? 4);
    this.metrics = deps.metrics ?? NO_METRICS;
    this.catalog = deps.catalog;
    this.volumes = deps.volumes;
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.ids = deps.ids;
    this.secrets = deps.secrets;
    this.market = deps.market;
    this.providers = new Map(deps.providers.map((p) => [p.name, p]));
  }

  supportedOperations(instance: Instance): string[] {
    const provider = this.providers.get(instance.provider);
    return provider ? supportedOperations(provider) : ['terminate'];
  }

  async rent(caller: Token, request: RentRequest, adoption?: Adoption): Promise<Rented> {
    const answerBy = performance.now() + this.answerWithinMs;
    const digest = requestDigest(this.secrets, request);
    if (request.idempotencyKey) {
      const earlier = await this.storage.read((uow) => uow.instances.byIdempotencyKey(caller.tenantId, request.idempotencyKey!));
      if (earlier) return this.replay(earlier, digest);
    }
    if (!this.market.settings.rentalsOpen) {
      throw new DomainError('RENTALS_CLOSED', 'renting is not open yet; GET /v1/market/summary says when rentals_open turns true. Nothing was charged.');
    }
    const [providerName = '', offerId = ''] = splitNodeId(request.nodeId);
    const provider = this.providers.get(providerName);
    if (!provider || !offerId || !provider.isOfferId(offerId)) {
      throw invalidInput(['body', 'node_id'], `no node "${request.nodeId}"; take node_id from GET /v1/gpus (enabled: ${[...this.providers.keys()].join(', ')})`);
    }
    let offer;
    try {
      offer = await provider.getOffer(offerId);
    } catch (error) {
      const made = await this.madeMeanwhile(caller, request, digest);
      if (made) return made;
      throw upstreamUnavailable(`could not check the price of ${request.nodeId} with ${provider.name}`, error, 'try again shortly');
    }
    if (!offer || offer.available <= 0) {
      const made = await this.madeMeanwhile(caller, request, digest);
      if (made) return made;
      throw new DomainError('CONFLICT', `node ${request.nodeId} is no longer available; search again with GET /v1/gpus`);
    }
    const spot = adoption?.spot ?? null;
    const rate = spot ? spotRate(provider, offer, spot.bidCentsPerGpuHour, this.market.settings.markupBps) : rateCentsPerHour(offer.priceUsdPerHour, this.market.settings.markupBps);
    const options = await resolveRentalOptions(this.catalog, caller.tenantId, request);
    const missing = missingOptions(options, provider.machineOptions);
    if (missing.length > 0) {
      throw new DomainError('CONFLICT', `provider ${provider.name} cannot carry out ${missing.join(', ')}; supported: see the node's supported_operations. Nothing was charged.`);
    }
    const terminationHours = options.terminationHours;

    const created = await this.storage.transaction(async (uow): Promise<Rented & { upstreamVolumeIds?: string[] }> => {
      const now = this.clock.now();
      const account = await uow.accounts.lock(caller.tenantId, now);
      if (!account) throw notFound(`tenant ${caller.tenantId}`);
      // the account lock serializes this tenant's rentals: a second request with the key sees the first
      if (request.idempotencyKey) {
        const earlier = await uow.instances.byIdempotencyKey(caller.tenantId, request.idempotencyKey);
        // answered after the commit: a replay may wait for the first request, which needs this lock
        if (earlier) return { instance: earlier, replayed: true };
      }
      const commitment = adoption?.commitmentCents ?? rate * (terminationHours ?? 1);
      await admitSpend(
        uow,
        caller,
        {
          kind: 'rental',
          fundsNeededCents: rate,
          fundsFor: 'the first hour costs',
          hours: terminationHours,
          hoursField: ['body', 'termination_hours'],
          commitmentCents: commitment,
          commitmentFor: 'rate x termination_hours',
          heldCents: adoption?.heldCents ?? 0,
          burnCentsPerHour: rate,
        },
        now,
        account,
      );
      const volumes = await this.volumes.forRental(uow, caller.tenantId, options.volumeIds, { provider: provider.name, region: offer.region }, now);
      const instance: Instance = {
        id: this.ids.newId(INSTANCE_ID_PREFIX),
        tenantId: caller.tenantId,
        tokenId: caller.id,
        nodeId: offer.id,
        provider: provider.name,
        offerId,
        name: request.name,
        status: 'provisioning',
        gpuType: offer.gpuType,
        gpuCount: offer.gpuCount,
        rateCentsPerHour: rate,
        createdAt: now,
        startedAt: null,
        paidUntil: new Date(now.getTime() + HOUR_MS),
        removalScheduledAt: null,
        windowEndsAt: adoption?.windowEndsAt ?? (terminationHours === null ? null : new Date(now.getTime() + terminationHours * HOUR_MS)),
        terminatedAt: null,
        machineId: null,
        sshHost: null,
        sshPort: null,
        idempotencyKey: request.idempotencyKey,
        requestDigest: digest,
        chargedCents: rate,
        commitmentCents: commitment,
        lastSeenAt: null,
        failure: null,
        launch: null,
        ...options.record,
        volumeIds: options.volumeIds,
        ledgerNote: adoption?.ledgerNote ?? null,
        minimumMinutes: spot ? SPOT_MINIMUM_MINUTES : ON_DEMAND_MINIMUM_MINUTES,
        preemptedAt: null,
      };
      await uow.instances.add(instance);
      await adoption?.adopt(uow, instance);
      await uow.volumes.attach(options.volumeIds, instance.id);
      await postEntry(uow, this.ids, { tenantId: caller.tenantId, kind: 'rental_hour', amountCents: -rate, reference: instance.id, description: ledgerDescription('first hour', instance), uniqueKey: `rent:${instance.id}`, at: now });
      return { instance, replayed: false, upstreamVolumeIds: volumes.upstreamIds };
    });
    if (created.replayed) return this.replay(created.instance, digest);
    this.metrics.rentalCreated(provider.name);
    const bid = spot ? upstreamBidUsd(spot.bidCentsPerGpuHour * created.instance.gpuCount, this.market.settings.markupBps) : null;
    const launching = this.launch(provider, created.instance, { ...options.setup, volumeIds: created.upstreamVolumeIds ?? [] }, bid);
    const settled = launching.then(
      () => undefined,
      () => undefined,
    );
    this.launching.set(created.instance.id, settled);
    void settled.then(() => this.launching.delete(created.instance.id));
    return { instance: await answeredBy(launching, answerBy, created.instance), replayed: false };
  }

  async list(tenantId: string, limit: number): Promise<Instance[]> {
    return this.storage.read((uow) => uow.instances.list(tenantId, limit));
  }

  /** One instance; a machine on its way up (or rebooting) is asked how it is doing. */
  async get(tenantId: string, instanceId: string): Promise<Instance> {
    const instance = await this.storage.read((uow) => uow.instances.get(tenantId, instanceId));
    if (!instance) throw notFound(`instance ${instanceId}`);
    return this.refresh(instance);
  }

  /** A machine on its way up (or rebooting) is asked how it is doing; any other instance is as stored. */
  private async refresh(instance: Instance): Promise<Instance> {
    const { tenantId, id: instanceId } = instance;
    if ((instance.status !== 'provisioning' && instance.status !== 'rebooting') || !instance.machineId) return instance;
    const provider = this.providers.get(instance.provider);
    let machine: Machine | null;
    try {
      machine = provider ? await provider.getMachine(instance.machineId) : null;
    } catch {
      return instance; // the sweep's reconciler will try again; the stored state is still true
    }
    if (!machine || (machine.status !== 'running' && machine.status !== 'provisioning')) return instance;
    return this.storage.transaction(async (uow) => {
      const locked = await uow.instances.lock(tenantId, instanceId);
      if (!locked || (locked.status !== 'provisioning' && locked.status !== 'rebooting')) return locked ?? instance;
      const updated = this.withMachine(locked, machine);
      await uow.instances.update(updated);
      return updated;
    });
  }

  /**
   * Stops and removes the machine. Billing ends now (or at the removal time or window end, when that came
   * first): the unused time is refunded (after the first hour); a machine that never started costs nothing.
   */
  async terminate(tenantId: string, instanceId: string): Promise<Instance> {
    const current = await this.storage.read((uow) => uow.instances.get(tenantId, instanceId));
    if (!current) throw notFound(`instance ${instanceId}`);
    // a machine that came up since we last looked has started: that decides what it costs
    await this.refresh(current);
    const instance = await this.storage.transaction(async (uow) => {
      await uow.accounts.lock(tenantId, this.clock.now()); // always the account before its instances
      const locked = await uow.instances.lock(tenantId, instanceId);
      if (!locked) throw notFound(`instance ${instanceId}`);
      if (!isLive(locked.status) || locked.status === 'terminating') return locked;
      return this.endBilling(uow, locked, this.clock.now(), 'terminating');
    });
    return instance.status === 'terminating' ? this.removeUpstream(instance) : instance;
  }

  /** Terminates every live machine of the tenant (emergency stop, hold), a few at a time per provider. */
  async terminateAll(tenantId: string): Promise<Instance[]> {
    const stopped = await this.terminateAllOf([tenantId]);
    if (stopped.errors.length > 0) throw new Error(stopped.errors.join('; '));
    return stopped.terminated;
  }

  /**
   * Terminates every live machine of these tenants (the breakers of a pass): billing ends for each, and the cloud
   * is called a few machines at a time per provider, so a thousand machines neither go one by one nor all at once.
   * A machine whose termination failed is listed in `errors` (it stays terminating or live for the next pass).
   */
  async terminateAllOf(tenantIds: readonly string[]): Promise<{ terminated: Instance[]; errors: string[] }> {
    const live = (await Promise.all(tenantIds.map((tenantId) => this.storage.read((uow) => uow.instances.live(tenantId))))).flat();
    const terminated: Instance[] = [];
    const errors: string[] = [];
    await inParallelBy(live, (instance) => instance.provider, this.providerConcurrency, async (instance) => {
      try {
        terminated.push(await this.terminate(instance.tenantId, instance.id));
      } catch (error) {
        errors.push(`instance ${instance.id}: ${messageOf(error)}`);
      }
    });
    return { terminated, errors };
  }

  async reboot(tenantId: string, instanceId: string): Promise<Instance> {
    const instance = await this.storage.read((uow) => uow.instances.get(tenantId, instanceId));
    if (!instance) throw notFound(`instance ${instanceId}`);
    const provider = this.providers.get(instance.provider);
    if (!provider || !isRebootable(provider)) throw unsupported(instance.provider, 'reboot');
    if (instance.status !== 'running' || !instance.machineId) {
      throw new DomainError('CONFLICT', `instance ${instanceId} is ${instance.status}; only a running machine can be rebooted`);
    }
    try {
      await provider.rebootMachine(instance.machineId);
    } catch (error) {
      if (error instanceof ProviderFailure && error.kind === 'rejected') throw new DomainError('CONFLICT', `reboot refused: ${error.message}`);
      throw upstreamUnavailable(`could not reach ${provider.name} to reboot`, error, 'try again shortly');
    }
    return this.storage.transaction(async (uow) => {
      const locked = await uow.instances.lock(tenantId, instanceId);
      if (!locked || locked.status !== 'running') return locked ?? instance;
      const updated: Instance = { ...locked, status: 'rebooting' };
      await uow.instances.update(updated);
      return updated;
    });
  }

  /** Sets (or, with null, cancels) when the machine removes itself; the sweep carries it out. */
  async scheduleRemoval(tenantId: string, instanceId: string, at: Date | null): Promise<Instance> {
    const now = this.clock.now();
    if (at && at.getTime() <= now.getTime()) throw invalidInput(['body', 'removal_scheduled_at'], 'must be in the future');
    const updated = await this.storage.transaction(async (uow) => {
      const locked = await uow.instances.lock(tenantId, instanceId);
      if (!locked) throw notFound(`instance ${instanceId}`);
      if (!isLive(locked.status) || locked.status === 'terminating') {
        throw new DomainError('CONFLICT', `instance ${instanceId} is ${locked.status}; there is nothing left to remove`);
      }
      const next: Instance = { ...locked, removalScheduledAt: at };
      await uow.instances.update(next);
      return next;
    });
    const provider = this.providers.get(updated.provider);
    if (provider && isSelfRemoving(provider) && updated.machineId) {
      // the sweep removes the machine anyway; the provider's own timer is a second line
      await (at ? provider.scheduleRemoval(updated.machineId, at) : provider.cancelScheduledRemoval(updated.machineId)).catch(() => undefined);
    }
    return updated;
  }

  /**
   * Ends billing (refund or final charge), releases the unused commitment, and marks the status. Billing
   * ends at the earliest of `at`, the scheduled removal and the window end, so nothing is billed past the
   * time the caller asked the machine to go (nor past a capped token's window). A machine that never
   * started, or a failed rental, costs 0.
   */
  async endBilling(uow: UnitOfWork, instance: Instance, at: Date, status: 'terminating' | 'failed', failure: string | null = null): Promise<Instance> {
    const end = earliest(at, removalAt(instance))!;
    const cost = status === 'failed' || instance.startedAt === null ? 0 : instanceCostUntil(instance, end);
    const settlement = settlementOf(instance, cost, `final:${instance.id}`, this.clock.now());
    if (settlement) await postEntry(uow, this.ids, settlement);
    if (instance.commitmentCents > cost) await uow.tokens.addCommitment(instance.tokenId, cost - instance.commitmentCents);
    const ended: Instance = {
      ...instance,
      status,
      terminatedAt: end,
      paidUntil: end.getTime() > instance.paidUntil.getTime() ? end : instance.paidUntil,
      chargedCents: cost,
      commitmentCents: Math.min(instance.commitmentCents, cost),
      failure: failure ?? instance.failure,
    };
    await uow.instances.update(ended);
    await uow.volumes.detachFrom(instance.id); // volumes outlive their machines
    return ended;
  }

  /** Asks the provider to remove a terminating machine; on failure it stays terminating for the sweep. */
  async removeUpstream(instance: Instance): Promise<Instance> {
    const provider = this.providers.get(instance.provider);
    if (!provider || !instance.machineId) return instance; // without a machine id the reconciler finds it by label
    try {
      await provider.terminateMachine(instance.machineId);
    } catch {
      return instance;
    }
    return this.storage.transaction(async (uow) => {
      const locked = await uow.instances.lock(instance.tenantId, instance.id);
      if (!locked || locked.status !== 'terminating') return locked ?? instance;
      const done: Instance = { ...locked, status: 'terminated' };
      await uow.instances.update(done);
      return done;
    });
  }

  /**
   * Calls the provider for a committed rental and records how it answered. A definite refusal fails the
   * instance and refunds it (409); no answer leaves it to the reconciler, which adopts the machine by its
   * label or fails it at the deadline. A machine made for a rental that ended meanwhile is removed.
   */
  private async launch(provider: Provider, instance: Instance, setup: MachineSetup & { volumeIds: string[] }, bidUsdPerHour: string | null): Promise<Instance> {
    let machine: Machine | null = null;
    let refusal: string | null = null;
    try {
      const request = { offerId: instance.offerId, label: instance.id, name: instance.name ?? instance.id, ...setup };
      machine = bidUsdPerHour !== null && isSpotMarket(provider) ? await provider.createSpotMachine({ ...request, bidUsdPerHour }) : await provider.createMachine(request);
    } catch (error) {
      if (error instanceof ProviderFailure && error.kind === 'rejected') {
        refusal = `${provider.name} refused the machine (${error.message}); the charge was refunded. Search again with GET /v1/gpus.`;
      }
    }
    const launch: LaunchOutcome = machine ? 'created' : refusal ? 'refused' : 'ambiguous';
    const recorded = await this.storage.transaction(async (uow) => {
      if (refusal) await uow.accounts.lock(instance.tenantId, this.clock.now()); // the refund moves the balance
      const locked = await uow.instances.lock(instance.tenantId, instance.id);
      if (!locked) return instance;
      const answered: Instance = { ...locked, launch };
      if (refusal && answered.status === 'provisioning' && !answered.machineId) return this.endBilling(uow, answered, this.clock.now(), 'failed', refusal);
      // a machine made for a rental that ended while the create was in flight keeps its id, to be removed
      const updated = !machine ? answered : answered.status === 'provisioning' ? this.withMachine({ ...answered, machineId: machine.machineId }, machine) : { ...answered, machineId: answered.machineId ?? machine.machineId };
      await uow.instances.update(updated);
      return updated;
    });
    if (refusal && recorded.status === 'failed') {
      this.metrics.rentalFailed(provider.name, 'refused');
      throw new DomainError('CONFLICT', refusal);
    }
    if (!machine) return recorded; // no definite answer: the reconciler adopts a machine by its label, or fails the rental at the deadline
    if (recorded.status === 'terminating') return this.removeUpstream(recorded);
    if (recorded.status === 'failed' || recorded.status === 'terminated') await provider.terminateMachine(machine.machineId).catch(() => undefined); // the reconciler removes it otherwise
    return recorded;
  }

  private withMachine(instance: Instance, machine: Machine): Instance {
    const now = this.clock.now();
    const running = machine.status === 'running';
    return {
      ...instance,
      machineId: instance.machineId ?? machine.machineId,
      status: running ? 'running' : instance.status,
      startedAt: running ? (instance.startedAt ?? now) : instance.startedAt,
      sshHost: machine.sshHost ?? instance.sshHost,
      sshPort: machine.sshPort ?? instance.sshPort,
      lastSeenAt: now,
    };
  }

  /**
   * Before a retry answers that it could not check the node, it asks (under the account lock, where rentals
   * with a key are serialized) whether a copy of it sent at the same moment has rented meanwhile: the copy
   * that took the node's last unit must not make this one answer "gone".
   */
  private async madeMeanwhile(caller: Token, request: RentRequest, digest: string): Promise<Rented | null> {
    const key = request.idempotencyKey;
    if (!key) return null;
    const earlier = await this.storage.transaction(async (uow) => {
      await uow.accounts.lock(caller.tenantId, this.clock.now());
      return uow.instances.byIdempotencyKey(caller.tenantId, key);
    });
    return earlier ? this.replay(earlier, digest) : null;
  }

  /**
   * The answer the first request with this key got: the same instance, or the same refusal. While the
   * first request still waits for the provider's create, a retry waits for it too (here when it runs in
   * this process, else by reading the row again), so both answer alike.
   */
  private async replay(earlier: Instance, digest: string): Promise<Rented> {
    let instance = sameRequest(earlier, digest, 'instance');
    for (let waited = 0; inFlight(instance); waited += LAUNCH_POLL_MS) {
      if (waited >= this.launchWaitMs) {
        throw new DomainError('CONFLICT', `the first request with this idempotency_key (instance ${instance.id}) is still waiting for ${instance.provider}; retry in a few seconds`);
      }
      const local = this.launching.get(instance.id);
      await (local ?? new Promise((resolve) => setTimeout(resolve, LAUNCH_POLL_MS)));
      instance = (await this.storage.read((uow) => uow.instances.get(instance.tenantId, instance.id))) ?? instance;
      if (local) break;
    }
    if (instance.launch === 'refused' && instance.status === 'failed' && instance.failure) throw new DomainError('CONFLICT', instance.failure);
    return { instance, replayed: true };
  }

}

/**
 * The launch's outcome, or, when it takes past `answerBy` (real time), the committed instance as it is (provisioning):
 * the create goes on and records its answer when it comes; a create that never answers is cut at its own deadline
 * and settled by the reconciler as an ambiguous one. A caller never hangs on a slow cloud.
 */
async function answeredBy(launching: Promise<Instance>, answerBy: number, committed: Instance): Promise<Instance> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<Instance>((resolve) => {
    timer = setTimeout(() => resolve(committed), Math.max(0, answerBy - performance.now()));
  });
  try {
    return await Promise.race([launching, late]);
  } finally {
    clearTimeout(timer);
  }
}

function splitNodeId(nodeId: string): [string, string] | [] {
  const at = nodeId.indexOf(':');
  return at <= 0 ? [] : [nodeId.slice(0, at), nodeId.slice(at + 1)];
}

/** A spot rental's rate: the offer's spot price now (markup included, as nodes show it), never above the bid. */
function spotRate(provider: Provider, offer: Offer, bidCentsPerGpuHour: Cents, markupBps: number): Cents {
  if (!isSpotMarket(provider)) throw new DomainError('CONFLICT', `provider ${provider.name} has no spot market; supported: see the node's supported_operations`);
  if (!offer.spotPriceUsdPerHour) throw new DomainError('CONFLICT', `node ${offer.id} has no spot price now; search again with GET /v1/gpus (spot_price_per_gpu_hour_cents)`);
  const rate = rateCentsPerHour(offer.spotPriceUsdPerHour, markupBps);
  const perGpu = perGpuCents(rate, offer.gpuCount);
  if (perGpu > bidCentsPerGpuHour) {
    throw new DomainError('CONFLICT', `node ${offer.id} costs ${perGpu} cents per GPU-hour on its spot market now, above the bid of ${bidCentsPerGpuHour}`);
  }
  return rate;
}

/**
 * Our whole-machine bid in cents (what the caller may pay, markup included) as the provider's price: the USD
 * before our markup, rounded down to 8 decimals, so the provider never runs it at a price we would sell above
 * the bid. A spot price p passes `perGpu(ceil(p x (1 + markup))) <= bid` exactly when p is at most this.
 */
export function upstreamBidUsd(bidCents: Cents, markupBps: number): string {
  const scale = 10n ** 8n;
  // bidCents / 100 / (1 + markupBps / 10000) USD, in 1e-8 USD, rounded down
  const units = (BigInt(bidCents) * (scale / 100n) * 10_000n) / (10_000n + BigInt(markupBps));
  const whole = units / scale;
  const fraction = (units % scale).toString().padStart(8, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : `${whole}`;
}
