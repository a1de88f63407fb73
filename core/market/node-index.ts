import type { MarketNode } from './node.ts';
import { extraPredicate, type ExtraFilter, type MarketFilter, type StandardFilter } from './search-filter.ts';

/** What a search of one snapshot finds. */
export interface Found {
  total: number;
  /** Positions in the snapshot of the first matches, cheapest first. */
  first: Int32Array;
}

/** Which nodes a scan starts from: those that can be rented now (a search), or every one (the marketplace). */
export type Scope = 'rentable' | 'all';

type Attribute = string | number | boolean;

/** A column of a text field: one code per node, the same code for the same value. */
interface Codes {
  codes: Int32Array;
  /** Code of each distinct value. */
  byValue: Map<string, number>;
}

/** Values of one `attributes` key: code 0 is "not present", codes from 1 index `values`. */
interface AttributeCodes {
  codes: Int32Array;
  values: Attribute[];
}

const NO_VALUE = -1;
/** What a wanted value no node has is coded as: no position carries it. */
const NO_SUCH_VALUE = -2;
const TRUE = 1;
const FALSE = 0;
/** A flag column also records a value that is not a boolean, so `=== true` and `=== false` both fail on it. */
const NEITHER = 2;

/** null is NaN: every comparison with NaN is false, as "null fails a filter on its field" wants. */
const numberOrNaN = (value: number | null): number => value ?? Number.NaN;

const flagOf = (value: boolean): number => (value === true ? TRUE : value === false ? FALSE : NEITHER);

/** Gives each distinct value a code, in the order first seen. */
class Coder<T> {
  readonly byValue = new Map<T, number>();
  readonly values: T[] = [];

  code(value: T): number {
    let code = this.byValue.get(value);
    if (code === undefined) {
      code = this.values.length;
      this.values.push(value);
      this.byValue.set(value, code);
    }
    return code;
  }
}

// Each pass keeps, in place and in order, the first `n` positions of `selection` that pass; it answers how
// many are kept. One small loop per kind of column keeps every loop monomorphic.

function keepAtLeast(selection: Int32Array, n: number, column: Float64Array, min: number): number {
  let kept = 0;
  for (let k = 0; k < n; k++) {
    const i = selection[k]!;
    if (column[i]! >= min) selection[kept++] = i;
  }
  return kept;
}

function keepAtMost(selection: Int32Array, n: number, column: Float64Array, max: number): number {
  let kept = 0;
  for (let k = 0; k < n; k++) {
    const i = selection[k]!;
    if (column[i]! <= max) selection[kept++] = i;
  }
  return kept;
}

function keepEqual(selection: Int32Array, n: number, column: Float64Array, value: number): number {
  let kept = 0;
  for (let k = 0; k < n; k++) {
    const i = selection[k]!;
    if (column[i] === value) selection[kept++] = i;
  }
  return kept;
}

function keepCode(selection: Int32Array, n: number, codes: Int32Array, code: number): number {
  let kept = 0;
  for (let k = 0; k < n; k++) {
    const i = selection[k]!;
    if (codes[i] === code) selection[kept++] = i;
  }
  return kept;
}

function keepFlag(selection: Int32Array, n: number, column: Uint8Array, value: number): number {
  let kept = 0;
  for (let k = 0; k < n; k++) {
    const i = selection[k]!;
    if (column[i] === value) selection[kept++] = i;
  }
  return kept;
}

function keepVerdict(selection: Int32Array, n: number, codes: Int32Array, verdict: Uint8Array): number {
  let kept = 0;
  for (let k = 0; k < n; k++) {
    const i = selection[k]!;
    if (verdict[codes[i]!] === 1) selection[kept++] = i;
  }
  return kept;
}

/**
 * One snapshot's nodes (sorted cheapest first) held as columns: typed arrays of numbers, flags and codes
 * of text values. A search narrows a list of positions one filter at a time, each pass a tight loop over
 * one column, so the positions left are the matches, still cheapest first, and their count is the total.
 * Built once per snapshot, with a column for each `attributes` key extra filters may name.
 * It answers exactly what `compileFilter` answers node by node (a property test holds it to that).
 */
