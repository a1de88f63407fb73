/**
 * Tells every replica which tokens were just revoked, so each drops them from its cache of recently
 * authenticated tokens at once rather than when the entries expire.
 */
export interface RevocationFeed {
  /** Announces revoked tokens to every replica (this one included). Never throws: a lost message costs the cache's TTL. */
  publish(tokenIds: readonly string[]): Promise<void>;
  /**
   * Calls `listener` with the ids another replica (or this one) revoked; with null when announcements may
   * have been missed (the feed was cut off and is back), so everything cached should be read again.
   */
  subscribe(listener: (tokenIds: readonly string[] | null) => void): void;
  /**
   * Whether announcements reach this replica now. While they do not (the feed is down), a revocation made on
   * another replica would go unheard, so every token's row is read from the database instead of the cache.
   */
  live(): boolean;
}
