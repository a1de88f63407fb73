import type { Cents } from '../money.ts';
import type { MarketNode } from './node.ts';
import type { Offer } from './offer.ts';

/** The standard search filters, by their query-parameter names. */
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

const ORDER_TESTS: Record<ExtraOperator, (order: number) => boolean> = {
  '=': (order) => order === 0,
  '!=': (order) => order !== 0,
  '>=': (order) => order >= 0,
  '<=': (order) => order <= 0,
  '>': (order) => order > 0,
  '<': (order) => order < 0,
};

/**
 * An extra filter as a test of one raw attribute: numerically when both sides are numbers, else as text
 * (booleans accept true/false/1/0/yes/no). What depends only on the filter is worked out once, here.
 */
export function extraPredicate(filter: ExtraFilter): (attribute: string | number | boolean | undefined) => boolean {
  const wanted = filter.value;
  const test = ORDER_TESTS[filter.operator];
  const flag = /^(true|1|yes)$/i.test(wanted) ? true : /^(false|0|no)$/i.test(wanted) ? false : null;
  const wantedNumber = NUMBER.test(wanted) ? Number(wanted) : null;
  const wantedText = wanted.toLowerCase();
  return (attribute) => {
    if (attribute === undefined) return false;
    let order: number;
    if (typeof attribute === 'boolean') {
      if (flag === null) return false;
      order = attribute === flag ? 0 : attribute ? 1 : -1;
    } else if (wantedNumber !== null && (typeof attribute === 'number' || NUMBER.test(attribute))) {
      order = Math.sign(Number(attribute) - wantedNumber);
    } else {
      const text = String(attribute).toLowerCase();
      order = text === wantedText ? 0 : text < wantedText ? -1 : 1;
    }
    return test(order);
  };
}

type Check = (node: MarketNode) => boolean;

const atLeast = (read: (offer: Offer) => number | null, min: number): Check => (node) => {
  const value = read(node.offer);
  return value !== null && value >= min;
};

const sameText = (read: (offer: Offer) => string | null, wanted: string): Check => {
  const lower = wanted.toLowerCase();
  return (node) => read(node.offer)?.toLowerCase() === lower;
};

/**
 * What a filter keeps, node by node: one predicate holding only the checks the caller asked for.
 * `ignored` names the standard filters this provider cannot report (not applied); `extra` holds only the
 * extra filters it knows. A node whose provider reports a field but not for this offer (null) fails a
 * filter on that field. Searches run the same filter over columns (NodeIndex); this plain form is the
 * definition a property test holds the index to.
 */
export function compileFilter(filter: MarketFilter, ignored: ReadonlySet<StandardFilter>, extra: readonly ExtraFilter[]): Check {
  const checks: Check[] = [];
  const when = <T>(name: StandardFilter, value: T | undefined, check: (value: T) => Check) => {
    if (value !== undefined && !ignored.has(name)) checks.push(check(value));
  };
  when('gpu_type', filter.gpuType, (type) => (node) => node.offer.gpuType === type);
  when('gpu_count', filter.gpuCount, (count) => (node) => node.offer.gpuCount === count);
  when('min_vram_gb', filter.minVramGb, (min) => atLeast((o) => o.vramGb, min));
  when('min_download_mbps', filter.minDownloadMbps, (min) => atLeast((o) => o.downloadMbps, min));
  when('min_ports', filter.minPorts, (min) => atLeast((o) => o.ports, min));
  when('min_cpus', filter.minCpus, (min) => atLeast((o) => o.cpus, min));
  when('min_ram_gb', filter.minRamGb, (min) => atLeast((o) => o.ramGb, min));
  when('min_disk_gb', filter.minDiskGb, (min) => atLeast((o) => o.diskGb, min));
  when('max_price_per_gpu_hour', filter.maxPricePerGpuCents, (max) => (node) => node.perGpuCents <= max);
  when('country', filter.country, (country) => sameText((o) => o.country, country));
  when('region', filter.region, (region) => sameText((o) => o.region, region));
  when('docker_in_docker', filter.dockerInDocker, (flag) => (node) => node.offer.dockerInDocker === flag);
  when('mig', filter.mig, (flag) => (node) => node.offer.mig === flag);
  when('baremetal', filter.baremetal, (flag) => (node) => node.offer.baremetal === flag);
  when('virtualized', filter.virtualized, (flag) => (node) => node.offer.virtualized === flag);
  for (const item of extra) {
    const matches = extraPredicate(item);
    checks.push((node) => matches(node.offer.attributes[item.key]));
  }

  switch (checks.length) {
    case 0:
      return () => true;
    case 1:
      return checks[0]!;
    default:
      return (node) => {
        for (const check of checks) if (!check(node)) return false;
        return true;
      };
  }
}
