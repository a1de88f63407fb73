import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MICROS_PER_UNIT, microsOf } from '../../core/metering/decimal.ts';
import { chargedCents, meter } from '../../core/metering/rounding.ts';
import { storageCents, storageCentsPerHour } from '../../core/volumes/storage-cost.ts';

const micros = (text: string) => microsOf(text);
const price = fc.integer({ min: 1, max: 50_000 }).map((m) => `0.${String(m).padStart(6, '0')}`);
const size = fc.integer({ min: 1, max: 10_000 });

describe('a volume’s storage in cents (docs/decisions.md, "Volumes cost money")', () => {
  it('an hour at its rate is the exact hourly cost rounded up, once', () => {
    fc.assert(
      fc.property(size, price, (sizeGb, priceUsdPerGbHour) => {
        const exact = BigInt(sizeGb) * MICROS_PER_UNIT * micros(priceUsdPerGbHour);
        expect(storageCentsPerHour({ sizeGb, priceUsdPerGbHour })).toBe(Number(chargedCents(exact)));
      }),
    );
  });

  it('the funds asked for h hours are their exact cost rounded up once, never more than h hours at the rate', () => {
    fc.assert(
      fc.property(size, price, fc.integer({ min: 1, max: 8_760 }), (sizeGb, priceUsdPerGbHour, hours) => {
        const volume = { sizeGb, priceUsdPerGbHour };
        const exact = BigInt(sizeGb) * MICROS_PER_UNIT * micros(priceUsdPerGbHour) * BigInt(hours);
        expect(storageCents(volume, hours)).toBe(Number(chargedCents(exact)));
        expect(storageCents(volume, hours)).toBeLessThanOrEqual(hours * storageCentsPerHour(volume));
      }),
    );
  });

  it('h hours at the rate bound what the volume’s records add to its tenant’s metered total, whatever else is metered between them', () => {
    fc.assert(
      fc.property(
        size,
        price,
        // each hour of the volume, preceded by other records of the same kind (other volumes of the tenant)
        fc.array(fc.array(fc.record({ size, price }), { maxLength: 3 }), { minLength: 1, maxLength: 48 }),
        (sizeGb, priceUsdPerGbHour, hours) => {
          let total = 0n;
          let charged = 0;
          for (const others of hours) {
            for (const other of others) total = meter(total, BigInt(other.size) * MICROS_PER_UNIT, micros(other.price)).totalAfterPico;
            const record = meter(total, BigInt(sizeGb) * MICROS_PER_UNIT, micros(priceUsdPerGbHour));
            total = record.totalAfterPico;
            charged += record.amountCents;
          }
          expect(charged).toBeLessThanOrEqual(hours.length * storageCentsPerHour({ sizeGb, priceUsdPerGbHour }));
        },
      ),
    );
  });
});
