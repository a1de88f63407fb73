import type { MarketSummary } from '../market/summary.ts';

export interface StoredMarketSummary {
  summary: MarketSummary;
  builtAt: Date;
}

/** The one market summary every replica serves, and the lease that lets one replica at a time rebuild it. */
export interface MarketSummaryStore {
  /** The last summary built from a refresh in which some market answered; null before the first. */
  latest(): Promise<StoredMarketSummary | null>;
  /**
   * Claims the next refresh: succeeds only when no refresh started after `lastStartedBefore` and no
   * claimed refresh is still running (its lease ends after `now`). The claim lasts until `leaseUntil`.
   */
  claimRefresh(now: Date, lastStartedBefore: Date, leaseUntil: Date): Promise<boolean>;
  /** Stores a new summary and ends the lease. */
  completeRefresh(summary: MarketSummary, builtAt: Date): Promise<void>;
  /** Ends the lease of a refresh in which no market answered; the last good summary stays. */
  failRefresh(error: string): Promise<void>;
  /** Whether another refresh holds the lease at `now`. */
  refreshRunning(now: Date): Promise<boolean>;
}
