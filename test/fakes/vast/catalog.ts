/**
 * The fake Vast marketplace: asks as the search endpoint stores them, in Vast's own units
 * (gpu_ram in MB per GPU, cpu_ram in MB for the whole host, prices in USD/hr for the whole ask).
 * `dph_total` is not stored: the fake derives it per search from dph_base and allocated_storage.
 */
export interface FakeVastOffer {
  id: number;
  machine_id: number;
  host_id: number;
  num_gpus: number;
  gpu_name: string;
  gpu_ram: number;
  gpu_arch: 'nvidia' | 'amd';
  compute_cap: number;
  cuda_max_good: number;
  driver_version: string;
  cpu_cores: number | null;
  cpu_cores_effective: number;
  cpu_ram: number;
  disk_space: number;
  disk_bw: number;
  inet_down: number;
  inet_up: number;
  dph_base: number;
  /** USD per GB per month */
  storage_cost: number;
  min_bid: number;
  reliability: number;
  reliability2: number;
  dlperf: number;
  geolocation: string | null;
  verification: 'verified' | 'unverified' | 'deverified';
  datacenter: boolean;
  hosting_type: number;
  external: boolean;
  direct_port_count: number;
  public_ipaddr: string;
  static_ip: boolean;
  rentable: boolean;
  rented: boolean;
  duration: number;
}

type Row = Pick<
  FakeVastOffer,
  'id' | 'num_gpus' | 'gpu_name' | 'gpu_ram' | 'dph_base' | 'storage_cost' | 'geolocation' | 'verification' | 'datacenter'
> &
  Partial<FakeVastOffer>;

const offer = (row: Row, index: number): FakeVastOffer => ({
  machine_id: 4000 + index,
  host_id: 70 + index,
  gpu_arch: 'nvidia',
  compute_cap: 890,
  cuda_max_good: 12.8,
  driver_version: '570.124.06',
  cpu_cores: 32,
  cpu_cores_effective: 8 * row.num_gpus,
  cpu_ram: 128_000 * row.num_gpus,
  disk_space: 400.5,
  disk_bw: 2100.4,
  inet_down: 900.1,
  inet_up: 850.3,
  min_bid: Math.round(row.dph_base * 60) / 100,
  reliability: 0.98,
  reliability2: 0.995,
  dlperf: 40.2 * row.num_gpus,
  hosting_type: row.datacenter ? 1 : 0,
  external: false,
  direct_port_count: 100,
  public_ipaddr: `203.0.113.${10 + index}`,
  static_ip: row.datacenter,
  rentable: true,
  rented: false,
  duration: 30 * 86_400,
  ...row,
});

const ROWS: Row[] = [
    { id: 31415926, num_gpus: 1, gpu_name: 'RTX 4090', gpu_ram: 24564, dph_base: 0.35, storage_cost: 0.1, geolocation: 'Oregon, US', verification: 'verified', datacenter: false },
    { id: 31415927, num_gpus: 2, gpu_name: 'RTX 4090', gpu_ram: 24564, dph_base: 0.62, storage_cost: 0.12, geolocation: 'Bavaria, DE', verification: 'unverified', datacenter: false, reliability2: 0.91 },
    { id: 27182818, num_gpus: 1, gpu_name: 'RTX 3090', gpu_ram: 24576, dph_base: 0.18, storage_cost: 0.08, geolocation: 'Quebec, CA', verification: 'verified', datacenter: false, compute_cap: 860, cuda_max_good: 12.2 },
    { id: 16180339, num_gpus: 8, gpu_name: 'H100 SXM', gpu_ram: 81559, dph_base: 17.52, storage_cost: 0.15, geolocation: 'Texas, US', verification: 'verified', datacenter: true, compute_cap: 900, cpu_cores: 224, cpu_cores_effective: 224, cpu_ram: 2_015_000, inet_down: 9800.5, inet_up: 9500.2 },
    { id: 14142135, num_gpus: 1, gpu_name: 'H100 PCIE', gpu_ram: 81559, dph_base: 1.9666666666, storage_cost: 0.2, geolocation: 'Ile-de-France, FR', verification: 'verified', datacenter: false, compute_cap: 900 },
    { id: 17320508, num_gpus: 4, gpu_name: 'A100 SXM4', gpu_ram: 81920, dph_base: 4.8, storage_cost: 0.15, geolocation: 'North Holland, NL', verification: 'verified', datacenter: true, compute_cap: 800, cuda_max_good: 12.4 },
    { id: 22360679, num_gpus: 1, gpu_name: 'A100 PCIE', gpu_ram: 40960, dph_base: 0.71, storage_cost: 0.1, geolocation: 'Tokyo, JP', verification: 'unverified', datacenter: false, compute_cap: 800 },
    { id: 26457513, num_gpus: 2, gpu_name: 'RTX A6000', gpu_ram: 49140, dph_base: 0.88, storage_cost: 0.1, geolocation: 'England, GB', verification: 'verified', datacenter: false, compute_cap: 860 },
    { id: 28284271, num_gpus: 4, gpu_name: 'L40S', gpu_ram: 46068, dph_base: 3.44, storage_cost: 0.15, geolocation: 'Virginia, US', verification: 'verified', datacenter: true },
    { id: 30000000, num_gpus: 1, gpu_name: 'Tesla V100', gpu_ram: 16384, dph_base: 0.12, storage_cost: 0.05, geolocation: 'Stockholm, SE', verification: 'deverified', datacenter: false, compute_cap: 700, cuda_max_good: 12.2 },
    { id: 33166247, num_gpus: 1, gpu_name: 'RTX 5090', gpu_ram: 32607, dph_base: 0.69, storage_cost: 0.1, geolocation: 'Seoul, KR', verification: 'verified', datacenter: false, compute_cap: 1200, cuda_max_good: 12.9 },
    { id: 36055512, num_gpus: 8, gpu_name: 'H200', gpu_ram: 143771, dph_base: 26.4, storage_cost: 0.15, geolocation: 'Uusimaa, FI', verification: 'verified', datacenter: true, compute_cap: 900 },
    { id: 37416573, num_gpus: 1, gpu_name: 'RTX 3060', gpu_ram: 12288, dph_base: 0.06, storage_cost: 0.05, geolocation: 'Brazil', verification: 'unverified', datacenter: false, cpu_cores: null, compute_cap: 860 },
    { id: 42426406, num_gpus: 1, gpu_name: 'Tesla T4', gpu_ram: 15360, dph_base: 0.09, storage_cost: 0.05, geolocation: 'London, UK', verification: 'verified', datacenter: true, compute_cap: 750 },
    // not listable: rented, an external (other cloud) ask, and one without room for the disk we allocate
    { id: 38729833, num_gpus: 1, gpu_name: 'RTX 4090', gpu_ram: 24564, dph_base: 0.31, storage_cost: 0.1, geolocation: 'Nevada, US', verification: 'verified', datacenter: false, rented: true },
    { id: 40000000, num_gpus: 1, gpu_name: 'A40', gpu_ram: 46068, dph_base: 0.4, storage_cost: 0.1, geolocation: 'Oslo, NO', verification: 'verified', datacenter: true, external: true },
    { id: 41231056, num_gpus: 1, gpu_name: 'RTX 3080', gpu_ram: 10240, dph_base: 0.1, storage_cost: 0.1, geolocation: 'Ontario, CA', verification: 'verified', datacenter: false, disk_space: 10 },
];

/** A fresh copy each call: fakes mutate their offers (rented flags). */
export const defaultCatalog = (): FakeVastOffer[] => ROWS.map(offer);
