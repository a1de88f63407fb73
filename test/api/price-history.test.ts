import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { perGpuCents, rateCentsPerHour } from '../../core/market/pricing.ts';
import { rentalWorld, type RentalWorld } from '../support/rentals.ts';

/**
 * Price history over HTTP on the test's clock: a simulated week of snapshot refreshes, prices moved by the sandbox's
 * hosts between them; each hour's point is that hour's last snapshot, checked against the offers themselves.
 */
const HOUR = 3_600_000;
let world: RentalWorld;
let token: string;
/** What the test expects per hour of H100 at the sandbox: the last snapshot's figures. */
const expected = new Map<number, { min: number; median: number; gpus: number }>();

const hourOf = (at: number) => Math.floor(at / HOUR) * HOUR;
const history = (query: string) => world.api.call('GET', `/v1/market/history?${query}`, { token });

/** The H100 figures of the sandbox's offers now, computed from the offers, not by the code under test. */
async function figures() {
  const offers = (await world.sandbox.listOffers()).filter((o) => o.gpuType === 'H100' && o.priceVerified && o.available > 0);
  const prices = offers.map((o) => perGpuCents(rateCentsPerHour(o.priceUsdPerHour, 0), o.gpuCount)).sort((a, b) => a - b);
  return { min: prices[0]!, median: prices[Math.floor((prices.length - 1) / 2)]!, gpus: offers.reduce((sum, o) => sum + o.available * o.gpuCount, 0) };
}

beforeAll(async () => {
  world = await rentalWorld({}, { sandbox: { offers: 800 } });
  ({ token } = await world.fundedTenant(1));
  const market = world.api.plane.services.market;
  // a week, two snapshots an hour; between them a host reprices its H100 offer, so an hour's two snapshots differ
  const h100 = (await world.sandbox.listOffers()).filter((o) => o.gpuType === 'H100' && o.priceVerified).map((o) => o.id);
  for (let step = 0; step < 7 * 24 * 2; step++) {
    world.clock.advance(HOUR / 2);
    if (step % 3 === 0) await world.sandbox.cloud.repriceOffer(h100[step % h100.length]!.split(':')[1]!, (1 + (step % 17) / 10).toFixed(4));
    await market.refreshDue();
    // the point is written beside the refresh: wait until it is there
    for (let i = 0; i < 100; i++) {
      const [row] = await world.api.plane.storage.execute<{ n: string }[]>(`select count(*) as n from market_price_history where hour = ?`, [new Date(hourOf(world.clock.now().getTime()))]);
      if (Number(row!.n) > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expected.set(hourOf(world.clock.now().getTime()), await figures());
  }
}, 300_000);
afterAll(() => world.close());

describe('GET /v1/market/history', () => {
  it('answers each hour of a week as its last snapshot priced it, oldest first', async () => {
    const until = new Date(world.clock.now().getTime() + HOUR).toISOString();
    const since = new Date(world.clock.now().getTime() - 7 * 24 * HOUR).toISOString();
    const res = await history(`gpu_type=h100&since=${since}&until=${until}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.gpu_type).toBe('H100');
    const points = res.body.points as any[];
    expect(points.length).toBe(expected.size);
    for (const point of points) {
      const want = expected.get(Date.parse(point.at))!;
      expect(point).toEqual({ at: point.at, provider: 'sandbox', min_price_per_gpu_hour_cents: want.min, median_price_per_gpu_hour_cents: want.median, available_gpus: want.gpus });
    }
    expect(points.map((p) => p.at)).toEqual([...points.map((p) => p.at)].sort());
  });

  it('answers days as the day’s lowest price, the lower median of its hours, and its last hour’s GPUs', async () => {
    const res = await history('gpu_type=H100&granularity=day&provider=sandbox');
    expect(res.status).toBe(200);
    const days = new Map<number, { min: number; medians: number[]; gpus: number }>();
    for (const [hour, want] of [...expected].sort(([a], [b]) => a - b)) {
      const day = Math.floor(hour / (24 * HOUR)) * 24 * HOUR;
      const seen = days.get(day) ?? days.set(day, { min: want.min, medians: [], gpus: 0 }).get(day)!;
      seen.min = Math.min(seen.min, want.min);
      seen.medians.push(want.median);
      seen.gpus = want.gpus;
    }
    expect(res.body.points).toEqual(
      [...days].map(([day, d]) => ({
        at: new Date(day).toISOString(),
        provider: 'sandbox',
        min_price_per_gpu_hour_cents: d.min,
        median_price_per_gpu_hour_cents: [...d.medians].sort((a, b) => a - b)[Math.floor((d.medians.length - 1) / 2)],
        available_gpus: d.gpus,
      })),
    );
  });

  it('refuses a range that could hold more than 2,000 points, an unknown provider, and since after until', async () => {
    const wide = await history(`gpu_type=H100&since=${new Date(world.clock.now().getTime() - 90 * 24 * HOUR).toISOString()}`);
    expect(wide.status).toBe(422);
    expect(wide.body.detail).toMatch(/more than 2000.*narrow/);
    expect((await history('gpu_type=H100&provider=nowhere')).status).toBe(422);
    const backwards = await history(`gpu_type=H100&since=${world.clock.now().toISOString()}&until=${new Date(world.clock.now().getTime() - HOUR).toISOString()}`);
    expect(backwards.status).toBe(422);
    expect((await history('provider=sandbox')).status).toBe(422);
    expect((await history('gpu_type=H100&granularity=week')).status).toBe(422);
  });

  it('is the MCP tool get_price_history, with the same answer', async () => {
    const client = new Client({ name: 'history-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${world.api.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    try {
      const result = (await client.callTool({ name: 'get_price_history', arguments: { gpu_type: 'H100', granularity: 'day' } })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual((await history('gpu_type=H100&granularity=day')).body);
    } finally {
      await client.close();
    }
  });

  it('answers no points for a family nobody offers, and needs a token', async () => {
    expect((await history('gpu_type=NOSUCHGPU')).body).toEqual({ gpu_type: 'NOSUCHGPU', points: [] });
    expect((await world.api.call('GET', '/v1/market/history?gpu_type=H100')).status).toBe(401);
  });

  it('keeps 90 days: older hours are forgotten as new ones come', async () => {
    const market = world.api.plane.services.market;
    world.clock.advance(91 * 24 * HOUR);
    await market.refreshDue();
    for (let i = 0; i < 100; i++) {
      const [row] = await world.api.plane.storage.execute<{ oldest: Date }[]>(`select min(hour) as oldest from market_price_history`);
      if (row!.oldest && new Date(row!.oldest).getTime() > world.clock.now().getTime() - 90 * 24 * HOUR) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const [row] = await world.api.plane.storage.execute<{ n: string }[]>(`select count(*) as n from market_price_history`);
    expect(Number(row!.n)).toBeLessThanOrEqual(40); // this hour's families, nothing from 91 days ago
  });
});
