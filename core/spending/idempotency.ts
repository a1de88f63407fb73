import { canonicalJson } from '../canonical-json.ts';
import { DomainError } from '../errors.ts';
import type { Secrets } from '../ports/ids.ts';

/**
 * Idempotency keys on the paths that commit money (docs/decisions.md, "One spend gate"): a request is known by
 * the digest of what it asks (its fields in canonical order, the key itself left out), so a retry with the same
 * key and the same request answers what the first one made, and the same key with another request is a 409.
 * The first request is looked for under the account's lock, where a tenant's spends are serialized.
 */
export function requestDigest(secrets: Secrets, request: { idempotencyKey?: string | null }): string {
  const { idempotencyKey: _key, ...asked } = request;
  return secrets.digest(canonicalJson(asked));
}

/** The earlier resource made with this key, when it was made for the same request; a 409 otherwise. */
export function sameRequest<T extends { id: string; requestDigest: string | null }>(earlier: T, digest: string, what: string): T {
  if (earlier.requestDigest !== digest) {
    throw new DomainError('CONFLICT', `idempotency_key was used for a different request (${what} ${earlier.id}); use a new key`);
  }
  return earlier;
}
