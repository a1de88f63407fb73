import type { Offer } from '../../core/market/offer.ts';
import type { RentalWorld } from './rentals.ts';

export type Rated = Offer & { rate: number; perGpu: number };

export const perGpu = (o: Offer & { rate: number }): number => Math.ceil(o.rate / o.gpuCount);
export const usd = (cents: number): string => (cents / 100).toFixed(2);
export const offerIdOf = (nodeId: string): string => nodeId.slice('sandbox:'.length);

/**
 * Groups of sandbox offers a search picks among, each taken by one test: every offer of a GPU type and count, none
 * used yet, all at distinct per-GPU prices, the cheapest affordable; answered as the verified ones (at least `size`),
 * cheapest first, with the search that matches the whole group. `cheaperUnverified`: the group's cheapest price is
 * unverified; `minAvailable`: the cheapest verified offer has at least this many machines free.
 */
export function offerGroups(world: RentalWorld): (size: number, how?: { cheaperUnverified?: boolean; minAvailable?: number }) => Promise<{ verified: Rated[]; all: Rated[]; search: { gpu_type: string; gpu_count: number; provider: string } }> {
  const used = new Set<string>();
  return async (size, how = {}) => {
    const groups = new Map<string, Rated[]>();
    for (const o of await world.offers()) {
      const key = `${o.gpuType}/${o.gpuCount}`;
      groups.set(key, [...(groups.get(key) ?? []), { ...o, perGpu: perGpu(o) }]);
    }
    for (const offers of groups.values()) {
      const distinct = new Set(offers.map((o) => o.perGpu)).size === offers.length;
      const verified = offers.filter((o) => o.priceVerified);
      const cheaperUnverified = !offers[0]!.priceVerified;
      if (!distinct || verified.length < size || (how.cheaperUnverified && !cheaperUnverified) || verified[0]!.available < (how.minAvailable ?? 1) || verified.at(-1)!.rate > 1_500 || offers[0]!.rate < 20 || offers.some((o) => used.has(o.id))) continue;
      for (const o of offers) used.add(o.id);
      return { verified, all: offers, search: { gpu_type: offers[0]!.gpuType, gpu_count: offers[0]!.gpuCount, provider: 'sandbox' } };
    }
    throw new Error(`no GPU type with ${size} verified offers at distinct prices left`);
  };
}
