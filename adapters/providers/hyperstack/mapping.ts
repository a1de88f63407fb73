import { z } from 'zod';
import { gpuFamily } from '../../../core/market/gpu-family.ts';
import type { Offer } from '../../../core/market/offer.ts';
import type { Machine, MachineStatus, UpstreamVolume } from '../../../core/ports/providers.ts';
import { isInstanceId } from '../../../core/rentals/instance.ts';
import { isVolumeId } from '../../../core/volumes/volume.ts';

export const PROVIDER = 'hyperstack';
/** The environment this adapter makes (and uses) in a region: everything of ours lives in one per region. */
export const environmentNameFor = (region: string): string => `cp-${region.toLowerCase()}`;
/** Key pairs this adapter imports are named after our id, so they can be told from the account's others. */
export const KEYPAIR_PREFIX = 'cp-';

// ---- wire shapes (only the fields we read) ----

const flavorSchema = z.object({
  name: z.string().min(1),
  gpu: z.string().nullish(),
  gpu_count: z.number().int().nonnegative().nullish(),
  cpu: z.number().nonnegative().nullish(),
  ram: z.number().nonnegative().nullish(),
  disk: z.number().nonnegative().nullish(),
  ephemeral: z.number().nonnegative().nullish(),
  region_name: z.string().nullish(),
  stock_available: z.boolean().nullish(),
});
export const flavorListSchema = z.object({ data: z.array(z.object({ region_name: z.string().nullish(), flavors: z.array(z.unknown()) })) });
export { flavorSchema };
export type HyperstackFlavor = z.infer<typeof flavorSchema>;

export const pricebookSchema = z.array(z.object({ name: z.string(), value: z.union([z.number(), z.string()]) }).passthrough());
export const regionListSchema = z.object({ regions: z.array(z.object({ name: z.string(), country: z.string().nullish() })) });
export const environmentListSchema = z.object({ environments: z.array(z.object({ name: z.string(), region: z.string().nullish() })) });
export const keypairListSchema = z.object({
  keypairs: z.array(z.object({ id: z.number(), name: z.string(), public_key: z.string().nullish(), environment: z.object({ name: z.string().nullish() }).nullish() })),
});

export const instanceSchema = z.object({
  id: z.number().int(),
  name: z.string().nullish(),
  status: z.string().nullish(),
  floating_ip: z.string().nullish(),
  floating_ip_status: z.string().nullish(),
  labels: z.array(z.string()).nullish(),
  environment: z.object({ name: z.string().nullish(), region: z.string().nullish() }).nullish(),
  flavor: z.object({ name: z.string().nullish(), gpu: z.string().nullish(), gpu_count: z.number().nullish() }).nullish(),
  keypair: z.object({ name: z.string().nullish() }).nullish(),
  volume_attachments: z.array(z.object({ volume: z.object({ id: z.number().int(), name: z.string().nullish() }).nullish() })).nullish(),
});
export type HyperstackInstance = z.infer<typeof instanceSchema>;
export const oneInstanceSchema = z.object({ instance: instanceSchema });
export const instanceListSchema = z.object({ instances: z.array(instanceSchema) });
export const createdSchema = z.object({ instances: z.array(instanceSchema).min(1) });

export const volumeSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  size: z.number().nonnegative(),
  status: z.string().nullish(),
  environment: z.object({ name: z.string().nullish(), region: z.string().nullish() }).nullish(),
  attachments: z.array(z.object({ instance_id: z.number().nullish() })).nullish(),
});
export type HyperstackVolume = z.infer<typeof volumeSchema>;
export const oneVolumeSchema = z.object({ volume: volumeSchema });
export const volumeListSchema = z.object({ volumes: z.array(volumeSchema) });

// ---- exact decimals ----

/** A float price as Hyperstack sends it (per GPU per hour), back to its short decimal text; null when it is not one. */
export const decimalOf = (value: number | string): string | null => {
  const number = typeof value === 'number' ? value : Number(value);
  if (!Number.isFinite(number) || number < 0) return null;
  return String(Number(number.toFixed(6)));
};

