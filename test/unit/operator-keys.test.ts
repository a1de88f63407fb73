import { describe, expect, it } from 'vitest';
import { operatorKeyChecker } from '../../hosts/http/operator-keys.ts';

describe('operator keys', () => {
  it('accepts any configured key (rotation) and nothing else', () => {
    const check = operatorKeyChecker(['old-key-0123456789abcdef', 'new-key-0123456789abcdef']);
    expect(check('old-key-0123456789abcdef')).toBe(true);
    expect(check('new-key-0123456789abcdef')).toBe(true);
    expect(check('new-key-0123456789abcde')).toBe(false);
    expect(check('new-key-0123456789abcdefg')).toBe(false);
    expect(check('')).toBe(false);
    expect(check(undefined)).toBe(false);
  });

  it('accepts nothing when no key is configured', () => {
    const check = operatorKeyChecker([]);
    expect(check('anything-at-all-here')).toBe(false);
    expect(check('')).toBe(false);
  });
});
