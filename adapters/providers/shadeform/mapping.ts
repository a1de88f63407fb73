import { z } from 'zod';
import { formatUsd } from '../../../core/money.ts';
import { gpuFamily } from '../../../core/market/gpu-family.ts';
import type { Offer } from '../../../core/market/offer.ts';
import type { Machine, MachineStatus, UpstreamVolume } from '../../../core/ports/providers.ts';
import { isInstanceId } from '../../../core/rentals/instance.ts';
import { HOURS_PER_MONTH } from '../../../core/volumes/pricing.ts';
import { isVolumeId } from '../../../core/volumes/volume.ts';
import { compareDecimal, multiplyDecimal } from '../shared/decimal.ts';

export const PROVIDER = 'shadeform';
/** Prefix of the SSH keys this adapter registers. */
export const KEY_PREFIX = 'cp-';
/** A spot machine's bid rides in a tag ("cp-bid=0.62"): Shadeform has no bids, the adapter holds the machine to it. */
export const BID_TAG_PREFIX = 'cp-bid=';

// ---- wire shapes (only the fields we read) ----

const configuration = z.object({
  num_gpus: z.number().int().nonnegative(),
  gpu_type: z.string(),
  vram_per_gpu_in_gb: z.number().nonnegative(),
  vcpus: z.number().nonnegative().nullish(),
  memory_in_gb: z.number().nonnegative().nullish(),
  storage_in_gb: z.number().nonnegative().nullish(),
  interconnect: z.string().nullish(),
  os_options: z.array(z.string()).nullish(),
});

export const instanceTypeSchema = z.object({
  cloud: z.string().min(1),
  shade_instance_type: z.string().min(1),
  cloud_instance_type: z.string().nullish(),
  configuration,
  hourly_price: z.number().int().nonnegative(),
  // one entry per region and rental type: "on_demand" (or none, as the published file has it) and "spot", the latter
  // at its own hourly_price
  availability: z
    .array(z.object({ region: z.string(), available: z.boolean(), rental_type: z.string().nullish(), hourly_price: z.number().int().nonnegative().nullish() }))
    .default([]),
});
export type ShadeformInstanceType = z.infer<typeof instanceTypeSchema>;
export const instanceTypesSchema = z.object({ instance_types: z.array(z.unknown()) });

export const instanceSchema = z.object({
  id: z.string().min(1),
  cloud: z.string().nullish(),
  region: z.string().nullish(),
  name: z.string().nullish(),
  status: z.string(),
  status_details: z.string().nullish(),
  ip: z.string().nullish(),
  ssh_user: z.string().nullish(),
  ssh_port: z.number().int().nullish(),
  hourly_price: z.number().int().nullish(),
  tags: z.array(z.string()).nullish(),
  ssh_key_id: z.string().nullish(),
  volume_ids: z.array(z.string()).nullish(),
});
export type ShadeformInstance = z.infer<typeof instanceSchema>;
export const instanceListSchema = z.object({ instances: z.array(instanceSchema) });

export const volumeSchema = z.object({
  id: z.string().min(1),
  cloud: z.string(),
  region: z.string(),
  name: z.string().nullish(),
  size_in_gb: z.number().int().nonnegative(),
  /** The instance mounting it; empty or absent when none. */
  mounted_by: z.string().nullish(),
});
export type ShadeformVolume = z.infer<typeof volumeSchema>;
export const volumeListSchema = z.object({ volumes: z.array(volumeSchema) });
export const volumeTypesSchema = z.object({
  volume_types: z.array(z.object({ cloud: z.string(), region: z.string(), price_per_gb_per_hour: z.union([z.string(), z.number()]) })),
});
export type ShadeformVolumeType = z.infer<typeof volumeTypesSchema>['volume_types'][number];
export const createdSchema = z.object({ id: z.string().min(1) });
export const sshKeyListSchema = z.object({ ssh_keys: z.array(z.object({ id: z.string(), name: z.string(), public_key: z.string() })) });

