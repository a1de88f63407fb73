import { z } from 'zod';
import { gpuFamily } from '../../../core/market/gpu-family.ts';
import type { Offer } from '../../../core/market/offer.ts';
import type { CreateMachineRequest, Machine, MachineStatus } from '../../../core/ports/providers.ts';
import { registryOf } from '../shared/machine-options.ts';
import { addDecimal } from '../shared/decimal.ts';

export const PROVIDER_NAME = 'vast';

/** The env var that carries our instance id, next to `label`, so the id survives a relabel. */
export const INSTANCE_ID_ENV = 'CP_INSTANCE_ID';

/** Raw Vast offer fields that `extra_filters` can match (Offer.attributes keys). */
export const EXTRA_FILTER_KEYS = [
  'reliability',
  'verified',
  'verification',
  'cuda_max_good',
  'compute_cap',
  'driver_version',
  'gpu_arch',
  'datacenter',
  'hosting_type',
  'inet_up',
  'inet_down',
  'disk_bw',
  'disk_space',
  'static_ip',
  'dlperf',
  'machine_id',
  'host_id',
  'geolocation',
] as const;

// ---------------------------------------------------------------------------------------------- decimals

const PLAIN_DECIMAL = /^\d+(\.\d+)?$/;

const trimDecimal = (whole: string, fraction: string): string => {
  const int = whole.replace(/^0+(?=\d)/, '') || '0';
  const frac = fraction.replace(/0+$/, '');
  return frac ? `${int}.${frac}` : int;
};

/**
 * A non-negative wire number as exact decimal text: the shortest text that reads back as the same
 * double (what `String` prints), with exponent notation expanded by moving the point in the digit
 * string, never by arithmetic. null for anything that is not a finite, non-negative amount.
 */
export function decimalText(value: unknown): string | null {
  if (typeof value === 'string') {
    const text = value.trim();
    if (!PLAIN_DECIMAL.test(text)) return null;
    const [whole = '0', fraction = ''] = text.split('.');
    return trimDecimal(whole, fraction);
  }
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return null;
  const text = String(value);
  const match = /^(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!match) {
    const [whole = '0', fraction = ''] = text.split('.');
    return trimDecimal(whole, fraction);
  }
  const [, int = '', frac = '', exponent = '0'] = match;
  const digits = int + frac;
  const point = int.length + Number(exponent);
  if (point <= 0) return trimDecimal('0', '0'.repeat(-point) + digits);
  if (point >= digits.length) return trimDecimal(digits + '0'.repeat(point - digits.length), '');
  return trimDecimal(digits.slice(0, point), digits.slice(point));
}

// ---------------------------------------------------------------------------------------------- units

/** Sizes GPUs are sold with, in GB; Vast's `gpu_ram` is what the driver reports, a little under these. */
const MARKETED_VRAM_GB = [1, 2, 3, 4, 5, 6, 8, 10, 11, 12, 16, 20, 24, 32, 40, 48, 64, 80, 94, 96, 128, 141, 144, 180, 192, 256, 288];

/**
 * Vast's `gpu_ram` (per GPU) -> GB. The value is the driver's MiB figure (24564 for a 24 GB card), so
 * it is read as MiB and snapped to the nearest marketed size within 7% (gpuhunt's tolerance).
 */
export function vramGbFromMb(mb: number): number {
  const gib = mb / 1024;
  let best: { size: number; off: number } | null = null;
  for (const size of MARKETED_VRAM_GB) {
    const off = Math.abs(gib - size) / size;
    if (off <= 0.07 && (best === null || off < best.off)) best = { size, off };
  }
  return best?.size ?? Math.max(1, Math.round(gib));
}

/** "Oregon, US" -> US / Oregon; the last comma-separated token is an ISO-2 code when it is one. */
export function parseGeolocation(geolocation: string | null | undefined): { country: string | null; region: string | null } {
  const text = geolocation?.trim();
  if (!text) return { country: null, region: null };
  const parts = text.split(',').map((part) => part.trim()).filter(Boolean);
  const last = (parts.at(-1) ?? '').toUpperCase();
  if (!/^[A-Z]{2}$/.test(last)) return { country: null, region: text };
  const rest = parts.slice(0, -1).join(', ');
  return { country: last === 'UK' ? 'GB' : last, region: rest || null };
}

// ---------------------------------------------------------------------------------------------- offers

const finite = z.number().finite();

