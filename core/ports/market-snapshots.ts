import type { Offer } from '../market/offer.ts';

/** What storage says of one provider's shared snapshot, without its offers. */
export interface SnapshotHead {
  /** Changes whenever the stored offers do; null before the first good refresh. */
  generation: number | null;
  fetchedAt: Date | null;
  /** Why the last refresh failed; null when it did not. */
  error: string | null;
  /** A replica holds the lease on a refresh now. */
  refreshing: boolean;
}

export interface StoredSnapshot {
  generation: number;
  fetchedAt: Date;
  offers: Offer[];
}

/**
 * Every provider's offers as the replicas share them: one replica at a time holds the lease
 * on a provider's refresh and stores what it fetched; the others load the stored offers when the generation
 * changes, so N replicas ask each cloud as often as one.
 */
export interface MarketSnapshotStore {
  /**
   * Takes the lease on the provider's next refresh when no refresh started after `lastStartedBefore` and no
   * lease is live at `now`: one replica wins, until `leaseUntil` (it crashed) or until it stores or fails.
   */
  claim(provider: string, now: Date, lastStartedBefore: Date, leaseUntil: Date): Promise<boolean>;
  /** Stores the offers fetched, ends the lease and answers the new generation. */
  store(provider: string, offers: readonly Offer[], fetchedAt: Date): Promise<number>;
  /** Records the failure (the stored offers stay) and ends the lease. */
  fail(provider: string, error: string): Promise<void>;
  head(provider: string, now: Date): Promise<SnapshotHead>;
  /** The stored offers; null before the first good refresh. */
  load(provider: string): Promise<StoredSnapshot | null>;
}
