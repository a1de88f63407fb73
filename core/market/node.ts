import type { Cents } from '../money.ts';
import type { Offer } from './offer.ts';
import { perGpuCents, rateCentsPerHour } from './pricing.ts';

/** An offer priced for our callers: what renting it costs, in integer cents. */
export interface MarketNode {
  offer: Offer;
  /** Whole machine, per hour: the one pricing rule applied to the upstream price. */
  priceCents: Cents;
  /** One GPU of it, per hour, rounded up. */
  perGpuCents: Cents;
  /** The spot price of the whole machine, per hour, by the same rule (markup included); null: no spot market or price. */
  spotPriceCents: Cents | null;
  /** One GPU of it, per hour, rounded up like perGpuCents; null with spotPriceCents. */
  spotPerGpuCents: Cents | null;
  supportedOperations: readonly string[];
}

export function priceNode(offer: Offer, markupBps: number, supportedOperations: readonly string[]): MarketNode {
  const priceCents = rateCentsPerHour(offer.priceUsdPerHour, markupBps);
  const spotPriceCents = spotCents(offer.spotPriceUsdPerHour, markupBps);
  return {
    offer,
    priceCents,
    perGpuCents: perGpuCents(priceCents, offer.gpuCount),
    spotPriceCents,
    spotPerGpuCents: spotPriceCents === null ? null : perGpuCents(spotPriceCents, offer.gpuCount),
    supportedOperations,
  };
}

/** An unreadable spot price is no spot price: it must not take the offer's on-demand node down with it. */
function spotCents(usdPerHour: string | null | undefined, markupBps: number): Cents | null {
  if (usdPerHour === null || usdPerHour === undefined) return null;
  try {
    return rateCentsPerHour(usdPerHour, markupBps);
  } catch {
    return null;
  }
}

/** Cheapest first; ties by node id, so the order is the same on every replica. */
export const cheapestFirst = (a: MarketNode, b: MarketNode): number =>
  a.priceCents - b.priceCents || (a.offer.id < b.offer.id ? -1 : a.offer.id > b.offer.id ? 1 : 0);