// ---- offers ----

/** Offer ids are "<cloud>:<shade instance type>@<region>": Shadeform sells a type of one of its clouds in a region. */
export const offerIdOf = (cloud: string, type: string, region: string): string => `${cloud}:${type}@${region}`;

export const parseOfferId = (offerId: string): { cloud: string; type: string; region: string } | null => {
  const match = /^([a-z0-9]+):([A-Za-z0-9._-]+)@([A-Za-z0-9._-]+)$/.exec(offerId);
  return match ? { cloud: match[1]!, type: match[2]!, region: match[3]! } : null;
};

const COUNTRY_PREFIXES: [RegExp, string][] = [
  [/^(us|usa)[-_]/i, 'US'],
  [/^ca(nada)?[-_]/i, 'CA'],
  [/^(eu-)?(de|germany)[-_]?/i, 'DE'],
  [/^(fin|fi|finland)[-_]/i, 'FI'],
  [/^(no|norway)[-_]/i, 'NO'],
  [/^(ice|is|iceland)[-_]/i, 'IS'],
  [/^(uk|gb)[-_]/i, 'GB'],
  [/^(jp|japan)[-_]/i, 'JP'],
];

/** Shadeform's regions are its clouds' own names ("us-west-1", "FIN-01", "canada-1"): a country only where the name says. */
export const countryOf = (region: string): string | null => COUNTRY_PREFIXES.find(([pattern]) => pattern.test(region))?.[1] ?? null;

export const EXTRA_FILTER_KEYS = ['cloud', 'shade_instance_type', 'cloud_instance_type', 'underlying_cloud'] as const;

export interface OfferContext {
  /** Our provider name for one of Shadeform's clouds (ProviderModule.alsoKnownAs), its own name otherwise. */
  providerNamed(cloud: string): string;
  /** Underlying clouds (in our names) whose machines are left out: those we reach directly. */
  excluded: ReadonlySet<string>;
}

type AvailabilityEntry = ShadeformInstanceType['availability'][number];

/** Each region's on-demand and spot entries, in the order the regions first appear. */
const byRegion = (entries: readonly AvailabilityEntry[]): Map<string, { onDemand?: AvailabilityEntry; spot?: AvailabilityEntry }> => {
  const regions = new Map<string, { onDemand?: AvailabilityEntry; spot?: AvailabilityEntry }>();
  for (const entry of entries) {
    const here = regions.get(entry.region) ?? {};
    if (entry.rental_type === 'spot') here.spot = entry;
    else if (!entry.rental_type || entry.rental_type === 'on_demand') here.onDemand = entry;
    regions.set(entry.region, here);
  }
  return regions;
};

/**
 * One offer per type and region it lists, available or not, with its spot price where spot is available there;
 * clouds we reach directly are left out.
 */
export const toOffers = (types: ShadeformInstanceType[], context: OfferContext): Offer[] => {
  const offers: Offer[] = [];
  for (const type of types) {
    const underlying = context.providerNamed(type.cloud);
    if (context.excluded.has(underlying)) continue;
    const { configuration: c } = type;
    if (c.num_gpus < 1 || !(c.vram_per_gpu_in_gb > 0)) continue;
    for (const [region, { onDemand, spot }] of byRegion(type.availability)) {
      offers.push({
        id: `${PROVIDER}:${offerIdOf(type.cloud, type.shade_instance_type, region)}`,
        provider: PROVIDER,
        underlyingCloud: underlying,
        gpuType: gpuFamily(c.gpu_type),
        gpuModel: c.gpu_type,
        gpuCount: c.num_gpus,
        vramGb: c.vram_per_gpu_in_gb,
        // hourly_price: integer cents for the whole instance (Shadeform's platform fee is not in it)
        priceUsdPerHour: formatUsd(type.hourly_price),
        spotPriceUsdPerHour: spot?.available ? formatUsd(spot.hourly_price ?? type.hourly_price) : null,
        priceVerified: true,
        cpus: c.vcpus ?? 0,
        ramGb: c.memory_in_gb ?? 0,
        diskGb: c.storage_in_gb ?? 0,
        downloadMbps: null,
        ports: null,
        country: countryOf(region),
        region,
        dockerInDocker: true,
        mig: false,
        baremetal: false,
        virtualized: true,
        // on demand only counts as available: a spot machine may be taken back
        available: onDemand?.available ? 1 : 0,
        attributes: { cloud: type.cloud, shade_instance_type: type.shade_instance_type, cloud_instance_type: type.cloud_instance_type ?? '', underlying_cloud: underlying },
      });
    }
  }
  return offers;
};

