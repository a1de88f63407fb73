/**
 * RunPod wire shapes (REST v2 and the GraphQL fields v2 lacks) and their translation into our
 * Offer and Machine. Prices stay exact: per-GPU list prices are multiplied by the GPU count on
 * scaled integers, never as floats.
 */
import { z } from 'zod';
import { gpuFamily } from '../../../core/market/gpu-family.ts';
import type { Offer } from '../../../core/market/offer.ts';
import type { Machine, MachineStatus } from '../../../core/ports/providers.ts';
import { isInstanceId } from '../../../core/rentals/instance.ts';
import { multiplyDecimal } from '../shared/decimal.ts';

export const PROVIDER_NAME = 'runpod';

export type Cloud = 'SECURE' | 'COMMUNITY';
export const CLOUDS: readonly Cloud[] = ['SECURE', 'COMMUNITY'];

/** The env var that carries our instance id inside the pod, beside the pod's `name`. */
export const LABEL_ENV = 'CP_INSTANCE_ID';

/**
 * The env var that marks a spot pod we made, holding its bid per GPU: REST v2, where pods are read, states no
 * interruptibility, and a spot pod RunPod interrupts reads as any stopped pod (EXITED) unless we know it is one.
 */
export const SPOT_BID_ENV = 'CP_SPOT_BID_PER_GPU';

// ---------------------------------------------------------------------------------------------
// Exact decimals

const PLAIN_DECIMAL = /^(\d+)(?:\.(\d+))?$/;

const tidy = (whole: string, fraction: string): string => {
  const w = whole.replace(/^0+(?=\d)/, '') || '0';
  const f = fraction.replace(/0+$/, '');
  return f ? `${w}.${f}` : w;
};

/**
 * The exact decimal text of a wire number: its shortest round-trip form (what `String` prints),
 * with exponent notation ("1e-7") spelled out by moving the point in the text. null for
 * negative or non-finite values, which are never prices.
 */
export function decimalText(value: number): string | null {
  if (!Number.isFinite(value) || value < 0) return null;
  const text = String(value);
  const exp = /^(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!exp) {
    const plain = PLAIN_DECIMAL.exec(text);
    return plain ? tidy(plain[1]!, plain[2] ?? '') : null;
  }
  const digits = exp[1]! + (exp[2] ?? '');
  const point = exp[1]!.length + Number(exp[3]);
  if (point <= 0) return tidy('0', '0'.repeat(-point) + digits);
  if (point >= digits.length) return tidy(digits + '0'.repeat(point - digits.length), '');
  return tidy(digits.slice(0, point), digits.slice(point));
}

/** A price as the wire gives it (a JSON number, or now and then a numeric string) as exact text. */
export function priceText(value: number | string | null | undefined): string | null {
  if (typeof value === 'number') return decimalText(value);
  if (typeof value === 'string') {
    const plain = PLAIN_DECIMAL.exec(value.trim());
    return plain ? tidy(plain[1]!, plain[2] ?? '') : null;
  }
  return null;
}

/** "0.3466666666" x 3 -> "1.0399999998": exact, on the digits (shared with the other adapters). */
export { multiplyDecimal };

const isPositive = (text: string): boolean => /[1-9]/.test(text);

// ---------------------------------------------------------------------------------------------
// Offer ids: "<cloud>-<count>x-<gpu type id>", e.g. "secure-2x-NVIDIA_GeForce_RTX_4090".

export interface OfferKey {
  cloud: Cloud;
  count: number;
  /** RunPod's GPU type id, the string create wants, e.g. "NVIDIA GeForce RTX 4090". */
  gpuTypeId: string;
}

/** Largest GPU count we accept in an id; RunPod machines hold at most a handful more than 8. */
const MAX_COUNT = 64;

// Spaces become "_" (and a literal "_" is escaped first) so ids read well and stay URL-safe.
const encodeGpuTypeId = (id: string): string =>
  encodeURIComponent(id).replace(/_/g, '%5F').replace(/%20/g, '_');

const decodeGpuTypeId = (slug: string): string | null => {
  try {
    return decodeURIComponent(slug.replace(/_/g, '%20'));
  } catch {
    return null;
  }
};

export const encodeOfferId = ({ cloud, count, gpuTypeId }: OfferKey): string =>
  `${cloud.toLowerCase()}-${count}x-${encodeGpuTypeId(gpuTypeId)}`;

