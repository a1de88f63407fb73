import type { MarketNode } from './node.ts';
import type { NodeIndex } from './node-index.ts';

/** How a provider feed is paced (core/market/provider-feed.ts). */
export interface FeedTiming {
  /** A provider is asked again at most this often (upstream searches are rate limited). */
  refreshIntervalMs: number;
  /** One listing may take this long (real time); then it is abandoned and counted as failed. */
  timeoutMs: number;
  /** Offers older than this are no longer served, even when every refresh since has failed. */
  maxAgeMs: number;
  /** With shared snapshots: how often a replica looks whether another one stored newer offers (default 5 s). */
  syncIntervalMs?: number;
}

/** Told of each snapshot a feed listed itself, priced (the price history records it). Must not throw. */
export type FetchObserver = (provider: string, nodes: readonly MarketNode[], fetchedAt: Date) => void;

/** What a feed can serve now. */
export interface FeedView {
  provider: string;
  /** The last refresh succeeded and its offers are being served. */
  ok: boolean;
  /** Why the last refresh failed; null when it did not. */
  error: string | null;
  /** When the offers served were fetched; null when none are served. */
  fetchedAt: Date | null;
  /** Identifies the snapshot served (it changes whenever `nodes` does); null when none is. */
  generation: number | null;
  /** Sorted cheapest first. Empty when nothing was fetched yet, or the last good fetch is too old. */
  nodes: readonly MarketNode[];
  /** The same nodes as columns, for searches. */
  index: NodeIndex;
}
