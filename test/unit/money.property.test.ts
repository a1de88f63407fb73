import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatUsd, parseUsd } from '../../core/money.ts';

const MAX_CENTS = 100_000_000_000; // a billion dollars: far beyond any single amount we accept

const cents = fc.integer({ min: 0, max: MAX_CENTS });

describe('USD <-> cents', () => {
  it('round-trips every whole number of cents through its text', () => {
    fc.assert(
      fc.property(cents, (c) => {
        const parsed = parseUsd(formatUsd(c), { allowZero: true });
        expect(parsed).toEqual({ ok: true, cents: c });
      }),
    );
  });

  it('round-trips negatives when they are allowed', () => {
    fc.assert(
      fc.property(fc.integer({ min: -MAX_CENTS, max: MAX_CENTS }), (c) => {
        expect(parseUsd(formatUsd(c), { allowZero: true, allowNegative: true })).toEqual({ ok: true, cents: c });
      }),
    );
  });

  it('reads numbers with two decimals exactly, with no float error', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 0, max: 99 }), (whole, fraction) => {
        const text = `${whole}.${String(fraction).padStart(2, '0')}`;
        // Number(text) is the float a JSON client sends; its value is rarely exactly text.
        const parsed = parseUsd(Number(text), { allowZero: true });
        expect(parsed).toEqual({ ok: true, cents: whole * 100 + fraction });
      }),
    );
  });

  it('never lets 0.1 + 0.2 style sums in: the classic cases are exact', () => {
    expect(parseUsd(0.1 + 0.2)).toMatchObject({ ok: false });
    expect(parseUsd(19.99)).toEqual({ ok: true, cents: 1999 });
    expect(parseUsd('19.99')).toEqual({ ok: true, cents: 1999 });
    expect(parseUsd(1.005)).toMatchObject({ ok: false });
    expect(parseUsd('0.07')).toEqual({ ok: true, cents: 7 });
    expect(parseUsd(0.07)).toEqual({ ok: true, cents: 7 });
    expect(parseUsd('5')).toEqual({ ok: true, cents: 500 });
    expect(parseUsd('5.5')).toEqual({ ok: true, cents: 550 });
  });

  it('rejects more than two decimals, whatever the digits', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.stringMatching(/^\d{3,8}$/),
        (whole, decimals) => {
          const parsed = parseUsd(`${whole}.${decimals}`);
          expect(parsed.ok).toBe(false);
          if (!parsed.ok) expect(parsed.reason).toMatch(/more than 2 decimal places/);
        },
      ),
    );
  });

  it('rejects negatives unless allowed, and zero unless allowed', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: MAX_CENTS }), (c) => {
        expect(parseUsd(formatUsd(-c))).toMatchObject({ ok: false, reason: 'must not be negative' });
      }),
    );
    expect(parseUsd(0)).toMatchObject({ ok: false, reason: 'must be greater than 0' });
    expect(parseUsd('0.00')).toMatchObject({ ok: false, reason: 'must be greater than 0' });
    expect(parseUsd('0', { allowZero: true })).toEqual({ ok: true, cents: 0 });
  });

  it('rejects anything that is not a plain decimal amount', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string().filter((s) => !/^-?(0|[1-9]\d*)(\.\d{1,2})?$/.test(s)),
          fc.constantFrom<unknown>(null, undefined, true, {}, [], NaN, Infinity, -Infinity, 1e21, 1e-7, '1e3', '0x10', '.5', '5.', '1,000.00', '$5', ' ', '', ' 5', '5 ', '05', '00005.00', '-007'),
        ),
        (input) => {
          expect(parseUsd(input, { allowZero: true, allowNegative: true }).ok).toBe(false);
        },
      ),
    );
  });

  it('accepts one canonical text per amount: no surrounding spaces, no leading zeros ("0.50" stays valid)', () => {
    const padded = fc.tuple(fc.integer({ min: 0, max: MAX_CENTS }), fc.stringMatching(/^[ \t\n\r]+$/), fc.constantFrom('before', 'after', 'both'));
    fc.assert(
      fc.property(padded, ([c, space, where]) => {
        const text = formatUsd(c);
        const input = where === 'before' ? space + text : where === 'after' ? text + space : space + text + space;
        expect(parseUsd(input, { allowZero: true })).toMatchObject({ ok: false, reason: expect.stringMatching(/spaces/) });
      }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX_CENTS }), fc.integer({ min: 1, max: 5 }), fc.boolean(), (c, zeros, negative) => {
        const input = `${negative ? '-' : ''}${'0'.repeat(zeros)}${formatUsd(c)}`;
        expect(parseUsd(input, { allowZero: true, allowNegative: true })).toMatchObject({ ok: false, reason: expect.stringMatching(/leading zero/) });
      }),
    );
    expect(parseUsd('00005.00')).toMatchObject({ ok: false, reason: expect.stringMatching(/leading zero.*5\.00/) });
    expect(parseUsd(' 5')).toMatchObject({ ok: false });
    expect(parseUsd('0.50')).toEqual({ ok: true, cents: 50 });
    expect(parseUsd('0')).toMatchObject({ ok: false, reason: 'must be greater than 0' });
    expect(parseUsd('-0.50', { allowNegative: true })).toEqual({ ok: true, cents: -50 });
  });

  it('enforces an upper bound exactly at the bound', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20_000_000 }), (c) => {
        const parsed = parseUsd(formatUsd(c), { maxCents: 10_000_000 });
        expect(parsed.ok).toBe(c <= 10_000_000);
      }),
    );
  });

  it('formats with exactly two decimals and a sign only when negative', () => {
    fc.assert(
      fc.property(fc.integer({ min: -MAX_CENTS, max: MAX_CENTS }), (c) => {
        expect(formatUsd(c)).toMatch(c < 0 ? /^-\d+\.\d\d$/ : /^\d+\.\d\d$/);
      }),
    );
    expect(() => formatUsd(1.5)).toThrow(RangeError);
  });
});
