import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Ids, Secrets } from '../../core/ports/ids.ts';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** Lower-case base32 of random bytes: URL-safe and easy to read aloud. */
const base32 = (bytes: Buffer): string => {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
};

/** 80 random bits per id: collisions are out of reach at any realistic volume. */
export class RandomIds implements Ids {
  newId(prefix: string): string {
    return `${prefix}_${base32(randomBytes(10))}`;
  }
}

/** 256-bit secrets, SHA-256 digests, constant-time comparison. */
export class NodeSecrets implements Secrets {
  newSecret(prefix: string): string {
    const random = randomBytes(32).toString('base64url');
    return prefix ? `${prefix}_${random}` : random;
  }

  digest(secret: string): string {
    // one-shot: no Hash object per call (a bearer is digested on every authenticated request)
    return hash('sha256', secret, 'hex');
  }

  sameDigest(a: string, b: string): boolean {
    const left = Buffer.from(a, 'utf8');
    const right = Buffer.from(b, 'utf8');
    return left.length === right.length && timingSafeEqual(left, right);
  }
}
