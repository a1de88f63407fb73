import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** Checks an operator key against every configured one in constant time (several keys allow rotation). */
export function operatorKeyChecker(keys: readonly string[]): (presented: string | undefined) => boolean {
  const digests = keys.map(digest);
  return (presented) => {
    if (!presented) return false;
    const candidate = digest(presented);
    let match = false;
    for (const known of digests) match = timingSafeEqual(known, candidate) || match;
    return match;
  };
}