const WireOffer = z.looseObject({
  id: z.number().int().nonnegative(),
  num_gpus: z.number().int().positive(),
  gpu_name: z.string().min(1),
  gpu_ram: finite.positive(),
  dph_total: finite.nonnegative(),
  cpu_cores: finite.nullish(),
  cpu_cores_effective: finite.nullish(),
  cpu_ram: finite.nullish(),
  inet_down: finite.nullish(),
  direct_port_count: finite.nullish(),
  geolocation: z.string().nullish(),
  verification: z.string().nullish(),
  verified: z.boolean().nullish(),
  rentable: z.boolean().nullish(),
  rented: z.boolean().nullish(),
  min_bid: finite.nonnegative().nullish(),
  storage_total_cost: finite.nonnegative().nullish(),
});
type WireOffer = z.infer<typeof WireOffer>;

export const offersOf = (body: unknown): unknown[] | null => {
  const offers = (body as { offers?: unknown } | null)?.offers;
  return Array.isArray(offers) ? offers : null;
};

const isVerified = (offer: WireOffer): boolean =>
  typeof offer.verification === 'string' ? offer.verification === 'verified' : offer.verified === true;

function attributesOf(raw: Record<string, unknown>, offer: WireOffer): Record<string, string | number | boolean> {
  const attributes: Record<string, string | number | boolean> = {};
  for (const key of EXTRA_FILTER_KEYS) {
    const value = raw[key];
    if (typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) {
      attributes[key] = value;
    }
  }
  // reliability2 is the score Vast's own tools rank by; older offers carry only `reliability`.
  const reliability = raw.reliability2 ?? raw.reliability;
  if (typeof reliability === 'number' && Number.isFinite(reliability)) attributes.reliability = reliability;
  attributes.verified = isVerified(offer);
  if (typeof offer.verification === 'string') attributes.verification = offer.verification;
  return attributes;
}

/**
 * What storage at the allocated disk costs an hour on this ask (`storage_total_cost`): Vast bills it beside a
 * bid, as it is inside `dph_total`. "0" when the ask does not say.
 */
export const storageCostOf = (offer: Pick<WireOffer, 'storage_total_cost'>): string => decimalText(offer.storage_total_cost) ?? '0';

/**
 * The ask's spot price in the units of `dph_total`: its minimum interruptible bid (`min_bid`, compute only) plus
 * its storage, so a spot and an on-demand price compare; null when the ask states no minimum bid.
 */
export function spotPriceOf(offer: Pick<WireOffer, 'min_bid' | 'storage_total_cost'>): string | null {
  const minBid = decimalText(offer.min_bid);
  return minBid === null ? null : addDecimal(minBid, storageCostOf(offer));
}

/**
 * One Vast ask in our units, or null when the wire record lacks what an offer needs.
 * `dph_total` already prices the whole offer (all GPUs, storage at `allocated_storage`): no multiplying.
 */
export function offerFromWire(raw: unknown, diskGb: number): Offer | null {
  const parsed = WireOffer.safeParse(raw);
  if (!parsed.success) return null;
  const offer = parsed.data;
  const price = decimalText(offer.dph_total);
  if (price === null) return null;
  const cores = offer.cpu_cores ?? 0;
  const effective = offer.cpu_cores_effective ?? offer.cpu_cores ?? 0;
  // cpu_ram is the host's; the offer gets the share of its cores (MB -> GB, one decimal)
  const ramMb = offer.cpu_ram && cores > 0 ? (offer.cpu_ram * effective) / cores : 0;
  const { country, region } = parseGeolocation(offer.geolocation);
  return {
    id: `${PROVIDER_NAME}:${offer.id}`,
    provider: PROVIDER_NAME,
    gpuType: gpuFamily(offer.gpu_name),
    gpuModel: offer.gpu_name,
    gpuCount: offer.num_gpus,
    vramGb: vramGbFromMb(offer.gpu_ram),
    priceUsdPerHour: price,
    spotPriceUsdPerHour: spotPriceOf(offer),
    priceVerified: isVerified(offer),
    cpus: Math.max(0, Math.floor(effective)),
    ramGb: Math.max(0, Math.round(ramMb / 100) / 10),
    // the rental gets the disk we allocate (and dph_total is priced for), not the host's free space
    diskGb,
    downloadMbps: offer.inet_down != null ? Math.max(0, Math.round(offer.inet_down)) : null,
    ports: offer.direct_port_count != null ? Math.max(0, Math.floor(offer.direct_port_count)) : null,
    country,
    region,
    dockerInDocker: false,
    mig: false,
    baremetal: false,
    virtualized: false,
    available: offer.rentable !== false && offer.rented !== true ? 1 : 0,
    attributes: attributesOf(raw as Record<string, unknown>, offer),
  };
}

// ---------------------------------------------------------------------------------------------- requests

export interface SearchSettings {
  limit: number;
  diskGb: number;
  verifiedOnly: boolean;
}

/**
 * One broad on-demand search: everything rentable now (verified or not, unless configured), cheapest
 * first, priced for the disk we allocate. Filtering is ours, so one search serves every caller.
 */
