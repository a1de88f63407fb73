import { createCipheriv, createDecipheriv, hash, randomBytes } from 'node:crypto';
import type { SecretBox, Sha256 } from '../../core/ports/secret-box.ts';

const VERSION = 'v1';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
export const SECRETS_KEY_BYTES = 32;

/**
 * AES-256-GCM under one 256-bit key: a fresh random 96-bit nonce per seal (2^32 seals under one key keep the
 * chance of a repeated nonce under 2^-32, far beyond the few passwords a catalog holds), the associated data
 * authenticated but not stored. Sealed text: `v1.` + base64url(nonce | ciphertext | tag).
 */
export class AesGcmSecretBox implements SecretBox {
  private readonly key: Buffer;

  constructor(key: Uint8Array) {
    if (key.length !== SECRETS_KEY_BYTES) throw new Error(`a secrets key is ${SECRETS_KEY_BYTES} bytes, not ${key.length}`);
    this.key = Buffer.from(key);
  }

  seal(plaintext: string, associatedData: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${VERSION}.${Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64url')}`;
  }

  open(sealed: string, associatedData: string): string {
    const [version, data, ...rest] = sealed.split('.');
    if (version !== VERSION || data === undefined || rest.length > 0) throw new Error('not a sealed secret of a known format');
    const bytes = Buffer.from(data, 'base64url');
    if (bytes.length < NONCE_BYTES + TAG_BYTES) throw new Error('a sealed secret too short to hold its nonce and tag');
    const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, NONCE_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    // final() throws when the tag does not verify: another key, other associated data, or altered bytes
    return Buffer.concat([decipher.update(bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}

export class NodeSha256 implements Sha256 {
  sha256(bytes: Uint8Array): Uint8Array {
    return hash('sha256', bytes, 'buffer');
  }
}