export class NodeIndex {
  readonly nodes: readonly MarketNode[];
  private readonly rentable: Int32Array;
  private readonly all: Int32Array;
  private readonly gpuType: Codes;
  private readonly gpuCount: Float64Array;
  private readonly vramGb: Float64Array;
  private readonly downloadMbps: Float64Array;
  private readonly ports: Float64Array;
  private readonly cpus: Float64Array;
  private readonly ramGb: Float64Array;
  private readonly diskGb: Float64Array;
  private readonly perGpuCents: Float64Array;
  /** Lower-cased: country and region compare without case. */
  private readonly country: Codes;
  private readonly region: Codes;
  private readonly dockerInDocker: Uint8Array;
  private readonly mig: Uint8Array;
  private readonly baremetal: Uint8Array;
  private readonly virtualized: Uint8Array;
  private readonly attributes: ReadonlyMap<string, AttributeCodes>;
  /** Where each search narrows its positions: one buffer per snapshot, not 200 kB of garbage per search. */
  private readonly scratch: Int32Array;

  /** `attributeKeys`: the `attributes` that extra filters may ask about (the provider's extra filter keys). */
  constructor(nodes: readonly MarketNode[], attributeKeys: readonly string[]) {
    const count = nodes.length;
    this.nodes = nodes;
    this.gpuCount = new Float64Array(count);
    this.vramGb = new Float64Array(count);
    this.downloadMbps = new Float64Array(count);
    this.ports = new Float64Array(count);
    this.cpus = new Float64Array(count);
    this.ramGb = new Float64Array(count);
    this.diskGb = new Float64Array(count);
    this.perGpuCents = new Float64Array(count);
    this.dockerInDocker = new Uint8Array(count);
    this.mig = new Uint8Array(count);
    this.baremetal = new Uint8Array(count);
    this.virtualized = new Uint8Array(count);
    const gpuTypes = new Coder<string>();
    const countries = new Coder<string>();
    const regions = new Coder<string>();
    const gpuTypeCodes = new Int32Array(count);
    const countryCodes = new Int32Array(count);
    const regionCodes = new Int32Array(count);
    const keys = attributeKeys.map((key) => ({ key, coder: new Coder<Attribute>(), codes: new Int32Array(count) }));
    const rentable = new Int32Array(count);
    let rentableCount = 0;

    // One pass, reading each offer once: the offers are scattered in memory, and a pass per column paid
    // the same cache misses once per column (several times slower for 50,000 offers).
    for (let i = 0; i < count; i++) {
      const node = nodes[i]!;
      const offer = node.offer;
      if (offer.available > 0) rentable[rentableCount++] = i;
      this.gpuCount[i] = offer.gpuCount;
      this.vramGb[i] = offer.vramGb;
      this.downloadMbps[i] = numberOrNaN(offer.downloadMbps);
      this.ports[i] = numberOrNaN(offer.ports);
      this.cpus[i] = offer.cpus;
      this.ramGb[i] = offer.ramGb;
      this.diskGb[i] = offer.diskGb;
      this.perGpuCents[i] = node.perGpuCents;
      this.dockerInDocker[i] = flagOf(offer.dockerInDocker);
      this.mig[i] = flagOf(offer.mig);
      this.baremetal[i] = flagOf(offer.baremetal);
      this.virtualized[i] = flagOf(offer.virtualized);
      gpuTypeCodes[i] = gpuTypes.code(offer.gpuType);
      countryCodes[i] = offer.country === null ? NO_VALUE : countries.code(offer.country.toLowerCase());
      regionCodes[i] = offer.region === null ? NO_VALUE : regions.code(offer.region.toLowerCase());
      for (const { key, coder, codes } of keys) {
        const value = offer.attributes[key];
        // code 0 is "no such attribute"; values count from 1
        codes[i] = value === undefined ? 0 : coder.code(value) + 1;
      }
    }
    this.rentable = rentable.slice(0, rentableCount);
    this.all = Int32Array.from(nodes, (_, i) => i);
    this.gpuType = { codes: gpuTypeCodes, byValue: gpuTypes.byValue };
    this.country = { codes: countryCodes, byValue: countries.byValue };
    this.region = { codes: regionCodes, byValue: regions.byValue };
    this.attributes = new Map(keys.map(({ key, coder, codes }) => [key, { codes, values: coder.values }]));
    this.scratch = new Int32Array(count);
  }

