import type { Cents } from '../money.ts';
import type { MarketNode } from './node.ts';

/** How one provider answered a search. */
export interface ProviderReport {
  provider: string;
  ok: boolean;
  error: string | null;
  /** Whole seconds since the offers served were fetched; null when none are served. */
  snapshotAgeSeconds: number | null;
  fetchedAt: Date | null;
  /** Nodes of this provider that matched the filters. */
  count: number;
  /** Filters not applied to this provider's offers: standard ones it cannot report, extra keys it does not know. */
  ignoredFilters: string[];
}

export interface SearchResult {
  nodes: MarketNode[];
  /** Matches before the limit. */
  total: number;
  providers: ProviderReport[];
  /** Filters no queried provider applied. */
  ignoredFilters: string[];
  /** The answer is kept for this query until a snapshot changes: what a host makes of it may be kept beside it. */
  kept: boolean;
}

export interface MarketGroup {
  gpuType: string;
  provider: string;
  region: string | null;
  offers: number;
  verifiedOffers: number;
  availableMachines: number;
  availableGpus: number;
  /** Whole-machine price range over verified offers; null when none is verified. */
  minPriceCents: Cents | null;
  maxPriceCents: Cents | null;
  minPerGpuCents: Cents | null;
  maxPerGpuCents: Cents | null;
}

export interface MarketplaceResult {
  groups: MarketGroup[];
  providers: ProviderReport[];
  ignoredFilters: string[];
  /** As SearchResult.kept. */
  kept: boolean;
}
