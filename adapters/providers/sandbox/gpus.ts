/**
 * The GPU models the sandbox market rents out, with 2026-ish street prices per GPU-hour.
 * Prices are integer ten-thousandths of a dollar (see price.ts): 20000 = $2.00.
 */

/** Who typically hosts such a card: it drives counts, host sizes, networks and flags. */
export type Tier = 'consumer' | 'workstation' | 'datacenter';

export interface GpuModel {
  /** The model as the sandbox names it; core's gpuFamily() maps it to the family. */
  model: string;
  vramGb: number;
  /** Typical price of one GPU for one hour, in 1/10000 USD. */
  basePriceUnits: number;
  tier: Tier;
  formFactor: 'pcie' | 'sxm' | 'oam';
  vendor: 'nvidia' | 'amd';
  /** Driver/toolkit versions a host of this card may report (newest cards need newer drivers). */
  cuda: readonly string[];
  /** Whether the card can be partitioned with MIG. */
  migCapable: boolean;
  /** Relative frequency in the market. */
  weight: number;
}

const CUDA_AMPERE = ['11.8', '12.2', '12.4', '12.6', '12.8', '13.0'] as const;
const CUDA_ADA_HOPPER = ['12.2', '12.4', '12.6', '12.8', '13.0'] as const;
const CUDA_BLACKWELL = ['12.8', '12.9', '13.0'] as const;
const CUDA_OLD = ['11.8', '12.2', '12.4', '12.6'] as const;
const ROCM = ['6.2', '6.3', '6.4'] as const;

const consumer = (model: string, vramGb: number, basePriceUnits: number, cuda: readonly string[], weight: number): GpuModel => ({
  model, vramGb, basePriceUnits, tier: 'consumer', formFactor: 'pcie', vendor: 'nvidia', cuda, migCapable: false, weight,
});

export const GPU_MODELS: readonly GpuModel[] = [
  consumer('RTX 3060', 12, 600, CUDA_AMPERE, 5),
  consumer('RTX 3070', 8, 800, CUDA_AMPERE, 4),
  consumer('RTX 3080', 10, 1100, CUDA_AMPERE, 5),
  consumer('RTX 3090', 24, 2000, CUDA_AMPERE, 12),
  consumer('RTX 4070 Ti', 12, 1300, CUDA_ADA_HOPPER, 4),
  consumer('RTX 4080 SUPER', 16, 2000, CUDA_ADA_HOPPER, 5),
  consumer('RTX 4090', 24, 3500, CUDA_ADA_HOPPER, 14),
  consumer('RTX 5080', 16, 2800, CUDA_BLACKWELL, 4),
  consumer('RTX 5090', 32, 6000, CUDA_BLACKWELL, 8),
  { model: 'RTX A4000', vramGb: 16, basePriceUnits: 1500, tier: 'workstation', formFactor: 'pcie', vendor: 'nvidia', cuda: CUDA_AMPERE, migCapable: false, weight: 4 },
  { model: 'RTX A5000', vramGb: 24, basePriceUnits: 2200, tier: 'workstation', formFactor: 'pcie', vendor: 'nvidia', cuda: CUDA_AMPERE, migCapable: false, weight: 4 },
  { model: 'RTX A6000', vramGb: 48, basePriceUnits: 4500, tier: 'workstation', formFactor: 'pcie', vendor: 'nvidia', cuda: CUDA_AMPERE, migCapable: false, weight: 5 },
  { model: 'RTX 6000 Ada', vramGb: 48, basePriceUnits: 7500, tier: 'workstation', formFactor: 'pcie', vendor: 'nvidia', cuda: CUDA_ADA_HOPPER, migCapable: false, weight: 3 },
  { model: 'Tesla T4', vramGb: 16, basePriceUnits: 1500, tier: 'workstation', formFactor: 'pcie', vendor: 'nvidia', cuda: CUDA_OLD, migCapable: false, weight: 2 },
  { model: 'Tesla V100 SXM2 32GB', vramGb: 32, basePriceUnits: 2500, tier: 'workstation', formFactor: 'sxm', vendor: 'nvidia', cuda: CUDA_OLD, migCapable: false, weight: 2 },
  { model: 'L4', vramGb: 24, basePriceUnits: 4000, tier: 'workstation', formFactor: 'pcie', vendor: 'nvidia', cuda: CUDA_ADA_HOPPER, migCapable: false, weight: 3 },
  { model: 'A10', vramGb: 24, basePriceUnits: 5000, tier: 'workstation', formFactor: 'pcie', vendor: 'nvidia', cuda: CUDA_AMPERE, migCapable: false, weight: 2 },
  { model: 'L40S', vramGb: 48, basePriceUnits: 8500, tier: 'datacenter', formFactor: 'pcie', vendor: 'nvidia', cuda: CUDA_ADA_HOPPER, migCapable: false, weight: 4 },
  { model: 'A100 PCIE 40GB', vramGb: 40, basePriceUnits: 9000, tier: 'datacenter', formFactor: 'pcie', vendor: 'nvidia', cuda: CUDA_AMPERE, migCapable: true, weight: 3 },
  { model: 'A100 SXM4 80GB', vramGb: 80, basePriceUnits: 12000, tier: 'datacenter', formFactor: 'sxm', vendor: 'nvidia', cuda: CUDA_AMPERE, migCapable: true, weight: 5 },
  { model: 'H100 PCIe 80GB', vramGb: 80, basePriceUnits: 18000, tier: 'datacenter', formFactor: 'pcie', vendor: 'nvidia', cuda: CUDA_ADA_HOPPER, migCapable: true, weight: 3 },
  { model: 'H100 SXM5 80GB', vramGb: 80, basePriceUnits: 20000, tier: 'datacenter', formFactor: 'sxm', vendor: 'nvidia', cuda: CUDA_ADA_HOPPER, migCapable: true, weight: 6 },
  { model: 'H200 SXM 141GB', vramGb: 141, basePriceUnits: 30000, tier: 'datacenter', formFactor: 'sxm', vendor: 'nvidia', cuda: CUDA_ADA_HOPPER, migCapable: true, weight: 3 },
  { model: 'B200 180GB', vramGb: 180, basePriceUnits: 50000, tier: 'datacenter', formFactor: 'sxm', vendor: 'nvidia', cuda: CUDA_BLACKWELL, migCapable: true, weight: 2 },
  { model: 'MI300X 192GB', vramGb: 192, basePriceUnits: 22000, tier: 'datacenter', formFactor: 'oam', vendor: 'amd', cuda: ROCM, migCapable: false, weight: 2 },
];

/** Drawn in proportion to weight, prepared once. */
export const GPU_MODEL_WEIGHTS: readonly (readonly [GpuModel, number])[] = GPU_MODELS.map((gpu) => [gpu, gpu.weight]);
