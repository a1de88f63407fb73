import type { Clock } from '../ports/clock.ts';
import type { Storage, UnitOfWork } from '../ports/storage.ts';
import type { RecordedUsage, SystemUsage } from '../metering/record-system-usage.ts';
import { isolated } from '../billing/isolated.ts';
import { billingEndOf } from './volume-commitment.ts';

const HOUR_MS = 3_600_000;

/** What the volume meter needs of metering: a record at the volume's own price, idempotent on its key. */
export interface UsageRecorder {
  record(uow: UnitOfWork | null, usage: SystemUsage): Promise<RecordedUsage>;
}

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
          const end = billingEndOf(locked, locked.deletedAt ?? now);
          const started = Math.ceil((end.getTime() - locked.createdAt.getTime()) / HOUR_MS);
          for (let hour = locked.billedHours + 1; hour <= started; hour++) {
            const from = locked.createdAt.getTime() + (hour - 1) * HOUR_MS;
            const made = await this.usage.record(uow, {
              tenantId: locked.tenantId,
              kind: 'volume_storage',
              quantity: locked.sizeGb,
              unitPriceUsd: locked.priceUsdPerGbHour,
              reference: locked.id,
              uniqueKey: `volume:${locked.id}:${hour}`,
              startedAt: new Date(from),
              endedAt: new Date(Math.min(from + HOUR_MS, end.getTime())),
            });
            if (made.created) report.recorded++;
          }
          if (started > locked.billedHours) await uow.volumes.update({ ...locked, billedHours: started });
        }),
      );
    }
    return report;
  }
}
