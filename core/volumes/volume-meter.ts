import type { Clock } from '../ports/clock.ts';
import type { Storage } from '../ports/storage.ts';
import { isolated } from '../billing/isolated.ts';
import { recordStartedHours, type UsageRecorder } from './storage-hours.ts';

export interface StorageReport {
  /** GB-hour records made this pass. */
  recorded: number;
  errors: string[];
}

/**
 * Volume storage is metered by the hour (docs/decisions.md, Metering): each started hour a volume exists, from its
 * creation to its deletion (or the end of its window, when it has one), is one usage record of size_gb GB-hours at the volume's GB-hour price,
 * referencing the volume, keyed by volume and hour so that two sweeps never record one hour twice.
 */
export class VolumeMeter {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly usage: UsageRecorder;

  constructor(deps: { storage: Storage; clock: Clock; usage: UsageRecorder }) {
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.usage = deps.usage;
  }

  async recordStorage(): Promise<StorageReport> {
    const now = this.clock.now();
    const report: StorageReport = { recorded: 0, errors: [] };
    const due = await this.storage.read((uow) => uow.volumes.withHoursToRecord(now));
    for (const volume of due) {
      await isolated(report.errors, `storage of volume ${volume.id}`, () =>
        this.storage.transaction(async (uow) => {
          const [locked] = await uow.volumes.lockMany(volume.tenantId, [volume.id]);
          if (!locked) return;
          const { volume: metered, recorded } = await recordStartedHours(this.usage, uow, locked, now);
          report.recorded += recorded;
          if (metered.billedHours !== locked.billedHours) await uow.volumes.update(metered);
        }),
      );
    }
    return report;
  }
}
