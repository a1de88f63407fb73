import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SECRETS_KEY_BYTES } from './aes-gcm-secret-box.ts';

export const SECRETS_KEY_FORMAT = `${SECRETS_KEY_BYTES} random bytes as 64 hex digits or base64, e.g. from \`openssl rand -base64 32\``;

/** The key in SECRETS_KEY: 64 hex digits, or base64 (standard or URL-safe, padded or not) of exactly 32 bytes. */
export function parseSecretsKey(text: string): Buffer | null {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  const base64 = trimmed.replace(/-/g, '+').replace(/_/g, '/').replace(/=$/, '');
  if (!/^[A-Za-z0-9+/]{43}$/.test(base64)) return null;
  const bytes = Buffer.from(base64, 'base64');
  // 43 characters carry 258 bits: the last two must be zero, or the text is not the encoding of 32 bytes
  return bytes.toString('base64').slice(0, 43) === base64 ? bytes : null;
}

/** Where the embedded default keeps its key: beside the PGlite database, readable by its owner alone. */
export const keyFilePath = (dataDir: string): string => join(dataDir, 'secrets.key');

/**
 * The embedded default's key: read from DATA_DIR/secrets.key, or made (32 random bytes, base64, mode 0600) the
 * first time. A file that holds no key is an error naming it: replacing it would orphan every sealed secret.
 */
export function loadOrCreateKeyFile(dataDir: string): { key: Buffer; path: string; created: boolean } {
  const path = keyFilePath(dataDir);
  let text: string | null = null;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (text === null) {
    const key = randomBytes(SECRETS_KEY_BYTES);
    try {
      // wx: never overwrite a key another process wrote a moment ago
      writeFileSync(path, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
      return { key, path, created: true };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      text = readFileSync(path, 'utf8');
    }
  }
  const key = parseSecretsKey(text);
  if (!key) throw new Error(`${path} holds no secrets key (${SECRETS_KEY_FORMAT}); restore it, or set SECRETS_KEY`);
  // a copy restored from a backup may come back readable by others
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  return { key, path, created: false };
}
