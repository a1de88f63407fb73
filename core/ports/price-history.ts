import type { PricePoint } from '../market/price-history.ts';

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
