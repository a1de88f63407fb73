import { z } from 'zod';
import { formatUsd } from '../../../core/money.ts';
import { gpuFamily } from '../../../core/market/gpu-family.ts';
import type { Offer } from '../../../core/market/offer.ts';
import type { Machine, MachineStatus } from '../../../core/ports/providers.ts';
import { isInstanceId } from '../../../core/rentals/instance.ts';

export const PROVIDER = 'lambda';
/** The tag key that carries our instance id (docs/decisions.md, Provider adapters: name plus tag `cp-id`). */
export const ID_TAG = 'cp-id';
/** The caller's human name rides along in a second tag, since `name` holds our id. */
export const NAME_TAG = 'cp-name';
/** Prefix of SSH keys this adapter registers, so only those are ever deleted again. */
export const SSH_KEY_PREFIX = 'cp-';

// ---- wire shapes (only the fields we read; unknown ones are ignored) ----

const region = z.object({ name: z.string(), description: z.string().optional() });

const instanceType = z.object({
  name: z.string(),
  description: z.string().optional(),
  gpu_description: z.string().optional(),
  price_cents_per_hour: z.number().int().nonnegative(),
  specs: z.object({
    vcpus: z.number().nonnegative(),
    memory_gib: z.number().nonnegative(),
    storage_gib: z.number().nonnegative(),
    gpus: z.number().int().nonnegative(),
  }),
});

const instanceTypesItem = z.object({
  instance_type: instanceType,
  regions_with_capacity_available: z.array(region),
});

const tag = z.object({ key: z.string(), value: z.string() });

export const instanceSchema = z.object({
  id: z.string().min(1),
  name: z.string().nullish(),
  ip: z.string().nullish(),
  status: z.string(),
  ssh_key_names: z.array(z.string()).default([]),
  region: region.optional(),
  instance_type: instanceType.partial().optional(),
  tags: z.array(tag).nullish(),
});
export type LambdaInstance = z.infer<typeof instanceSchema>;

export const instanceListSchema = z.array(instanceSchema);
export const launchSchema = z.object({ instance_ids: z.array(z.string()) });
export const terminateSchema = z.object({ terminated_instances: z.array(instanceSchema) });
export const sshKeySchema = z.object({ id: z.string(), name: z.string(), public_key: z.string().optional() });
export const sshKeyListSchema = z.array(sshKeySchema);

// ---- offers ----

/** Offer ids are "<instance type>@<region>": Lambda's unit of sale is a type in a region with capacity. */
export const offerIdOf = (typeName: string, regionName: string): string => `${typeName}@${regionName}`;

export const parseOfferId = (offerId: string): { typeName: string; regionName: string } | null => {
  const match = /^([a-z0-9_]+)@([a-z0-9-]+)$/.exec(offerId);
  return match ? { typeName: match[1]!, regionName: match[2]! } : null;
};

export interface GpuDescription {
  count: number | null;
  model: string;
  vramGb: number;
  /** What follows the memory inside the brackets: "SXM5", "PCIe", or "" */
  form: string;
}

/**
 * VRAM is not a field: it only appears as text, "8x H100 (80 GB SXM5)" in `description` or
 * "H100 (80 GB SXM5)" in `gpu_description` (the same pattern gpuhunt relies on).
 */
export const parseGpuDescription = (text: string): GpuDescription | null => {
  const match = /^(?:(\d+)x\s+)?(?:Tesla\s+)?(.+?)\s*\((\d+(?:\.\d+)?)\s*GB\b\s*([^)]*)\)/i.exec(text.trim());
  if (!match) return null;
  const vramGb = Number(match[3]);
  if (!(vramGb > 0)) return null;
  return { count: match[1] ? Number(match[1]) : null, model: match[2]!, vramGb, form: match[4]!.trim() };
};

const COUNTRY_NAMES: Record<string, string> = {
  usa: 'US', 'united states': 'US', us: 'US', germany: 'DE', japan: 'JP', india: 'IN', israel: 'IL',
  australia: 'AU', 'south korea': 'KR', korea: 'KR', canada: 'CA', 'united kingdom': 'GB', uk: 'GB',
  netherlands: 'NL', france: 'FR', sweden: 'SE', finland: 'FI', iceland: 'IS', norway: 'NO',
};

