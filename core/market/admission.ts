/**
 * Which answers a cache should keep: those asked for a second time while the first asking is still among
 * the last `window` distinct queries. A query asked once (a user's one-off filter, a crawler walking
 * prices) is answered and dropped, so its answer dies young instead of evicting one that is asked for and
 * then waiting for an old-generation collection; a query asked again soon is kept from its second asking.
 * A window about twice the cache's size admits what the cache could still have served: a query that comes
 * back only after more distinct queries than the cache holds would have been evicted before it came back.
 *
 * Queries are remembered by a 30-bit fingerprint (a small integer, no string kept): two queries sharing one
 * merely let the second in one asking early.
 */
export class SecondAsking {
  private readonly ring: Int32Array;
  private readonly remembered = new Set<number>();
  private next = 0;

  constructor(window: number) {
    this.ring = new Int32Array(window).fill(-1);
  }

  /** Whether to keep the answer to `key`; a first asking is remembered, and says no. */
  admit(key: string): boolean {
    const print = fingerprint(key);
    if (this.remembered.has(print)) return true;
    const evicted = this.ring[this.next]!;
    if (evicted >= 0) this.remembered.delete(evicted);
    this.ring[this.next] = print;
    this.remembered.add(print);
    this.next = (this.next + 1) % this.ring.length;
    return false;
  }
}

/** FNV-1a over UTF-16 code units, folded to 30 bits (a small integer in V8: no heap number per entry). */
function fingerprint(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash ^ (hash >>> 30)) & 0x3fffffff;
}
