import { randomInt } from 'node:crypto';
import { hashSecret } from './passwords.ts';

export const CODE_TTL_MS = 15 * 60_000;
/** Wrong tries a code allows; the next try finds it void, right or wrong. */
export const CODE_TRIES = 5;
export const CODE_FORM = /^\d{6}$/;

/**
 * A one-time code of 6 digits from the CSPRNG, and its argon2id hash (salted, 19 MiB): a leaked row costs
 * about a million argon2id evaluations to reverse, hours of CPU, while the code lives 15 minutes. A plain
 * SHA-256 of 6 digits would fall to a million SHA-256s, a fraction of a second.
 */
export async function newCode(): Promise<{ code: string; hash: string }> {
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  return { code, hash: await hashSecret(code) };
}