// ---- machines ----

const STATUS: Record<string, MachineStatus> = {
  creating: 'provisioning',
  pending_provider: 'provisioning',
  pending: 'provisioning',
  active: 'running',
  deleting: 'terminated',
  deleted: 'terminated',
  error: 'failed',
};

/** Our id, from the tags first, then the name. */
export const labelOf = (instance: ShadeformInstance): string | null => instance.tags?.find((t) => isInstanceId(t)) ?? (isInstanceId(instance.name) ? instance.name : null);

/** The bid a spot machine was made at (the tag this adapter put on it); null for an on-demand machine. */
export const bidOf = (instance: ShadeformInstance): string | null => {
  const tag = instance.tags?.find((t) => t.startsWith(BID_TAG_PREFIX))?.slice(BID_TAG_PREFIX.length);
  return tag !== undefined && /^\d+(\.\d+)?$/.test(tag) ? tag : null;
};

const LIVE = new Set(['creating', 'pending_provider', 'pending', 'active']);

/**
 * A machine its cloud took back shows as `deleting` with status_details "preempted" (Shadeform's API reference):
 * preempted, not terminated, so whoever sees it knows it was not ours to end. A spot machine whose hourly price rose
 * over its bid reads preempted too: Shadeform keeps it running at the new price, the bid is the most it may cost
 * (docs/decisions.md, 'Shadeform').
 */
export const toMachine = (instance: ShadeformInstance): Machine => {
  const bid = bidOf(instance);
  const price = instance.hourly_price === null || instance.hourly_price === undefined ? null : formatUsd(instance.hourly_price);
  const overBid = bid !== null && price !== null && LIVE.has(instance.status) && compareDecimal(price, bid) > 0;
  const preempted = overBid || (instance.status === 'deleting' && /preempt/i.test(instance.status_details ?? ''));
  const up = instance.status === 'active' && !!instance.ip;
  return {
    machineId: instance.id,
    label: labelOf(instance),
    status: preempted ? 'preempted' : (STATUS[instance.status] ?? 'unknown'),
    sshHost: up ? instance.ip! : null,
    sshPort: up ? (instance.ssh_port ?? 22) : null,
    // each machine states its own login: it depends on the cloud and image behind it
    sshUser: instance.ssh_user || null,
    priceUsdPerHour: price,
  };
};

export const launchedMachine = (machineId: string, label: string): Machine => ({ machineId, label, status: 'provisioning', sshHost: null, sshPort: null, priceUsdPerHour: null });

/**
 * The script a create runs (`launch_configuration.type: script`, base64): the keys beyond the first (Shadeform takes
 * one key id) appended for every login on the machine, then the caller's startup script. null when there is neither.
 */
export const launchScript = (extraKeys: readonly string[], script: string | null): string | null => {
  if (extraKeys.length === 0 && script === null) return null;
  const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
  const lines = ['#!/bin/bash'];
  if (extraKeys.length > 0) {
    lines.push('for home in /root /home/*; do', '  [ -d "$home" ] || continue', '  mkdir -p "$home/.ssh"');
    for (const key of extraKeys) lines.push(`  printf '%s\\n' ${quote(key.trim())} >> "$home/.ssh/authorized_keys"`);
    lines.push('  chown -R "$(stat -c %U "$home")" "$home/.ssh"', 'done');
  }
  if (script !== null) lines.push(script);
  return `${lines.join('\n')}\n`;
};

