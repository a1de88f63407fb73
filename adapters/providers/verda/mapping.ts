import { z } from 'zod';
import { gpuFamily } from '../../../core/market/gpu-family.ts';
import type { Offer } from '../../../core/market/offer.ts';
import type { Machine, MachineStatus, UpstreamVolume } from '../../../core/ports/providers.ts';
import { isInstanceId } from '../../../core/rentals/instance.ts';
import { isVolumeId } from '../../../core/volumes/volume.ts';

export const PROVIDER = 'verda';
/** The tag key that carries our instance or volume id (docs/decisions.md, Provider adapters). */
export const ID_TAG = 'cp-id';
/** A spot machine's bid rides in a tag: Verda has no bids, the adapter holds the machine to it. */
export const BID_TAG = 'cp-bid';
/** Prefix of the startup scripts and SSH keys this adapter registers, so only those are ever deleted. */
export const RESOURCE_PREFIX = 'cp-';

// ---- wire shapes (only the fields we read) ----

const decimalText = z.union([z.string(), z.number()]).transform((value) => String(value));

export const instanceTypeSchema = z.object({
  instance_type: z.string().min(1),
  description: z.string().optional(),
  price_per_hour: decimalText,
  spot_price: decimalText.nullish(),
  cpu: z.object({ number_of_cores: z.number().nonnegative() }).partial().optional(),
  gpu: z.object({ description: z.string().optional(), number_of_gpus: z.number().int().nonnegative() }),
  gpu_memory: z.object({ size_in_gigabytes: z.number().nonnegative() }),
  memory: z.object({ size_in_gigabytes: z.number().nonnegative() }).partial().optional(),
  storage: z.object({ size_in_gigabytes: z.number().nonnegative() }).partial().optional(),
  currency: z.string().optional(),
  model: z.string().optional(),
});
export type VerdaInstanceType = z.infer<typeof instanceTypeSchema>;

export const availabilitySchema = z.array(z.object({ location_code: z.string(), availabilities: z.array(z.string()) }));
export const locationSchema = z.array(z.object({ code: z.string(), name: z.string().optional(), country_code: z.string().optional() }));
export type VerdaLocation = z.infer<typeof locationSchema>[number];

const tag = z.object({ key: z.string(), value: z.string().nullish() });

export const instanceSchema = z.object({
  id: z.string().min(1),
  ip: z.string().nullish(),
  status: z.string(),
  hostname: z.string().nullish(),
  description: z.string().nullish(),
  tags: z.array(tag).nullish(),
  location: z.string().nullish(),
  price_per_hour: decimalText.nullish(),
  is_spot: z.boolean().nullish(),
  instance_type: z.string().nullish(),
  startup_script_id: z.string().nullish(),
  ssh_key_ids: z.array(z.string()).nullish(),
  volume_ids: z.array(z.string()).nullish(),
});
export type VerdaInstance = z.infer<typeof instanceSchema>;
export const instanceListSchema = z.array(instanceSchema);

export const sshKeyListSchema = z.array(z.object({ id: z.string(), name: z.string(), key: z.string() }));

export const volumeSchema = z.object({
  id: z.string().min(1),
  name: z.string(),
  status: z.string(),
  size: z.number().nonnegative(),
  location: z.string(),
  instance_id: z.string().nullish(),
  is_os_volume: z.boolean().nullish(),
  tags: z.array(tag).nullish(),
});
export type VerdaVolume = z.infer<typeof volumeSchema>;
export const volumeListSchema = z.array(volumeSchema);

export const volumeTypesSchema = z.array(z.object({ type: z.string(), price: z.object({ price_per_month_per_gb: z.number().nonnegative() }).partial() }));

/** A new resource's id: Verda answers it as plain text (sometimes JSON-quoted). */
export const newIdOf = (body: unknown): string => {
  const id = typeof body === 'string' ? body.trim().replace(/^"|"$/g, '') : '';
  if (!id) throw new z.ZodError([{ code: 'custom', message: 'no id in the answer', path: [], input: body }]);
  return id;
};

// ---- offers ----

