import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AutoRechargeUpdate, CheckoutCreate, DepositCreate } from '../../hosts/http/schemas/billing.ts';

const MAX = 10_000_000; // 100,000 USD in cents
const text = (cents: number) => `${Math.trunc(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;

describe('USD amounts of payments (checkout, deposits, auto-recharge threshold and amount)', () => {
  it('read any amount from 0.01 to 100000 exactly, as a string or a number', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: MAX }), fc.boolean(), (cents, asNumber) => {
        const value = asNumber ? Number(text(cents)) : text(cents);
        expect(CheckoutCreate.parse({ amount_usd: value }).amount_usd).toBe(cents);
        expect(DepositCreate.parse({ amount_usd: value }).amount_usd).toBe(cents);
        const update = AutoRechargeUpdate.parse({ enabled: true, threshold_usd: value, amount_usd: value });
        expect([update.threshold_usd, update.amount_usd]).toEqual([cents, cents]);
      }),
    );
  });

  it('refuse zero, negatives, more than 100000, and more than two decimals', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ min: -MAX, max: 0 }).map(text),
          fc.integer({ min: MAX + 1, max: 100 * MAX }).map(text),
          fc.tuple(fc.integer({ min: 0, max: 99_999 }), fc.integer({ min: 1, max: 9 })).map(([whole, digit]) => `${whole}.12${digit}`),
        ),
        (bad) => {
          expect(CheckoutCreate.safeParse({ amount_usd: bad }).success).toBe(false);
          expect(AutoRechargeUpdate.safeParse({ enabled: true, threshold_usd: bad }).success).toBe(false);
          expect(AutoRechargeUpdate.safeParse({ enabled: true, amount_usd: bad }).success).toBe(false);
        },
      ),
    );
  });

  it('refuse amounts with surrounding spaces or leading zeros, naming what to fix', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: MAX }),
        fc.constantFrom((t: string) => ` ${t}`, (t: string) => `${t} `, (t: string) => `\t${t}\n`, (t: string) => `0${t}`, (t: string) => `000${t}`),
        (cents, mangle) => {
          const bad = mangle(text(cents));
          const parsed = DepositCreate.safeParse({ amount_usd: bad });
          expect(parsed.success).toBe(false);
          expect(parsed.error?.issues[0]?.message).toMatch(/spaces|leading zero/);
          expect(CheckoutCreate.safeParse({ amount_usd: bad }).success).toBe(false);
          expect(AutoRechargeUpdate.safeParse({ enabled: true, amount_usd: bad }).success).toBe(false);
        },
      ),
    );
    expect(DepositCreate.parse({ amount_usd: '0.50' }).amount_usd).toBe(50);
  });

  it('let null or absence keep the current value', () => {
    expect(AutoRechargeUpdate.parse({ enabled: false, threshold_usd: null })).toEqual({ enabled: false, threshold_usd: null });
    expect(AutoRechargeUpdate.parse({ enabled: true })).toEqual({ enabled: true });
  });
});
