import { decodeBase64, encodeBase64 } from './base64.ts';
import { CATALOG_LIMITS } from './limits.ts';

export type SshKeyType = 'ssh-ed25519' | 'ecdsa-sha2-nistp256' | 'ecdsa-sha2-nistp384' | 'ecdsa-sha2-nistp521' | 'ssh-rsa';

/** An OpenSSH public key that passed every check. */
export interface SshPublicKey {
  type: SshKeyType;
  /** The key material: the decoded base64, what the fingerprint is taken of. */
  blob: Uint8Array;
  comment: string | null;
  /** Key size: 256 for ed25519, the curve for ECDSA, the modulus for RSA. */
  bits: number;
  /** `type base64 [comment]`, one space apart: the line an authorized_keys file takes. */
  line: string;
}

export type SshKeyParse = { ok: true; key: SshPublicKey } | { ok: false; reason: string };

const ACCEPTED = 'send an ed25519 key (ssh-keygen -t ed25519), an ECDSA key or an RSA key of at least 2048 bits';

/** ECDSA curves by key type: the curve name the blob repeats, and the length of its uncompressed point. */
const CURVES: Record<string, { curve: string; pointBytes: number; bits: number }> = {
  'ecdsa-sha2-nistp256': { curve: 'nistp256', pointBytes: 65, bits: 256 },
  'ecdsa-sha2-nistp384': { curve: 'nistp384', pointBytes: 97, bits: 384 },
  'ecdsa-sha2-nistp521': { curve: 'nistp521', pointBytes: 133, bits: 521 },
};

/** Why a key of a known but refused type is refused. */
const refusedType = (type: string): string | null => {
  if (type === 'ssh-dss') return `DSA keys (ssh-dss) are refused: they are at most 1024 bits and OpenSSH no longer accepts them; ${ACCEPTED}`;
  if (type.endsWith('-cert-v01@openssh.com')) return `an OpenSSH certificate (${type}) is not a public key; send the key itself (the .pub file, not -cert.pub)`;
  if (type.startsWith('sk-')) return `security-key keys (${type}) are refused: the providers' machines may run an OpenSSH that cannot use them; ${ACCEPTED}`;
  return null;
};

/** Reads SSH wire-format strings (RFC 4251 §5: a uint32 length, then the bytes). */
class WireReader {
  private at = 0;
  private readonly bytes: Uint8Array;

  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }

  string(): Uint8Array | null {
    if (this.at + 4 > this.bytes.length) return null;
    const b = this.bytes;
    const length = ((b[this.at]! << 24) >>> 0) + (b[this.at + 1]! << 16) + (b[this.at + 2]! << 8) + b[this.at + 3]!;
    const start = this.at + 4;
    if (length > b.length - start) return null;
    this.at = start + length;
    return b.subarray(start, this.at);
  }

  get done(): boolean {
    return this.at === this.bytes.length;
  }
}

const ascii = (bytes: Uint8Array): string => String.fromCharCode(...bytes);

/** Bits of a positive mpint (RFC 4251 §5), or null when it is negative, zero or not minimally encoded. */
function mpintBits(mpint: Uint8Array): number | null {
  if (mpint.length === 0 || (mpint[0]! & 0x80) !== 0) return null;
  // one leading zero byte is allowed, and only when the next byte has its high bit set
  if (mpint[0] === 0 && (mpint.length === 1 || (mpint[1]! & 0x80) === 0)) return null;
  const digits = mpint[0] === 0 ? mpint.subarray(1) : mpint;
  return (digits.length - 1) * 8 + (32 - Math.clz32(digits[0]!));
}

/** Checks the blob's structure for its type; answers the key size in bits, or why the blob is not such a key. */
function checkBlob(type: SshKeyType, reader: WireReader): { bits: number } | { reason: string } {
  const damaged = (what: string) => ({ reason: `the key data is damaged: ${what}; paste the .pub file as it is` });
  if (type === 'ssh-ed25519') {
    const point = reader.string();
    if (point?.length !== 32) return damaged('an ed25519 key holds a 32-byte point');
    return reader.done ? { bits: 256 } : damaged('bytes after the key');
  }
  if (type === 'ssh-rsa') {
    const exponent = reader.string();
    const modulus = reader.string();
    if (!exponent || !modulus || !reader.done) return damaged('an RSA key holds an exponent and a modulus, nothing else');
    const eBits = mpintBits(exponent);
    if (eBits === null || eBits < 2 || eBits > 64 || (exponent.at(-1)! & 1) === 0) return damaged('the RSA exponent is not an odd number of at least 3');
    const bits = mpintBits(modulus);
    if (bits === null || (modulus.at(-1)! & 1) === 0) return damaged('the RSA modulus is not an odd positive number');
    if (bits < CATALOG_LIMITS.rsaMinBits) return { reason: `this RSA key is ${bits} bits; RSA keys need at least ${CATALOG_LIMITS.rsaMinBits} bits (ssh-keygen -t rsa -b 4096), or use ed25519 (ssh-keygen -t ed25519)` };
    if (bits > CATALOG_LIMITS.rsaMaxBits) return { reason: `this RSA key is ${bits} bits; at most ${CATALOG_LIMITS.rsaMaxBits} are accepted` };
    return { bits };
  }
  const curve = CURVES[type]!;
  const name = reader.string();
  if (!name || ascii(name) !== curve.curve) return damaged(`a ${type} key names the curve ${curve.curve}`);
  const point = reader.string();
  if (point?.length !== curve.pointBytes || point[0] !== 0x04) return damaged(`a ${curve.curve} key holds an uncompressed point of ${curve.pointBytes} bytes`);
  return reader.done ? { bits: curve.bits } : damaged('bytes after the key');
}

