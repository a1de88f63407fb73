import type { MarketNode } from './node.ts';
import type { MarketGroup } from './search-result.ts';

const minOf = (a: number | null, b: number): number => (a === null ? b : Math.min(a, b));
const maxOf = (a: number | null, b: number): number => (a === null ? b : Math.max(a, b));

/** Counts the node into its (GPU type, provider, region) group of the marketplace view. */
export function addToGroup(groups: Map<string, MarketGroup>, node: MarketNode): void {
  const { offer } = node;
  const key = `${offer.gpuType}\u0000${offer.provider}\u0000${offer.region ?? ''}`;
  let group = groups.get(key);
  if (!group) {
    group = {
      gpuType: offer.gpuType,
      provider: offer.provider,
      region: offer.region,
      offers: 0,
      verifiedOffers: 0,
      availableMachines: 0,
      availableGpus: 0,
      minPriceCents: null,
      maxPriceCents: null,
      minPerGpuCents: null,
      maxPerGpuCents: null,
    };
    groups.set(key, group);
  }
  group.offers++;
  group.availableMachines += offer.available;
  group.availableGpus += offer.available * offer.gpuCount;
  if (offer.priceVerified) {
    group.verifiedOffers++;
    group.minPriceCents = minOf(group.minPriceCents, node.priceCents);
    group.maxPriceCents = maxOf(group.maxPriceCents, node.priceCents);
    group.minPerGpuCents = minOf(group.minPerGpuCents, node.perGpuCents);
    group.maxPerGpuCents = maxOf(group.maxPerGpuCents, node.perGpuCents);
  }
}

/** Groups by GPU type, provider, then region (no region last). */
export const byGroupKey = (a: MarketGroup, b: MarketGroup): number =>
  a.gpuType.localeCompare(b.gpuType) || a.provider.localeCompare(b.provider) || (a.region ?? '\uffff').localeCompare(b.region ?? '\uffff');