  /**
   * How many nodes in `scope` pass the filter, and the positions of the first `limit` of them (cheapest
   * first). `ignored` names the standard filters not applied (fields the provider cannot report); `extra`
   * holds the extra filters it knows.
   */
  select(filter: MarketFilter, ignored: ReadonlySet<StandardFilter>, extra: readonly ExtraFilter[], scope: Scope, limit: number): Found {
    const from = scope === 'rentable' ? this.rentable : this.all;
    const selection = this.scratch;
    selection.set(from);
    let n = from.length;
    const asked = <T>(name: StandardFilter, value: T | undefined): value is T => value !== undefined && !ignored.has(name) && n > 0;

    // equalities first: they leave the fewest positions for the passes after them
    if (asked('gpu_type', filter.gpuType)) n = keepCode(selection, n, this.gpuType.codes, this.gpuType.byValue.get(filter.gpuType) ?? NO_SUCH_VALUE);
    if (asked('gpu_count', filter.gpuCount)) n = keepEqual(selection, n, this.gpuCount, filter.gpuCount);
    if (asked('country', filter.country)) n = keepCode(selection, n, this.country.codes, this.codeOf(this.country, filter.country));
    if (asked('region', filter.region)) n = keepCode(selection, n, this.region.codes, this.codeOf(this.region, filter.region));
    if (asked('docker_in_docker', filter.dockerInDocker)) n = keepFlag(selection, n, this.dockerInDocker, filter.dockerInDocker ? TRUE : FALSE);
    if (asked('mig', filter.mig)) n = keepFlag(selection, n, this.mig, filter.mig ? TRUE : FALSE);
    if (asked('baremetal', filter.baremetal)) n = keepFlag(selection, n, this.baremetal, filter.baremetal ? TRUE : FALSE);
    if (asked('virtualized', filter.virtualized)) n = keepFlag(selection, n, this.virtualized, filter.virtualized ? TRUE : FALSE);
    if (asked('max_price_per_gpu_hour', filter.maxPricePerGpuCents)) n = keepAtMost(selection, n, this.perGpuCents, filter.maxPricePerGpuCents);
    if (asked('min_vram_gb', filter.minVramGb)) n = keepAtLeast(selection, n, this.vramGb, filter.minVramGb);
    if (asked('min_download_mbps', filter.minDownloadMbps)) n = keepAtLeast(selection, n, this.downloadMbps, filter.minDownloadMbps);
    if (asked('min_ports', filter.minPorts)) n = keepAtLeast(selection, n, this.ports, filter.minPorts);
    if (asked('min_cpus', filter.minCpus)) n = keepAtLeast(selection, n, this.cpus, filter.minCpus);
    if (asked('min_ram_gb', filter.minRamGb)) n = keepAtLeast(selection, n, this.ramGb, filter.minRamGb);
    if (asked('min_disk_gb', filter.minDiskGb)) n = keepAtLeast(selection, n, this.diskGb, filter.minDiskGb);
    for (const item of extra) {
      if (n === 0) break;
      const column = this.attribute(item.key);
      const matches = extraPredicate(item);
      // each distinct value is judged once; code 0 (no such attribute) never matches
      const verdict = new Uint8Array(column.values.length + 1);
      for (let code = 1; code < verdict.length; code++) verdict[code] = matches(column.values[code - 1]!) ? 1 : 0;
      n = keepVerdict(selection, n, column.codes, verdict);
    }
    return { total: n, first: selection.slice(0, Math.min(n, limit)) };
  }

  /** The code of a text value compared without case. */
  private codeOf(column: Codes, wanted: string): number {
    return column.byValue.get(wanted.toLowerCase()) ?? NO_SUCH_VALUE;
  }

  private attribute(key: string): AttributeCodes {
    const column = this.attributes.get(key);
    if (!column) throw new Error(`no column for attribute "${key}": it is not one of the provider's extra filter keys`);
    return column;
  }
}

export const EMPTY_INDEX = new NodeIndex([], []);
