import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/**
 * Finds which configured operator key was presented, in constant time (several keys allow rotation).
 * Answers a stable name for the key (a short digest, never the key) so each operator key gets its own
 * rate-limit budget, or null.
 */
export function operatorKeyMatcher(keys: readonly string[]): (presented: string | undefined) => string | null {
  const known = keys.map((key) => ({ digest: digest(key), name: digest(`rate-limit:${key}`).toString('hex').slice(0, 16) }));
  return (presented) => {
    if (!presented) return null;
    const candidate = digest(presented);
    let match: string | null = null;
    for (const key of known) if (timingSafeEqual(key.digest, candidate)) match = key.name;
    return match;
  };
}

export function operatorKeyChecker(keys: readonly string[]): (presented: string | undefined) => boolean {
  const match = operatorKeyMatcher(keys);
  return (presented) => match(presented) !== null;
}
