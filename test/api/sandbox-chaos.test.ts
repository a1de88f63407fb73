import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLambdaProvider } from '../../adapters/providers/lambda/index.ts';
import { perGpuCents } from '../../core/market/pricing.ts';
import { startFakeLambda } from '../fakes/lambda/server.ts';
import { startApi } from '../support/api.ts';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';

/**
 * Chaos at the sandbox for people rehearsing their agents (docs/operations.md, "Rehearsing with the sandbox"): a
 * machine lost upstream, a spot machine preempted, an offer repriced; what follows is the control plane's own doing.
 */
const MINUTE = 60_000;
let world: RentalWorld;
beforeAll(async () => {
  world = await rentalWorld({}, { sandbox: { offers: 600, spotPreemptionsPerHour: 0 } });
});
afterAll(() => world.close());

const call = (...args: Parameters<RentalWorld['api']['call']>) => world.api.call(...args);
const sweep = async () => (await call('POST', '/v1/operator/sweep', { headers: OPERATOR })).body;
const instance = async (token: string, id: string) => (await call('GET', `/v1/instances/${id}`, { token })).body;

describe('operator chaos at the sandbox', () => {
  it('a lost machine is found gone by the sweep: billed to when it was last seen running, the rest refunded', async () => {
    const { token } = await world.fundedTenant(50);
    const [node] = await world.offers((o) => o.rate >= 40 && o.rate <= 400);
    const rented = (await world.rent(token, { node_id: node!.id })).body;
    world.clock.advance(30_000);
    expect((await instance(token, rented.id)).status).toBe('running');
    world.clock.advance(20 * MINUTE);
    await sweep();
    const seen = world.clock.now();

    const lost = await call('POST', `/v1/operator/sandbox/machines/${rented.id}/lose`, { headers: OPERATOR });
    expect(lost.status, JSON.stringify(lost.body)).toBe(200);
    expect(lost.body).toMatchObject({ event: 'lost', instance_id: rented.id, machine_id: expect.any(String) });
    expect((await world.sandbox.cloud.listMachines()).filter((m) => m.label === rented.id)).toEqual([]);

    world.clock.advance(5 * MINUTE);
    expect((await sweep()).gone_upstream).toBe(1);
    const ended = await instance(token, rented.id);
    expect(ended.status).toBe('terminated');
    expect(ended.terminated_at).toBe(seen.toISOString());
    // within the first hour: the hour is the minimum
    expect(ended.charged_cents).toBe(node!.rate);
  });

  it('a preempted spot machine is ended by the sweep and its claim rents again; an on-demand one is reclaimed alike', async () => {
    const { token } = await world.fundedTenant(100);
    const [spot] = await world.offers((o) => o.spotPriceUsdPerHour !== null && o.rate <= 400);
    const bid = perGpuCents(spot!.rate, spot!.gpuCount);
    const claim = (
      await call('POST', '/v1/spot-claims', { token, body: { name: 'rehearsal', node_id: spot!.id, gpu_count: spot!.gpuCount, max_price_per_gpu_hour: (bid / 100).toFixed(2), hours: 3 } })
    ).body;
    await sweep();
    const active = (await call('GET', `/v1/spot-claims/${claim.id}`, { token })).body;
    expect(active.status).toBe('active');
    world.clock.advance(30_000);
    const preempted = await call('POST', `/v1/operator/sandbox/machines/${active.instance_id}/preempt`, { headers: OPERATOR });
    expect(preempted.status, JSON.stringify(preempted.body)).toBe(200);
    expect(preempted.body.event).toBe('preempted');
    world.clock.advance(MINUTE);
    expect((await sweep()).preempted).toBe(1);
    expect((await instance(token, active.instance_id)).status).toBe('terminated');
    expect((await call('GET', `/v1/spot-claims/${claim.id}`, { token })).body.preemptions).toBe(1);

    // an on-demand machine is taken back too, as a host reclaimed; once ended there is nothing left to take back
    const [node] = await world.offers((o) => o.rate >= 40 && o.rate <= 400);
    const onDemand = (await world.rent(token, { node_id: node!.id })).body;
    world.clock.advance(30_000);
    await instance(token, onDemand.id);
    expect((await call('POST', `/v1/operator/sandbox/machines/${onDemand.id}/preempt`, { headers: OPERATOR })).status).toBe(200);
    world.clock.advance(MINUTE);
    expect((await sweep()).preempted).toBe(1);
    const reclaimed = await instance(token, onDemand.id);
    expect(reclaimed.status).toBe('terminated');
    expect(reclaimed.charged_cents).toBe(node!.rate);
    expect((await call('POST', `/v1/operator/sandbox/machines/${onDemand.id}/preempt`, { headers: OPERATOR })).status).toBe(409);
  });

  it("a repriced offer is what the next rental pays, up or down, checked live", async () => {
    const { token } = await world.fundedTenant(200);
    const [node] = await world.offers((o) => o.gpuCount === 2 && o.available >= 2 && o.rate >= 40 && o.rate <= 400);
    const up = await call('POST', `/v1/operator/sandbox/offers/${node!.id}/price`, { headers: OPERATOR, body: { price_per_gpu_hour_usd: '3.1234' } });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    expect(up.body).toEqual({ event: 'repriced', node_id: node!.id, gpu_count: 2, price_per_gpu_hour_usd: '3.1234', price_per_hour_usd: '6.2468' });
    const dear = (await world.rent(token, { node_id: node!.id })).body;
    expect(dear.rate_cents_per_hour).toBe(625);
    await call('POST', `/v1/operator/sandbox/offers/${node!.id}/price`, { headers: OPERATOR, body: { price_per_gpu_hour_usd: 0.5 } });
    expect((await world.rent(token, { node_id: node!.id })).body.rate_cents_per_hour).toBe(100);
  });

  it('refuses what it cannot do: unknown ids 404, a price it cannot keep 422, no operator key 401', async () => {
    expect((await call('POST', '/v1/operator/sandbox/machines/ins_nosuch/lose', { headers: OPERATOR })).status).toBe(404);
    expect((await call('POST', '/v1/operator/sandbox/offers/sandbox:nosuch/price', { headers: OPERATOR, body: { price_per_gpu_hour_usd: '1' } })).status).toBe(404);
    expect((await call('POST', '/v1/operator/sandbox/offers/vast:123/price', { headers: OPERATOR, body: { price_per_gpu_hour_usd: '1' } })).status).toBe(404);
    const [node] = await world.offers();
    for (const price of ['0', '1.23456', '-1', 'cheap']) {
      const res = await call('POST', `/v1/operator/sandbox/offers/${node!.id}/price`, { headers: OPERATOR, body: { price_per_gpu_hour_usd: price } });
      expect(res.status, price).toBe(422);
    }
    expect((await call('POST', '/v1/operator/sandbox/machines/ins_nosuch/lose')).status).toBe(401);
  });
});

describe('without the sandbox', () => {
  it('the chaos routes do not exist: 404', async () => {
    const lambda = await startFakeLambda();
    const provider = createLambdaProvider({ apiKey: lambda.state.apiKey, baseUrl: lambda.url, minIntervalMs: 0, launchIntervalMs: 0, retries: 0, timeoutMs: 2_000 });
    const api = await startApi({ payments: { kind: 'manual' } }, { providers: [provider] });
    try {
      expect((await api.call('POST', '/v1/operator/sandbox/machines/ins_abc/lose', { headers: OPERATOR })).status).toBe(404);
      expect((await api.call('POST', '/v1/operator/sandbox/offers/sandbox:o1/price', { headers: OPERATOR, body: { price_per_gpu_hour_usd: '1' } })).status).toBe(404);
    } finally {
      await api.close();
      await lambda.close();
    }
  });
});
