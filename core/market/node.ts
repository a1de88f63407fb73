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
  supportedOperations: readonly string[];
}

export function priceNode(offer: Offer, markupBps: number, supportedOperations: readonly string[]): MarketNode {
  const priceCents = rateCentsPerHour(offer.priceUsdPerHour, markupBps);
  return { offer, priceCents, perGpuCents: perGpuCents(priceCents, offer.gpuCount), supportedOperations };
}

/** Cheapest first; ties by node id, so the order is the same on every replica. */
export const cheapestFirst = (a: MarketNode, b: MarketNode): number =>
  a.priceCents - b.priceCents || (a.offer.id < b.offer.id ? -1 : a.offer.id > b.offer.id ? 1 : 0);