/** Lambda's regions carry no country code; "Virginia, USA" ends in a country name, "us-east-1" hints too. */
export const countryOf = (regionName: string, description: string | undefined): string | null => {
  const last = description?.split(',').pop()?.trim().toLowerCase();
  if (last && COUNTRY_NAMES[last]) return COUNTRY_NAMES[last];
  return regionName.startsWith('us-') ? 'US' : null;
};

type WireInstanceType = z.infer<typeof instanceType>;

const gpuOf = (type: WireInstanceType): GpuDescription | null =>
  (type.description ? parseGpuDescription(type.description) : null) ??
  (type.gpu_description ? parseGpuDescription(type.gpu_description) : null);

const toOffer = (type: WireInstanceType, where: z.infer<typeof region>): Offer | null => {
  const gpu = gpuOf(type);
  const gpuCount = type.specs.gpus || gpu?.count || 0;
  if (!gpu || gpuCount < 1) return null; // CPU-only types, or a description we cannot read
  const id = offerIdOf(type.name, where.name);
  return {
    id: `${PROVIDER}:${id}`,
    provider: PROVIDER,
    gpuType: gpuFamily(gpu.model),
    gpuModel: type.gpu_description ?? `${gpu.model} (${gpu.vramGb} GB${gpu.form ? ` ${gpu.form}` : ''})`,
    gpuCount,
    vramGb: gpu.vramGb,
    // integer cents for the whole instance: exact by integer/string math, never divided as a float
    priceUsdPerHour: formatUsd(type.price_cents_per_hour),
    priceVerified: true,
    cpus: type.specs.vcpus,
    // GiB as Lambda states them; like the "80 GB" of VRAM, the market reads them as GB
    ramGb: type.specs.memory_gib,
    diskGb: type.specs.storage_gib,
    downloadMbps: null,
    ports: null,
    country: countryOf(where.name, where.description),
    region: where.name,
    dockerInDocker: true, // a full VM with Docker installed
    mig: false,
    baremetal: false,
    virtualized: true,
    // Lambda says only "has capacity", never how much
    available: 1,
    attributes: {
      instance_type: type.name,
      region: where.name,
      gpu_description: type.gpu_description ?? gpu.model,
    },
  };
};

export const EXTRA_FILTER_KEYS = ['instance_type', 'region', 'gpu_description'] as const;

/**
 * GET /instance-types answers an object keyed by type name, not an array. Each type becomes one
 * offer per region that has capacity now; an item that does not parse is skipped, not fatal.
 */
export const toOffers = (data: unknown): Offer[] => {
  const map = z.record(z.string(), z.unknown()).parse(data);
  const offers: Offer[] = [];
  for (const raw of Object.values(map)) {
    const item = instanceTypesItem.safeParse(raw);
    if (!item.success) continue;
    for (const where of item.data.regions_with_capacity_available) {
      const offer = toOffer(item.data.instance_type, where);
      if (offer) offers.push(offer);
    }
  }
  return offers;
};

// ---- machines ----

const STATUS: Record<string, MachineStatus> = {
  booting: 'provisioning',
  active: 'running',
  // still billed and may recover, so not a definite failure
  unhealthy: 'unknown',
  // billing has stopped for both; there is no separate "terminating" in our model
  terminating: 'terminated',
  terminated: 'terminated',
  preempted: 'terminated',
};

/** Our id, read back from the tag first and from `name` second. */
export const labelOf = (instance: LambdaInstance): string | null => {
  const tagged = instance.tags?.find((t) => t.key === ID_TAG)?.value;
  if (isInstanceId(tagged)) return tagged;
  return isInstanceId(instance.name) ? instance.name : null;
};

export const isOurs = (instance: LambdaInstance): boolean => labelOf(instance) !== null;

