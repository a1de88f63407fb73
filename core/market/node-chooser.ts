import { invalidInput, upstreamUnavailable } from '../errors.ts';
import type { Cents } from '../money.ts';
import { isSpotMarket, supportedOperations, type Provider } from '../ports/providers.ts';
import type { MarketService } from './market-service.ts';
import { priceNode, type MarketNode } from './node.ts';
import type { Offer } from './offer.ts';
import type { MarketFilter } from './search-filter.ts';

/** Nodes a caller that chooses by search tries in turn when one is gone or dearer than its ceiling now. */
export const MAX_NODES_TRIED = 5;

/** Snapshot nodes looked through for verified candidates when only verified prices may pass. */
const VERIFIED_WINDOW = 200;

/** The provider named by the front of a node id (enabled or not), without reading the rest: for lanes of work; null without one (a search). */
export function providerNameOf(nodeId: string | null): string | null {
  const at = nodeId?.indexOf(':') ?? -1;
  return nodeId && at > 0 ? nodeId.slice(0, at) : null;
}

/** A node id read once: the provider it names (enabled here) and that provider's own offer id. */
export interface NodeRef {
  /** As the market shows it: "<provider>:<offer id>". */
  readonly id: string;
  readonly provider: Provider;
  readonly offerId: string;
}

/** A node priced by the one pricing rule: per machine and per GPU, on demand and on the spot market, in cents an hour. */
export interface PricedNode {
  node: NodeRef;
  offer: Offer;
  rateCentsPerHour: Cents;
  perGpuCents: Cents;
  /** The spot price now (markup included); null where the provider has no spot market or the offer no spot price. */
  spotRateCentsPerHour: Cents | null;
  spotPerGpuCents: Cents | null;
  /** What the provider carries out for a rental of it (the node's supported_operations). */
  supportedOperations: readonly string[];
  /** live: the provider was asked just now; snapshot: as the market's last refresh saw it. */
  source: 'live' | 'snapshot';
}

/** A node as its provider offers it right now. */
export type Quote = PricedNode & { source: 'live' };

export interface ChooseOptions {
  /** Only nodes at or under this per-GPU price (on demand, or spot with `spot`) pass, live. */
  maxPerGpuCents?: Cents;
  /** Ranked and bounded by the spot price, on providers with a spot market. */
  spot?: boolean;
  /** Only nodes whose provider guarantees the live price. */
  verifiedOnly?: boolean;
  /** Node ids already tried (by an earlier pass): skipped. */
  skip?: ReadonlySet<string>;
  /** At most this many live checks; MAX_NODES_TRIED by default. */
  tries?: number;
  /**
   * Why a candidate cannot be rented for this request whatever its live price (its provider cannot carry the
   * rental's options), null when it can: such nodes are passed over before any provider is asked, and counted.
   */
  unfit?: (candidate: PricedNode) => string | null;
}

/**
 * The one place a node is chosen (docs/decisions.md, "One node chooser"): a node id is read here and only here
 * into a NodeRef; `quote` asks its provider for the offer now and prices it; `cheapest` ranks the market's
 * snapshot for a filter; `choose` walks that ranking with a live quote per candidate until one passes. Rentals,
 * reservations, spot claims and template rentals all take their nodes from it.
 */
export class NodeChooser {
  private readonly market: MarketService;
  private readonly providers: ReadonlyMap<string, Provider>;

  constructor(market: MarketService, providers: readonly Provider[]) {
    this.market = market;
    this.providers = new Map(providers.map((p) => [p.name, p]));
  }

  /** The names of the enabled providers, for messages that say what a node id may start with. */
  get providerNames(): string[] {
    return [...this.providers.keys()];
  }

  /** The node an id names, or null when it names no enabled provider's offer. */
  parse(nodeId: string): NodeRef | null {
    const at = nodeId.indexOf(':');
    const provider = at > 0 ? this.providers.get(nodeId.slice(0, at)) : undefined;
    const offerId = nodeId.slice(at + 1);
    return provider && offerId && provider.isOfferId(offerId) ? { id: nodeId, provider, offerId } : null;
  }

  /** The node an id names; a 422 at `field` when it names nothing here. */
  nodeOf(nodeId: string, field: (string | number)[] = ['body', 'node_id']): NodeRef {
    const node = this.parse(nodeId);
    if (!node) throw invalidInput(field, `no node "${nodeId}"; take node_id from GET /v1/gpus (enabled: ${this.providerNames.join(', ')})`);
    return node;
  }

