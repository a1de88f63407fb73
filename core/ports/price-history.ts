import type { Cents } from '../money.ts';

/** One GPU family at one provider in one hour (or day), as its verified offers priced it. */
export interface PricePoint {
  gpuType: string;
  provider: string;
  /** The start of the hour (or UTC day) it stands for. */
  at: Date;
  minPerGpuCents: Cents;
  /** The middle per-GPU price of the verified offers; the lower middle one for an even count. */
  medianPerGpuCents: Cents;
  /** GPUs available in verified offers. */
  availableGpus: number;
}

/**
 * The market's price history (docs/decisions.md, "Price history"): one row per GPU family, provider and hour, the
 * hour's last snapshot. Bounded by families x providers x hours, never by offers.
 */
export interface PriceHistoryStore {
  /** Writes each point as its hour's row, replacing what an earlier snapshot of the same hour wrote. */
  record(points: readonly PricePoint[]): Promise<void>;
  /** Forgets every hour before `before`. */
  prune(before: Date): Promise<void>;
  /** A family's hourly rows from `since` (inclusive) to `until` (exclusive), of one provider or all, oldest first. */
  hours(gpuType: string, provider: string | null, since: Date, until: Date): Promise<PricePoint[]>;
}
