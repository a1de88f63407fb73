import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gpuFamily } from '../../../core/market/gpu-family.ts';
import type { Offer } from '../../../core/market/offer.ts';
import { createSandboxProvider } from '../../../adapters/providers/sandbox/index.ts';
import { EXTRA_FILTER_KEYS, generateCatalog } from '../../../adapters/providers/sandbox/catalog.ts';
import { formatPriceUnits, parsePriceUnits } from '../../../adapters/providers/sandbox/price.ts';

/** Exact price in ten-thousandths of a dollar, read digit by digit. */
const units = (price: string): number => {
  const parsed = parsePriceUnits(price);
  if (parsed === null) throw new Error(`not an exact sandbox price: ${price}`);
  return parsed;
};

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

const share = (offers: Offer[], test: (o: Offer) => boolean) => offers.filter(test).length / offers.length;

describe('sandbox catalog', () => {
  const market = generateCatalog(2026, 300);
  const big = generateCatalog(2026, 5_000);

  it('defaults to about 300 offers with unique, stable ids', async () => {
    const offers = await createSandboxProvider().listOffers();
    expect(offers).toHaveLength(300);
    expect(new Set(offers.map((o) => o.id)).size).toBe(300);
    // the generated catalog, and the spot price of the hour beside it (spot.ts)
    expect(offers.map(({ spotPriceUsdPerHour, ...generated }) => generated)).toEqual(market);
  });

  it('spans consumer cards to datacenter flagships: every family even in a small market', () => {
    const families = new Set(market.map((o) => o.gpuType));
    expect(families.size).toBeGreaterThanOrEqual(12);
    for (const family of ['RTX3060', 'RTX3070', 'RTX3080', 'RTX3090', 'RTX4070', 'RTX4080', 'RTX4090', 'RTX5080', 'RTX5090',
      'A4000', 'A5000', 'A6000', 'RTX6000ADA', 'L4', 'A10', 'L40S', 'A100', 'H100', 'H200', 'B200', 'MI300X', 'T4', 'V100']) {
      expect(families, family).toContain(family);
    }
    expect(new Set(generateCatalog(9, 30).map((o) => o.gpuType)).size).toBeGreaterThanOrEqual(20);
  });

  it('names models the way core groups them', () => {
    for (const offer of big) expect(offer.gpuType).toBe(gpuFamily(offer.gpuModel));
  });

  it('rents 1 to 8 GPUs per machine, with both single cards and 8-GPU boards common', () => {
    const counts = big.map((o) => o.gpuCount);
    expect(Math.min(...counts)).toBe(1);
    expect(Math.max(...counts)).toBe(8);
    expect(share(big, (o) => o.gpuCount === 1)).toBeGreaterThan(0.2);
    expect(share(big, (o) => o.gpuCount === 8)).toBeGreaterThan(0.1);
    // flagships come almost only as 8-GPU boards
    expect(share(big.filter((o) => o.gpuType === 'B200'), (o) => o.gpuCount === 8)).toBeGreaterThan(0.6);
  });

  it('prices machines exactly: up to 4 decimals, a whole multiple of the per-GPU price', () => {
    for (const offer of big) {
      expect(offer.priceUsdPerHour).toMatch(/^\d+\.\d{2,4}$/);
      expect(formatPriceUnits(units(offer.priceUsdPerHour))).toBe(offer.priceUsdPerHour);
      expect(units(offer.priceUsdPerHour) % offer.gpuCount).toBe(0);
      expect(units(offer.priceUsdPerHour)).toBeGreaterThan(0);
    }
    // a mix of whole cents and sub-cent quotes, as marketplaces show
    expect(big.some((o) => /\.\d{2}$/.test(o.priceUsdPerHour))).toBe(true);
    expect(big.some((o) => /\.\d{3,4}$/.test(o.priceUsdPerHour))).toBe(true);
  });

  it('asks 2026 prices per GPU-hour', () => {
    const expected: Record<string, [number, number]> = {
      RTX3090: [0.17, 0.24], RTX4090: [0.3, 0.42], A100: [0.9, 1.4], H100: [1.7, 2.4], H200: [2.6, 3.6], B200: [4.4, 6],
    };
    for (const [family, [low, high]] of Object.entries(expected)) {
      const perGpu = big.filter((o) => o.gpuType === family).map((o) => units(o.priceUsdPerHour) / o.gpuCount / 10_000);
      expect(perGpu.length, family).toBeGreaterThan(10);
      expect(median(perGpu), family).toBeGreaterThanOrEqual(low);
      expect(median(perGpu), family).toBeLessThanOrEqual(high);
    }
    const cheapest = Math.min(...big.map((o) => units(o.priceUsdPerHour) / o.gpuCount));
    expect(cheapest).toBeGreaterThanOrEqual(400); // nothing below $0.04 per GPU-hour
  });

  it('mixes verified and unverified prices, places, and machine kinds', () => {
    expect(share(big, (o) => o.priceVerified)).toBeGreaterThan(0.4);
    expect(share(big, (o) => o.priceVerified)).toBeLessThan(0.9);
    expect(new Set(market.map((o) => o.country)).size).toBeGreaterThanOrEqual(10);
    expect(new Set(market.map((o) => o.region)).size).toBeGreaterThanOrEqual(6);
    for (const offer of big) expect(offer.country).toMatch(/^[A-Z]{2}$/);
    for (const flag of ['dockerInDocker', 'mig', 'baremetal', 'virtualized'] as const) {
      expect(share(big, (o) => o[flag]), flag).toBeGreaterThan(0.02);
      expect(share(big, (o) => o[flag]), flag).toBeLessThan(0.6);
    }
    expect(big.some((o) => o.baremetal && o.virtualized)).toBe(false);
    expect(big.filter((o) => o.mig).every((o) => ['A100', 'H100', 'H200', 'B200'].includes(o.gpuType))).toBe(true);
    expect(big.some((o) => o.available === 1)).toBe(true);
    expect(big.some((o) => o.available > 1)).toBe(true);
  });

  it('sizes hosts with their GPU count and reports networks', () => {
    for (const offer of big) {
      expect(offer.cpus).toBeGreaterThanOrEqual(4 * offer.gpuCount > 256 ? 256 : 4 * offer.gpuCount);
      expect(offer.ramGb).toBeGreaterThanOrEqual(16 * offer.gpuCount);
      expect(offer.diskGb).toBeGreaterThanOrEqual(10);
      if (offer.downloadMbps !== null) expect(offer.downloadMbps).toBeGreaterThanOrEqual(80);
      if (offer.ports !== null) expect(offer.ports).toBeGreaterThanOrEqual(8);
    }
    const h100 = big.filter((o) => o.gpuType === 'H100');
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const ramOf = (count: number) => mean(h100.filter((o) => o.gpuCount === count).map((o) => o.ramGb));
    expect(ramOf(8)).toBeGreaterThan(ramOf(1) * 5);
    expect(big.some((o) => o.downloadMbps === null)).toBe(true);
    expect(share(big, (o) => o.downloadMbps !== null && o.downloadMbps > 1000)).toBeGreaterThan(0.2);
  });

  it('carries the extra filter attributes: reliability, cuda (rocm on AMD), datacenter', () => {
    for (const offer of big) {
      for (const key of Object.keys(offer.attributes)) expect(EXTRA_FILTER_KEYS).toContain(key);
      const { reliability, cuda, rocm, datacenter } = offer.attributes;
      expect(reliability).toBeGreaterThan(0.8);
      expect(reliability).toBeLessThanOrEqual(1);
      expect(typeof datacenter).toBe('boolean');
      if (offer.gpuType === 'MI300X') expect([cuda, rocm]).toEqual([undefined, expect.stringMatching(/^6\.\d$/)]);
      else expect(cuda).toMatch(/^1[1-3]\.\d$/);
    }
    // Blackwell cards need a driver from CUDA 12.8 on
    for (const offer of big.filter((o) => ['RTX5090', 'RTX5080', 'B200'].includes(o.gpuType))) {
      expect(Number(offer.attributes.cuda)).toBeGreaterThanOrEqual(12.8);
    }
    expect(share(big, (o) => o.attributes.datacenter === true)).toBeGreaterThan(0.2);
    expect(share(big, (o) => o.attributes.datacenter === false)).toBeGreaterThan(0.2);
  });

  it('is the same market for the same seed, another for another seed, and stable as it grows', () => {
    expect(generateCatalog(2026, 300)).toEqual(market);
    expect(generateCatalog(2026, 50)).toEqual(market.slice(0, 50));
    const other = generateCatalog(2027, 300);
    expect(other.map((o) => o.priceUsdPerHour)).not.toEqual(market.map((o) => o.priceUsdPerHour));
  });

  it('keeps every offer in our units whatever the seed', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffff_ffff }), fc.integer({ min: 1, max: 60 }), (seed, count) => {
        const offers = generateCatalog(seed, count);
        expect(offers).toHaveLength(count);
        for (const offer of offers) {
          expect(offer.gpuCount).toBeGreaterThanOrEqual(1);
          expect(offer.gpuCount).toBeLessThanOrEqual(8);
          expect(offer.vramGb).toBeGreaterThan(0);
          expect(offer.vramGb).toBeLessThanOrEqual(192);
          expect(offer.priceUsdPerHour).toMatch(/^\d+\.\d{2,4}$/);
          expect(offer.available).toBeGreaterThanOrEqual(0);
        }
      }),
      { numRuns: 50 },
    );
  });

  it('builds and lists 50,000 offers quickly for benchmarks', async () => {
    const started = performance.now();
    const provider = createSandboxProvider({ offers: 50_000 });
    const offers = await provider.listOffers();
    const elapsed = performance.now() - started;
    expect(offers).toHaveLength(50_000);
    expect(new Set(offers.map((o) => o.id)).size).toBe(50_000);
    expect(elapsed).toBeLessThan(3_000);
    expect((await provider.getOffer('150000'))?.id).toBe('sandbox:150000');
    expect(await provider.getOffer('150001')).toBeNull();
  });
});

describe('sandbox prices', () => {
  it('formats ten-thousandths exactly and reads them back', () => {
    expect(formatPriceUnits(20_000)).toBe('2.00');
    expect(formatPriceUnits(3_500)).toBe('0.35');
    expect(formatPriceUnits(12_345)).toBe('1.2345');
    expect(formatPriceUnits(4_80)).toBe('0.048');
    expect(formatPriceUnits(1)).toBe('0.0001');
    expect(parsePriceUnits('1.2345')).toBe(12_345);
    expect(parsePriceUnits('7')).toBe(70_000);
    expect(parsePriceUnits('0.12345')).toBeNull();
    expect(parsePriceUnits('-1')).toBeNull();
    fc.assert(fc.property(fc.integer({ min: 0, max: 10 ** 12 }), (n) => parsePriceUnits(formatPriceUnits(n)) === n));
  });
});
