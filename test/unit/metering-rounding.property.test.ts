import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatMicros, microsOf } from '../../core/metering/decimal.ts';
import { parseQuantity } from '../../core/metering/quantity.ts';
import { parsePriceList } from '../../core/metering/prices.ts';
import { chargedCents, meter } from '../../core/metering/rounding.ts';
import { ConfigError, configFromEnv, type ControlPlaneConfig } from '../../hosts/composition/config.ts';
import { createControlPlane } from '../../hosts/composition/control-plane.ts';

/** Millionths written as decimal text with exactly `decimals` places (trailing zeros kept), the way a client might send them. */
const spelled = (micros: bigint, decimals: number): string => {
  const whole = micros / 1_000_000n;
  const fraction = (micros % 1_000_000n).toString().padStart(6, '0');
  return decimals === 0 ? `${whole}` : `${whole}.${fraction.slice(0, decimals)}`;
};
const quantityMicros = fc.bigInt({ min: 1n, max: 1_000_000_000_000_000n });
const priceMicros = fc.bigInt({ min: 1n, max: 1_000_000_000n });

describe('exact decimals', () => {
  it('read every quantity from 0.000001 to 1e9 exactly, as a string or (when it prints the same) a number', () => {
    fc.assert(
      fc.property(quantityMicros, fc.boolean(), (micros, asNumber) => {
        const text = formatMicros(micros);
        const parsed = parseQuantity(asNumber && String(Number(text)) === text ? Number(text) : text);
        expect(parsed).toEqual({ ok: true, micros, text });
        expect(microsOf(text)).toBe(micros);
        // trailing zeros are the same value, in the same canonical text
        expect(parseQuantity(spelled(micros, 6))).toEqual({ ok: true, micros, text });
      }),
    );
  });

  it('refuse zero, negatives, more than 1e9, 7 decimals, exponents and floats that are not exact', () => {
    const bad = fc.oneof(
      fc.constantFrom(0, '0', '0.000000', -1, '-0.5', 1_000_000_000.000001, '1000000000.000001', '1e3', 1e21, 1e-7, Number.NaN, Infinity, '', ' 1', '01', '1.', '.5', 'abc', true, null),
      fc.bigInt({ min: 1n, max: 10n ** 15n }).map((m) => `${spelled(m, 6)}1`), // 7 decimals
      fc.bigInt({ min: 1_000_000_001n, max: 10n ** 12n }).map(String),
      fc.constant(0.1 + 0.2),
    );
    fc.assert(
      fc.property(bad, (value) => {
        expect(parseQuantity(value).ok).toBe(false);
      }),
    );
    expect(parseQuantity('1.1234567')).toEqual({ ok: false, reason: 'has 7 decimals; at most 6 are accepted' });
  });
});

describe('one rounding, ever', () => {
  it('for any sequence of records, the amounts sum to ceil(exact total) and none is negative or more than its own cost rounded up', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(quantityMicros, priceMicros), { minLength: 1, maxLength: 200 }), (records) => {
        let total = 0n;
        let sum = 0;
        for (const [q, p] of records) {
          const { totalAfterPico, amountCents } = meter(total, q, p);
          expect(amountCents).toBeGreaterThanOrEqual(0);
          // never more than the record's own cost rounded up: rounding never overcharges a record
          expect(BigInt(amountCents)).toBeLessThanOrEqual(chargedCents(q * p));
          total = totalAfterPico;
          sum += amountCents;
        }
        expect(BigInt(sum)).toBe(chargedCents(total));
        // and the total itself is the exact sum of quantity x price
        expect(total).toBe(records.reduce((s, [q, p]) => s + q * p, 0n));
      }),
    );
  });

  it('bills tiny hourly records 0 or 1 cent, never a cent each', () => {
    // 40 GB at 0.000137 USD per GB-hour: 0.548 cents an hour; a month of 730 hours is 400.04 cents -> 401
    let total = 0n;
    const amounts: number[] = [];
    for (let hour = 0; hour < 730; hour++) {
      const next = meter(total, 40_000_000n, 137n);
      total = next.totalAfterPico;
      amounts.push(next.amountCents);
    }
    expect(new Set(amounts)).toEqual(new Set([0, 1]));
    expect(amounts.reduce((a, b) => a + b, 0)).toBe(401);
  });
});

