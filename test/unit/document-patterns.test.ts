import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseContainerReference } from '../../core/catalog/container-reference.ts';
import { parseSshPublicKey } from '../../core/catalog/ssh-public-key.ts';
import { parseUsd } from '../../core/money.ts';
import { decimalPattern } from '../../hosts/http/schemas/common.ts';
import { EXAMPLE_IMAGE, EXAMPLE_SSH_PUBLIC_KEY, IMAGE_REFERENCE_PATTERN, SSH_PUBLIC_KEY_PATTERN } from '../../hosts/http/schemas/catalog.ts';
import { sshKeygen } from '../support/ssh-keys.ts';

/**
 * The patterns /openapi.json states are what a validating proxy or a contract-test generator holds requests
 * to: each must match everything the server's own parser accepts (it may let through what the parser then
 * refuses with a reason).
 */
const SHA256 = `sha256:${'0123456789abcdef'.repeat(4)}`;

describe('the patterns of the document admit what the server accepts', () => {
  it('SSH public keys: every kind ssh-keygen makes, with or without a comment, spaces around', () => {
    const pattern = new RegExp(SSH_PUBLIC_KEY_PATTERN);
    const keys = [sshKeygen('ed25519').publicLine, sshKeygen('ecdsa').publicLine, sshKeygen('rsa', { bits: 2048 }).publicLine, EXAMPLE_SSH_PUBLIC_KEY];
    for (const key of [...keys, ...keys.map((k) => k.split(' ').slice(0, 2).join(' ')), ...keys.map((k) => `  ${k}\n`)]) {
      expect(parseSshPublicKey(key).ok, key).toBe(true);
      expect(pattern.test(key), key).toBe(true);
    }
    expect(pattern.test('ssh-dss AAAAB3NzaC1kc3M')).toBe(false);
  });

  it('image references: each form the grammar reads', () => {
    const pattern = new RegExp(IMAGE_REFERENCE_PATTERN);
    for (const reference of [
      EXAMPLE_IMAGE,
      'ubuntu',
      'ubuntu:24.04',
      'ghcr.io/acme/team/trainer:v1',
      `nvcr.io/nvidia/pytorch:24.10-py3@${SHA256}`,
      `registry.example.com:5000/a/b@${SHA256}`,
      'localhost/my_app__x.y-z:latest',
      '[::1]:5000/app',
      'MyRegistry/app',
      'a--b/c',
    ]) {
      expect(parseContainerReference(reference).ok, reference).toBe(true);
      expect(pattern.test(reference), reference).toBe(true);
    }
  });

  it('USD amounts as text: every amount the parser accepts up to the bound matches', () => {
    const pattern = new RegExp(decimalPattern(100_000, 2));
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000_000 }), (cents) => {
        const text = `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
        expect(parseUsd(text, { maxCents: 10_000_000 }).ok).toBe(true);
        expect(pattern.test(text), text).toBe(true);
        const whole = String(cents / 100);
        if (parseUsd(whole).ok) expect(pattern.test(whole), whole).toBe(true);
      }),
    );
  });
});
