import type { MarketService } from '../market/market-service.ts';
import type { MarketNode } from '../market/node.ts';
import type { MarketFilter } from '../market/search-filter.ts';
import type { Cents } from '../money.ts';
import { isSpotMarket, type Provider } from '../ports/providers.ts';
import type { SearchFilterOf } from '../reservations/reservation-service.ts';
import type { SpotClaim } from './spot-claim.ts';

/** Matches read from the market per search, enough to find the cheapest spot offers among on-demand ones. */
const SEARCH_LIMIT = 5_000;

/** A spot offer as priced now. */
export interface SpotNode {
  nodeId: string;
  spotPerGpuCents: Cents;
}

/**
 * The spot offers a claim may rent, cheapest spot price per GPU first: those matching its search (or its node's
 * GPU type), of its exact GPU count, on a provider with a spot market, at or under its bid. Read from the
 * market's snapshots (as GET /v1/gpus answers them); a rental checks the price live again. One finder lives for
 * one sweep pass, so claims asking the same thing share one search.
 */
export class SpotNodeFinder {
  private readonly market: MarketService;
  private readonly spotProviders: ReadonlySet<string>;
  private readonly searchFilter: SearchFilterOf;
  private readonly bySearch = new Map<string, Promise<SpotNode[]>>();

  constructor(market: MarketService, providers: readonly Provider[], searchFilter: SearchFilterOf) {
    this.market = market;
    this.spotProviders = new Set(providers.filter(isSpotMarket).map((provider) => provider.name));
    this.searchFilter = searchFilter;
  }

  /** The filter a claim searches with: its search (or its node's type), its exact count, no on-demand price ceiling. */
  filterOf(claim: Pick<SpotClaim, 'search' | 'gpuType' | 'gpuCount'>): MarketFilter {
    const asked: MarketFilter = claim.search ? this.searchFilter(claim.search) : { gpuType: claim.gpuType ?? undefined, extra: [] };
    const { maxPricePerGpuCents: _onDemand, ...filter } = asked;
    return { ...filter, gpuCount: claim.gpuCount };
  }

  /** The claim's candidates now, cheapest first, at most `limit`. */
  async cheapest(claim: Pick<SpotClaim, 'search' | 'gpuType' | 'gpuCount' | 'bidCentsPerGpuHour'>, limit: number): Promise<SpotNode[]> {
    const filter = this.filterOf(claim);
    const key = JSON.stringify(filter);
    let nodes = this.bySearch.get(key);
    if (!nodes) {
      nodes = this.spotNodes(filter);
      this.bySearch.set(key, nodes);
      nodes.catch(() => this.bySearch.delete(key)); // a failed search is asked again by the next claim
    }
    const all = await nodes;
    const within: SpotNode[] = [];
    for (const node of all) {
      if (node.spotPerGpuCents > claim.bidCentsPerGpuHour) break;
      within.push(node);
      if (within.length >= limit) break;
    }
    return within;
  }

  private async spotNodes(filter: MarketFilter): Promise<SpotNode[]> {
    const { nodes } = await this.market.search(filter, SEARCH_LIMIT);
    return nodes
      .filter((node): node is MarketNode & { spotPerGpuCents: Cents } => node.spotPerGpuCents !== null && this.spotProviders.has(node.offer.provider))
      .sort((a, b) => a.spotPerGpuCents - b.spotPerGpuCents || (a.offer.id < b.offer.id ? -1 : a.offer.id > b.offer.id ? 1 : 0))
      .map((node) => ({ nodeId: node.offer.id, spotPerGpuCents: node.spotPerGpuCents }));
  }
}
