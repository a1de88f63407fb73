/** What this process remembers of one device code between polls. */
export interface RememberedDevice {
  /** The interval the poller was last told (start or slow_down), for a slow_down that omits GitHub's. */
  interval: number;
  /**
   * An access token GitHub already issued for the code while reading the person failed: GitHub has spent
   * the code, so the next poll reads the person with this token instead of asking for another one.
   */
  accessToken: string | null;
  expiresAt: number;
}

/**
 * Device codes this process has seen, each forgotten at its expiry and the oldest first beyond `limit`
 * (a bounded map: start requests are unauthenticated). Losing an entry costs little: the interval falls
 * back to the RFC default and a held token to a fresh poll.
 */
export class DeviceMemory {
  readonly #entries = new Map<string, RememberedDevice>();
  readonly #limit: number;
  readonly #now: () => number;

  constructor(limit: number, now: () => number) {
    this.#limit = limit;
    this.#now = now;
  }

  get(deviceCode: string): RememberedDevice | null {
    const entry = this.#entries.get(deviceCode);
    if (!entry) return null;
    if (entry.expiresAt <= this.#now()) {
      this.#entries.delete(deviceCode);
      return null;
    }
    return entry;
  }

  remember(deviceCode: string, entry: RememberedDevice): void {
    this.#entries.delete(deviceCode); // re-inserted last: the newest
    this.#entries.set(deviceCode, entry);
    if (this.#entries.size > this.#limit) this.#evict();
  }

  forget(deviceCode: string): void {
    this.#entries.delete(deviceCode);
  }

  get size(): number {
    return this.#entries.size;
  }

  #evict(): void {
    const now = this.#now();
    for (const [code, entry] of this.#entries) if (entry.expiresAt <= now) this.#entries.delete(code);
    for (const code of this.#entries.keys()) {
      if (this.#entries.size <= this.#limit) break;
      this.#entries.delete(code);
    }
  }
}