/** Offer ids are "<instance type>@<location code>": Verda sells a type in a location. */
export const offerIdOf = (typeName: string, location: string): string => `${typeName}@${location}`;

export const parseOfferId = (offerId: string): { typeName: string; location: string } | null => {
  const match = /^([A-Za-z0-9][A-Za-z0-9._-]*)@([A-Z]{2,4}-\d{2})$/.exec(offerId);
  return match ? { typeName: match[1]!, location: match[2]! } : null;
};

/** "1x H100 SXM5 80GB" → "H100 SXM5": the count and the memory are fields of their own. */
export const gpuModelOf = (description: string): string =>
  description.replace(/^\s*\d+\s*x\s+/i, '').replace(/\s*\d+(\.\d+)?\s*GB\s*$/i, '').trim();

/** A float price as Verda may send it, back to its short decimal text; null when it is not a price. */
export const decimalOf = (text: string | null | undefined): string | null => {
  if (text === null || text === undefined) return null;
  const trimmed = text.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return trimmed;
  const value = Number(trimmed);
  return Number.isFinite(value) && value >= 0 ? String(Number(value.toFixed(6))) : null;
};

export const EXTRA_FILTER_KEYS = ['instance_type', 'location'] as const;

export interface OfferInputs {
  types: VerdaInstanceType[];
  /** Location → instance types available on demand now. */
  onDemand: Map<string, Set<string>>;
  /** Location → instance types available as spot now. */
  spot: Map<string, Set<string>>;
  locations: VerdaLocation[];
}

/** One offer per instance type and location where it is available on demand (or only as spot, then at no on-demand price). */
export const toOffers = ({ types, onDemand, spot, locations }: OfferInputs): Offer[] => {
  const offers: Offer[] = [];
  const locationCodes = new Set([...onDemand.keys(), ...spot.keys()]);
  for (const type of types) {
    const gpuCount = type.gpu.number_of_gpus;
    if (gpuCount < 1) continue; // CPU-only types
    const price = decimalOf(type.price_per_hour);
    if (price === null || (type.currency && type.currency !== 'usd')) continue;
    const spotPrice = decimalOf(type.spot_price);
    const model = type.gpu.description ? gpuModelOf(type.gpu.description) : (type.model ?? type.instance_type);
    for (const code of [...locationCodes].sort()) {
      const here = onDemand.get(code)?.has(type.instance_type) ?? false;
      const spotHere = spotPrice !== null && (spot.get(code)?.has(type.instance_type) ?? false);
      if (!here && !spotHere) continue;
      offers.push({
        id: `${PROVIDER}:${offerIdOf(type.instance_type, code)}`,
        provider: PROVIDER,
        gpuType: gpuFamily(model),
        gpuModel: type.gpu.description ?? model,
        gpuCount,
        // gpu_memory is the whole instance's
        vramGb: Math.round(type.gpu_memory.size_in_gigabytes / gpuCount),
        priceUsdPerHour: price,
        spotPriceUsdPerHour: spotHere ? spotPrice : null,
        priceVerified: true,
        cpus: type.cpu?.number_of_cores ?? 0,
        ramGb: type.memory?.size_in_gigabytes ?? 0,
        diskGb: type.storage?.size_in_gigabytes ?? 0,
        downloadMbps: null,
        ports: null,
        country: locations.find((l) => l.code === code)?.country_code?.toUpperCase() ?? null,
        region: code,
        dockerInDocker: true,
        mig: false,
        baremetal: false,
        virtualized: true,
        // Verda says available or not, never how many; on demand only counts as available (spot may be taken back)
        available: here ? 1 : 0,
        attributes: { instance_type: type.instance_type, location: code },
      });
    }
  }
  return offers;
};

// ---- machines ----

const STATUS: Record<string, MachineStatus> = {
  new: 'provisioning',
  ordered: 'provisioning',
  validating: 'provisioning',
  provisioning: 'provisioning',
  running: 'running',
  offline: 'stopped',
  deleting: 'terminated',
  discontinued: 'terminated',
  notfound: 'terminated',
  error: 'failed',
  no_capacity: 'failed',
  installation_failed: 'failed',
};