/** An exact decimal times a whole number ("0.95" x 8 = "7.6"), in integers. */
export const timesWhole = (decimal: string, count: number): string => {
  const [whole = '0', fraction = ''] = decimal.split('.');
  const digits = (BigInt(whole + fraction) * BigInt(count)).toString().padStart(fraction.length + 1, '0');
  if (fraction.length === 0) return digits;
  const out = `${digits.slice(0, -fraction.length)}.${digits.slice(-fraction.length)}`.replace(/\.?0+$/, '');
  return out === '' ? '0' : out;
};

// ---- offers ----

/** Offer ids are "<flavor>@<region>": Hyperstack sells a flavor in a region. */
export const offerIdOf = (flavor: string, region: string): string => `${flavor}@${region}`;

export const parseOfferId = (offerId: string): { flavor: string; region: string } | null => {
  const match = /^([A-Za-z0-9][A-Za-z0-9._-]*)@([A-Z]+(?:-[A-Z]+)*-\d+)$/.exec(offerId);
  return match ? { flavor: match[1]!, region: match[2]! } : null;
};

const COUNTRIES: Record<string, string> = { canada: 'CA', norway: 'NO', 'united states': 'US', usa: 'US', 'united kingdom': 'GB', iceland: 'IS', sweden: 'SE', finland: 'FI' };

export const countryOf = (country: string | null | undefined): string | null => {
  if (!country) return null;
  if (/^[A-Za-z]{2}$/.test(country)) return country.toUpperCase();
  return COUNTRIES[country.trim().toLowerCase()] ?? null;
};

/** "A100-80G-PCIe" → 80: the memory is in the GPU's name, nowhere else. */
export const vramOf = (gpu: string): number | null => {
  const match = /(\d+)\s*G(?:B)?\b/i.exec(gpu);
  return match ? Number(match[1]) : null;
};

/** VRAM of the cards Hyperstack names without it. */
const KNOWN_VRAM: Record<string, number> = { RTXA6000: 48, RTXA5000: 24, RTXA4000: 16, A6000: 48, L40: 48, L40S: 48, A40: 48, H100: 80, H200: 141, A100: 80, RTX6000ADA: 48 };

export const EXTRA_FILTER_KEYS = ['flavor', 'region', 'gpu'] as const;

export interface OfferInputs {
  flavors: HyperstackFlavor[];
  /** GPU name → exact decimal USD per GPU per hour. */
  prices: Map<string, string>;
  /** region name → ISO country. */
  countries: Map<string, string | null>;
}

export const toOffers = ({ flavors, prices, countries }: OfferInputs): Offer[] => {
  const offers: Offer[] = [];
  for (const flavor of flavors) {
    const gpu = flavor.gpu?.trim();
    const gpuCount = flavor.gpu_count ?? 0;
    const region = flavor.region_name;
    if (!gpu || gpuCount < 1 || !region) continue; // CPU flavors
    const perGpu = prices.get(gpu);
    const vramGb = vramOf(gpu) ?? KNOWN_VRAM[gpuFamily(gpu)] ?? null;
    if (!perGpu || !vramGb) continue;
    offers.push({
      id: `${PROVIDER}:${offerIdOf(flavor.name, region)}`,
      provider: PROVIDER,
      gpuType: gpuFamily(gpu.replace(/-?\d+\s*G(B)?\b/i, '')),
      gpuModel: gpu,
      gpuCount,
      vramGb,
      // the pricebook is per GPU: the whole machine is that times the count, exactly
      priceUsdPerHour: timesWhole(perGpu, gpuCount),
      priceVerified: true,
      cpus: flavor.cpu ?? 0,
      ramGb: flavor.ram ?? 0,
      diskGb: (flavor.disk ?? 0) + (flavor.ephemeral ?? 0),
      downloadMbps: null,
      ports: null,
      country: countries.get(region) ?? null,
      region,
      dockerInDocker: true,
      mig: false,
      baremetal: false,
      virtualized: true,
      // Hyperstack says in stock or not per flavor and region
      available: flavor.stock_available ? 1 : 0,
      attributes: { flavor: flavor.name, region, gpu },
    });
  }
  return offers;
};

// ---- machines ----