export function offerSearchBody(settings: SearchSettings, offerId?: number): Record<string, unknown> {
  return {
    ...(offerId !== undefined ? { id: { eq: offerId } } : {}),
    rentable: { eq: true },
    rented: { eq: false },
    external: { eq: false },
    ...(settings.verifiedOnly ? { verified: { eq: true } } : {}),
    disk_space: { gte: settings.diskGb },
    type: 'on-demand',
    allocated_storage: settings.diskGb,
    order: [['dph_total', 'asc']],
    limit: offerId !== undefined ? 1 : settings.limit,
  };
}

const shellQuote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

/** Appends the caller's keys at boot, as dstack does, so no account-wide key is needed. */
const sshKeyScript = (publicKeys: readonly string[]): string =>
  [
    'mkdir -p ~/.ssh',
    'chmod 700 ~/.ssh',
    ...publicKeys.map((key) => `echo ${shellQuote(key.trim())} >> ~/.ssh/authorized_keys`),
    'chmod 600 ~/.ssh/authorized_keys',
  ].join(' && ');

/**
 * Vast's `onstart`: the key installation first (the machine is reachable even if the caller's script fails),
 * then the caller's startup script as it was given.
 */
export function onstartOf(request: Pick<CreateMachineRequest, 'sshPublicKeys' | 'startupScript'>): string | null {
  const parts = [
    ...(request.sshPublicKeys.length > 0 ? [sshKeyScript(request.sshPublicKeys)] : []),
    ...(request.startupScript !== null ? [request.startupScript] : []),
  ];
  return parts.length > 0 ? parts.join('\n') : null;
}

/** Vast's `image_login`: docker login flags for the image's own registry. */
export const imageLoginOf = (image: string, auth: { username: string; password: string }): string =>
  `-u ${auth.username} -p ${auth.password} ${registryOf(image)}`;

/**
 * The env in the object form vast-cli and dstack send: the caller's variables, one `-p P:P` entry per port
 * (Vast maps each to a host port of its choosing), SSH's 22, and our id last so no caller variable can replace it.
 */
export function envOf(request: Pick<CreateMachineRequest, 'env' | 'ports' | 'label'>): Record<string, string> {
  const env: Record<string, string> = { ...request.env };
  for (const port of new Set([22, ...request.ports])) env[`-p ${port}:${port}`] = '1';
  env[INSTANCE_ID_ENV] = request.label;
  return env;
}

export interface CreateSettings {
  diskGb: number;
  defaultImage: string;
}

/**
 * Body of PUT /api/v0/asks/{id}/: our id in `label` and in the env, start now or fail; on demand, or interruptible
 * at `bidPrice` (Vast's `price`: USD per hour for the whole machine, compute only, whose presence makes the bid).
 */
export function createBody(request: CreateMachineRequest, settings: CreateSettings, bidPrice?: string): Record<string, unknown> {
  const image = request.image ?? settings.defaultImage;
  const onstart = onstartOf(request);
  return {
    client_id: 'me',
    image,
    ...(request.registryAuth ? { image_login: imageLoginOf(image, request.registryAuth) } : {}),
    disk: settings.diskGb,
    label: request.label,
    runtype: 'ssh',
    env: envOf(request),
    ...(onstart !== null ? { onstart } : {}),
    target_state: 'running',
    cancel_unavail: true,
    ...(bidPrice !== undefined ? { price: Number(bidPrice) } : {}),
  };
}

// ---------------------------------------------------------------------------------------------- responses

/** Vast's error shapes vary: `{success, error, msg}`, only `msg`/`message`/`detail`, or plain text. */
export function errorOf(body: unknown): { code: string | null; message: string } {
  if (typeof body === 'string') return { code: null, message: body.trim().slice(0, 300) || 'empty body' };
  if (body === null || typeof body !== 'object') return { code: null, message: 'empty body' };
  const record = body as Record<string, unknown>;
  const code = typeof record.error === 'string' ? record.error : null;
  const text = [record.msg, record.message, record.detail].find((value) => typeof value === 'string') as string | undefined;
  return { code, message: text ?? code ?? 'no error message' };
}

/** `new_contract` is the instance id; Vast can send it alongside an error, and then the instance exists. */
export function contractIdOf(body: unknown): string | null {
  const value = (body as { new_contract?: unknown } | null)?.new_contract;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return String(value);
  if (typeof value === 'string' && /^\d+$/.test(value.trim())) return value.trim();
  return null;
}

// ---------------------------------------------------------------------------------------------- instances