export interface CreateInput {
  cloud: string;
  type: string;
  region: string;
  label: string;
  sshKeyId: string | null;
  extraKeys: readonly string[];
  startupScript: string | null;
  volumeIds: readonly string[];
  /** A spot machine's bid, exact decimal USD per hour; null: on demand. */
  bid: string | null;
}

export const createBody = (input: CreateInput): Record<string, unknown> => {
  const script = launchScript(input.extraKeys, input.startupScript);
  return {
    cloud: input.cloud,
    region: input.region,
    shade_instance_type: input.type,
    // on Shadeform's own account with that cloud
    shade_cloud: true,
    name: input.label,
    tags: [input.label, ...(input.bid !== null ? [`${BID_TAG_PREFIX}${input.bid}`] : [])],
    ...(input.bid !== null && { rental_type: 'spot' }),
    ...(input.sshKeyId && { ssh_key_id: input.sshKeyId }),
    ...(input.volumeIds.length > 0 && { volume_ids: [...input.volumeIds] }),
    ...(script !== null && { launch_configuration: { type: 'script', script_configuration: { base64_script: Buffer.from(script).toString('base64') } } }),
  };
};

// ---- volumes ----

/** "0.00028", ".000097" (as Shadeform's examples write it) or a JSON number, as exact decimal text; null when none. */
export const decimalText = (value: string | number): string | null => {
  const text = typeof value === 'number' ? (Number.isFinite(value) && value >= 0 ? String(value) : '') : value.trim();
  const match = /^(\d*)(?:\.(\d+))?$/.exec(text);
  if (!match || (match[1] === '' && match[2] === undefined)) return null;
  return match[2] ? `${match[1] || '0'}.${match[2]}` : match[1]!;
};

/** Shadeform prices a volume per GB-hour; a GB-month is 730 of them (core/volumes/pricing.ts). */
export const perGbMonth = (perGbHour: string | number): string | null => {
  const hourly = decimalText(perGbHour);
  return hourly === null ? null : multiplyDecimal(hourly, HOURS_PER_MONTH);
};

/**
 * Volumes are per cloud and region; a region is offered once, on the cheapest of the clouds that make volumes
 * there (then by name), among the clouds not left out.
 */
export const volumePlaces = (types: readonly ShadeformVolumeType[], context: OfferContext): Map<string, { cloud: string; priceUsdPerGbMonth: string }> => {
  const places = new Map<string, { cloud: string; priceUsdPerGbMonth: string }>();
  for (const type of types) {
    const price = perGbMonth(type.price_per_gb_per_hour);
    if (price === null || context.excluded.has(context.providerNamed(type.cloud))) continue;
    const held = places.get(type.region);
    const cheaper = !held || compareDecimal(price, held.priceUsdPerGbMonth) < 0 || (compareDecimal(price, held.priceUsdPerGbMonth) === 0 && type.cloud < held.cloud);
    if (cheaper) places.set(type.region, { cloud: type.cloud, priceUsdPerGbMonth: price });
  }
  return places;
};

/** No status on the wire: a volume some instance mounts is in use, else available. */
export const toVolume = (volume: ShadeformVolume): UpstreamVolume => ({
  volumeId: volume.id,
  label: isVolumeId(volume.name) ? volume.name : null,
  region: volume.region,
  sizeGb: volume.size_in_gb,
  status: volume.mounted_by ? 'in_use' : 'available',
});

/** Type and base64 body: the comment at the end does not make a different key. */
export const keyMaterial = (publicKey: string): string => publicKey.trim().split(/\s+/).slice(0, 2).join(' ');
