import { addPosition, bitmapOf, countPositions, firstPositions, intersect, keepPositions, type Bitmap } from './bitmap.ts';
import type { MarketNode } from './node.ts';
import { RangeIndex } from './range-index.ts';
import { extraPredicate, type ExtraFilter, type MarketFilter, type StandardFilter } from './search-filter.ts';

/** What a search of one snapshot finds. */
export interface Found {
  total: number;
  /** Positions in the snapshot of the first matches, cheapest first. */
  first: Int32Array;
}

/** Which nodes a search starts from: those that can be rented now (a search), or every one (the marketplace). */
export type Scope = 'rentable' | 'all';

type Attribute = string | number | boolean;

/** Values of one `attributes` key: code 0 is "not present", codes from 1 index `values`. */
interface AttributeCodes {
  codes: Int32Array;
  values: Attribute[];
}

/** Positions between two range checkpoints: a range filter sets at most this many bits (a few µs). */
const DEFAULT_STEP = 1_024;

/** The positions of each value of one field: equality filters intersect one of these. */
class ValueIndex<T> {
  private readonly byValue = new Map<T, Bitmap>();
  private readonly none: Bitmap;
  private readonly size: number;

  constructor(size: number) {
    this.size = size;
    this.none = bitmapOf(size);
  }

  add(value: T, position: number): void {
    let bits = this.byValue.get(value);
    if (!bits) this.byValue.set(value, (bits = bitmapOf(this.size)));
    addPosition(bits, position);
  }

  /** A value no node has matches none. */
  positionsOf(value: T): Bitmap {
    return this.byValue.get(value) ?? this.none;
  }
}

/**
 * One snapshot's nodes (sorted cheapest first), indexed per filter: a bitmap of positions per value of
 * each equality field (GPU type and count, country, region, flags), a RangeIndex per numeric field, and
 * coded `attributes` for extra filters (per key, when first asked for). A search intersects one bitmap per filter with the rentable (or
 * every) position, counts what is left for the total and reads the first positions, which are the
 * cheapest matches. Built once per snapshot. It answers exactly what `compileFilter` answers node by node
 * (a property test holds it to that).
 */
export class NodeIndex {
  readonly nodes: readonly MarketNode[];
  private readonly rentable: Bitmap;
  private readonly all: Bitmap;
  private readonly gpuType: ValueIndex<string>;
  private readonly gpuCount: ValueIndex<number>;
  /** Lower-cased: country and region compare without case. */
  private readonly country: ValueIndex<string>;
  private readonly region: ValueIndex<string>;
  private readonly flags: Record<'dockerInDocker' | 'mig' | 'baremetal' | 'virtualized', ValueIndex<boolean>>;
  private readonly ranges: Record<'vramGb' | 'downloadMbps' | 'ports' | 'cpus' | 'ramGb' | 'diskGb' | 'perGpuCents', RangeIndex>;
  /** Built on the first search naming the key: most searches name none, and building one costs ~10 ms. */
  private readonly attributes = new Map<string, AttributeCodes>();
  /** Where a search builds its answer and its range bitmaps: reused, as a search runs to its end at once. */
  private readonly result: Bitmap;
  private readonly scratch: Bitmap;

  /** `step`: positions between range checkpoints (memory against time; tests make it small). */
  constructor(nodes: readonly MarketNode[], step = DEFAULT_STEP) {
    const size = nodes.length;
    this.nodes = nodes;
    this.rentable = bitmapOf(size);
    this.all = bitmapOf(size);
    this.gpuType = new ValueIndex(size);
    this.gpuCount = new ValueIndex(size);
    this.country = new ValueIndex(size);
    this.region = new ValueIndex(size);
    this.flags = { dockerInDocker: new ValueIndex(size), mig: new ValueIndex(size), baremetal: new ValueIndex(size), virtualized: new ValueIndex(size) };
    const columns = { vramGb: new Float64Array(size), downloadMbps: new Float64Array(size), ports: new Float64Array(size), cpus: new Float64Array(size), ramGb: new Float64Array(size), diskGb: new Float64Array(size), perGpuCents: new Float64Array(size) };

    // One pass, reading each offer once: the offers are scattered in memory, and a pass per field paid
    // the same cache misses once per field (several times slower for 50,000 offers).
    for (let i = 0; i < size; i++) {
      const node = nodes[i]!;
      const offer = node.offer;
      addPosition(this.all, i);
      if (offer.available > 0) addPosition(this.rentable, i);
      this.gpuType.add(offer.gpuType, i);
      // NaN equals nothing, not even a NaN filter
      if (!Number.isNaN(offer.gpuCount)) this.gpuCount.add(offer.gpuCount, i);
      if (offer.country !== null) this.country.add(offer.country.toLowerCase(), i);
      if (offer.region !== null) this.region.add(offer.region.toLowerCase(), i);
      // a value that is not a boolean is neither true nor false
      if (typeof offer.dockerInDocker === 'boolean') this.flags.dockerInDocker.add(offer.dockerInDocker, i);
      if (typeof offer.mig === 'boolean') this.flags.mig.add(offer.mig, i);
      if (typeof offer.baremetal === 'boolean') this.flags.baremetal.add(offer.baremetal, i);
      if (typeof offer.virtualized === 'boolean') this.flags.virtualized.add(offer.virtualized, i);
      // null is NaN: it is neither at least nor at most anything, as "null fails a filter on its field" wants
      columns.vramGb[i] = offer.vramGb;
      columns.downloadMbps[i] = offer.downloadMbps ?? Number.NaN;
      columns.ports[i] = offer.ports ?? Number.NaN;
      columns.cpus[i] = offer.cpus;
      columns.ramGb[i] = offer.ramGb;
      columns.diskGb[i] = offer.diskGb;
      columns.perGpuCents[i] = node.perGpuCents;
    }
    this.ranges = {
      vramGb: new RangeIndex(columns.vramGb, step),
      downloadMbps: new RangeIndex(columns.downloadMbps, step),
      ports: new RangeIndex(columns.ports, step),
      cpus: new RangeIndex(columns.cpus, step),
      ramGb: new RangeIndex(columns.ramGb, step),
      diskGb: new RangeIndex(columns.diskGb, step),
      perGpuCents: new RangeIndex(columns.perGpuCents, step),
    };
    this.result = bitmapOf(size);
    this.scratch = bitmapOf(size);
  }

