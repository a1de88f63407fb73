import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface GeneratedKey {
  /** The .pub file's line. */
  publicLine: string;
  /** The private key file, as someone might paste it by mistake. */
  privateText: string;
  /** What `ssh-keygen -l` prints for it: `SHA256:…`. */
  fingerprint: string;
}

/** A real key pair from ssh-keygen (which CI has), with ssh-keygen's own fingerprint of it. */
export function sshKeygen(type: 'ed25519' | 'ecdsa' | 'rsa', options: { bits?: number; comment?: string } = {}): GeneratedKey {
  const dir = mkdtempSync(join(tmpdir(), 'gcp-ssh-'));
  try {
    const file = join(dir, 'key');
    const args = ['-q', '-t', type, '-N', '', '-C', options.comment ?? 'test@catalog', '-f', file];
    if (options.bits) args.push('-b', String(options.bits));
    execFileSync('ssh-keygen', args, { stdio: 'pipe' });
    const listed = execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${file}.pub`], { encoding: 'utf8' });
    const fingerprint = /SHA256:[A-Za-z0-9+/]+/.exec(listed)?.[0];
    if (!fingerprint) throw new Error(`ssh-keygen -l printed no fingerprint: ${listed}`);
    return { publicLine: readFileSync(`${file}.pub`, 'utf8').trim(), privateText: readFileSync(file, 'utf8'), fingerprint };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** An SSH wire-format blob (RFC 4251 strings) from its parts: text, or raw bytes. */
export function wireBlob(...parts: (string | Uint8Array)[]): Buffer {
  return Buffer.concat(
    parts.flatMap((part) => {
      const bytes = typeof part === 'string' ? Buffer.from(part, 'utf8') : Buffer.from(part);
      const length = Buffer.alloc(4);
      length.writeUInt32BE(bytes.length);
      return [length, bytes];
    }),
  );
}

/** A positive mpint of exactly `bits` bits (odd), as RSA moduli are encoded. */
export function mpintOfBits(bits: number): Buffer {
  const bytes = Math.ceil(bits / 8);
  const value = Buffer.alloc(bytes, 0x5a);
  const top = bits - (bytes - 1) * 8; // bits used in the first byte
  value[0] = (1 << (top - 1)) | 0x01;
  value[bytes - 1]! |= 0x01;
  return (value[0]! & 0x80) !== 0 ? Buffer.concat([Buffer.from([0]), value]) : value;
}

/** A key line from a type and a blob. */
export const keyLine = (type: string, blob: Uint8Array, comment = 'test@catalog'): string => `${type} ${Buffer.from(blob).toString('base64')} ${comment}`;
