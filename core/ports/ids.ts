/** Mints identifiers and secrets; the core never touches randomness or hashing itself. */
export interface Ids {
  /** A new unique, URL-safe id with the given prefix, e.g. newId('tok') -> "tok_01jd...". */
  newId(prefix: string): string;
}

export interface Secrets {
  /** A new high-entropy secret with a recognisable prefix. */
  newSecret(prefix: string): string;
  /** A one-way digest of a secret; only digests are ever stored. */
  digest(secret: string): string;
  /** Compares two digests in constant time. */
  sameDigest(a: string, b: string): boolean;
}
