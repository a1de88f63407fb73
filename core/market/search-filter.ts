import type { Cents } from '../money.ts';
import type { Offer } from './offer.ts';

/** The standard search filters, by their query-parameter names (SPEC.md, "Search and market"). */
export const STANDARD_FILTERS = [
  'gpu_type',
  'gpu_count',
  'min_vram_gb',
  'min_download_mbps',
  'min_ports',
  'min_cpus',
  'min_ram_gb',
  'min_disk_gb',
  'max_price_per_gpu_hour',
  'country',
  'region',
  'docker_in_docker',
  'mig',
  'baremetal',
  'virtualized',
  'provider',
] as const;

export type StandardFilter = (typeof STANDARD_FILTERS)[number];

export type ExtraOperator = '=' | '!=' | '>=' | '<=' | '>' | '<';

/** One `extra_filters` item: a raw upstream field compared with a value, e.g. `reliability>=0.99`. */
export interface ExtraFilter {
  key: string;
  operator: ExtraOperator;
  value: string;
  /** As the caller wrote it, for `ignored_filters`. */
  text: string;
}

/** What a caller asks of the market. Absent fields do not filter. */
export interface MarketFilter {
  gpuType?: string;
  gpuCount?: number;
  minVramGb?: number;
  minDownloadMbps?: number;
  minPorts?: number;
  minCpus?: number;
  minRamGb?: number;
  minDiskGb?: number;
  /** Whole cents: a node passes when its per-GPU price in cents is at most this. */
  maxPricePerGpuCents?: Cents;
  country?: string;
  region?: string;
  dockerInDocker?: boolean;
  mig?: boolean;
  baremetal?: boolean;
  virtualized?: boolean;
  provider?: string;
  extra: ExtraFilter[];
}

/** The standard filters a caller actually set, by query name. */
export function activeStandardFilters(filter: MarketFilter): StandardFilter[] {
  const set: Record<StandardFilter, unknown> = {
    gpu_type: filter.gpuType,
    gpu_count: filter.gpuCount,
    min_vram_gb: filter.minVramGb,
    min_download_mbps: filter.minDownloadMbps,
    min_ports: filter.minPorts,
    min_cpus: filter.minCpus,
    min_ram_gb: filter.minRamGb,
    min_disk_gb: filter.minDiskGb,
    max_price_per_gpu_hour: filter.maxPricePerGpuCents,
    country: filter.country,
    region: filter.region,
    docker_in_docker: filter.dockerInDocker,
    mig: filter.mig,
    baremetal: filter.baremetal,
    virtualized: filter.virtualized,
    provider: filter.provider,
  };
  return STANDARD_FILTERS.filter((name) => set[name] !== undefined);
}

const EXTRA_ITEM = /^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*(>=|<=|!=|=|>|<)\s*(.*?)\s*$/;

/**
 * Parses `extra_filters`: comma-separated `key=value` pairs (also `!=`, `>=`, `<=`, `>`, `<`).
 * Returns the filters, or the first item that cannot be read, so the caller can be told which.
 */
export function parseExtraFilters(text: string): { ok: true; filters: ExtraFilter[] } | { ok: false; item: string } {
  const filters: ExtraFilter[] = [];
  for (const item of text.split(',')) {
    if (item.trim() === '') continue;
    const match = EXTRA_ITEM.exec(item);
    if (!match || match[3] === '') return { ok: false, item: item.trim() };
    filters.push({ key: match[1]!, operator: match[2] as ExtraOperator, value: match[3]!, text: item.trim() });
  }
  return { ok: true, filters };
}

const NUMBER = /^-?\d+(\.\d+)?$/;

/** Compares one raw attribute with an extra filter: numerically when both are numbers, else as text. */
export function extraMatches(attribute: string | number | boolean | undefined, filter: ExtraFilter): boolean {
  if (attribute === undefined) return false;
  const wanted = filter.value;
  let order: number;
  if (typeof attribute === 'boolean') {
    const flag = /^(true|1|yes)$/i.test(wanted) ? true : /^(false|0|no)$/i.test(wanted) ? false : null;
    if (flag === null) return false;
    order = attribute === flag ? 0 : attribute ? 1 : -1;
  } else if ((typeof attribute === 'number' || NUMBER.test(attribute)) && NUMBER.test(wanted)) {
    order = Math.sign(Number(attribute) - Number(wanted));
  } else {
    const a = String(attribute).toLowerCase();
    const b = wanted.toLowerCase();
    order = a === b ? 0 : a < b ? -1 : 1;
  }
  switch (filter.operator) {
    case '=':
      return order === 0;
    case '!=':
      return order !== 0;
    case '>=':
      return order >= 0;
    case '<=':
      return order <= 0;
    case '>':
      return order > 0;
    case '<':
      return order < 0;
  }
}

const atLeast = (value: number | null, min: number | undefined): boolean =>
  min === undefined || (value !== null && value >= min);

const sameText = (value: string | null, wanted: string | undefined): boolean =>
  wanted === undefined || (value !== null && value.toLowerCase() === wanted.toLowerCase());

const sameFlag = (value: boolean, wanted: boolean | undefined): boolean => wanted === undefined || value === wanted;

/**
 * Whether an offer passes the filter. `ignored` names the standard filters this offer's provider
 * cannot report (they are not applied); `extra` holds only the extra filters its provider knows.
 * A node whose provider reports a field but not for this offer (null) fails a filter on that field.
 */
export function offerMatches(
  offer: Offer,
  perGpuPriceCents: Cents,
  filter: MarketFilter,
  ignored: ReadonlySet<StandardFilter>,
  extra: readonly ExtraFilter[],
): boolean {
  const applies = (name: StandardFilter) => !ignored.has(name);
  return (
    (filter.gpuType === undefined || offer.gpuType === filter.gpuType) &&
    (filter.gpuCount === undefined || offer.gpuCount === filter.gpuCount) &&
    atLeast(offer.vramGb, filter.minVramGb) &&
    (!applies('min_download_mbps') || atLeast(offer.downloadMbps, filter.minDownloadMbps)) &&
    (!applies('min_ports') || atLeast(offer.ports, filter.minPorts)) &&
    (!applies('min_cpus') || atLeast(offer.cpus, filter.minCpus)) &&
    (!applies('min_ram_gb') || atLeast(offer.ramGb, filter.minRamGb)) &&
    (!applies('min_disk_gb') || atLeast(offer.diskGb, filter.minDiskGb)) &&
    (filter.maxPricePerGpuCents === undefined || perGpuPriceCents <= filter.maxPricePerGpuCents) &&
    (!applies('country') || sameText(offer.country, filter.country)) &&
    (!applies('region') || sameText(offer.region, filter.region)) &&
    (!applies('docker_in_docker') || sameFlag(offer.dockerInDocker, filter.dockerInDocker)) &&
    (!applies('mig') || sameFlag(offer.mig, filter.mig)) &&
    (!applies('baremetal') || sameFlag(offer.baremetal, filter.baremetal)) &&
    (!applies('virtualized') || sameFlag(offer.virtualized, filter.virtualized)) &&
    extra.every((item) => extraMatches(offer.attributes[item.key], item))
  );
}
