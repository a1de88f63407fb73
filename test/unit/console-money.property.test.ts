import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatUsd, parseUsd } from '../../core/money.ts';
import { centsOfDollars, DOLLARS, dollarsText, usd } from '../../hosts/console/src/format.ts';

/** The console shows and sends money by the API's own rule: integer cents, exact both ways. */
describe("the console's money", () => {
  const cents = fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER });

  it('shows any amount of cents as the API writes it, with a $ and US grouping only', () => {
    fc.assert(
      fc.property(cents, (c) => {
        expect(usd(c).replace('$', '').replaceAll(',', '')).toBe(formatUsd(c));
        expect(usd(c)).toMatch(/^-?\$\d{1,3}(,\d{3})*\.\d{2}$/);
        expect(dollarsText(c)).toBe(formatUsd(c));
      }),
    );
    expect(usd(123456)).toBe('$1,234.56');
    expect(usd(-5)).toBe('-$0.05');
  });

  it('a field it prefills reads back as the same cents, and every text its fields let through the API reads exactly', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 99_999_999_999 }), (c) => {
        expect(DOLLARS.test(dollarsText(c))).toBe(true);
        expect(parseUsd(dollarsText(c))).toEqual({ ok: true, cents: c });
        expect(centsOfDollars(dollarsText(c))).toBe(c);
      }),
    );
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9.]{1,14}$/), (text) => {
        if (!DOLLARS.test(text)) return;
        const parsed = parseUsd(text, { allowZero: true });
        expect(parsed.ok).toBe(true);
        const [whole, fraction = ''] = text.split('.');
        if (parsed.ok) expect(parsed.cents).toBe(Number(whole) * 100 + Number(fraction.padEnd(2, '0')));
        // what the console computes from the text (the spot bid's commitment) is what the API reads
        if (parsed.ok) expect(centsOfDollars(text)).toBe(parsed.cents);
      }),
    );
  });
});
