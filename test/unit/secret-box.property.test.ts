import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AesGcmSecretBox } from '../../adapters/crypto/aes-gcm-secret-box.ts';
import { decodeBase64, encodeBase64 } from '../../core/catalog/base64.ts';

const key = randomBytes(32);
const box = new AesGcmSecretBox(key);
const bytesOf = (sealed: string) => Buffer.from(sealed.slice(3), 'base64url');
const sealedOf = (bytes: Buffer) => `v1.${bytes.toString('base64url')}`;

describe('AES-256-GCM secret box', () => {
  it('opens what it sealed, for any text and associated data; two seals of one text differ', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), fc.string({ maxLength: 40 }), (text, data) => {
        const sealed = box.seal(text, data);
        expect(box.open(sealed, data)).toBe(text);
        expect(box.seal(text, data)).not.toBe(sealed);
        expect(sealed).not.toContain(text.length > 3 ? text : '\u0000');
      }),
      { numRuns: 300 },
    );
  });

  it('refuses any tampering: a changed byte or bit anywhere, a cut, other associated data, another key', () => {
    const other = new AesGcmSecretBox(randomBytes(32));
    fc.assert(
      fc.property(fc.string({ maxLength: 100 }), fc.string({ minLength: 1, maxLength: 20 }), fc.nat(), fc.integer({ min: 1, max: 255 }), (text, data, at, flip) => {
        const sealed = box.seal(text, data);
        const bytes = bytesOf(sealed);
        const altered = Buffer.from(bytes);
        altered[at % bytes.length]! ^= flip;
        expect(() => box.open(sealedOf(altered), data)).toThrow();
        expect(() => box.open(sealedOf(bytes.subarray(0, Math.max(0, bytes.length - 1 - (at % 8)))), data)).toThrow();
        expect(() => box.open(sealed, `${data}x`)).toThrow();
        expect(() => box.open(sealed, data.slice(1))).toThrow();
        expect(() => other.open(sealed, data)).toThrow();
      }),
      { numRuns: 300 },
    );
  });

  it('refuses what is not a sealed secret of its format', () => {
    for (const text of ['', 'v1.', 'v2.AAAA', 'v1.AAAA', 'plain', `v1.${'A'.repeat(40)}.x`]) expect(() => box.open(text, 'img_x')).toThrow();
  });

  it('takes only a 32-byte key', () => {
    expect(() => new AesGcmSecretBox(randomBytes(16))).toThrow(/32 bytes/);
  });
});

describe('base64 of the core', () => {
  it('matches Node for any bytes, and decodes what it encodes, padded or not', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const text = encodeBase64(bytes);
        expect(text).toBe(Buffer.from(bytes).toString('base64'));
        expect(encodeBase64(bytes, { padded: false })).toBe(text.replace(/=+$/, ''));
        expect(decodeBase64(text)).toEqual(bytes);
        expect(decodeBase64(text.replace(/=+$/, ''))).toEqual(bytes);
      }),
    );
  });

  it('refuses text that is not canonical base64', () => {
    for (const text of ['A', 'AB=C', 'AAA$', 'AB==', 'AAAA=', 'AAA==', 'A B=']) expect(decodeBase64(text)).toBeNull();
  });
});
