import { gpuFamily } from '../../../core/market/gpu-family.ts';
import type { Offer } from '../../../core/market/offer.ts';
import { GPU_MODEL_WEIGHTS, GPU_MODELS, type GpuModel, type Tier } from './gpus.ts';
import { LOCATION_WEIGHTS } from './locations.ts';
import { formatPriceUnits } from './price.ts';
import { hash32, Rng } from './prng.ts';

export const PROVIDER_NAME = 'sandbox';

/** The `extra_filters` keys the sandbox understands; every offer carries them in `attributes`. */
export const EXTRA_FILTER_KEYS = ['reliability', 'cuda', 'rocm', 'datacenter', 'form_factor', 'host_id', 'static_ip'] as const;

/** Offer ids are numbers from here on, so they look like a marketplace's ids and never start at 0. */
const FIRST_OFFER_ID = 100_001;

export const offerIdAt = (index: number): string => String(FIRST_OFFER_ID + index);

/** The catalog index of an offer id, or null when the id cannot be one of ours. */
export function offerIndexOf(offerId: string): number | null {
  if (!/^[1-9]\d{0,8}$/.test(offerId)) return null; // one spelling per id: no leading zeros
  const index = Number(offerId) - FIRST_OFFER_ID;
  return index >= 0 ? index : null;
}

const COUNTS: Record<Tier | 'flagship', readonly (readonly [number, number])[]> = {
  consumer: [[1, 40], [2, 24], [3, 2], [4, 16], [5, 1], [6, 3], [7, 1], [8, 10]],
  workstation: [[1, 35], [2, 25], [4, 22], [8, 18]],
  datacenter: [[1, 20], [2, 15], [4, 20], [8, 45]],
  // H200, B200 and MI300X are sold almost only as whole 8-GPU boards.
  flagship: [[1, 6], [2, 6], [4, 10], [8, 78]],
};

const countsFor = (gpu: GpuModel) => (gpu.vramGb >= 141 ? COUNTS.flagship : COUNTS[gpu.tier]);

/** Community hosts price freely; datacenters stay closer to list price. */
function perGpuPriceUnits(rng: Rng, gpu: GpuModel, datacenter: boolean): number {
  const [low, high] = datacenter ? [90, 125] : [75, 135];
  const units = Math.round((gpu.basePriceUnits * rng.int(low, high)) / 100);
  // Most hosts quote whole cents; the rest keep sub-cent precision, as marketplaces show.
  return rng.chance(0.6) ? Math.max(100, Math.round(units / 100) * 100) : Math.max(1, units);
}

const roundTo = (value: number, step: number): number => Math.max(step, Math.round(value / step) * step);

/**
 * Offer number `index` of the market grown from `seed`. Each offer has its own PRNG stream, so an
 * offer does not change when the catalog is made larger or smaller, and any one can be rebuilt alone.
 * The first offers walk through every GPU model once, so even a small catalog shows every family.
 */
export function generateOffer(seed: number, index: number): Offer {
  const rng = new Rng(hash32(seed, index));
  const gpu = index < GPU_MODELS.length ? GPU_MODELS[index]! : rng.weighted(GPU_MODEL_WEIGHTS);
  const location = rng.weighted(LOCATION_WEIGHTS);
  const datacenter = rng.chance(gpu.tier === 'datacenter' ? 0.9 : gpu.tier === 'workstation' ? 0.5 : 0.15);
  const gpuCount = rng.weighted(countsFor(gpu));
  const priceUnits = perGpuPriceUnits(rng, gpu, datacenter) * gpuCount;

  const cpusPerGpu = gpu.tier === 'datacenter' ? rng.int(12, 28) : rng.int(4, 16);
  const ramPerGpu = gpu.tier === 'datacenter' ? roundTo(gpu.vramGb * rng.pick([1.5, 2, 2.5]), 8) : rng.pick([16, 32, 32, 64]);
  const diskPerGpu = datacenter ? rng.int(200, 2500) : rng.int(50, 500);
  const downloadMbps = rng.chance(0.03) ? null : datacenter ? rng.int(800, 20_000) : rng.int(80, 2_000);
  const ports = rng.chance(0.05) ? null : datacenter ? rng.pick([64, 128, 256, 1000, 5000]) : rng.int(8, 512);

  const virtualized = rng.chance(datacenter ? 0.45 : 0.1);
  const baremetal = !virtualized && datacenter && gpuCount >= 4 && rng.chance(0.4);
  const dockerInDocker = rng.chance(virtualized || baremetal ? 0.7 : 0.12);
  const mig = gpu.migCapable && rng.chance(0.25);
  // Datacenters sell a pool of identical machines; a community host is one machine.
  const available = datacenter && rng.chance(0.5) ? rng.int(0, 12) : 1;
  const priceVerified = rng.chance(datacenter ? 0.9 : 0.5);

  const reliability = rng.int(datacenter ? 9900 : 8500, datacenter ? 9999 : 9990) / 10_000;
  const toolkit = rng.pick(gpu.cuda);
  const hostId = rng.int(10_000, 99_999);
  const staticIp = rng.chance(datacenter ? 0.8 : 0.3);

  const id = offerIdAt(index);
  return {
    id: `${PROVIDER_NAME}:${id}`,
    provider: PROVIDER_NAME,
    gpuType: gpuFamily(gpu.model),
    gpuModel: gpu.model,
    gpuCount,
    vramGb: gpu.vramGb,
    priceUsdPerHour: formatPriceUnits(priceUnits),
    priceVerified,
    cpus: Math.min(cpusPerGpu * gpuCount, 256),
    ramGb: ramPerGpu * gpuCount,
    diskGb: roundTo(diskPerGpu * gpuCount, 10),
    downloadMbps,
    ports,
    country: location.country,
    region: location.region,
    dockerInDocker,
    mig,
    baremetal,
    virtualized,
    available,
    attributes: {
      reliability,
      ...(gpu.vendor === 'nvidia' ? { cuda: toolkit } : { rocm: toolkit }),
      datacenter,
      form_factor: gpu.formFactor,
      host_id: hostId,
      static_ip: staticIp,
    },
  };
}

export function generateCatalog(seed: number, count: number): Offer[] {
  return Array.from({ length: count }, (_, index) => generateOffer(seed, index));
}
