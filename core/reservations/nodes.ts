import { DomainError, invalidInput, upstreamUnavailable } from '../errors.ts';
import type { MarketService } from '../market/market-service.ts';
import type { MarketNode } from '../market/node.ts';
import type { Offer } from '../market/offer.ts';
import { perGpuCents, rateCentsPerHour } from '../market/pricing.ts';
import type { MarketFilter } from '../market/search-filter.ts';
import type { Cents } from '../money.ts';
import type { Provider } from '../ports/providers.ts';

/** A node as priced now: what renting it would cost, per machine and per GPU. */
export interface PricedNode {
  nodeId: string;
  provider: Provider;
  offer: Offer;
  rateCentsPerHour: Cents;
  perGpuCents: Cents;
}

/**
 * Nodes for reservations: one asked for by id, priced live upstream (as a rental prices it), or the cheapest
 * matches of a search in the market's snapshots (as GET /v1/gpus answers them).
 */
export class ReservationNodes {
  private readonly market: MarketService;
  private readonly providers: Map<string, Provider>;

  constructor(market: MarketService, providers: readonly Provider[]) {
    this.market = market;
    this.providers = new Map(providers.map((p) => [p.name, p]));
  }

  /** The provider of a node id, or null when the id names no enabled provider's offer. */
  providerOf(nodeId: string): { provider: Provider; offerId: string } | null {
    const at = nodeId.indexOf(':');
    const provider = at > 0 ? this.providers.get(nodeId.slice(0, at)) : undefined;
    const offerId = nodeId.slice(at + 1);
    return provider && offerId && provider.isOfferId(offerId) ? { provider, offerId } : null;
  }

  /**
   * The node priced live: null when it is gone (no such offer, none available, or its provider is no longer
   * enabled). A provider that cannot be reached throws UPSTREAM_UNAVAILABLE.
   */
  async live(nodeId: string): Promise<PricedNode | null> {
    const found = this.providerOf(nodeId);
    if (!found) return null;
    let offer: Offer | null;
    try {
      offer = await found.provider.getOffer(found.offerId);
    } catch (error) {
      throw upstreamUnavailable(`could not check the price of ${nodeId} with ${found.provider.name}`, error, 'try again shortly');
    }
    if (!offer || offer.available <= 0) return null;
    const rate = rateCentsPerHour(offer.priceUsdPerHour, this.market.settings.markupBps);
    return { nodeId, provider: found.provider, offer, rateCentsPerHour: rate, perGpuCents: perGpuCents(rate, offer.gpuCount) };
  }

  /** A node asked for at creation: 422 when the id names nothing here, 409 when it is gone. */
  async quoteNode(nodeId: string): Promise<PricedNode> {
    if (!this.providerOf(nodeId)) {
      throw invalidInput(['body', 'node_id'], `no node "${nodeId}"; take node_id from GET /v1/gpus (enabled: ${[...this.providers.keys()].join(', ')})`);
    }
    const node = await this.live(nodeId);
    if (!node) throw new DomainError('CONFLICT', `node ${nodeId} is not available now; search again with GET /v1/gpus`);
    return node;
  }

  /** The cheapest `limit` nodes matching `filter` now, cheapest first. */
  async cheapest(filter: MarketFilter, limit: number): Promise<PricedNode[]> {
    const { nodes } = await this.market.search(filter, limit);
    return nodes.flatMap((node: MarketNode) => {
      const provider = this.providers.get(node.offer.provider);
      return provider ? [{ nodeId: node.offer.id, provider, offer: node.offer, rateCentsPerHour: node.priceCents, perGpuCents: node.perGpuCents }] : [];
    });
  }
}
