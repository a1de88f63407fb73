import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** 256 random bits, URL-safe: authorization codes and new-password sessions. */
export const newOpaque = (): string => randomBytes(32).toString('base64url');

/** The digest under which an opaque value is kept: SHA-256 suffices for 256 random bits (nothing to guess). */
export const digestOf = (value: string): string => createHash('sha256').update(value, 'utf8').digest('hex');

/** RFC 7636: 43 to 128 unreserved characters. */
export const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/;

/** Whether `verifier` is the one whose S256 challenge is `challenge` (constant time). */
export function verifierMatches(verifier: string, challenge: string): boolean {
  if (!PKCE_VALUE.test(verifier)) return false;
  const computed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}