const isAccepted = (type: string): type is SshKeyType => type === 'ssh-ed25519' || type === 'ssh-rsa' || type in CURVES;
const looksLikeKeyType = (word: string) => /^(ssh-|ecdsa-sha2-|sk-)/.test(word);

/** What was pasted instead of a one-line OpenSSH public key, when it is recognisably something else. */
function notOpenSshLine(text: string): string | null {
  if (/PRIVATE KEY|PuTTY-User-Key-File/.test(text)) {
    return 'this is a PRIVATE key: never send or paste it anywhere. Send the public key, the .pub file beside it (e.g. ~/.ssh/id_ed25519.pub); if this private key was shared, make a new one';
  }
  if (text.includes('BEGIN SSH2 PUBLIC KEY')) return 'this is an RFC 4716 (SSH2) public key; convert it to one OpenSSH line with ssh-keygen -i -f <file> and send that';
  if (text.includes('BEGIN PUBLIC KEY') || text.includes('BEGIN RSA PUBLIC KEY')) return 'this is a PEM public key; convert it to one OpenSSH line with ssh-keygen -i -m PKCS8 -f <file> and send that';
  if (/[\r\n]/.test(text)) return 'send one key on one line ("ssh-ed25519 AAAA... you@laptop"); save each key apart';
  return null;
}

/**
 * Parses one OpenSSH public key line, `type base64 [comment]`, as ssh-keygen writes it: the base64 must decode,
 * the blob must name the same type as the line, hold exactly what that type holds, and be of an accepted kind
 * and size (ed25519, ECDSA on nistp256/384/521, RSA of at least 2048 bits). Answers why not otherwise, in words
 * a person can act on. The same check serves saved keys and a rental's `ssh_public_key`.
 */
export function parseSshPublicKey(input: string): SshKeyParse {
  const fail = (reason: string): SshKeyParse => ({ ok: false, reason });
  const text = input.trim();
  if (text.length === 0) return fail(`is empty; ${ACCEPTED}`);
  if (text.length > CATALOG_LIMITS.publicKey) return fail(`is over ${CATALOG_LIMITS.publicKey} characters; an OpenSSH public key is one line, a few hundred characters`);
  const other = notOpenSshLine(text);
  if (other) return fail(other);
  const [type = '', data = '', ...rest] = text.split(/[ \t]+/);
  if (!looksLikeKeyType(type)) {
    if (rest.some(looksLikeKeyType) || looksLikeKeyType(data)) return fail('send the key alone, without authorized_keys options such as from="..." or command="..."');
    return fail(`is not an OpenSSH public key ("ssh-ed25519 AAAA... you@laptop"); ${ACCEPTED}`);
  }
  const refused = refusedType(type);
  if (refused) return fail(refused);
  if (!isAccepted(type)) return fail(`"${type.slice(0, 60)}" is not a key type accepted here; ${ACCEPTED}`);
  if (!data) return fail(`the key data (base64 after "${type}") is missing`);
  const blob = decodeBase64(data);
  if (!blob) return fail('the key data is not valid base64; paste the .pub file as it is');
  const reader = new WireReader(blob);
  const inner = reader.string();
  if (!inner) return fail('the key data is damaged: it does not start with its key type; paste the .pub file as it is');
  const innerType = ascii(inner);
  if (innerType !== type) return fail(`the line says "${type}" but its data is a "${innerType.slice(0, 60)}" key; the line was altered: paste the .pub file as it is`);
  const checked = checkBlob(type, reader);
  if ('reason' in checked) return fail(checked.reason);
  const comment = rest.length > 0 ? text.slice(text.indexOf(data, type.length) + data.length).trim() : null;
  // the comment lands in authorized_keys files and shell scripts upstream: printable text only
  if (comment !== null && /[\u0000-\u001f\u007f]/.test(comment)) return fail('the comment after the key holds control characters; keep it to printable text');
  const line = `${type} ${encodeBase64(blob)}${comment ? ` ${comment}` : ''}`;
  return { ok: true, key: { type, blob, comment, bits: checked.bits, line } };
}

/** `SHA256:` and the unpadded base64 of the blob's SHA-256, exactly as `ssh-keygen -l` prints it. */
export const sshFingerprint = (sha256: (bytes: Uint8Array) => Uint8Array, blob: Uint8Array): string =>
  `SHA256:${encodeBase64(sha256(blob), { padded: false })}`;
