import { DomainError, invalidInput, notFound, upstreamUnavailable } from '../errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { Ids } from '../ports/ids.ts';
import { isVolumeHost, ProviderFailure, type Provider, type VolumeHost } from '../ports/providers.ts';
import type { Storage, UnitOfWork } from '../ports/storage.ts';
import { admitSpend } from '../spending/spend-gate.ts';
import type { Token } from '../tenancy/token.ts';
import { storageCents, storageCentsPerHour } from './storage-cost.ts';
import type { UsageRecorder } from './storage-hours.ts';
import { deleteVolumeRow, failVolume } from './volume-commitment.ts';
import { hourlyPrice } from './pricing.ts';
import { VOLUME_ID_PREFIX, type Volume } from './volume.ts';

export interface VolumeRequest {
  name: string;
  sizeGb: number;
  provider: string;
  region: string;
  /** Its window: the sweep deletes it when these hours end. Required when the caller's chain has a cap or a maximum of hours. */
  hours: number | null;
}

/** What operators bound a tenant's volumes by (VOLUME_MAX_GB_PER_TENANT). */
export interface VolumeLimits {
  maxGbPerTenant: number;
}

/** Funds a new volume needs at least: its first day of storage (or its whole window, when shorter). */
const FUNDED_HOURS = 24;
const HOUR_MS = 3_600_000;

/** VOLUME_MAX_GB_PER_TENANT's default: what one tenant may hold at the providers, in GB. */
export const DEFAULT_MAX_GB_PER_TENANT = 10_000;

/** Where a rental's machine will be: its volumes must be there too. */
export interface Placement {
  provider: string;
  region: string | null;
}

/**
 * Persistent volumes: made at a provider that has them, attached at rental in the same
 * provider and region, kept when machines stop (emergency stop and breaker included), deleted only when no
 * live machine uses them. Their storage is billed through metering, per started hour, by the sweep.
 */
export class VolumeService {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly ids: Ids;
  private readonly hosts: Map<string, Provider & VolumeHost>;
  private readonly limits: VolumeLimits;
  private readonly usage: UsageRecorder;

  /** `usage`: where a deleted volume's last hours are recorded, in the deletion's transaction. */
  constructor(deps: { storage: Storage; clock: Clock; ids: Ids; providers: readonly Provider[]; usage: UsageRecorder; limits?: VolumeLimits }) {
    this.limits = deps.limits ?? { maxGbPerTenant: DEFAULT_MAX_GB_PER_TENANT };
    this.usage = deps.usage;
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.ids = deps.ids;
    this.hosts = new Map(deps.providers.filter(isVolumeHost).map((provider) => [provider.name, provider]));
  }

  /** The enabled providers that have volumes. */
  get providers(): string[] {
    return [...this.hosts.keys()];
  }

  /**
   * A volume is money like a machine (docs/decisions.md, "Volumes cost money"): it passes the spend gate in the
   * transaction that records it (account open, funds for its first day of storage, the chain's cap and hours, its
   * storage for its window committed on the chain), and the tenant's volumes stay within VOLUME_MAX_GB_PER_TENANT.
   * Only then is the provider asked to make it.
   */
  async create(caller: Token, request: VolumeRequest): Promise<Volume> {
    const tenantId = caller.tenantId;
    const host = this.hosts.get(request.provider);
    if (!host) {
      const have = this.providers;
      throw invalidInput(['body', 'provider'], `${request.provider} has no volumes here; ${have.length > 0 ? `providers with volumes: ${have.join(', ')}` : 'no enabled provider has volumes'}`);
    }
    const offers = await host.volumeOffers().catch((error: unknown) => {
      throw upstreamUnavailable(`could not ask ${host.name} where volumes can be made`, error, 'try again shortly; nothing was made');
    });
    const offer = offers.find((o) => o.region === request.region);
    if (!offer) throw invalidInput(['body', 'region'], `${host.name} makes volumes in ${offers.map((o) => o.region).join(', ') || 'no region now'}`);

    const now = this.clock.now();
    const price = { sizeGb: request.sizeGb, priceUsdPerGbHour: hourlyPrice(offer.priceUsdPerGbMonth) };
    const rate = storageCentsPerHour(price);
    const volume: Volume = {
      id: this.ids.newId(VOLUME_ID_PREFIX),
      tenantId,
      name: request.name,
      sizeGb: request.sizeGb,
      provider: host.name,
      region: offer.region,
      status: 'creating',
      upstreamId: null,
      attachedInstanceId: null,
      priceUsdPerGbMonth: offer.priceUsdPerGbMonth,
      priceUsdPerGbHour: price.priceUsdPerGbHour,
      billedHours: 0,
      createdAt: now,
      deletedAt: null,
      tokenId: caller.id,
      endsAt: request.hours === null ? null : new Date(now.getTime() + request.hours * HOUR_MS),
      commitmentCents: rate * (request.hours ?? 0),
    };
    await this.storage.transaction(async (uow) => {
      const account = await uow.accounts.lock(tenantId, now);
      if (!account) throw notFound(`tenant ${tenantId}`);
      const held = await uow.volumes.heldGb(tenantId);
      if (held + request.sizeGb > this.limits.maxGbPerTenant) {
        throw new DomainError(
          'CONFLICT',
          `the tenant's volumes hold ${held} GB and the limit per tenant is ${this.limits.maxGbPerTenant} GB (VOLUME_MAX_GB_PER_TENANT); delete a volume or ask the operator to raise the limit. Nothing was made.`,
        );
      }
      const funded = Math.min(FUNDED_HOURS, request.hours ?? FUNDED_HOURS);
      await admitSpend(
        uow,
        caller,
        {
          kind: 'volume',
          fundsNeededCents: storageCents(price, funded),
          fundsFor: `${funded} hours of its storage cost`,
          hours: request.hours,
          hoursField: ['body', 'hours'],
          commitmentCents: volume.commitmentCents,
          commitmentFor: `${rate} cents an hour of storage x ${request.hours} hours`,
          burnCentsPerHour: rate,
        },
        now,
        account,
      );
      await uow.volumes.add(volume);
    });
    let made;
    try {
      made = await host.createVolume({ label: volume.id, name: volume.name, sizeGb: volume.sizeGb, region: volume.region });
    } catch (error) {
      if (error instanceof ProviderFailure && error.kind === 'rejected') {
        await this.storage.transaction(async (uow) => {
          const [locked] = await uow.volumes.lockMany(tenantId, [volume.id]);
          if (locked?.status === 'creating') await failVolume(uow, locked);
        });
        throw new DomainError('CONFLICT', `${host.name} refused the volume (${error.message}); nothing is billed`);
      }
      // no answer (timeout, reset, outage): the provider may have made it under our label. It stays `creating`;
      // the sweep adopts it once found upstream, or fails it at no cost past the provisioning deadline
      return volume;
    }
    const answered = await this.storage.transaction(async (uow) => {
      const [locked] = await uow.volumes.lockMany(tenantId, [volume.id]);
      // the sweep may have adopted it meanwhile, or failed it past the deadline (then the volume is an orphan it deletes)
      if (!locked || locked.status !== 'creating') return locked ?? volume;
      const ready: Volume = { ...locked, status: 'available', upstreamId: made.volumeId };
      // storage is billed from creation: the row's created_at stands
      await uow.volumes.update(ready);
      return ready;
    });
    if (answered.status === 'failed') {
      throw new DomainError('CONFLICT', `${host.name} answered only after volume ${volume.id} was given up; the sweep deletes it there and nothing is billed`);
    }
    return answered;
  }

