import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../adapters/clock/manual-clock.ts';
import { MarketService } from '../../core/market/market-service.ts';
import { NodeIndex, type Scope } from '../../core/market/node-index.ts';
import { RangeIndex } from '../../core/market/range-index.ts';
import { bitmapOf, countPositions, firstPositions } from '../../core/market/bitmap.ts';
import { cheapestFirst, priceNode, type MarketNode } from '../../core/market/node.ts';
import type { Offer } from '../../core/market/offer.ts';
import { compileFilter, STANDARD_FILTERS, type ExtraFilter, type ExtraOperator, type MarketFilter, type StandardFilter } from '../../core/market/search-filter.ts';
import type { Provider } from '../../core/ports/providers.ts';

// Small domains, so that offers share values and filters hit, miss and tie on them.
const ATTRIBUTE_KEYS = ['reliability', 'cuda', 'static_ip', 'form_factor'];
const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });
const nullable = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: null });

const attributeValue = fc.oneof(
  fc.constantFrom(0.9, 0.95, 0.99, 1, 12, 12.1),
  fc.constantFrom('0.99', '12.1', 'sxm', 'SXM', 'pcie', '', 'true'),
  fc.boolean(),
);

const offerFields = fc.record({
  gpuType: fc.constantFrom('H100', 'A100', 'RTX4090'),
  gpuCount: fc.constantFrom(1, 2, 4, 8),
  vramGb: fc.constantFrom(16, 24, 40, 80, 80.5),
  priceUsdPerHour: fc.tuple(fc.integer({ min: 0, max: 40 }), fc.constantFrom('', '.5', '.25', '.999', '.1234567')).map(([whole, fraction]) => `${whole}${fraction}`),
  priceVerified: fc.boolean(),
  cpus: fc.integer({ min: 1, max: 64 }),
  ramGb: fc.constantFrom(16, 32, 64.5, 128),
  diskGb: fc.constantFrom(50, 100, 1000, 1000.5),
  downloadMbps: nullable(fc.constantFrom(80, 500, 1000, 10_000)),
  ports: nullable(fc.constantFrom(0, 8, 100, 1000)),
  // the same country and region in several cases: filters on them ignore case
  country: nullable(fc.constantFrom('US', 'us', 'DE', 'De')),
  region: nullable(fc.constantFrom('us-east-1', 'US-EAST-1', 'eu-west', 'Eu-West')),
  dockerInDocker: fc.boolean(),
  mig: fc.boolean(),
  baremetal: fc.boolean(),
  virtualized: fc.boolean(),
  available: fc.integer({ min: 0, max: 3 }),
  attributes: fc.dictionary(fc.constantFrom(...ATTRIBUTE_KEYS), attributeValue, { maxKeys: 4 }),
});

const offersOf = (provider: string, maxLength: number) =>
  fc.array(offerFields, { maxLength }).map((list) =>
    list.map((fields, i): Offer => ({ ...fields, id: `${provider}:${i + 1}`, provider, gpuModel: `${fields.gpuType} model` })),
  );

const extraFilter: fc.Arbitrary<ExtraFilter> = fc
  .record({
    key: fc.constantFrom(...ATTRIBUTE_KEYS),
    operator: fc.constantFrom<ExtraOperator>('=', '!=', '>=', '<=', '>', '<'),
    value: fc.constantFrom('0.95', '12.1', '1', '0', 'true', 'no', 'sxm', 'SXM', 'abc'),
  })
  .map((item) => ({ ...item, text: `${item.key}${item.operator}${item.value}` }));

const filterArbitrary = (providers: readonly string[]): fc.Arbitrary<MarketFilter> =>
  fc.record(
    {
      gpuType: optional(fc.constantFrom('H100', 'A100', 'RTX4090', 'B200')),
      gpuCount: optional(fc.constantFrom(1, 2, 3, 8)),
      minVramGb: optional(fc.constantFrom(0, 24, 80, 80.25, 100)),
      minDownloadMbps: optional(fc.constantFrom(0, 500, 1000.5)),
      minPorts: optional(fc.constantFrom(0, 8, 101)),
      minCpus: optional(fc.integer({ min: 1, max: 70 })),
      minRamGb: optional(fc.constantFrom(0, 32, 64.5, 200)),
      minDiskGb: optional(fc.constantFrom(0, 100, 1000.25)),
      maxPricePerGpuCents: optional(fc.integer({ min: 0, max: 5_000 })),
      country: optional(fc.constantFrom('us', 'US', 'de', 'FR')),
      region: optional(fc.constantFrom('us-east-1', 'US-East-1', 'eu-west', 'ap')),
      dockerInDocker: optional(fc.boolean()),
      mig: optional(fc.boolean()),
      baremetal: optional(fc.boolean()),
      virtualized: optional(fc.boolean()),
      provider: optional(fc.constantFrom(...providers)),
      extra: fc.array(extraFilter, { maxLength: 3 }),
    },
    { requiredKeys: ['extra'] },
  );

const priced = (offers: Offer[], markupBps: number): MarketNode[] => offers.map((offer) => priceNode(offer, markupBps, ['terminate'])).sort(cheapestFirst);

/** The plain way: every node of the scope through the node-by-node predicate. */
function bruteForce(nodes: readonly MarketNode[], filter: MarketFilter, ignored: ReadonlySet<StandardFilter>, extra: readonly ExtraFilter[], scope: Scope): number[] {
  const keep = compileFilter(filter, ignored, extra);
  return nodes.flatMap((node, position) => ((scope === 'all' || node.offer.available > 0) && keep(node) ? [position] : []));
}

