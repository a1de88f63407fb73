/**
 * A set of positions 0..size-1 as bits, 32 to a word. Sets of 50,000 positions are 1,563 words: combining two
 * is a short loop over words instead of a pass over the positions.
 */
export type Bitmap = Int32Array;

export const bitmapOf = (size: number): Bitmap => new Int32Array((size + 31) >>> 5);

export function addPosition(bits: Bitmap, position: number): void {
  const w = position >>> 5;
  bits[w] = bits[w]! | (1 << (position & 31));
}

/** `into` becomes `into` ∩ `other`. */
export function intersect(into: Bitmap, other: Bitmap): void {
  // a local length and a plain assignment: three times faster than `into[w] &= ...` bounded by into.length
  const words = into.length;
  for (let w = 0; w < words; w++) into[w] = into[w]! & other[w]!;
}

/** `into` becomes `into` ∩ `present` ∖ `excluded`. */
export function intersectWithout(into: Bitmap, present: Bitmap, excluded: Bitmap): void {
  const words = into.length;
  for (let w = 0; w < words; w++) into[w] = into[w]! & present[w]! & ~excluded[w]!;
}

export function countPositions(bits: Bitmap): number {
  const words = bits.length;
  let count = 0;
  for (let w = 0; w < words; w++) {
    // the bits of each word summed in parallel, in pairs, nibbles, then bytes
    let x = bits[w]!;
    x = x - ((x >>> 1) & 0x55555555);
    x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
    count += Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
  }
  return count;
}

/** The first `limit` positions in the set, in ascending order; `count` is how many it holds, when known. */
export function firstPositions(bits: Bitmap, limit: number, count = countPositions(bits)): Int32Array {
  const positions = new Int32Array(Math.min(limit, count));
  let found = 0;
  for (let w = 0; w < bits.length && found < positions.length; w++) {
    let word = bits[w]!;
    while (word !== 0 && found < positions.length) {
      const lowest = word & -word;
      positions[found++] = (w << 5) + 31 - Math.clz32(lowest);
      word ^= lowest;
    }
  }
  return positions;
}

/** Asks `keep` about each position in the set, in ascending order; a false answer takes it out of the set. */
export function keepPositions(bits: Bitmap, keep: (position: number) => boolean): void {
  for (let w = 0; w < bits.length; w++) {
    let word = bits[w]!;
    while (word !== 0) {
      const lowest = word & -word;
      if (!keep((w << 5) + 31 - Math.clz32(lowest))) bits[w]! &= ~lowest;
      word ^= lowest;
    }
  }
}
