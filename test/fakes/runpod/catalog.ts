/**
 * The fake's GPU catalog: what RunPod's v2 catalog and GraphQL gpuTypes describe. Prices are per
 * single GPU per hour, as floats the way the wire carries them; VRAM is GB per GPU.
 */

export type StockLevel = 'High' | 'Medium' | 'Low';
export type FakeCloud = 'SECURE' | 'COMMUNITY';

export interface FakeGpuType {
  id: string;
  name: string;
  manufacturer: 'NVIDIA' | 'AMD';
  memory: number;
  /** Offered on this cloud at all (v2 `secure` / `community`, GraphQL `secureCloud` / `communityCloud`). */
  clouds: { secure: boolean; community: boolean };
  /** USD per GPU per hour. RunPod still quotes a price for a cloud that does not offer the type. */
  price: { secure: number; community: number };
  spotPrice: { secure: number | null; community: number | null };
  maxCount: { secure: number; community: number };
  vcpuPerGpu: number;
  ramGbPerGpu: number;
  /** null: no stock in that cloud now. */
  stock: { secure: StockLevel | null; community: StockLevel | null };
  /** The largest count placeable right now; larger counts are out of stock. */
  freeCount: { secure: number; community: number };
  dataCenterIds: string[];
}

export interface FakeDataCenter {
  id: string;
  name: string;
  country: string;
  region: 'NORTH_AMERICA' | 'EUROPE' | 'ASIA' | 'OCEANIA';
  listed: boolean;
}

export const DATA_CENTERS: readonly FakeDataCenter[] = [
  { id: 'US-KS-2', name: 'US Kansas 2', country: 'US', region: 'NORTH_AMERICA', listed: true },
  { id: 'US-CA-2', name: 'US California 2', country: 'US', region: 'NORTH_AMERICA', listed: true },
  { id: 'US-TX-3', name: 'US Texas 3', country: 'US', region: 'NORTH_AMERICA', listed: true },
  { id: 'CA-MTL-1', name: 'Canada Montreal 1', country: 'CA', region: 'NORTH_AMERICA', listed: true },
  { id: 'EU-RO-1', name: 'Europe Romania 1', country: 'RO', region: 'EUROPE', listed: true },
  { id: 'EU-SE-1', name: 'Europe Sweden 1', country: 'SE', region: 'EUROPE', listed: true },
  { id: 'EU-NL-1', name: 'Europe Netherlands 1', country: 'NL', region: 'EUROPE', listed: true },
  { id: 'EUR-IS-1', name: 'Europe Iceland 1', country: 'IS', region: 'EUROPE', listed: true },
  { id: 'AP-JP-1', name: 'Asia Japan 1', country: 'JP', region: 'ASIA', listed: true },
  { id: 'OC-AU-1', name: 'Oceania Australia 1', country: 'AU', region: 'OCEANIA', listed: false },
];

interface Spec {
  id: string;
  name: string;
  memory: number;
  secure?: [price: number, maxCount: number, stock: StockLevel | null];
  community?: [price: number, maxCount: number, stock: StockLevel | null];
  vcpu: number;
  ram: number;
  dcs: string[];
  manufacturer?: 'NVIDIA' | 'AMD';
  /** A price quoted for a cloud the type is not offered on (RunPod does this). */
  ghostCommunityPrice?: number;
}

const make = (spec: Spec): FakeGpuType => ({
  id: spec.id,
  name: spec.name,
  manufacturer: spec.manufacturer ?? 'NVIDIA',
  memory: spec.memory,
  clouds: { secure: spec.secure !== undefined, community: spec.community !== undefined },
  price: { secure: spec.secure?.[0] ?? 0, community: spec.community?.[0] ?? spec.ghostCommunityPrice ?? 0 },
  spotPrice: {
    secure: spec.secure ? Math.round(spec.secure[0] * 60) / 100 : null,
    community: spec.community ? Math.round(spec.community[0] * 60) / 100 : null,
  },
  maxCount: { secure: spec.secure?.[1] ?? 0, community: spec.community?.[1] ?? 0 },
  vcpuPerGpu: spec.vcpu,
  ramGbPerGpu: spec.ram,
  stock: { secure: spec.secure?.[2] ?? null, community: spec.community?.[2] ?? null },
  freeCount: { secure: spec.secure?.[1] ?? 0, community: spec.community?.[1] ?? 0 },
  dataCenterIds: spec.dcs,
});