const tagValue = (tags: VerdaInstance['tags'], key: string): string | null => tags?.find((t) => t.key === key)?.value ?? null;

/** A hostname takes no underscore: "ins_abc" is "ins-abc" there. */
export const hostnameFor = (label: string): string => label.replace(/_/g, '-').slice(0, 63);

/** Our id, from the tag first, then the description, then the hostname. */
export const labelOf = (instance: VerdaInstance): string | null => {
  const tagged = tagValue(instance.tags, ID_TAG);
  if (isInstanceId(tagged)) return tagged;
  const described = instance.description?.split(/\s/)[0];
  if (isInstanceId(described)) return described;
  const fromHost = instance.hostname?.replace(/^ins-/, 'ins_');
  return isInstanceId(fromHost) ? fromHost : null;
};

export const bidOf = (instance: VerdaInstance): string | null => decimalOf(tagValue(instance.tags, BID_TAG));

export const toMachine = (instance: VerdaInstance, overBid: boolean): Machine => {
  const spot = instance.is_spot === true;
  // a spot machine Verda discontinued (it took the capacity back), or one the market rose over our bid for
  const preempted = spot && (instance.status === 'discontinued' || (overBid && (instance.status === 'running' || instance.status === 'provisioning')));
  return {
    machineId: instance.id,
    label: labelOf(instance),
    status: preempted ? 'preempted' : (STATUS[instance.status] ?? 'unknown'),
    sshHost: instance.ip || null,
    sshPort: instance.ip ? 22 : null,
    priceUsdPerHour: decimalOf(instance.price_per_hour),
  };
};

export const launchedMachine = (machineId: string, label: string): Machine => ({
  machineId,
  label,
  status: 'provisioning',
  sshHost: null,
  sshPort: null,
  priceUsdPerHour: null,
});

export interface DeployInput {
  typeName: string;
  location: string;
  image: string;
  label: string;
  name: string;
  sshKeyIds: string[];
  startupScriptId: string | null;
  volumeIds: string[];
  bid: string | null;
}

export const deployBody = (input: DeployInput): Record<string, unknown> => ({
  instance_type: input.typeName,
  image: input.image,
  location_code: input.location,
  hostname: hostnameFor(input.label),
  description: `${input.label}${input.name ? ` ${input.name}` : ''}`.slice(0, 255),
  tags: [{ key: ID_TAG, value: input.label }, ...(input.bid ? [{ key: BID_TAG, value: input.bid }] : [])],
  ...(input.sshKeyIds.length > 0 && { ssh_key_ids: input.sshKeyIds }),
  ...(input.startupScriptId && { startup_script_id: input.startupScriptId }),
  ...(input.volumeIds.length > 0 && { existing_volumes: input.volumeIds }),
  is_spot: input.bid !== null,
  contract: input.bid !== null ? 'SPOT' : 'PAY_AS_YOU_GO',
});

// ---- volumes ----

const VOLUME_STATUS: Record<string, UpstreamVolume['status']> = {
  ordered: 'creating',
  created: 'available',
  detached: 'available',
  attaching: 'in_use',
  attached: 'in_use',
  detaching: 'in_use',
  deleting: 'deleting',
  canceling: 'deleting',
};

export const volumeLabelOf = (volume: VerdaVolume): string | null => {
  const tagged = tagValue(volume.tags, ID_TAG);
  if (isVolumeId(tagged)) return tagged;
  return isVolumeId(volume.name) ? volume.name : null;
};

/** null for a volume deleted (or in the trash): gone as far as we are concerned. */
export const toVolume = (volume: VerdaVolume): UpstreamVolume | null => {
  if (['deleted', 'canceled'].includes(volume.status)) return null;
  return {
    volumeId: volume.id,
    label: volumeLabelOf(volume),
    region: volume.location,
    sizeGb: volume.size,
    status: VOLUME_STATUS[volume.status] ?? 'error',
  };
};

/** Type and base64 body: the comment at the end does not make a different key. */
export const keyMaterial = (publicKey: string): string => publicKey.trim().split(/\s+/).slice(0, 2).join(' ');
