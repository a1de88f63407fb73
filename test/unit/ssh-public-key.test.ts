import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseSshPublicKey, sshFingerprint } from '../../core/catalog/ssh-public-key.ts';
import { keyLine, mpintOfBits, sshKeygen, wireBlob } from '../support/ssh-keys.ts';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest();
const fingerprintOf = (line: string) => {
  const parsed = parseSshPublicKey(line);
  if (!parsed.ok) throw new Error(parsed.reason);
  return sshFingerprint(sha256, parsed.key.blob);
};
const reasonOf = (line: string) => {
  const parsed = parseSshPublicKey(line);
  if (parsed.ok) throw new Error(`accepted: ${line.slice(0, 80)}`);
  return parsed.reason;
};

describe('OpenSSH public keys', () => {
  it.each([
    ['ed25519', undefined, 256],
    ['ecdsa', 256, 256],
    ['ecdsa', 384, 384],
    ['ecdsa', 521, 521],
    ['rsa', 2048, 2048],
    ['rsa', 3072, 3072],
  ] as const)('accepts %s %s with the fingerprint ssh-keygen -l prints', (type, bits, size) => {
    const key = sshKeygen(type, { ...(bits && { bits }), comment: 'alice@laptop' });
    const parsed = parseSshPublicKey(key.publicLine);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.key.bits).toBe(size);
    expect(parsed.key.comment).toBe('alice@laptop');
    expect(parsed.key.line).toBe(key.publicLine);
    expect(sshFingerprint(sha256, parsed.key.blob)).toBe(key.fingerprint);
  });

  it('takes a key without a comment, with extra spaces or a tab, and a comment with spaces; the fingerprint ignores the comment', () => {
    const key = sshKeygen('ed25519');
    const [type, data] = key.publicLine.split(' ') as [string, string];
    expect(fingerprintOf(`${type} ${data}`)).toBe(key.fingerprint);
    expect(fingerprintOf(`  ${type}\t${data}   my work laptop \n`)).toBe(key.fingerprint);
    const parsed = parseSshPublicKey(`${type}  ${data}  my work laptop`);
    expect(parsed.ok && parsed.key.comment).toBe('my work laptop');
    expect(parsed.ok && parsed.key.line).toBe(`${type} ${data} my work laptop`);
  });

  it('refuses RSA under 2048 bits, naming the size (ssh-keygen -b 1024, and a 2047-bit modulus)', () => {
    expect(reasonOf(sshKeygen('rsa', { bits: 1024 }).publicLine)).toMatch(/1024 bits; RSA keys need at least 2048 bits/);
    expect(reasonOf(keyLine('ssh-rsa', wireBlob('ssh-rsa', Buffer.from([1, 0, 1]), mpintOfBits(2047))))).toMatch(/2047 bits/);
    expect(parseSshPublicKey(keyLine('ssh-rsa', wireBlob('ssh-rsa', Buffer.from([1, 0, 1]), mpintOfBits(2048)))).ok).toBe(true);
    expect(reasonOf(keyLine('ssh-rsa', wireBlob('ssh-rsa', Buffer.from([1, 0, 1]), mpintOfBits(16_392))))).toMatch(/at most 16384/);
  });

  it('refuses a private key pasted by mistake, and says it is one', () => {
    for (const type of ['ed25519', 'rsa'] as const) {
      const { privateText } = sshKeygen(type, type === 'rsa' ? { bits: 2048 } : {});
      expect(reasonOf(privateText)).toMatch(/PRIVATE key: never send or paste it/);
    }
    expect(reasonOf('-----BEGIN RSA PRIVATE KEY-----\nMIIEow...\n-----END RSA PRIVATE KEY-----')).toMatch(/PRIVATE key/);
    expect(reasonOf('PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none')).toMatch(/PRIVATE key/);
  });

  it('refuses DSA, security keys, certificates, unknown types, each with the reason', () => {
    const dsa = wireBlob('ssh-dss', mpintOfBits(1024), mpintOfBits(160), mpintOfBits(1023), mpintOfBits(1022));
    expect(reasonOf(keyLine('ssh-dss', dsa))).toMatch(/DSA keys \(ssh-dss\) are refused/);
    expect(reasonOf(`sk-ssh-ed25519@openssh.com ${wireBlob('sk-ssh-ed25519@openssh.com', Buffer.alloc(32), 'ssh:').toString('base64')}`)).toMatch(/security-key/);
    const ed = sshKeygen('ed25519');
    expect(reasonOf(`ssh-ed25519-cert-v01@openssh.com ${ed.publicLine.split(' ')[1]}`)).toMatch(/certificate/);
    expect(reasonOf(`ssh-foo ${Buffer.from('x').toString('base64')}`)).toMatch(/"ssh-foo" is not a key type accepted here/);
  });

  it('refuses garbage: not a key, bad base64, a blob of another type, a damaged or padded blob, several lines, options, other formats', () => {
    const ed = sshKeygen('ed25519');
    const [, data] = ed.publicLine.split(' ') as [string, string];
    const blob = Buffer.from(data, 'base64');
    expect(reasonOf('not a key')).toMatch(/is not an OpenSSH public key/);
    expect(reasonOf('')).toMatch(/is empty/);
    expect(reasonOf('ssh-ed25519')).toMatch(/key data .* is missing/);
    expect(reasonOf('ssh-ed25519 AAAA$$$$')).toMatch(/not valid base64/);
    expect(reasonOf('ssh-ed25519 AAAAC3Nza me@laptop')).toMatch(/not valid base64|damaged/);
    expect(reasonOf(`ssh-rsa ${data}`)).toMatch(/the line says "ssh-rsa" but its data is a "ssh-ed25519" key/);
    expect(reasonOf(keyLine('ssh-ed25519', blob.subarray(0, blob.length - 1)))).toMatch(/damaged/);
    expect(reasonOf(keyLine('ssh-ed25519', Buffer.concat([blob, Buffer.from([0])])))).toMatch(/damaged/);
    expect(reasonOf(keyLine('ecdsa-sha2-nistp256', wireBlob('ecdsa-sha2-nistp256', 'nistp384', Buffer.alloc(65, 4))))).toMatch(/names the curve nistp256/);
    expect(reasonOf(keyLine('ecdsa-sha2-nistp256', wireBlob('ecdsa-sha2-nistp256', 'nistp256', Buffer.alloc(33, 2))))).toMatch(/uncompressed point/);
    expect(reasonOf(keyLine('ssh-rsa', wireBlob('ssh-rsa', Buffer.from([2]), mpintOfBits(2048))))).toMatch(/exponent/);
    expect(reasonOf(keyLine('ssh-rsa', wireBlob('ssh-rsa', Buffer.from([1, 0, 1]), Buffer.concat([Buffer.from([0, 0]), mpintOfBits(2048)]))))).toMatch(/modulus/);
    expect(reasonOf(`${ed.publicLine}\n${sshKeygen('ed25519').publicLine}`)).toMatch(/one key on one line/);
    expect(reasonOf(`from="10.0.0.1" ${ed.publicLine}`)).toMatch(/without authorized_keys options/);
    expect(reasonOf(`${ed.publicLine.split(' ').slice(0, 2).join(' ')} bad\u0007comment`)).toMatch(/control characters/);
    expect(reasonOf('---- BEGIN SSH2 PUBLIC KEY ----\nAAAA\n---- END SSH2 PUBLIC KEY ----')).toMatch(/RFC 4716/);
    expect(reasonOf('-----BEGIN PUBLIC KEY-----\nMCow\n-----END PUBLIC KEY-----')).toMatch(/PEM public key/);
    expect(reasonOf(`ssh-ed25519 ${'A'.repeat(20_000)}`)).toMatch(/over 16384 characters/);
  });
});
