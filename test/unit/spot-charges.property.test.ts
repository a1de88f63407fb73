import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { costForMinutes, costUntil, instanceCostUntil, nextBoundary, SPOT_MINIMUM_MINUTES, startedMinutes } from '../../core/billing/charges.ts';
import { perGpuCents, rateCentsPerHour } from '../../core/market/pricing.ts';
import { upstreamBidUsd } from '../../core/rentals/launch.ts';

/**
 * Spot machines: billed by the started minute with no one-hour minimum, paid in hourly blocks in
 * advance like any rental, the unused minutes refunded when the machine ends.
 */
const HOUR = 3_600_000;
const T0 = Date.parse('2026-11-21T12:00:00Z');
const rate = fc.integer({ min: 0, max: 100_000 });

describe('the started-minute rule of spot machines', () => {
  it('costs ceil(rate x started minutes / 60): no minimum, every started minute, never below the minutes run', () => {
    fc.assert(
      fc.property(rate, fc.integer({ min: 0, max: 30 * 24 * HOUR }), (r, ms) => {
        const minutes = Math.ceil(ms / 60_000);
        const cost = costUntil(r, new Date(T0), new Date(T0 + ms), SPOT_MINIMUM_MINUTES);
        expect(BigInt(cost) * 60n).toBeGreaterThanOrEqual(BigInt(r) * BigInt(minutes));
        expect((BigInt(cost) - 1n) * 60n).toBeLessThan(BigInt(r) * BigInt(minutes));
        // the same minutes on demand cost as much once past the first hour, never less
        expect(costForMinutes(r, minutes)).toBeGreaterThanOrEqual(cost);
        if (minutes >= 60) expect(costForMinutes(r, minutes)).toBe(cost);
      }),
    );
  });

  it('a machine preempted after any number of blocks pays exactly its started minutes: first hour, blocks, refund', () => {
    fc.assert(
      fc.property(rate, fc.integer({ min: 0, max: 48 }), fc.integer({ min: 0, max: 49 * 3600 }), (r, blocks, endSeconds) => {
        const spot = { rateCentsPerHour: r, createdAt: new Date(T0), minimumMinutes: SPOT_MINIMUM_MINUTES };
        const end = new Date(T0 + endSeconds * 1000);
        // the first hour in advance, then hour blocks until the machine ended
        let paidUntil = new Date(T0 + HOUR);
        let charged = r;
        for (let b = 0; b < blocks && paidUntil.getTime() < end.getTime(); b++) {
          const next = nextBoundary(paidUntil, null);
          const charge = instanceCostUntil(spot, next) - charged;
          // a block in advance is a whole hour of minutes: the rate, within a cent of rounding
          expect(charge).toBeGreaterThanOrEqual(0);
          expect(charge).toBeLessThanOrEqual(r);
          charged += charge;
          paidUntil = next;
        }
        const minutes = Math.ceil((endSeconds * 1000) / 60_000);
        const final = instanceCostUntil(spot, end);
        expect(BigInt(final)).toBe((BigInt(r) * BigInt(minutes) + 59n) / 60n);
        expect(final).toBe(costForMinutes(r, startedMinutes(new Date(T0), end), 0));
        // ended within what was paid in advance: the rest is refunded, never a negative refund
        if (end.getTime() <= paidUntil.getTime()) expect(charged - final).toBeGreaterThanOrEqual(0);
        if (blocks === 0 && endSeconds <= 3600) expect(charged - final).toBe(r - Math.ceil((r * minutes) / 60));
      }),
    );
  });

  it('the bid sent upstream never lets the provider run a machine at a price we would sell above the bid', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), fc.integer({ min: 1, max: 16 }), fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 0, max: 10_000_000 }), (bid, count, markup, priceUnits) => {
        const upstream = upstreamBidUsd(bid * count, markup);
        const price = `${Math.trunc(priceUnits / 10_000)}.${String(priceUnits % 10_000).padStart(4, '0')}`;
        const sold = perGpuCents(rateCentsPerHour(price, markup), count);
        // exact decimal comparison of the two prices, in 1e-8 USD
        const units = (text: string) => {
          const [whole, fraction = ''] = text.split('.');
          return BigInt(whole!) * 100_000_000n + BigInt(fraction.padEnd(8, '0'));
        };
        expect(units(price) <= units(upstream)).toBe(sold <= bid);
      }),
    );
  });
});