const WireInstance = z.looseObject({
  id: z.union([z.number().int(), z.string().regex(/^\d+$/)]),
  label: z.string().nullish(),
  actual_status: z.string().nullish(),
  intended_status: z.string().nullish(),
  cur_state: z.string().nullish(),
  next_state: z.string().nullish(),
  status_msg: z.string().nullish(),
  public_ipaddr: z.string().nullish(),
  ssh_host: z.string().nullish(),
  ssh_port: z.union([finite, z.string()]).nullish(),
  ports: z.record(z.string(), z.array(z.looseObject({ HostPort: z.union([z.string(), finite]).nullish() })).nullish()).nullish(),
  dph_total: z.unknown().optional(),
  is_bid: z.boolean().nullish(),
  extra_env: z.unknown().optional(),
  env: z.unknown().optional(),
});
type WireInstance = z.infer<typeof WireInstance>;

/**
 * Our id from the env echoed back, in whichever form it arrives: `extra_env` pairs, the object form
 * vast-cli and dstack send, or the docker-flag string form of the spec ("-e K=V -p 22:22").
 */
export function labelFromEnv(env: unknown): string | null {
  if (Array.isArray(env)) {
    const pair = env.find((entry) => Array.isArray(entry) && entry[0] === INSTANCE_ID_ENV) as unknown[] | undefined;
    return typeof pair?.[1] === 'string' ? pair[1] : null;
  }
  if (typeof env === 'string') {
    const match = new RegExp(`(?:^|\\s)-e\\s+["']?${INSTANCE_ID_ENV}=([^\\s"']+)`).exec(env);
    return match?.[1] ?? null;
  }
  if (env !== null && typeof env === 'object') {
    const value = (env as Record<string, unknown>)[INSTANCE_ID_ENV];
    return typeof value === 'string' ? value : null;
  }
  return null;
}

export function machineStatus(
  instance: Pick<WireInstance, 'actual_status' | 'intended_status' | 'cur_state' | 'next_state' | 'status_msg'> & { is_bid?: boolean | null | undefined },
): MachineStatus {
  const { actual_status: actual, intended_status: intended, cur_state: current, next_state: next } = instance;
  // all three "stopped": outbid or stopped by the owner (storage still billed). We never stop an instance, so an
  // interruptible one (is_bid) stopped so, or exited with stopped intended, was outbid: preempted
  const outbid = instance.is_bid === true;
  if (intended === 'stopped' && current === 'stopped' && (next ?? 'stopped') === 'stopped') return outbid ? 'preempted' : 'stopped';
  switch (actual ?? null) {
    case null:
    case 'loading':
      return 'provisioning';
    case 'created':
      return /oci runtime create failed/i.test(instance.status_msg ?? '') ? 'failed' : 'provisioning';
    case 'running':
      return 'running';
    case 'exited':
      // Vast says exited never returns to running by itself, but a reboot passes through it: let the caller time out
      return intended === 'stopped' ? (outbid ? 'preempted' : 'stopped') : 'unknown';
    default:
      return 'unknown';
  }
}

const portOf = (value: unknown): number | null => {
  const port = typeof value === 'number' ? value : typeof value === 'string' ? Number(value.trim()) : Number.NaN;
  return Number.isInteger(port) && port > 0 && port < 65536 ? port : null;
};

/** Direct SSH (public IP + mapped 22/tcp, only while running) when there is one, else Vast's SSH proxy. */
function sshOf(instance: WireInstance): { sshHost: string | null; sshPort: number | null } {
  const directPort = portOf(instance.ports?.['22/tcp']?.[0]?.HostPort);
  const publicIp = instance.public_ipaddr?.trim();
  if (publicIp && directPort !== null) return { sshHost: publicIp, sshPort: directPort };
  const proxyHost = instance.ssh_host?.trim();
  const proxyPort = portOf(instance.ssh_port);
  if (proxyHost && proxyPort !== null) return { sshHost: proxyHost, sshPort: proxyPort };
  return { sshHost: null, sshPort: null };
}

export function machineFromWire(raw: unknown): Machine | null {
  const parsed = WireInstance.safeParse(raw);
  if (!parsed.success) return null;
  const instance = parsed.data;
  const label = instance.label?.trim() || labelFromEnv(instance.extra_env) || labelFromEnv(instance.env);
  return {
    machineId: String(instance.id),
    label: label || null,
    status: machineStatus(instance),
    ...sshOf(instance),
    priceUsdPerHour: decimalText(instance.dph_total),
  };
}

/**
 * GET /instances/{id}/ answers `{"instances": {...}}`: one object under a plural key, `null` when the
 * instance is gone. An array is accepted too, in case the legacy list shape comes back.
 */
export function singleInstanceOf(body: unknown, machineId: string): unknown | null {
  const instances = (body as { instances?: unknown } | null)?.instances;
  if (instances === null || instances === undefined) return null;
  if (Array.isArray(instances)) return instances.find((entry) => String((entry as { id?: unknown })?.id) === machineId) ?? null;
  return typeof instances === 'object' ? instances : null;
}