export const toMachine = (instance: LambdaInstance): Machine => {
  const cents = instance.instance_type?.price_cents_per_hour;
  return {
    machineId: instance.id,
    label: labelOf(instance),
    status: STATUS[instance.status] ?? 'unknown',
    sshHost: instance.ip || null,
    // Lambda instances are VMs reachable on the standard port as user "ubuntu"
    sshPort: instance.ip ? 22 : null,
    priceUsdPerHour: cents === undefined ? null : formatUsd(cents),
  };
};

// ---- launch ----

export interface LaunchInput {
  typeName: string;
  regionName: string;
  sshKeyName: string;
  /** Keys beyond the launch key: Lambda takes exactly one key name, so the rest go in through cloud-init. */
  extraPublicKeys: readonly string[];
  /** Filesystems to mount (at /lambda/nfs/<name>), by name. */
  fileSystemNames: readonly string[];
  label: string;
  name: string;
}

const TAG_VALUE_MAX = 128;
const NAME_MAX = 64;

/**
 * cloud-init user data that adds keys to the default user's authorized_keys. Each key is a JSON string, which
 * YAML reads as the same text whatever characters its comment holds.
 */
export const extraKeysUserData = (keys: readonly string[]): string =>
  ['#cloud-config', 'ssh_authorized_keys:', ...keys.map((key) => `  - ${JSON.stringify(key.trim())}`), ''].join('\n');

export const launchBody = (input: LaunchInput): Record<string, unknown> => ({
  region_name: input.regionName,
  instance_type_name: input.typeName,
  ssh_key_names: [input.sshKeyName],
  name: input.label.slice(0, NAME_MAX),
  tags: [
    { key: ID_TAG, value: input.label.slice(0, TAG_VALUE_MAX) },
    ...(input.name ? [{ key: NAME_TAG, value: input.name.slice(0, TAG_VALUE_MAX) }] : []),
  ],
  ...(input.fileSystemNames.length > 0 ? { file_system_names: [...input.fileSystemNames] } : {}),
  ...(input.extraPublicKeys.length > 0 ? { user_data: extraKeysUserData(input.extraPublicKeys) } : {}),
});

// ---- filesystems ----

export const fileSystemSchema = z.object({
  id: z.string().min(1),
  name: z.string(),
  region: region,
  is_in_use: z.boolean().optional(),
  bytes_used: z.number().nullish(),
});
export type LambdaFileSystem = z.infer<typeof fileSystemSchema>;
export const fileSystemListSchema = z.array(fileSystemSchema);
export const regionListSchema = z.array(region);

const FILE_SYSTEM_NAME = /^[a-zA-Z]+[0-9a-zA-Z-]*$/;
const FILE_SYSTEM_NAME_MAX = 60;

/**
 * A filesystem keeps only a name (letters, digits, hyphens) and has no size of its own, so the name carries
 * both our label and the size asked for: "vol_abc" of 20 GB is "vol-abc-20gb". null when the label cannot be one.
 */
export function fileSystemNameFor(label: string, sizeGb: number): string | null {
  const name = `${label.replace(/_/g, '-')}-${sizeGb}gb`;
  return name.length <= FILE_SYSTEM_NAME_MAX && FILE_SYSTEM_NAME.test(name) ? name : null;
}

/** Our label and the size back from a name this adapter gave; null for filesystems made elsewhere. */
export function parseFileSystemName(name: string): { label: string; sizeGb: number } | null {
  const match = /^([a-z]+)-([a-z0-9]+)-(\d+)gb$/.exec(name);
  return match ? { label: `${match[1]}_${match[2]}`, sizeGb: Number(match[3]) } : null;
}

/** The machine as we know it from our own request, for when the read-back right after launch fails. */
export const launchedMachine = (machineId: string, label: string): Machine => ({
  machineId,
  label,
  status: 'provisioning',
  sshHost: null,
  sshPort: null,
  priceUsdPerHour: null,
});

// ---- ssh keys ----

/** The name under which this adapter registers a caller's key: derived from our id, so it is traceable. */
export const sshKeyNameFor = (label: string): string => `${SSH_KEY_PREFIX}${label}`.slice(0, 64);

/** Type and base64 body: the comment at the end does not make a different key. */
export const keyMaterial = (publicKey: string): string => publicKey.trim().split(/\s+/).slice(0, 2).join(' ');
