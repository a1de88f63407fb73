import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../core/canonical-json.ts';

describe('canonical JSON (idempotency digests)', () => {
  it('is the same for the same value whatever the order of keys, and differs when any nested value differs', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.string(), (object, key) => {
        const reversed = Object.fromEntries(Object.entries(object).reverse());
        expect(canonicalJson(reversed)).toBe(canonicalJson(object));
        expect(JSON.parse(canonicalJson(object))).toEqual(JSON.parse(JSON.stringify(object)));
        const nested = { env: { [key]: '1' } };
        expect(canonicalJson(nested)).not.toBe(canonicalJson({ env: { [key]: '2' } }));
      }),
    );
  });
});