describe('NodeIndex: a search over columns', () => {
  it('finds exactly the nodes the node-by-node filter keeps, cheapest first, whatever the filter', () => {
    fc.assert(
      fc.property(
        offersOf('p', 120),
        filterArbitrary(['p']),
        fc.subarray([...STANDARD_FILTERS]),
        fc.constantFrom<Scope>('rentable', 'all'),
        fc.integer({ min: 1, max: 130 }),
        fc.integer({ min: 1, max: 40 }),
        (offers, filter, ignoredList, scope, limit, step) => {
          const nodes = priced(offers, 0);
          const ignored = new Set(ignoredList);
          // small checkpoint steps, so that ranges start from every checkpoint, not only the first
          const index = new NodeIndex(nodes, step);
          const expected = bruteForce(nodes, filter, ignored, filter.extra, scope);
          const found = index.select(filter, ignored, filter.extra, scope, limit);
          expect(found.total).toBe(expected.length);
          expect([...found.first]).toEqual(expected.slice(0, limit));
          // the same index answers the next search the same way (its scratch buffer is reused)
          expect([...index.select(filter, ignored, filter.extra, scope, limit).first]).toEqual(expected.slice(0, limit));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('with no filter, finds every rentable node in snapshot order', () => {
    fc.assert(
      fc.property(offersOf('p', 40), (offers) => {
        const nodes = priced(offers, 0);
        const found = new NodeIndex(nodes).select({ extra: [] }, new Set(), [], 'rentable', nodes.length);
        expect([...found.first].map((position) => nodes[position]!.offer.id)).toEqual(nodes.filter((node) => node.offer.available > 0).map((node) => node.offer.id));
      }),
    );
  });
});

describe('RangeIndex', () => {
  const value = fc.oneof(fc.constantFrom(Number.NaN, 0, -0, 1, 1.5, -2, 80, Infinity, -Infinity), fc.double({ noNaN: false }));

  it('keeps exactly the positions at least / at most a bound, never a NaN (null) one', () => {
    fc.assert(
      fc.property(fc.array(value, { maxLength: 150 }), value, fc.integer({ min: 1, max: 64 }), fc.boolean(), (values, bound, step, atLeast) => {
        const column = Float64Array.from(values);
        const index = new RangeIndex(column, step);
        const result = bitmapOf(column.length);
        result.fill(-1); // every bit, even past the end: the index must not bring those in
        if (atLeast) index.keepAtLeast(result, bound, bitmapOf(column.length));
        else index.keepAtMost(result, bound, bitmapOf(column.length));
        const expected = values.flatMap((v, i) => ((atLeast ? v >= bound : v <= bound) ? [i] : []));
        expect([...firstPositions(result, Infinity)].filter((position) => position < column.length)).toEqual(expected);
        expect(countPositions(result)).toBe(expected.length);
      }),
      { numRuns: 500 },
    );
  });
});

/** A provider that lists fixed offers, and cannot report the fields named `unfilterable`. */
const listing = (name: string, offers: Offer[], extraFilterKeys: string[], unfilterable: StandardFilter[]): Provider => ({
  name,
  machineOptions: [],
  extraFilterKeys,
  unfilterable,
  listOffers: async () => offers,
  isOfferId: () => true,
  getOffer: async () => null,
  createMachine: async () => {
    throw new Error('not in this test');
  },
  getMachine: async () => null,
  listMachines: async () => [],
  terminateMachine: async () => undefined,
});

describe('MarketService.search over several providers', () => {
  const clock = new ManualClock('2026-11-21T12:00:00.000Z');
  const timing = { refreshIntervalMs: 60_000, timeoutMs: 5_000, maxAgeMs: 600_000 };

  it('answers what filtering and merging every snapshot by hand answers: nodes, order, total, counts per provider', async () => {
    await fc.assert(
      fc.asyncProperty(
        offersOf('a', 40),
        offersOf('b', 40),
        fc.subarray(ATTRIBUTE_KEYS),
        fc.subarray([...STANDARD_FILTERS]),
        filterArbitrary(['a', 'b']),
        fc.integer({ min: 1, max: 90 }),
        fc.constantFrom(0, 1_500),
        async (offersA, offersB, keysB, unfilterableB, filter, limit, markupBps) => {
          const providers = [listing('a', offersA, ATTRIBUTE_KEYS, []), listing('b', offersB, keysB, unfilterableB)];
          const market = new MarketService(providers, clock, { markupBps, rentalsOpen: true, timing });
          const result = await market.search(filter, limit);

          const queried = providers.filter((provider) => filter.provider === undefined || provider.name === filter.provider);
          const perProvider = queried.map((provider) => {
            const nodes = priced(provider.name === 'a' ? offersA : offersB, markupBps);
            const ignored = new Set(provider.unfilterable);
            const extra = filter.extra.filter((item) => provider.extraFilterKeys.includes(item.key));
            return bruteForce(nodes, filter, ignored, extra, 'rentable').map((position) => nodes[position]!);
          });
          const expected = perProvider.flat().sort(cheapestFirst);
          expect(result.nodes.map((node) => node.offer.id)).toEqual(expected.slice(0, limit).map((node) => node.offer.id));
          expect(result.total).toBe(expected.length);
          expect(result.providers.map((report) => [report.provider, report.count])).toEqual(queried.map((provider, i) => [provider.name, perProvider[i]!.length]));
        },
      ),
      { numRuns: 200 },
    );
  });
});