/** The key an offer id encodes, or null for anything that is not one of ours. */
export function parseOfferId(offerId: string): OfferKey | null {
  const match = /^(secure|community)-([1-9]\d{0,2})x-(.+)$/.exec(offerId);
  if (!match) return null;
  const count = Number(match[2]);
  const gpuTypeId = decodeGpuTypeId(match[3]!);
  if (count > MAX_COUNT || !gpuTypeId || encodeGpuTypeId(gpuTypeId) !== match[3]) return null;
  return { cloud: match[1] === 'secure' ? 'SECURE' : 'COMMUNITY', count, gpuTypeId };
}

// ---------------------------------------------------------------------------------------------
// Catalog: REST v2 GET /v2/catalog/gpus[/{id}]

const wirePrice = z.union([z.number(), z.string()]).nullish();
const wireCount = z.number().int().nonnegative().nullish();

export const GpuTypeWire = z.object({
  id: z.string().min(1),
  name: z.string().nullish(),
  manufacturer: z.string().nullish(),
  /** VRAM of ONE GPU, in GB. */
  memory: z.number().positive(),
  secure: z.boolean().nullish(),
  community: z.boolean().nullish(),
  /** USD per hour for a SINGLE GPU, per cloud. */
  price: z.object({ secure: wirePrice, community: wirePrice }),
  maxCount: z.object({ secure: wireCount, community: wireCount }),
});
export type GpuTypeWire = z.infer<typeof GpuTypeWire>;

/** Entries that do not parse are skipped, so one odd GPU type cannot hide the rest. */
export const GpuCatalogWire = z.object({ gpus: z.array(z.unknown()) });

export function parseGpuTypes(body: unknown): GpuTypeWire[] {
  const catalog = GpuCatalogWire.parse(body);
  return catalog.gpus.flatMap((entry) => {
    const parsed = GpuTypeWire.safeParse(entry);
    return parsed.success ? [parsed.data] : [];
  });
}

const offered = (gpu: GpuTypeWire, cloud: Cloud): boolean =>
  cloud === 'SECURE' ? gpu.secure !== false : gpu.community !== false;

/** The largest count on one machine in this cloud; 0 when the cloud does not offer the type. */
export function maxCountIn(gpu: GpuTypeWire, cloud: Cloud): number {
  if (!offered(gpu, cloud)) return 0;
  const price = priceText(cloud === 'SECURE' ? gpu.price.secure : gpu.price.community);
  if (price === null || !isPositive(price)) return 0;
  return Math.min(MAX_COUNT, (cloud === 'SECURE' ? gpu.maxCount.secure : gpu.maxCount.community) ?? 0);
}

// ---------------------------------------------------------------------------------------------
// Machine size and stock: GraphQL gpuTypes { lowestPrice(input: {gpuCount, secureCloud}) }

export const LowestPriceWire = z.object({
  minVcpu: z.number().nullish(),
  /** RAM of the whole machine in GB. */
  minMemory: z.number().nullish(),
  /** "High" | "Medium" | "Low"; null means no stock for this count in this cloud. */
  stockStatus: z.string().nullish(),
});
export type LowestPriceWire = z.infer<typeof LowestPriceWire>;

const SPEC_FIELDS = '{ minVcpu minMemory stockStatus }';

const specAlias = (cloud: Cloud, count: number): string => `${cloud === 'SECURE' ? 's' : 'c'}${count}`;

/**
 * One query for the size and stock of every (cloud, count) pair: v2's catalog has neither, and
 * aliases keep it to a single request instead of one per pair.
 */
export function specsQuery(counts: ReadonlyMap<Cloud, number>): string {
  const fields: string[] = [];
  for (const [cloud, max] of counts) {
    for (let count = 1; count <= max; count += 1) {
      fields.push(
        `${specAlias(cloud, count)}: lowestPrice(input: {gpuCount: ${count}, secureCloud: ${cloud === 'SECURE'}}) ${SPEC_FIELDS}`,
      );
    }
  }
  return `query RunpodOfferSpecs { gpuTypes { id ${SPOT_FIELDS} ${fields.join(' ')} } }`;
}

