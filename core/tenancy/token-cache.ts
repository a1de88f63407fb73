import type { Clock } from '../ports/clock.ts';
import type { Token } from './token.ts';

/**
 * Recently authenticated tokens, so a busy caller does not cost a database read per request. An entry
 * lives `ttlMs` on the clock; revocation in this process removes it at once, another replica's through
 * a RevocationFeed when there is one (Redis), and within `ttlMs` at the latest in any case. The secret is still checked against the stored digest and
 * the expiry against the clock on every request; only the row is reused.
 */
export class TokenCache {
  private readonly clock: Clock;
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly entries = new Map<string, { token: Token; until: number }>();

  constructor(clock: Clock, ttlMs: number, maxEntries = 10_000) {
    this.clock = clock;
    this.ttlMs = ttlMs;
    this.maxEntries = maxEntries;
  }

  get(tokenId: string): Token | null {
    const entry = this.entries.get(tokenId);
    if (!entry) return null;
    if (entry.until <= this.clock.now().getTime()) {
      this.entries.delete(tokenId);
      return null;
    }
    return entry.token;
  }

  put(token: Token): void {
    if (this.ttlMs <= 0) return;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(token.id, { token, until: this.clock.now().getTime() + this.ttlMs });
  }

  forget(tokenIds: readonly string[]): void {
    for (const id of tokenIds) this.entries.delete(id);
  }

  clear(): void {
    this.entries.clear();
  }
}