/** A fresh copy per fake server, so tests can change prices and stock freely. */
export function seedCatalog(): FakeGpuType[] {
  return [
    make({ id: 'NVIDIA GeForce RTX 4090', name: 'RTX 4090', memory: 24, secure: [0.69, 8, 'High'], community: [0.34, 8, 'High'], vcpu: 6, ram: 41, dcs: ['US-KS-2', 'EU-RO-1', 'EUR-IS-1'] }),
    make({ id: 'NVIDIA GeForce RTX 3090', name: 'RTX 3090', memory: 24, secure: [0.46, 4, 'Medium'], community: [0.22, 4, 'High'], vcpu: 4, ram: 24, dcs: ['US-TX-3', 'EU-SE-1'] }),
    make({ id: 'NVIDIA GeForce RTX 5090', name: 'RTX 5090', memory: 32, secure: [0.94, 4, 'Low'], community: [0.69, 2, 'Medium'], vcpu: 8, ram: 46, dcs: ['EU-NL-1'] }),
    make({ id: 'NVIDIA RTX A6000', name: 'RTX A6000', memory: 48, secure: [0.49, 8, 'High'], community: [0.33, 4, 'Low'], vcpu: 8, ram: 50, dcs: ['US-KS-2', 'CA-MTL-1'] }),
    make({ id: 'NVIDIA RTX 6000 Ada Generation', name: 'RTX 6000 Ada', memory: 48, secure: [0.77, 4, 'Medium'], community: [0.74, 2, null], vcpu: 10, ram: 62, dcs: ['EU-RO-1'] }),
    make({ id: 'NVIDIA A40', name: 'A40', memory: 48, secure: [0.44, 8, 'High'], ghostCommunityPrice: 0.39, vcpu: 9, ram: 50, dcs: ['EU-SE-1'] }),
    make({ id: 'NVIDIA L4', name: 'L4', memory: 24, secure: [0.43, 2, 'High'], vcpu: 12, ram: 50, dcs: ['US-CA-2'] }),
    make({ id: 'NVIDIA L40S', name: 'L40S', memory: 48, secure: [0.86, 8, 'Medium'], community: [0.79, 2, 'Low'], vcpu: 12, ram: 62, dcs: ['US-TX-3', 'EU-RO-1'] }),
    make({ id: 'NVIDIA A100 80GB PCIe', name: 'A100 PCIe', memory: 80, secure: [1.64, 8, 'Medium'], community: [1.19, 4, 'Low'], vcpu: 8, ram: 117, dcs: ['US-KS-2', 'EU-RO-1'] }),
    make({ id: 'NVIDIA A100-SXM4-80GB', name: 'A100 SXM', memory: 80, secure: [1.74, 8, 'High'], community: [1.39, 8, 'Low'], vcpu: 16, ram: 125, dcs: ['US-CA-2'] }),
    make({ id: 'NVIDIA H100 PCIe', name: 'H100 PCIe', memory: 80, secure: [2.39, 8, 'Low'], community: [1.99, 2, 'Medium'], vcpu: 16, ram: 188, dcs: ['US-KS-2', 'EU-NL-1'] }),
    make({ id: 'NVIDIA H100 80GB HBM3', name: 'H100 SXM', memory: 80, secure: [2.69, 8, 'High'], community: [2.3466666666, 8, 'Medium'], vcpu: 20, ram: 125, dcs: ['US-TX-3', 'EU-RO-1', 'AP-JP-1'] }),
    make({ id: 'NVIDIA H200', name: 'H200 SXM', memory: 141, secure: [3.59, 8, 'Medium'], vcpu: 24, ram: 188, dcs: ['US-KS-2'] }),
    make({ id: 'NVIDIA B200', name: 'B200', memory: 180, secure: [5.99, 8, null], vcpu: 28, ram: 283, dcs: ['US-KS-2'] }),
    make({ id: 'AMD Instinct MI300X OAM', name: 'MI300X', memory: 192, secure: [2.49, 8, 'Low'], vcpu: 24, ram: 283, dcs: ['EU-RO-1'], manufacturer: 'AMD' }),
    make({ id: 'Tesla V100-SXM2-32GB', name: 'Tesla V100', memory: 32, community: [0.3466666666, 4, 'High'], vcpu: 6, ram: 30, dcs: ['EU-SE-1'] }),
  ];
}