  /**
   * The node as its provider offers it now, priced: null when it is gone (no such offer, none available).
   * A provider that cannot be reached throws UPSTREAM_UNAVAILABLE.
   */
  async quote(node: NodeRef): Promise<Quote | null> {
    let offer: Offer | null;
    try {
      offer = await node.provider.getOffer(node.offerId);
    } catch (error) {
      throw upstreamUnavailable(`could not check the price of ${node.id} with ${node.provider.name}`, error, 'try again shortly');
    }
    if (!offer || offer.available <= 0) return null;
    return { ...this.priced(node, priceNode(offer, this.market.settings.markupBps, supportedOperations(node.provider))), source: 'live' };
  }

  /**
   * The cheapest `limit` nodes matching `filter` in the market's snapshot, cheapest first (with `spot`: those
   * with a spot price on a provider with a spot market, cheapest spot price per GPU first). No provider is asked.
   */
  async cheapest(filter: MarketFilter, limit: number, how: { spot?: boolean } = {}): Promise<PricedNode[]> {
    const { nodes } = await this.market.search(filter, limit);
    const priced = nodes.flatMap((found) => {
      const node = this.parse(found.offer.id);
      return node ? [this.priced(node, found)] : [];
    });
    if (!how.spot) return priced;
    return priced
      .filter((node) => node.spotPerGpuCents !== null && isSpotMarket(node.node.provider))
      .sort((a, b) => a.spotPerGpuCents! - b.spotPerGpuCents! || (a.node.id < b.node.id ? -1 : a.node.id > b.node.id ? 1 : 0));
  }

  /**
   * The cheapest node matching `filter` whose live quote passes (available, within `maxPerGpuCents`, verified when
   * asked): the snapshot's candidates are quoted in turn, a gone or dearer one giving way to the next, at most
   * `tries` of them; `refusals` says why each tried one did not pass. Null when none passed; a provider that cannot
   * be reached throws (the caller may try later).
   */
  async choose(filter: MarketFilter, options: ChooseOptions = {}): Promise<{ quote: Quote | null; tried: string[]; refusals: string[] }> {
    const tries = options.tries ?? MAX_NODES_TRIED;
    const max = options.maxPerGpuCents;
    const bounded = max === undefined || options.spot ? filter : { ...filter, maxPricePerGpuCents: Math.min(max, filter.maxPricePerGpuCents ?? max) };
    const skip = options.skip ?? new Set<string>();
    // the snapshot says which prices are unverified: those are passed over before any provider is asked
    const window = options.verifiedOnly ? VERIFIED_WINDOW : tries + skip.size;
    const ranked = (await this.cheapest(bounded, window, { spot: options.spot ?? false })).filter((c) => !skip.has(c.node.id) && (!options.verifiedOnly || c.offer.priceVerified));
    const candidates: PricedNode[] = [];
    const passedOver = new Map<string, number>();
    for (const candidate of ranked) {
      const unfit = options.unfit?.(candidate) ?? null;
      if (unfit !== null) passedOver.set(unfit, (passedOver.get(unfit) ?? 0) + 1);
      else if (candidates.length < tries) candidates.push(candidate);
    }
    const tried: string[] = [];
    const refusals = [...passedOver].map(([why, count]) => `${count} cheaper node${count === 1 ? '' : 's'} passed over: ${why}`);
    for (const candidate of candidates) {
      tried.push(candidate.node.id);
      const quote = await this.quote(candidate.node);
      const refusal = quote ? refusalOf(quote, options) : 'is gone';
      if (refusal === null) return { quote: quote!, tried, refusals };
      refusals.push(`${candidate.node.id} ${refusal}`);
    }
    return { quote: null, tried, refusals };
  }

  private priced(node: NodeRef, found: MarketNode): PricedNode {
    return {
      node,
      offer: found.offer,
      rateCentsPerHour: found.priceCents,
      perGpuCents: found.perGpuCents,
      spotRateCentsPerHour: isSpotMarket(node.provider) ? found.spotPriceCents : null,
      spotPerGpuCents: isSpotMarket(node.provider) ? found.spotPerGpuCents : null,
      supportedOperations: found.supportedOperations,
      source: 'snapshot',
    };
  }
}

/** Why a live quote does not pass `options`; null when it does. */
function refusalOf(quote: Quote, options: ChooseOptions): string | null {
  if (options.verifiedOnly && !quote.offer.priceVerified) return 'has no verified price now';
  const perGpu = options.spot ? quote.spotPerGpuCents : quote.perGpuCents;
  if (perGpu === null) return 'has no spot price now';
  return options.maxPerGpuCents === undefined || perGpu <= options.maxPerGpuCents ? null : `costs ${perGpu} cents per GPU-hour now, above the ceiling of ${options.maxPerGpuCents}`;
}