/** Spot prices per GPU per cloud: GraphQL's gpuTypes has them (v2's catalog has none). */
const SPOT_FIELDS = 'secureSpotPrice communitySpotPrice';

/** The same question for one GPU type and one (cloud, count), for a live offer check. */
export const ONE_SPEC_QUERY = `query RunpodOfferSpec($id: String, $lowest: GpuLowestPriceInput) {
  gpuTypes(input: {id: $id}) { id ${SPOT_FIELDS} lowestPrice(input: $lowest) ${SPEC_FIELDS} }
}`;

export const oneSpecVariables = (key: OfferKey) => ({
  id: key.gpuTypeId,
  lowest: { gpuCount: key.count, secureCloud: key.cloud === 'SECURE' },
});

/** GPU type id -> "s2"/"c4"/"lowestPrice" -> size and stock, from either query's answer. */
export type SpecTable = Map<string, Map<string, LowestPriceWire>>;

export function parseSpecs(data: unknown): SpecTable {
  const table: SpecTable = new Map();
  const types = z.object({ gpuTypes: z.array(z.record(z.string(), z.unknown())).nullish() }).parse(data).gpuTypes ?? [];
  for (const type of types) {
    if (typeof type.id !== 'string') continue;
    const specs = new Map<string, LowestPriceWire>();
    for (const [key, value] of Object.entries(type)) {
      const parsed = LowestPriceWire.safeParse(value);
      if (key !== 'id' && parsed.success) specs.set(key, parsed.data);
    }
    table.set(type.id, specs);
  }
  return table;
}

export const specFor = (table: SpecTable, key: OfferKey, alias = specAlias(key.cloud, key.count)): LowestPriceWire | null =>
  table.get(key.gpuTypeId)?.get(alias) ?? null;

/** GPU type id -> its spot price per GPU in each cloud, exact text; a missing, zero or unreadable one is none. */
export type SpotTable = Map<string, { SECURE: string | null; COMMUNITY: string | null }>;

export function parseSpotPrices(data: unknown): SpotTable {
  const table: SpotTable = new Map();
  const types = z.object({ gpuTypes: z.array(z.record(z.string(), z.unknown())).nullish() }).parse(data).gpuTypes ?? [];
  const spot = (value: unknown): string | null => {
    const text = typeof value === 'number' || typeof value === 'string' ? priceText(value) : null;
    return text !== null && isPositive(text) ? text : null;
  };
  for (const type of types) {
    if (typeof type.id === 'string') table.set(type.id, { SECURE: spot(type.secureSpotPrice), COMMUNITY: spot(type.communitySpotPrice) });
  }
  return table;
}

// ---------------------------------------------------------------------------------------------
// Offers

export const EXTRA_FILTER_KEYS = ['cloud', 'gpu_type_id', 'manufacturer', 'stock'] as const;

const stockLevel = (spec: LowestPriceWire | null): string =>
  spec?.stockStatus ? spec.stockStatus.toUpperCase() : 'NONE';

const wholeNumber = (value: number | null | undefined): number =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;

