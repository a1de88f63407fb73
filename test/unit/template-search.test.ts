import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { searchFilterOf } from '../../core/market/search-terms.ts';
import { TemplateSearchIn } from '../../hosts/http/schemas/catalog.ts';
import { GpuSearchQuery, toMarketFilter } from '../../hosts/http/schemas/market.ts';

/** Query text of GET /v1/gpus and its JSON twin in a template, filter by filter. */
const filters = fc.record(
  {
    gpu_type: fc.constantFrom('H100', ' rtx 4090 ', 'a100'),
    gpu_count: fc.integer({ min: 1, max: 64 }),
    min_vram_gb: fc.constantFrom(0, 24, 80.5),
    min_ports: fc.integer({ min: 0, max: 100 }),
    max_price_per_gpu_hour: fc.constantFrom('2.5', '0.07', '1.999', '0', '12'),
    country: fc.constantFrom('US', 'de'),
    mig: fc.boolean(),
    baremetal: fc.boolean(),
    provider: fc.constantFrom('sandbox', 'vast'),
    extra_filters: fc.constantFrom('reliability>=0.99', 'a=1,b!=x', ''),
  },
  { requiredKeys: [] },
);

describe("a template's search", () => {
  it('means what the same filters mean on GET /v1/gpus, sent as JSON values or query text, and after being kept', () => {
    fc.assert(
      fc.property(filters, (search) => {
        const asQuery = Object.fromEntries(Object.entries(search).map(([k, v]) => [k, String(v)]));
        const expected = toMarketFilter(GpuSearchQuery.parse(asQuery));
        const kept = TemplateSearchIn.parse(search);
        expect(searchFilterOf(kept)).toEqual(expected);
        expect(TemplateSearchIn.parse(asQuery)).toEqual(kept);
        // what is kept reads back as itself
        expect(TemplateSearchIn.parse(kept)).toEqual(kept);
      }),
    );
  });

  it('refuses what GET /v1/gpus refuses, and limit', () => {
    for (const bad of [{ gpu_count: 0 }, { gpu_count: 1.5 }, { mig: 'maybe' }, { max_price_per_gpu_hour: -1 }, { extra_filters: 'nonsense' }, { limit: 10 }, { gpu_type: '' }]) {
      expect(TemplateSearchIn.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });
});
