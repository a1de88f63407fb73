import type { NodeChooser } from '../market/node-chooser.ts';
import type { MarketFilter } from '../market/search-filter.ts';
import { searchFilterOf } from '../market/search-terms.ts';
import type { Cents } from '../money.ts';
import type { SpotClaim } from './spot-claim.ts';

/** Matches read from the market per search, enough to find the cheapest spot offers among on-demand ones. */
const SEARCH_LIMIT = 5_000;

/** A spot offer as priced now. */
export interface SpotNode {
  nodeId: string;
  spotPerGpuCents: Cents;
}

/** The filter a claim searches with: its search (or its node's type), its exact count, no on-demand price ceiling. */
export function spotFilterOf(claim: Pick<SpotClaim, 'search' | 'gpuType' | 'gpuCount'>): MarketFilter {
  const asked: MarketFilter = claim.search ? searchFilterOf(claim.search) : { gpuType: claim.gpuType ?? undefined, extra: [] };
  const { maxPricePerGpuCents: _onDemand, ...filter } = asked;
  return { ...filter, gpuCount: claim.gpuCount };
}

/**
 * The spot offers a claim may rent, cheapest spot price per GPU first: those matching its search (or its node's
 * GPU type), of its exact GPU count, on a provider with a spot market, at or under its bid, as the node chooser
 * ranks the market's snapshots (a rental checks the price live again). One finder lives for one sweep pass, so
 * claims asking the same thing share one search.
 */
export class SpotNodeFinder {
  private readonly chooser: NodeChooser;
  private readonly bySearch = new Map<string, Promise<SpotNode[]>>();

  constructor(chooser: NodeChooser) {
    this.chooser = chooser;
  }

  /** The claim's candidates now, cheapest first, at most `limit`. */
  async cheapest(claim: Pick<SpotClaim, 'search' | 'gpuType' | 'gpuCount' | 'bidCentsPerGpuHour'>, limit: number): Promise<SpotNode[]> {
    const filter = spotFilterOf(claim);
    const key = JSON.stringify(filter);
    let nodes = this.bySearch.get(key);
    if (!nodes) {
      nodes = this.chooser.cheapest(filter, SEARCH_LIMIT, { spot: true }).then((found) => found.map((node) => ({ nodeId: node.node.id, spotPerGpuCents: node.spotPerGpuCents! })));
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
}
