import { hash, parseOptions, verify, type Algorithm, type Options } from '@node-rs/argon2';
import { invalidInput } from '../../../core/errors.ts';

/**
 * argon2id with OWASP's first recommended setting: 19 MiB, 2 passes, 1 lane (docs/decisions.md, "Sign-in",
 * has the measurements). The parameters travel in each hash (PHC string), so raising them later rehashes a
 * person's password at their next sign-in.
 */
export const ARGON2: Readonly<Options> = Object.freeze({
  algorithm: 2 as Algorithm, // Argon2id (a const enum, which isolated modules cannot read)
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
});

export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 256;

/** Why the policy refuses `password` for the person at `email`, or null: length in characters, not the address. */
export function passwordProblem(password: string, email: string): string | null {
  const length = [...password].length;
  if (length < PASSWORD_MIN) return `must be at least ${PASSWORD_MIN} characters long (got ${length}); a few words make a good one`;
  if (length > PASSWORD_MAX) return `must be at most ${PASSWORD_MAX} characters long (got ${length})`;
  if (password.trim().toLowerCase() === email.trim().toLowerCase()) return 'must not be your email address';
  return null;
}

/** Throws INVALID_INPUT on `field` (password, new_password) when the policy refuses the password. */
export function checkPassword(password: string, email: string, field: 'password' | 'new_password'): void {
  const problem = passwordProblem(password, email);
  if (problem) throw invalidInput(['body', field], problem);
}

export const hashSecret = (secret: string): Promise<string> => hash(secret, ARGON2);

/** Whether `candidate` is what `stored` is the hash of; a malformed hash is no match. */
export async function matchesHash(stored: string, candidate: string): Promise<boolean> {
  try {
    return await verify(stored, candidate);
  } catch {
    return false;
  }
}

/** Whether a hash was made with other parameters than today's (then it is replaced after a successful check). */
export function needsRehash(stored: string): boolean {
  try {
    const used = parseOptions(stored);
    return used.algorithm !== ARGON2.algorithm || used.memoryCost !== ARGON2.memoryCost || used.timeCost !== ARGON2.timeCost || used.parallelism !== ARGON2.parallelism;
  } catch {
    return true;
  }
}