  /**
   * How many nodes in `scope` pass the filter, and the positions of the first `limit` of them (cheapest
   * first). `ignored` names the standard filters not applied (fields the provider cannot report); `extra`
   * holds the extra filters it knows.
   */
  select(filter: MarketFilter, ignored: ReadonlySet<StandardFilter>, extra: readonly ExtraFilter[], scope: Scope, limit: number): Found {
    const result = this.result;
    result.set(scope === 'rentable' ? this.rentable : this.all);
    const asked = <T>(name: StandardFilter, value: T | undefined): value is T => value !== undefined && !ignored.has(name);
    const flag = (name: StandardFilter, field: keyof NodeIndex['flags'], value: boolean | undefined) => {
      if (asked(name, value)) intersect(result, this.flags[field].positionsOf(value));
    };

    if (asked('gpu_type', filter.gpuType)) intersect(result, this.gpuType.positionsOf(filter.gpuType));
    if (asked('gpu_count', filter.gpuCount)) intersect(result, this.gpuCount.positionsOf(filter.gpuCount));
    if (asked('country', filter.country)) intersect(result, this.country.positionsOf(filter.country.toLowerCase()));
    if (asked('region', filter.region)) intersect(result, this.region.positionsOf(filter.region.toLowerCase()));
    flag('docker_in_docker', 'dockerInDocker', filter.dockerInDocker);
    flag('mig', 'mig', filter.mig);
    flag('baremetal', 'baremetal', filter.baremetal);
    flag('virtualized', 'virtualized', filter.virtualized);
    const { ranges, scratch } = this;
    if (asked('max_price_per_gpu_hour', filter.maxPricePerGpuCents)) ranges.perGpuCents.keepAtMost(result, filter.maxPricePerGpuCents, scratch);
    if (asked('min_vram_gb', filter.minVramGb)) ranges.vramGb.keepAtLeast(result, filter.minVramGb, scratch);
    if (asked('min_download_mbps', filter.minDownloadMbps)) ranges.downloadMbps.keepAtLeast(result, filter.minDownloadMbps, scratch);
    if (asked('min_ports', filter.minPorts)) ranges.ports.keepAtLeast(result, filter.minPorts, scratch);
    if (asked('min_cpus', filter.minCpus)) ranges.cpus.keepAtLeast(result, filter.minCpus, scratch);
    if (asked('min_ram_gb', filter.minRamGb)) ranges.ramGb.keepAtLeast(result, filter.minRamGb, scratch);
    if (asked('min_disk_gb', filter.minDiskGb)) ranges.diskGb.keepAtLeast(result, filter.minDiskGb, scratch);
    // extra filters last, on what is left: each distinct value is judged once, then each remaining position
    for (const item of extra) {
      const { codes, values } = this.attribute(item.key);
      const matches = extraPredicate(item);
      const verdict = new Uint8Array(values.length + 1); // code 0 (no such attribute) never matches
      for (let code = 1; code < verdict.length; code++) verdict[code] = matches(values[code - 1]!) ? 1 : 0;
      keepPositions(result, (position) => verdict[codes[position]!] === 1);
    }
    const total = countPositions(result);
    return { total, first: firstPositions(result, limit, total) };
  }

  private attribute(key: string): AttributeCodes {
    let column = this.attributes.get(key);
    if (column) return column;
    const codes = new Int32Array(this.nodes.length);
    const values: Attribute[] = [];
    const byValue = new Map<Attribute, number>();
    for (let i = 0; i < this.nodes.length; i++) {
      const value = this.nodes[i]!.offer.attributes[key];
      if (value === undefined) continue; // code 0
      let code = byValue.get(value);
      if (code === undefined) {
        values.push(value);
        byValue.set(value, (code = values.length));
      }
      codes[i] = code;
    }
    column = { codes, values };
    this.attributes.set(key, column);
    return column;
  }
}

export const EMPTY_INDEX = new NodeIndex([]);
