import { isolated } from '../billing/isolated.ts';
import type { Clock } from '../ports/clock.ts';
import { isVolumeHost, type Provider, type VolumeHost } from '../ports/providers.ts';
import type { Storage } from '../ports/storage.ts';
import type { Volume } from './volume.ts';
import type { UsageRecorder } from './storage-hours.ts';
import { deleteVolumeRow } from './volume-commitment.ts';

/** Volumes a pass deletes at most; the rest wait for the next pass. */
const BATCH = 500;

export interface ExpiryReport {
  /** Volumes whose window ended, deleted at their provider this pass. */
  expired: number;
  errors: string[];
}

/**
 * The sweep's 'volume windows' step (docs/decisions.md, "Volumes cost money"): a volume made with `hours` is deleted
 * when they end. Its storage is never billed past the end of its window, whenever the deletion happens; one still
 * attached to a live machine is deleted once that machine ends (a rental can no longer attach it after its end).
 * The row is checked under its lock before the provider is asked, and marked deleted once it answered.
 */
export class VolumeExpiry {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly hosts: Map<string, Provider & VolumeHost>;
  private readonly usage: UsageRecorder;

  constructor(deps: { storage: Storage; clock: Clock; providers: readonly Provider[]; usage: UsageRecorder }) {
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.usage = deps.usage;
    this.hosts = new Map(deps.providers.filter(isVolumeHost).map((provider) => [provider.name, provider]));
  }

  async deleteExpired(): Promise<ExpiryReport> {
    const report: ExpiryReport = { expired: 0, errors: [] };
    const due = await this.storage.read((uow) => uow.volumes.expired(this.clock.now(), BATCH));
    for (const volume of due) {
      if (volume.status === 'attached') continue;
      await isolated(report.errors, `window of volume ${volume.id}`, async () => {
        if (await this.expire(volume)) report.expired++;
      });
    }
    return report;
  }

  private async expire(volume: Volume): Promise<boolean> {
    const current = await this.storage.read((uow) => uow.volumes.get(volume.tenantId, volume.id));
    if (current?.status !== 'available') return false;
    const host = this.hosts.get(current.provider);
    if (current.upstreamId) {
      if (!host) throw new Error(`provider ${current.provider} is not enabled; volume ${current.id} cannot be deleted there`);
      // a volume gone already counts as deleted (the VolumeHost contract); a failure is tried again next pass
      await host.deleteVolume(current.upstreamId);
    }
    return this.storage.transaction(async (uow) => {
      const [locked] = await uow.volumes.lockMany(current.tenantId, [current.id]);
      if (locked?.status !== 'available') return false;
      await deleteVolumeRow(uow, this.usage, locked, this.clock.now());
      return true;
    });
  }
}
