import { describe, expect, it } from 'vitest';
import { priceNode } from '../../core/market/node.ts';
import type { Offer } from '../../core/market/offer.ts';
import { summarizeMarket } from '../../core/market/summary.ts';

const offer = (id: string, fields: Partial<Offer>): Offer => ({
  id: `p:${id}`,
  provider: 'p',
  gpuType: 'H100',
  gpuModel: 'H100 SXM 80GB',
  gpuCount: 1,
  vramGb: 80,
  priceUsdPerHour: '2.00',
  priceVerified: true,
  cpus: 16,
  ramGb: 128,
  diskGb: 500,
  downloadMbps: 1000,
  ports: 10,
  country: 'US',
  region: 'us-east',
  dockerInDocker: false,
  mig: false,
  baremetal: false,
  virtualized: false,
  available: 1,
  attributes: {},
  ...fields,
});

const summarize = (offers: Offer[]) => summarizeMarket(offers.map((o) => priceNode(o, 0, ['terminate'])));

describe('market summary rules', () => {
  it('groups by family with the cheapest verified per-GPU price, its model, GPUs, machines and the largest VRAM', () => {
    const summary = summarize([
      offer('a', { gpuCount: 8, priceUsdPerHour: '17.60', available: 3 }), // 2.20 per GPU, 3 machines, 24 GPUs
      offer('b', { gpuModel: 'H100 PCIe 80GB', priceUsdPerHour: '1.995' }), // 1.995 -> 200 cents
      offer('c', { gpuType: 'H200', gpuModel: 'H200 141GB', vramGb: 141, priceUsdPerHour: '3.5', gpuCount: 2 }),
      offer('d', { gpuModel: 'H100 NVL 94GB', vramGb: 94, priceUsdPerHour: '4.00' }),
    ]);
    expect(summary).toEqual({
      gpusAvailable: 24 + 1 + 2 + 1,
      machines: 3 + 1 + 1 + 1,
      families: [
        { gpuType: 'H100', gpuModel: 'H100 PCIe 80GB', minPerGpuCents: 200, availableGpus: 26, machines: 5, maxVramGb: 94 },
        { gpuType: 'H200', gpuModel: 'H200 141GB', minPerGpuCents: 175, availableGpus: 2, machines: 1, maxVramGb: 141 },
      ],
    });
  });

  it('leaves out unverified prices, zero prices and offers nobody can rent now', () => {
    const summary = summarize([
      offer('cheap-unverified', { priceUsdPerHour: '0.10', priceVerified: false }),
      offer('free', { priceUsdPerHour: '0' }),
      offer('sold-out', { priceUsdPerHour: '0.50', available: 0 }),
      offer('real', { priceUsdPerHour: '2.49' }),
      offer('only-unverified', { gpuType: 'B200', priceUsdPerHour: '1', priceVerified: false }),
    ]);
    expect(summary.families).toEqual([{ gpuType: 'H100', gpuModel: 'H100 SXM 80GB', minPerGpuCents: 249, availableGpus: 1, machines: 1, maxVramGb: 80 }]);
    expect([summary.gpusAvailable, summary.machines]).toEqual([1, 1]);
  });

  it('is empty, not an error, for an empty market', () => {
    expect(summarize([])).toEqual({ gpusAvailable: 0, machines: 0, families: [] });
  });
});
