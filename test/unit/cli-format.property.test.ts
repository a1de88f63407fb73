import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { money, relative, table } from '../../hosts/cli/format.ts';
import { minutes, moment } from '../../hosts/cli/parse.ts';

describe('gpuctl formatting', () => {
  it('money prints integer cents exactly: reading the text back gives the same cents', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e12, max: 1e12 }), (cents) => {
        const text = money(cents);
        expect(text).toMatch(/^-?\$\d{1,3}(,\d{3})*\.\d\d$/);
        const [whole, fraction] = text.replace(/[-$,]/g, '').split('.');
        const back = BigInt(whole!) * 100n + BigInt(fraction!);
        expect(text.startsWith('-') ? -back : back).toBe(BigInt(cents));
      }),
    );
    expect([money(0), money(5), money(-5), money(123_456_789), money(null)]).toEqual(['$0.00', '$0.05', '-$0.05', '$1,234,567.89', '-']);
    expect(() => money(1.5)).toThrow();
  });

  it('relative times: the two largest units, past or future', () => {
    const now = Date.parse('2026-11-23T12:00:00Z');
    expect(relative('2026-11-23T12:00:00.400Z', now)).toBe('just now');
    expect(relative('2026-11-23T10:30:00Z', now)).toBe('1h 30m ago');
    expect(relative('2026-11-25T13:00:59Z', now)).toBe('in 2d 1h');
    expect(relative('2026-11-23T12:00:42Z', now)).toBe('in 42s');
    expect(relative(null, now)).toBe('-');
  });

  it('moments: ISO 8601 with an offset or a span from now; anything else is refused', () => {
    const now = Date.parse('2026-11-23T12:00:00Z');
    expect(moment('90m', now)).toBe('2026-11-23T13:30:00.000Z');
    expect(moment('+1d2h', now)).toBe('2026-11-24T14:00:00.000Z');
    expect(moment('2026-11-24T18:00:00+01:00', now)).toBe('2026-11-24T17:00:00.000Z');
    for (const bad of ['soon', '2026-11-24', '2026-11-24T18:00:00', '', 'h']) expect(() => moment(bad, now), bad).toThrow();
  });

  it('idle timeouts: 30m, 2h, 1h30m or bare minutes, within the bounds; anything else is refused', () => {
    const idle = minutes(5, 1440);
    expect([idle('30m'), idle('2h'), idle('1h30m'), idle('45'), idle(' 24h ')]).toEqual([30, 120, 90, 45, 1440]);
    for (const bad of ['4', '25h', '', 'h', '30s', '1.5h', 'soon', '-5']) expect(() => idle(bad), bad).toThrow();
  });

  it('tables pad columns; an empty list says so', () => {
    expect(table(['A', 'LONGER'], [['xyz', 1], [null, 'b']])).toBe('A    LONGER\nxyz  1\n-    b\n');
    expect(table(['A'], [], 'none yet')).toBe('none yet\n');
  });
});