describe('the price list (METERED_PRICES)', () => {
  it('reads kinds, units and exact prices', () => {
    const parsed = parsePriceList({ gpu_seconds: { unit: 'second', usd_per_unit: '0.000400' }, api_calls: { unit: '1k requests', usd_per_unit: 0.25 } });
    expect(parsed.ok && [...parsed.prices.entries()]).toEqual([
      ['gpu_seconds', { unit: 'second', usdPerUnit: '0.0004', usdPerUnitMicros: 400n }],
      ['api_calls', { unit: '1k requests', usdPerUnit: '0.25', usdPerUnitMicros: 250_000n }],
    ]);
  });

  it('names every bad entry', () => {
    const parsed = parsePriceList({
      'Bad-Kind': { unit: 'x', usd_per_unit: 1 },
      zero: { unit: 'x', usd_per_unit: 0 },
      fine: { unit: 'x', usd_per_unit: '0.0000001' },
      nounit: { usd_per_unit: 1 },
      volume_storage: { unit: 'GB-hour', usd_per_unit: 1 },
      extra: { unit: 'x', usd_per_unit: 1, currency: 'EUR' },
    });
    expect(parsed.ok).toBe(false);
    const problems = parsed.ok ? [] : parsed.problems.join('\n');
    for (const expected of ['"Bad-Kind"', '"zero": usd_per_unit must be greater than 0', '"fine": usd_per_unit has 7 decimals', '"nounit": unit', '"volume_storage" is built in', '"extra": unknown field(s) currency']) {
      expect(problems).toContain(expected);
    }
    expect(parsePriceList([]).ok).toBe(false);
  });

  it('a bad METERED_PRICES stops the configuration, naming it; a good one is kept', () => {
    expect(configFromEnv({ METERED_PRICES: '{"gpu_seconds": {"unit": "second", "usd_per_unit": "0.0004"}}' }).metering).toEqual({
      prices: { gpu_seconds: { unit: 'second', usd_per_unit: '0.0004' } },
    });
    expect(configFromEnv({}).metering).toEqual({ prices: {} });
    for (const bad of ['{', '[]', '{"gpu": {"unit": "s", "usd_per_unit": -1}}', '{"gpu": {"unit": "s", "usd_per_unit": "0.1234567"}}']) {
      expect(() => configFromEnv({ METERED_PRICES: bad })).toThrow(ConfigError);
      expect(() => configFromEnv({ METERED_PRICES: bad })).toThrow(/METERED_PRICES/);
    }
  });

  it('an embedding program that passes a bad price list cannot start either', async () => {
    const config: ControlPlaneConfig = { storage: { kind: 'pglite', dataDir: 'memory://' }, operatorKeys: [], rateLimits: { publicPerMinute: 1, perTokenPerMinute: 1 }, logLevel: 'silent' };
    await expect(createControlPlane({ ...config, metering: { prices: { gpu: { unit: 's', usd_per_unit: '0' } } } })).rejects.toThrow(/METERED_PRICES.*must be greater than 0/);
  });

  it('the server exits with code 2 naming METERED_PRICES', async () => {
    const main = resolve(import.meta.dirname, '../../hosts/http/main.ts');
    const run = await new Promise<{ code: number | null; stderr: string }>((done) => {
      const child = spawn(process.execPath, [main], { env: { ...process.env, DATA_DIR: 'memory://', METERED_PRICES: '{"gpu": 3}' }, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('exit', (code) => done({ code, stderr }));
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/METERED_PRICES: kind "gpu"/);
  }, 30_000);
});
