import type { RecordedUsage, SystemUsage } from '../metering/record-system-usage.ts';
import { VOLUME_STORAGE } from '../metering/prices.ts';
import type { UnitOfWork } from '../ports/storage.ts';
import type { Volume } from './volume.ts';

const HOUR_MS = 3_600_000;

/** What recording a volume's hours needs of metering: a record at the volume's own price, idempotent on its key. */
export interface UsageRecorder {
  record(uow: UnitOfWork | null, usage: SystemUsage): Promise<RecordedUsage>;
}

/** When a volume's storage stops being billed: its deletion (or now), or the end of its window when that came first. */
export const billingEndOf = (volume: Volume, at: Date): Date => (volume.endsAt && volume.endsAt.getTime() < at.getTime() ? volume.endsAt : at);

/**
 * Records a locked volume's started hours not recorded yet, from its creation to its billing end (its deletion, the
 * end of its window, or `now`), each keyed by volume and hour; answers the volume with its hours recorded (for the
 * caller to store) and how many records this call made.
 */
export async function recordStartedHours(usage: UsageRecorder, uow: UnitOfWork, locked: Volume, now: Date): Promise<{ volume: Volume; recorded: number }> {
  const end = billingEndOf(locked, locked.deletedAt ?? now);
  const started = Math.ceil((end.getTime() - locked.createdAt.getTime()) / HOUR_MS);
  let recorded = 0;
  for (let hour = locked.billedHours + 1; hour <= started; hour++) {
    const from = locked.createdAt.getTime() + (hour - 1) * HOUR_MS;
    const made = await usage.record(uow, {
      tenantId: locked.tenantId,
      kind: VOLUME_STORAGE,
      quantity: locked.sizeGb,
      unitPriceUsd: locked.priceUsdPerGbHour,
      reference: locked.id,
      uniqueKey: `volume:${locked.id}:${hour}`,
      startedAt: new Date(from),
      endedAt: new Date(Math.min(from + HOUR_MS, end.getTime())),
    });
    if (made.created) recorded++;
  }
  return { volume: started > locked.billedHours ? { ...locked, billedHours: started } : locked, recorded };
}
