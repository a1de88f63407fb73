import { isolated } from '../billing/isolated.ts';
import type { Clock } from '../ports/clock.ts';
import type { Provider, UpstreamVolume, VolumeHost } from '../ports/providers.ts';
import type { Storage } from '../ports/storage.ts';
import { isVolumeId, type Volume } from './volume.ts';
import { failVolume } from './volume-commitment.ts';

/** What one volume reconciliation did, added to the sweep's report. */
export interface VolumeReconcileCounts {
  volumesAdopted: number;
  volumesFailed: number;
  volumeOrphansDeleted: number;
  errors: string[];
}

/** Upstream states that are no volume to adopt: its deadline runs on, and once failed it is removed as an orphan. */
const UNUSABLE = new Set<UpstreamVolume['status']>(['deleting', 'error']);

/**
 * Volumes as rentals are (core/billing/reconciler.ts): a create the provider gave no answer to leaves the volume
 * `creating`, since the provider may have made it. Each pass, a `creating` volume found upstream by its label is
 * adopted (available, billed from its creation like any other); one still not found after the provisioning
 * deadline is failed at no cost; and an upstream volume carrying one of our volume ids that nobody pays for
 * (its row failed, deleted, missing, or pointing at another upstream volume) is deleted upstream.
 *
 * Decisions are taken from our rows read after the provider's listing: a volume in the listing was made after
 * its row was committed, so a volume being created while this runs is never taken for an orphan; and an
 * orphan's row is checked again under its lock before the volume is deleted.
 */
export class VolumeReconciler {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly deadlineMs: number;

  constructor(deps: { storage: Storage; clock: Clock; provisioningDeadlineMs: number }) {
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.deadlineMs = deps.provisioningDeadlineMs;
  }

  async reconcile(host: Provider & VolumeHost, counts: VolumeReconcileCounts): Promise<void> {
    const upstream = (await host.listVolumes()).filter((volume) => isVolumeId(volume.label));
    const creating = await this.storage.read((uow) => uow.volumes.creatingAt(host.name));
    const byLabel = new Map<string, UpstreamVolume>();
    for (const volume of upstream) if (!UNUSABLE.has(volume.status) && !byLabel.has(volume.label!)) byLabel.set(volume.label!, volume);

    for (const volume of creating) {
      await isolated(counts.errors, `${host.name}: volume ${volume.id}`, () => this.settle(volume, byLabel.get(volume.id) ?? null, counts));
    }

    const rows = await this.storage.read((uow) => uow.volumes.byIds([...new Set(upstream.map((v) => v.label!))]));
    const byId = new Map(rows.map((row) => [row.id, row]));
    for (const volume of upstream) {
      if (!isOrphan(byId.get(volume.label!) ?? null, volume, host.name)) continue;
      await isolated(counts.errors, `${host.name}: orphan volume ${volume.volumeId}`, () => this.removeOrphan(host, volume, counts));
    }
  }

  /** Adopts a `creating` volume the provider made, or fails one it never made once the deadline is past. */
  private async settle(volume: Volume, found: UpstreamVolume | null, counts: VolumeReconcileCounts): Promise<void> {
    const pastDeadline = this.clock.now().getTime() - volume.createdAt.getTime() >= this.deadlineMs;
    if (!found && !pastDeadline) return; // an ambiguous create may still land
    const changed = await this.storage.transaction(async (uow) => {
      const [locked] = await uow.volumes.lockMany(volume.tenantId, [volume.id]);
      if (!locked || locked.status !== 'creating') return false;
      // adopted: storage is billed from the row's created_at, as for a volume whose create answered
      if (found) await uow.volumes.update({ ...locked, status: 'available', upstreamId: found.volumeId });
      else await failVolume(uow, locked);
      return true;
    });
    if (changed && found) counts.volumesAdopted++;
    else if (changed) counts.volumesFailed++;
  }

  /** An upstream volume of ours that nobody pays for: deleted, after a check under its row's lock. */
  private async removeOrphan(host: Provider & VolumeHost, volume: UpstreamVolume, counts: VolumeReconcileCounts): Promise<void> {
    const orphan = await this.storage.transaction(async (uow) => isOrphan(await uow.volumes.lockById(volume.label!), volume, host.name));
    if (!orphan) return; // adopted, or made, since our read: it is billed
    await host.deleteVolume(volume.volumeId);
    counts.volumeOrphansDeleted++;
  }
}

/**
 * Whether an upstream volume carrying one of our ids is nobody's: no row, a failed or deleted one, or a live one that
 * holds another upstream volume (a duplicate made by a retried create). A `creating` row is waiting for it.
 */
function isOrphan(row: Volume | null, volume: UpstreamVolume, provider: string): boolean {
  if (!row) return true;
  if (row.provider !== provider) return true;
  if (row.status === 'creating') return false;
  if (row.status === 'failed' || row.status === 'deleted') return true;
  return row.upstreamId !== volume.volumeId;
}
