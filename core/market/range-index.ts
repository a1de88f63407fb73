import { addPosition, bitmapOf, intersect, intersectWithout, type Bitmap } from './bitmap.ts';

/**
 * One numeric column, for "at least" and "at most" filters. The positions that have a value (null is
 * NaN, and has none) are kept sorted by value, with a bitmap of the first k·step of them for every k, so
 * the set "value below x" is a kept bitmap plus fewer than `step` more positions: a few microseconds
 * instead of a pass over every node.
 */
export class RangeIndex {
  /** The distinct values, ascending. */
  private readonly values: Float64Array;
  /** How many positions have a value up to values[d], inclusive. */
  private readonly upTo: Int32Array;
  /** Positions by ascending value. */
  private readonly byValue: Int32Array;
  /** Positions that have a value. */
  private readonly present: Bitmap;
  /** checkpoints[k]: the first k·step positions of `byValue`. */
  private readonly checkpoints: Bitmap[];
  private readonly step: number;

  constructor(column: Float64Array, step: number) {
    const size = column.length;
    const counts = new Map<number, number>();
    for (let i = 0; i < size; i++) {
      const value = column[i]!;
      if (value === value) counts.set(value, (counts.get(value) ?? 0) + 1); // not NaN
    }
    this.values = Float64Array.from(counts.keys()).sort();
    this.upTo = new Int32Array(this.values.length);
    const startOf = new Map<number, number>();
    let rank = 0;
    for (let d = 0; d < this.values.length; d++) {
      startOf.set(this.values[d]!, rank);
      rank += counts.get(this.values[d]!)!;
      this.upTo[d] = rank;
    }
    this.byValue = new Int32Array(rank);
    this.present = bitmapOf(size);
    for (let i = 0; i < size; i++) {
      const value = column[i]!;
      if (value !== value) continue;
      const at = startOf.get(value)!;
      startOf.set(value, at + 1);
      this.byValue[at] = i;
      addPosition(this.present, i);
    }
    this.step = step;
    this.checkpoints = [];
    const running = bitmapOf(size);
    for (let r = 0; r <= rank; r++) {
      if (r % step === 0) this.checkpoints.push(running.slice());
      if (r < rank) addPosition(running, this.byValue[r]!);
    }
  }

  /** `result` keeps the positions whose value is at least `min`. `scratch` is overwritten. */
  keepAtLeast(result: Bitmap, min: number, scratch: Bitmap): void {
    if (Number.isNaN(min)) result.fill(0); // nothing is at least NaN
    else intersectWithout(result, this.present, this.firstByValue(this.countBelow(min, false), scratch));
  }

  /** `result` keeps the positions whose value is at most `max`. `scratch` is overwritten. */
  keepAtMost(result: Bitmap, max: number, scratch: Bitmap): void {
    if (Number.isNaN(max)) result.fill(0);
    else intersect(result, this.firstByValue(this.countBelow(max, true), scratch));
  }

  /** How many positions have a value below `bound` (or equal to it, when `inclusive`). */
  private countBelow(bound: number, inclusive: boolean): number {
    // the first distinct value past the bound
    let low = 0;
    let high = this.values.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const value = this.values[middle]!;
      if (value < bound || (inclusive && value === bound)) low = middle + 1;
      else high = middle;
    }
    return low === 0 ? 0 : this.upTo[low - 1]!;
  }

  /** The first `count` positions by value, as a bitmap written into `into`. */
  private firstByValue(count: number, into: Bitmap): Bitmap {
    const k = Math.floor(count / this.step);
    into.set(this.checkpoints[k]!);
    for (let r = k * this.step; r < count; r++) addPosition(into, this.byValue[r]!);
    return into;
  }
}