const STATUS: Record<string, MachineStatus> = {
  CREATING: 'provisioning',
  BUILD: 'provisioning',
  STARTING: 'provisioning',
  ACTIVE: 'running',
  REBOOTING: 'rebooting',
  HARD_REBOOT: 'rebooting',
  SHUTOFF: 'stopped',
  STOPPED: 'stopped',
  HIBERNATED: 'stopped',
  HIBERNATING: 'stopped',
  DELETING: 'terminated',
  DELETED: 'terminated',
  ERROR: 'failed',
};

/** Our id, from the labels first, then the name. */
export const labelOf = (instance: HyperstackInstance): string | null => {
  const labelled = instance.labels?.find((l) => isInstanceId(l));
  if (labelled) return labelled;
  return isInstanceId(instance.name) ? instance.name : null;
};

/** Still being made: Hyperstack refuses to delete a machine then. */
export const isCreating = (instance: HyperstackInstance): boolean => ['CREATING', 'BUILD', 'STARTING'].includes((instance.status ?? '').toUpperCase());

export const toMachine = (instance: HyperstackInstance): Machine => {
  // SSH goes through the floating IP, on port 22 (port randomization is turned off at create)
  const host = instance.floating_ip && (instance.floating_ip_status ?? 'ATTACHED').toUpperCase() === 'ATTACHED' ? instance.floating_ip : null;
  return {
    machineId: String(instance.id),
    label: labelOf(instance),
    status: STATUS[(instance.status ?? '').toUpperCase()] ?? 'unknown',
    sshHost: host,
    sshPort: host ? 22 : null,
    priceUsdPerHour: null,
  };
};

export const launchedMachine = (machineId: string, label: string): Machine => ({ machineId, label, status: 'provisioning', sshHost: null, sshPort: null, priceUsdPerHour: null });

/**
 * cloud-init user data: the keys beyond the key pair, and the caller's startup script run once. Each value is a JSON
 * string, which YAML reads as the same text whatever it holds.
 */
export const userData = (extraKeys: readonly string[], script: string | null): string | null => {
  if (extraKeys.length === 0 && script === null) return null;
  return [
    '#cloud-config',
    ...(extraKeys.length > 0 ? ['ssh_authorized_keys:', ...extraKeys.map((key) => `  - ${JSON.stringify(key.trim())}`)] : []),
    ...(script !== null ? ['runcmd:', `  - ["bash", "-c", ${JSON.stringify(script)}]`] : []),
    '',
  ].join('\n');
};

export interface CreateInput {
  flavor: string;
  region: string;
  image: string;
  label: string;
  keyName: string;
  extraKeys: readonly string[];
  startupScript: string | null;
  volumeName: string | null;
}

export const createBody = (input: CreateInput): Record<string, unknown> => {
  const data = userData(input.extraKeys, input.startupScript);
  return {
    name: input.label.slice(0, 50),
    environment_name: environmentNameFor(input.region),
    flavor_name: input.flavor,
    image_name: input.image,
    key_name: input.keyName,
    count: 1,
    labels: [input.label],
    // SSH needs a public address, on a port we can state
    assign_floating_ip: true,
    enable_port_randomization: false,
    ...(data !== null && { user_data: data }),
    ...(input.volumeName && { volume_name: input.volumeName }),
  };
};

// ---- volumes ----

const VOLUME_STATUS: Record<string, UpstreamVolume['status']> = {
  CREATING: 'creating',
  AVAILABLE: 'available',
  ATTACHING: 'in_use',
  IN_USE: 'in_use',
  'IN-USE': 'in_use',
  DETACHING: 'in_use',
  DELETING: 'deleting',
  ERROR: 'error',
};

export const toVolume = (volume: HyperstackVolume, regionOfEnvironment: (name: string) => string | null): UpstreamVolume => {
  const environment = volume.environment?.name ?? '';
  const attached = (volume.attachments ?? []).some((a) => a.instance_id !== null && a.instance_id !== undefined);
  return {
    volumeId: String(volume.id),
    label: isVolumeId(volume.name) ? volume.name : null,
    region: volume.environment?.region ?? regionOfEnvironment(environment) ?? '',
    sizeGb: volume.size,
    status: attached ? 'in_use' : (VOLUME_STATUS[(volume.status ?? '').toUpperCase()] ?? 'error'),
  };
};

/** Type and base64 body: the comment at the end does not make a different key. */
export const keyMaterial = (publicKey: string): string => publicKey.trim().split(/\s+/).slice(0, 2).join(' ');
