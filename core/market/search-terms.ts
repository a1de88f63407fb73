import { invalidInput } from '../errors.ts';
import { gpuFamily } from './gpu-family.ts';
import { ceilingCents } from './pricing.ts';
import { parseExtraFilters, type MarketFilter } from './search-filter.ts';

/**
 * A search as it is kept and sent as JSON (a template's search, a reservation's or spot claim's search): the
 * GET /v1/gpus filters (all but limit) by their query names, numbers and booleans as JSON values, the price
 * ceiling in USD, extra_filters as its text.
 */
export type SearchTerms = Readonly<Record<string, string | number | boolean>>;

type Term =
  | { kind: 'text'; max: number }
  | { kind: 'int' | 'number'; min: number; max: number }
  | { kind: 'usd'; maxCents: number }
  | { kind: 'flag' }
  | { kind: 'extra'; max: number };

/**
 * Every filter a search may hold and the values it takes: the one table the HTTP query schema
 * (hosts/http/schemas/market.ts) draws its bounds from, so a search reads the same wherever it is sent.
 */
export const SEARCH_TERMS = {
  gpu_type: { kind: 'text', max: 64 },
  gpu_count: { kind: 'int', min: 1, max: 64 },
  min_vram_gb: { kind: 'number', min: 0, max: 10_000 },
  min_download_mbps: { kind: 'number', min: 0, max: 1_000_000 },
  min_ports: { kind: 'int', min: 0, max: 65_535 },
  min_cpus: { kind: 'int', min: 1, max: 100_000 },
  min_ram_gb: { kind: 'number', min: 0, max: 1_000_000 },
  min_disk_gb: { kind: 'number', min: 0, max: 10_000_000 },
  max_price_per_gpu_hour: { kind: 'usd', maxCents: 10_000_000 },
  country: { kind: 'text', max: 64 },
  region: { kind: 'text', max: 128 },
  docker_in_docker: { kind: 'flag' },
  mig: { kind: 'flag' },
  baremetal: { kind: 'flag' },
  virtualized: { kind: 'flag' },
  provider: { kind: 'text', max: 64 },
  extra_filters: { kind: 'extra', max: 2_000 },
} as const satisfies Record<string, Term>;

export type SearchTerm = keyof typeof SEARCH_TERMS;

const DECIMAL = /^\s*\d+(\.\d+)?\s*$/;
const WHOLE = /^\s*\d+\s*$/;

type Read = { ok: true; value: unknown } | { ok: false; msg: string };

/** One term's value (a JSON value, or its query text) as the market reads it. */
function readTerm(term: Term, raw: string | number | boolean): Read {
  const text = typeof raw === 'string' ? raw : String(raw);
  switch (term.kind) {
    case 'text': {
      const trimmed = text.trim();
      return trimmed.length === 0 ? { ok: false, msg: 'must not be empty' } : trimmed.length > term.max ? { ok: false, msg: `at most ${term.max} characters` } : { ok: true, value: trimmed };
    }
    case 'int':
    case 'number': {
      const shape = term.kind === 'int' ? WHOLE : DECIMAL;
      if (typeof raw === 'boolean' || !shape.test(text)) return { ok: false, msg: `must be a ${term.kind === 'int' ? 'whole ' : ''}number from ${term.min} to ${term.max}` };
      const value = Number(text);
      return value < term.min ? { ok: false, msg: `must be at least ${term.min}` } : value > term.max ? { ok: false, msg: `must be at most ${term.max}` } : { ok: true, value };
    }
    case 'usd': {
      const cents = typeof raw === 'boolean' || !DECIMAL.test(text) ? null : ceilingCents(text);
      return cents === null || cents > term.maxCents ? { ok: false, msg: `must be a USD amount from 0 to ${term.maxCents / 100}` } : { ok: true, value: cents };
    }
    case 'flag':
      return text === 'true' || text === '1' ? { ok: true, value: true } : text === 'false' || text === '0' ? { ok: true, value: false } : { ok: false, msg: 'must be true or false' };
    case 'extra': {
      if (text.length > term.max) return { ok: false, msg: `at most ${term.max} characters` };
      const parsed = parseExtraFilters(text);
      return parsed.ok ? { ok: true, value: parsed.filters } : { ok: false, msg: `"${parsed.item}" is not key=value (also !=, >=, <=, >, <), e.g. reliability>=0.99` };
    }
  }
}

const FIELDS: Record<Exclude<SearchTerm, 'extra_filters' | 'max_price_per_gpu_hour' | 'gpu_type'>, keyof MarketFilter> = {
  gpu_count: 'gpuCount',
  min_vram_gb: 'minVramGb',
  min_download_mbps: 'minDownloadMbps',
  min_ports: 'minPorts',
  min_cpus: 'minCpus',
  min_ram_gb: 'minRamGb',
  min_disk_gb: 'minDiskGb',
  country: 'country',
  region: 'region',
  docker_in_docker: 'dockerInDocker',
  mig: 'mig',
  baremetal: 'baremetal',
  virtualized: 'virtualized',
  provider: 'provider',
};

/**
 * The market filter a search means, exactly what GET /v1/gpus makes of the same filters as query text. A term
 * this does not know or cannot read is a 422 naming it under `at` (e.g. ['body', 'search']).
 */
export function searchFilterOf(terms: SearchTerms, at: (string | number)[] = ['body', 'search']): MarketFilter {
  const filter: MarketFilter = { extra: [] };
  const set = filter as unknown as Record<string, unknown>;
  for (const [name, raw] of Object.entries(terms)) {
    if (raw === undefined) continue;
    const term: Term | undefined = (SEARCH_TERMS as Record<string, Term>)[name];
    if (!term) throw invalidInput([...at, name], `not a search filter; one of ${Object.keys(SEARCH_TERMS).join(', ')}`);
    const read = readTerm(term, raw);
    if (!read.ok) throw invalidInput([...at, name], read.msg);
    if (name === 'gpu_type') filter.gpuType = gpuFamily(read.value as string);
    else if (name === 'max_price_per_gpu_hour') filter.maxPricePerGpuCents = read.value as number;
    else if (name === 'extra_filters') filter.extra = read.value as MarketFilter['extra'];
    else set[FIELDS[name as keyof typeof FIELDS]] = read.value;
  }
  return filter;
}
