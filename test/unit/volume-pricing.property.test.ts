import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HOURS_PER_MONTH, hourlyPrice, monthlyCents } from '../../core/volumes/pricing.ts';

/** Exact decimal text as integer units of 1e-12 USD (test-side, independent of the code under test). */
const pico = (text: string): bigint => {
  const [whole, fraction = ''] = text.split('.');
  return BigInt(whole!) * 10n ** 12n + BigInt(fraction.padEnd(12, '0'));
};
const monthly = fc
  .tuple(fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 999_999 }), fc.integer({ min: 0, max: 6 }))
  .map(([whole, fraction, digits]) => (digits === 0 ? `${whole}` : `${whole}.${String(fraction).padStart(6, '0').slice(0, digits)}`));

describe('volume storage prices', () => {
  it('the GB-hour price is the monthly price / 730 rounded up to 6 decimals, never less and never a millionth more', () => {
    fc.assert(
      fc.property(monthly, (m) => {
        const hourly = hourlyPrice(m);
        expect(hourly).toMatch(/^\d+(\.\d{1,6})?$/);
        const billedPerMonth = pico(hourly) * BigInt(HOURS_PER_MONTH);
        expect(billedPerMonth >= pico(m)).toBe(true);
        expect(billedPerMonth - pico(m) < 10n ** 6n * BigInt(HOURS_PER_MONTH)).toBe(true);
      }),
    );
  });

  it('the shown GB-month price is in whole cents, rounded up', () => {
    fc.assert(
      fc.property(monthly, (m) => {
        const cents = monthlyCents(m);
        expect(BigInt(cents) * 10n ** 10n >= pico(m)).toBe(true);
        expect(BigInt(cents) * 10n ** 10n - pico(m) < 10n ** 10n).toBe(true);
      }),
    );
    expect([hourlyPrice('0.07'), monthlyCents('0.07')]).toEqual(['0.000096', 7]);
    expect(() => hourlyPrice('0.07 ')).toThrow(RangeError);
  });
});
