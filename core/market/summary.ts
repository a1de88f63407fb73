import type { Cents } from '../money.ts';
import type { MarketNode } from './node.ts';

export interface FamilySummary {
  gpuType: string;
  /** The model of the cheapest machine of the family. */
  gpuModel: string;
  minPerGpuCents: Cents;
  availableGpus: number;
  machines: number;
  maxVramGb: number;
}

export interface MarketSummary {
  gpusAvailable: number;
  machines: number;
  families: FamilySummary[];
}

/**
 * The public market summary rules: only offers with a verified, non-zero price that can be rented now
 * count; they are grouped by GPU family. Machines and GPUs count what can be rented (a pool of 3
 * identical 8-GPU machines is 3 machines and 24 GPUs).
 */
export function summarizeMarket(nodes: Iterable<MarketNode>): MarketSummary {
  const families = new Map<string, FamilySummary>();
  let gpusAvailable = 0;
  let machines = 0;
  for (const { offer, priceCents, perGpuCents } of nodes) {
    if (!offer.priceVerified || priceCents <= 0 || offer.available <= 0) continue;
    const gpus = offer.available * offer.gpuCount;
    gpusAvailable += gpus;
    machines += offer.available;
    const family = families.get(offer.gpuType);
    if (!family) {
      families.set(offer.gpuType, {
        gpuType: offer.gpuType,
        gpuModel: offer.gpuModel,
        minPerGpuCents: perGpuCents,
        availableGpus: gpus,
        machines: offer.available,
        maxVramGb: offer.vramGb,
      });
      continue;
    }
    if (perGpuCents < family.minPerGpuCents || (perGpuCents === family.minPerGpuCents && offer.gpuModel < family.gpuModel)) {
      family.minPerGpuCents = perGpuCents;
      family.gpuModel = offer.gpuModel;
    }
    family.availableGpus += gpus;
    family.machines += offer.available;
    family.maxVramGb = Math.max(family.maxVramGb, offer.vramGb);
  }
  return {
    gpusAvailable,
    machines,
    families: [...families.values()].sort((a, b) => (a.gpuType < b.gpuType ? -1 : a.gpuType > b.gpuType ? 1 : 0)),
  };
}