  list(tenantId: string): Promise<Volume[]> {
    return this.storage.read((uow) => uow.volumes.list(tenantId));
  }

  /** Deletes a volume no live machine uses, upstream first; its storage is billed up to now, and its commitment drops to that. */
  async delete(tenantId: string, volumeId: string): Promise<void> {
    const volume = await this.storage.read((uow) => uow.volumes.get(tenantId, volumeId));
    if (!volume || volume.status === 'deleted') throw notFound(`volume ${volumeId}`);
    if (volume.status === 'creating') {
      throw new DomainError('CONFLICT', `volume ${volumeId} is still being made: ${volume.provider} has not answered yet; it becomes available or failed within minutes`);
    }
    if (volume.status === 'attached') {
      throw new DomainError('CONFLICT', `volume ${volumeId} is attached to instance ${volume.attachedInstanceId}; terminate it first (the volume is kept)`);
    }
    const host = this.hosts.get(volume.provider);
    if (volume.upstreamId && host) {
      try {
        await host.deleteVolume(volume.upstreamId);
      } catch (error) {
        if (error instanceof ProviderFailure && error.kind === 'rejected') throw new DomainError('CONFLICT', `${volume.provider} refused to delete volume ${volumeId}: ${error.message}`);
        throw upstreamUnavailable(`could not reach ${volume.provider} to delete volume ${volumeId}`, error, 'try again shortly; it stays and is billed meanwhile');
      }
    }
    await this.storage.transaction(async (uow) => {
      const [locked] = await uow.volumes.lockMany(tenantId, [volumeId]);
      if (!locked || locked.status === 'deleted') return;
      if (locked.status === 'creating') throw new DomainError('CONFLICT', `volume ${volumeId} is still being made`);
      if (locked.status === 'attached') throw new DomainError('CONFLICT', `volume ${volumeId} was attached to instance ${locked.attachedInstanceId} meanwhile`);
      await deleteVolumeRow(uow, this.usage, locked, this.clock.now());
    });
  }

  /**
   * A rental's volumes, inside its transaction: each the tenant's, available, and at the machine's provider
   * and region; answers the provider's ids to attach. The rental attaches them once it is inserted.
   */
  async forRental(uow: UnitOfWork, tenantId: string, volumeIds: readonly string[], placement: Placement, now: Date): Promise<{ volumes: Volume[]; upstreamIds: string[] }> {
    if (volumeIds.length === 0) return { volumes: [], upstreamIds: [] };
    const found = await uow.volumes.lockMany(tenantId, volumeIds);
    const byId = new Map(found.map((v) => [v.id, v]));
    const volumes = volumeIds.map((id, index) => {
      const volume = byId.get(id);
      if (!volume || volume.status === 'deleted') throw invalidInput(['body', 'volume_ids', index], `no volume ${id}; see GET /v1/volumes`);
      if (volume.status !== 'available' || !volume.upstreamId) {
        throw new DomainError('CONFLICT', `volume ${id} is ${volume.status}${volume.attachedInstanceId ? ` (instance ${volume.attachedInstanceId})` : ''}; a volume serves one machine at a time`);
      }
      if (volume.endsAt && volume.endsAt.getTime() <= now.getTime()) {
        throw new DomainError('CONFLICT', `volume ${id}'s window ended at ${volume.endsAt.toISOString()}; the sweep deletes it`);
      }
      if (volume.provider !== placement.provider || (placement.region !== null && volume.region !== placement.region)) {
        throw new DomainError('CONFLICT', `volume ${id} is at ${volume.provider} in ${volume.region}; the node is at ${placement.provider} in ${placement.region ?? 'an unknown region'}: rent a node where the volume is`);
      }
      return volume;
    });
    return { volumes, upstreamIds: volumes.map((v) => v.upstreamId!) };
  }
}