/** One offer for a GPU type x count x cloud; null when that cloud does not rent this count. */
export function toOffer(gpu: GpuTypeWire, key: OfferKey, spec: LowestPriceWire | null, diskGb: number, spotPerGpu: string | null = null): Offer | null {
  if (key.gpuTypeId !== gpu.id || key.count < 1 || key.count > maxCountIn(gpu, key.cloud)) return null;
  const perGpu = priceText(key.cloud === 'SECURE' ? gpu.price.secure : gpu.price.community);
  if (perGpu === null) return null;
  const stock = stockLevel(spec);
  return {
    id: `${PROVIDER_NAME}:${encodeOfferId(key)}`,
    provider: PROVIDER_NAME,
    gpuType: gpuFamily(gpu.id),
    gpuModel: gpu.name || gpu.id,
    gpuCount: key.count,
    vramGb: gpu.memory,
    priceUsdPerHour: multiplyDecimal(perGpu, key.count),
    // a spot pod bids per GPU: the whole machine's spot price is the count's
    spotPriceUsdPerHour: spotPerGpu === null ? null : multiplyDecimal(spotPerGpu, key.count),
    // Both clouds bill RunPod's own list price; account discounts only ever lower it.
    priceVerified: true,
    // RunPod reports no size for a configuration out of stock: 0 means "not said".
    cpus: wholeNumber(spec?.minVcpu),
    ramGb: wholeNumber(spec?.minMemory),
    diskGb,
    downloadMbps: null,
    ports: null,
    // Without a data center in the create, the scheduler places the pod anywhere in the cloud.
    country: null,
    region: null,
    dockerInDocker: false,
    mig: false,
    baremetal: false,
    virtualized: false,
    // RunPod gives a stock level, not a count: any stock means at least one machine.
    available: stock === 'NONE' ? 0 : 1,
    attributes: {
      cloud: key.cloud,
      gpu_type_id: gpu.id,
      manufacturer: gpu.manufacturer ?? 'UNKNOWN',
      stock,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Pods: REST v2 /v2/pods

const SshEndpointWire = z.object({ host: z.string(), port: z.number().int() });

export const PodWire = z.object({
  id: z.string().min(1),
  name: z.string().nullish(),
  status: z.string().nullish(),
  env: z.record(z.string(), z.unknown()).nullish(),
  /** The container registry credential the pod pulled its image with. */
  registry: z.string().nullish(),
  /** USD per hour for the whole pod; 0 when exited. */
  cost: z.union([z.number(), z.string()]).nullish(),
  ssh: z.object({ direct: SshEndpointWire.nullish() }).nullish(),
  runtime: z
    .object({
      ports: z
        .array(z.object({ private: z.number().nullish(), public: z.number().nullish(), ip: z.string().nullish() }))
        .nullish(),
    })
    .nullish(),
});
export type PodWire = z.infer<typeof PodWire>;

export const PodListWire = z.object({ pods: z.array(PodWire) });

const STATUS: Readonly<Record<string, MachineStatus>> = {
  PROVISIONING: 'provisioning',
  STARTING: 'provisioning',
  RUNNING: 'running',
  EXITED: 'stopped',
  ERROR: 'failed',
  TERMINATED: 'terminated',
};

/** Our instance id: the pod's name, or the env var when someone renamed the pod. */
export function labelOf(pod: PodWire): string | null {
  if (isInstanceId(pod.name)) return pod.name;
  const fromEnv = pod.env?.[LABEL_ENV];
  return isInstanceId(fromEnv) ? fromEnv : null;
}

/** Direct SSH only: the proxy needs a per-pod user name the Machine cannot carry. */
function sshOf(pod: PodWire): { host: string; port: number } | null {
  if (pod.ssh?.direct) return { host: pod.ssh.direct.host, port: pod.ssh.direct.port };
  const mapped = pod.runtime?.ports?.find((p) => p.private === 22 && p.public && p.ip);
  return mapped ? { host: mapped.ip!, port: mapped.public! } : null;
}

/** Whether the pod is a spot pod of ours (see SPOT_BID_ENV). */
export const isSpotPod = (pod: PodWire): boolean => typeof pod.env?.[SPOT_BID_ENV] === 'string';

export function toMachine(pod: PodWire): Machine {
  const ssh = sshOf(pod);
  const status = STATUS[pod.status ?? ''] ?? 'unknown';
  return {
    machineId: pod.id,
    label: labelOf(pod),
    // RunPod interrupts a spot pod by stopping it (EXITED, its volume kept); we never stop a pod ourselves
    status: status === 'stopped' && isSpotPod(pod) ? 'preempted' : status,
    sshHost: ssh?.host ?? null,
    sshPort: ssh?.port ?? null,
    priceUsdPerHour: priceText(pod.cost),
  };
}

// ---------------------------------------------------------------------------------------------
// Create: REST v2 POST /v2/pods (the body admits no unknown properties)

/** Where a network volume appears inside the pod: RunPod's own default for pod volumes. */
export const VOLUME_MOUNT_PATH = '/workspace';

export interface CreatePodInput {
  key: OfferKey;
  label: string;
  image: string;
  diskGb: number;
  sshPublicKeys: readonly string[];
  env: Readonly<Record<string, string>>;
  ports: readonly number[];
  /** The container's start command (v2 `args`, what the console calls "Container Start Command"). */
  command: string | null;
  /** A container registry credential id made for this pod. */
  registryId: string | null;
  /** A network volume, and the data center it lives in (the pod must be placed there). */
  volume: { volumeId: string; dataCenter: string } | null;
}

/** The pod's env: the caller's, the SSH keys, and our id last, so a caller variable of the same name cannot hide the pod. */
function podEnv(input: CreatePodInput): Record<string, string> {
  const env: Record<string, string> = { ...input.env, [LABEL_ENV]: input.label };
  // only a spot create marks a pod as spot: a caller's variable of that name would make an on-demand pod read preempted
  delete env[SPOT_BID_ENV];
  // RunPod images append PUBLIC_KEY to authorized_keys (one key a line); startSsh keeps ours rather than the account's.
  if (input.sshPublicKeys.length > 0) env.PUBLIC_KEY = input.sshPublicKeys.map((k) => k.trim()).join('\n');
  return env;
}

export function createPodBody(input: CreatePodInput): Record<string, unknown> {
  const { key, sshPublicKeys } = input;
  const env = podEnv(input);
  return {
    name: input.label,
    image: input.image,
    gpu: { id: key.gpuTypeId, count: key.count },
    cloud: key.cloud,
    disk: input.diskGb,
    ports: [...new Set([22, ...input.ports])].map((port) => `${port}/tcp`),
    env,
    startSsh: sshPublicKeys.length > 0,
    ...(input.command !== null ? { args: input.command } : {}),
    ...(input.registryId !== null ? { registry: input.registryId } : {}),
    ...(input.volume
      ? { dataCenterIds: [input.volume.dataCenter], mounts: { network: [{ volumeId: input.volume.volumeId, path: VOLUME_MOUNT_PATH }] } }
      : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Spot create: GraphQL podRentInterruptable (REST v2 has no spot create; v1's `interruptible` takes no bid)

export const RENT_SPOT_MUTATION = `mutation RunpodSpotPod($input: PodRentInterruptableInput!) {
  podRentInterruptable(input: $input) { id desiredStatus costPerHr }
}`;

/** The mutation's input: the pod as createPodBody makes it, in GraphQL's flat shape, at `bidPerGpu` (exact text). */
export function spotPodInput(input: CreatePodInput, bidPerGpu: string): Record<string, unknown> {
  const { key, sshPublicKeys } = input;
  const env = { ...podEnv(input), [SPOT_BID_ENV]: bidPerGpu };
  return {
    bidPerGpu: Number(bidPerGpu),
    cloudType: key.cloud,
    gpuTypeId: key.gpuTypeId,
    gpuCount: key.count,
    name: input.label,
    imageName: input.image,
    containerDiskInGb: input.diskGb,
    volumeInGb: 0,
    ports: [...new Set([22, ...input.ports])].map((port) => `${port}/tcp`).join(','),
    env: Object.entries(env).map(([name, value]) => ({ key: name, value })),
    startSsh: sshPublicKeys.length > 0,
    ...(input.command !== null ? { dockerArgs: input.command } : {}),
    ...(input.registryId !== null ? { containerRegistryAuthId: input.registryId } : {}),
    ...(input.volume
      ? { networkVolumeId: input.volume.volumeId, dataCenterId: input.volume.dataCenter, volumeMountPath: VOLUME_MOUNT_PATH }
      : {}),
  };
}

export const SpotPodWire = z.object({
  podRentInterruptable: z.object({ id: z.string().min(1), costPerHr: z.union([z.number(), z.string()]).nullish() }).nullish(),
});

// ---------------------------------------------------------------------------------------------
// Network volumes and registry credentials: REST v2 /v2/network-volumes, /v2/registries

export const NetworkVolumeWire = z.object({
  id: z.string().min(1),
  name: z.string().nullish(),
  /** GB */
  size: z.number().int().positive(),
  dataCenter: z.string().min(1),
});
export type NetworkVolumeWire = z.infer<typeof NetworkVolumeWire>;
export const NetworkVolumeListWire = z.object({ networkVolumes: z.array(NetworkVolumeWire) });

export const DataCenterListWire = z.object({
  dataCenters: z.array(z.object({ id: z.string().min(1), networkVolumeTypes: z.array(z.string()).nullish() })),
});

export const RegistryWire = z.object({ id: z.string().min(1), name: z.string().nullish() });

/** The name of the registry credential made for one pod: traceable to our id, and never shared between pods. */
export const registryNameFor = (label: string): string => `cp-${label}`;
