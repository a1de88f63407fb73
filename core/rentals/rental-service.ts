import type { MarketService } from '../market/market-service.ts';
import { NodeChooser } from '../market/node-chooser.ts';
import { notFound } from '../errors.ts';
import { NO_METRICS, type Metrics } from '../ports/metrics.ts';
import type { Clock } from '../ports/clock.ts';
import type { Ids, Secrets } from '../ports/ids.ts';
import { supportedOperations, type Provider } from '../ports/providers.ts';
import type { Storage, UnitOfWork } from '../ports/storage.ts';
import type { Token } from '../tenancy/token.ts';
import { MAX_CREATE_MS } from '../upstream/call-deadlines.ts';
import type { VolumeService } from '../volumes/volume-service.ts';
import { DEFAULT_LAUNCH_LEASE_MS, type RentalsContext } from './context.ts';
import { endBilling } from './end-billing.ts';
import type { Instance } from './instance.ts';
import { refreshInstance } from './machine-state.ts';
import { dryRun } from './dry-run.ts';
import { quoteRental, type QuoteRequest } from './quote-rental.ts';
import type { RentalFigures, RentalQuote } from '../quotes/quote.ts';
import { reboot } from './reboot.ts';
import { rent } from './rent.ts';
import type { Adoption, Rented, RentRequest } from './rent-request.ts';
import type { RentalCatalog } from './rental-options.ts';
import { scheduleRemoval } from './schedule-removal.ts';
import { removeUpstream, terminate, terminateAllOf } from './terminate.ts';

/**
 * Renting machines and acting on them. Each use case is a file of this folder (rent.ts and what it calls:
 * choose-node.ts, commit-rental.ts, launch.ts, replay.ts; dry-run.ts and quote-rental.ts, which rehearse a rental; terminate.ts, reboot.ts, schedule-removal.ts; end-billing.ts for the
 * sweep and the bookings); this object hands them what they work with and keeps the creates in flight in this
 * process, which a retry with the same key waits for.
 */
export class RentalService {
  private readonly context: RentalsContext;

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
    /** How long a create's lease lasts unless renewed (docs/decisions.md, "Crash anywhere, lose nothing"). Default 30 000 ms. */
    launchLeaseMs?: number;
    metrics?: Metrics;
    /** At most MAX_CREATE_MS (60 s), the default. */
    answerWithinMs?: number;
    providerConcurrency?: number;
  }) {
    this.context = {
      storage: deps.storage,
      clock: deps.clock,
      ids: deps.ids,
      secrets: deps.secrets,
      market: deps.market,
      chooser: new NodeChooser(deps.market, deps.providers),
      providers: new Map(deps.providers.map((p) => [p.name, p])),
      catalog: deps.catalog,
      volumes: deps.volumes,
      metrics: deps.metrics ?? NO_METRICS,
      settings: {
        launchWaitMs: deps.launchWaitMs ?? 60_000,
        launchLeaseMs: Math.max(1_000, deps.launchLeaseMs ?? DEFAULT_LAUNCH_LEASE_MS),
        answerWithinMs: Math.min(MAX_CREATE_MS, deps.answerWithinMs ?? MAX_CREATE_MS),
        providerConcurrency: Math.max(1, deps.providerConcurrency ?? 4),
      },
      launching: new Map(),
      holder: deps.storage.holder,
    };
  }

  /** Whether a create for this instance is in flight in this process (its lease is renewed here). */
  launchingHere(instanceId: string): boolean {
    return this.context.launching.has(instanceId);
  }

  supportedOperations(instance: Instance): string[] {
    const provider = this.context.providers.get(instance.provider);
    return provider ? supportedOperations(provider) : ['terminate'];
  }

  rent(caller: Token, request: RentRequest, adoption?: Adoption): Promise<Rented> {
    return rent(this.context, caller, request, adoption);
  }

  /** What rent would do, rehearsed and rolled back: nothing charged, committed or kept. */
  dryRun(caller: Token, request: RentRequest): Promise<RentalFigures> {
    return dryRun(this.context, caller, request);
  }

  quote(caller: Token, request: QuoteRequest): Promise<RentalQuote> {
    return quoteRental(this.context, caller, request);
  }

  list(tenantId: string, limit: number): Promise<Instance[]> {
    return this.context.storage.read((uow) => uow.instances.list(tenantId, limit));
  }

  /** One instance; a machine on its way up (or rebooting) is asked how it is doing. */
  async get(tenantId: string, instanceId: string): Promise<Instance> {
    const instance = await this.context.storage.read((uow) => uow.instances.get(tenantId, instanceId));
    if (!instance) throw notFound(`instance ${instanceId}`);
    return refreshInstance(this.context, instance);
  }

  terminate(tenantId: string, instanceId: string): Promise<Instance> {
    return terminate(this.context, tenantId, instanceId);
  }

  /** Terminates every live machine of the tenant (emergency stop, hold), a few at a time per provider. */
  async terminateAll(tenantId: string): Promise<Instance[]> {
    const stopped = await terminateAllOf(this.context, [tenantId]);
    if (stopped.errors.length > 0) throw new Error(stopped.errors.join('; '));
    return stopped.terminated;
  }

  terminateAllOf(tenantIds: readonly string[]): Promise<{ terminated: Instance[]; errors: string[] }> {
    return terminateAllOf(this.context, tenantIds);
  }

  reboot(tenantId: string, instanceId: string): Promise<Instance> {
    return reboot(this.context, tenantId, instanceId);
  }

  scheduleRemoval(tenantId: string, instanceId: string, at: Date | null): Promise<Instance> {
    return scheduleRemoval(this.context, tenantId, instanceId, at);
  }

  endBilling(uow: UnitOfWork, instance: Instance, at: Date, status: 'terminating' | 'failed', failure: string | null = null, why: string | null = null): Promise<Instance> {
    return endBilling(this.context, uow, instance, at, status, failure, why);
  }

  removeUpstream(instance: Instance): Promise<Instance> {
    return removeUpstream(this.context, instance);
  }
}
