import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ceilingCents, perGpuCents, rateCentsPerHour } from '../../core/market/pricing.ts';
import { parseUsd } from '../../core/money.ts';

/** An exact decimal USD price as providers send it: up to 7 fraction digits, up to $5,000/h. */
const upstreamPrice = fc
  .tuple(fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 0, max: 7 }), fc.bigInt({ min: 0n, max: 9_999_999n }))
  .map(([whole, digits, fraction]) => (digits === 0 ? String(whole) : `${whole}.${String(fraction % 10n ** BigInt(digits)).padStart(digits, '0')}`));

const markup = fc.integer({ min: 0, max: 50_000 });

/** The price as an exact fraction numerator / denominator of dollars. */
const exact = (text: string): [bigint, bigint] => {
  const [whole, fraction = ''] = text.split('.');
  return [BigInt(whole! + fraction), 10n ** BigInt(fraction.length)];
};

describe('rateCentsPerHour: ceil(usd * 100 * (1 + markup_bps / 10000))', () => {
  it('is the smallest whole number of cents at or above the marked-up price', () => {
    fc.assert(
      fc.property(upstreamPrice, markup, (price, bps) => {
        const cents = BigInt(rateCentsPerHour(price, bps));
        const [n, d] = exact(price);
        // marked-up cents = n * 100 * (10000 + bps) / (d * 10000)
        const numerator = n * 100n * (10_000n + BigInt(bps));
        const denominator = d * 10_000n;
        expect(cents * denominator >= numerator).toBe(true);
        expect((cents - 1n) * denominator < numerator).toBe(true);
      }),
    );
  });

  it('without markup, equals the exact cents of any price with at most two decimals', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), (cents) => {
        const text = `${Math.trunc(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
        expect(rateCentsPerHour(text, 0)).toBe(cents);
        expect(parseUsd(text, { allowZero: true })).toEqual({ ok: true, cents });
      }),
    );
  });

  it('never goes down when the price or the markup goes up', () => {
    fc.assert(
      fc.property(upstreamPrice, upstreamPrice, markup, markup, (a, b, m1, m2) => {
        const [na, da] = exact(a);
        const [nb, db] = exact(b);
        const [low, high] = na * db <= nb * da ? [a, b] : [b, a];
        expect(rateCentsPerHour(low, Math.min(m1, m2))).toBeLessThanOrEqual(rateCentsPerHour(high, Math.max(m1, m2)));
      }),
    );
  });

  it('refuses what is not an exact non-negative decimal', () => {
    for (const bad of ['', '-1', '1e3', '0x10', '1.', '.5', 'NaN', ' 1']) expect(() => rateCentsPerHour(bad, 0)).toThrow(RangeError);
    expect(() => rateCentsPerHour('1', -1)).toThrow(RangeError);
    expect(() => rateCentsPerHour('1', 0.5)).toThrow(RangeError);
  });
});

describe('perGpuCents: machine price / gpu count, rounded up', () => {
  it('is the ceiling of the exact quotient', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), fc.integer({ min: 1, max: 64 }), (cents, count) => {
        const perGpu = BigInt(perGpuCents(cents, count));
        expect(perGpu * BigInt(count) >= BigInt(cents)).toBe(true);
        expect((perGpu - 1n) * BigInt(count) < BigInt(cents)).toBe(true);
      }),
    );
  });

  it('is at most a whole-cent ceiling exactly when the machine costs at most ceiling x count', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 1, max: 16 }), fc.integer({ min: 0, max: 1_000_000 }), (cents, count, ceiling) => {
        expect(perGpuCents(cents, count) <= ceiling).toBe(cents <= ceiling * count);
      }),
    );
  });
});

describe('ceilingCents: a caller\'s USD ceiling as whole cents', () => {
  it('admits a whole-cent price exactly when price / 100 <= the ceiling', () => {
    fc.assert(
      fc.property(upstreamPrice, fc.integer({ min: 0, max: 600_000 }), (ceiling, price) => {
        const limit = ceilingCents(ceiling);
        expect(limit).not.toBeNull();
        const [n, d] = exact(ceiling);
        expect(price <= limit!).toBe(BigInt(price) * d <= n * 100n);
      }),
    );
  });

  it('is null for anything but a non-negative decimal', () => {
    for (const bad of ['-1', 'cheap', '1e2', '', '1.2.3']) expect(ceilingCents(bad)).toBeNull();
  });
});
