import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Offer } from '../../core/market/offer.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';

/**
 * Burn ceilings over HTTP on the test's clock (docs/decisions.md, "Burn ceilings"): a token's max_burn_usd_per_hour
 * bounds what the live machines and volumes under it and its descendants cost an hour together; a rent or volume
 * past it is refused (402) with the burn and the ceiling, a reservation that cannot start for it fails, a spot claim
 * waits; parallel rents never pass it.
 */
const MINUTE = 60_000;
let database: TestDatabase;
let world: RentalWorld;
let region: string;
beforeAll(async () => {
  database = await freshDatabase();
  world = await rentalWorld({}, { database, sandbox: { offers: 600, spotPreemptionsPerHour: 0 } });
  region = (await world.sandbox.volumeOffers())[0]!.region;
});
afterAll(async () => {
  await world?.close();
  await database?.drop();
});

type Rated = Offer & { rate: number };
const call = (...args: Parameters<RentalWorld['api']['call']>) => world.api.call(...args);
const self = async (token: string) => (await call('GET', '/v1/tokens/self', { token })).body;
const usd = (cents: number) => (cents / 100).toFixed(2);
const sweep = async () => {
  const res = await call('POST', '/v1/operator/sweep', { headers: OPERATOR });
  expect(res.status).toBe(200);
  return res.body;
};
async function child(parent: string, body: Record<string, unknown> = {}): Promise<{ token: string; id: string; body: any }> {
  const res = await call('POST', '/v1/tokens', { token: parent, body: { scopes: ['read', 'rent', 'manage'], ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { token: res.body.token, id: res.body.id, body: res.body };
}
const rent = (token: string, node: Rated, extra: Record<string, unknown> = {}) =>
  world.rent(token, { node_id: node.id, idempotency_key: `k-${node.id}-${Math.random()}`, ...extra });
/** Offers no test has used yet, so capacity never runs out between tests. */
const used = new Set<string>();
async function take(count: number, filter: (o: Rated) => boolean = (o) => o.rate >= 50 && o.rate <= 400): Promise<Rated[]> {
  const picked = (await world.offers((o) => !used.has(o.id) && filter(o))).slice(0, count);
  if (picked.length < count) throw new Error('not enough offers left for this test');
  for (const o of picked) used.add(o.id);
  return picked;
}

describe('a token with a burn ceiling', () => {
  it('shows it in cents, refuses a bad one, and a child can only have as much (left out: the parent\'s)', async () => {
    const { token: root } = await world.fundedTenant(10);
    const agent = await child(root, { max_burn_usd_per_hour: '5.00' });
    expect(agent.body).toMatchObject({ max_burn_cents_per_hour: 500, burn_cents_per_hour: 0 });
    expect(await self(agent.token)).toMatchObject({ max_burn_cents_per_hour: 500, burn_cents_per_hour: 0, burn_left_cents_per_hour: 500 });
    expect(await self(root)).toMatchObject({ max_burn_cents_per_hour: null, burn_cents_per_hour: 0, burn_left_cents_per_hour: null });

    for (const bad of ['0', '-1', '1.234', 'five', 0]) {
      const res = await call('POST', '/v1/tokens', { token: root, body: { max_burn_usd_per_hour: bad } });
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body.errors[0].loc).toEqual(['body', 'max_burn_usd_per_hour']);
    }
    const over = await call('POST', '/v1/tokens', { token: agent.token, body: { max_burn_usd_per_hour: '5.01' } });
    expect(over.status).toBe(422);
    expect(over.body.detail).toMatch(/max_burn_usd_per_hour of 5\.00/);
    expect((await child(agent.token, { max_burn_usd_per_hour: 2 })).body.max_burn_cents_per_hour).toBe(200);
    const inherits = await child(agent.token);
    expect(inherits.body.max_burn_cents_per_hour).toBe(500);
    expect((await child(inherits.token)).body.max_burn_cents_per_hour).toBe(500);
  });

  it('refuses a rent or a volume that would pass it (402 with the burn and the ceiling), counting every descendant', async () => {
    const { token: root } = await world.fundedTenant(100);
    const [a, b, c] = await take(3);
    const ceiling = a!.rate + b!.rate + 20;
    const team = await child(root, { max_burn_usd_per_hour: usd(ceiling) });
    const one = await child(team.token);
    const two = await child(team.token, { max_burn_usd_per_hour: usd(b!.rate + 10) });

    const first = await rent(one.token, a!);
    expect(first.status).toBe(201);
    expect((await rent(two.token, b!)).status).toBe(201);
    const refused = await rent(two.token, c!);
    expect(refused.status, JSON.stringify(refused.body)).toBe(402);
    expect(refused.body.detail).toContain(`would burn ${c!.rate} cents an hour`);
    expect(refused.body.detail).toContain(`what runs under this token burns ${b!.rate} cents an hour now and its ceiling is ${b!.rate + 10}`);

    // one's machine and two's are both under team: team's ceiling decides for one as well
    const fromOne = await rent(one.token, c!);
    expect(fromOne.status).toBe(402);
    expect(fromOne.body.detail).toContain(`token ${team.id}, which issued this one, burns ${a!.rate + b!.rate} cents an hour now and its ceiling is ${ceiling}`);
    expect(await self(team.token)).toMatchObject({ burn_cents_per_hour: a!.rate + b!.rate, burn_left_cents_per_hour: 20 });
    expect(await self(one.token)).toMatchObject({ burn_cents_per_hour: a!.rate, burn_left_cents_per_hour: 20 });
    const listed = new Map(((await call('GET', '/v1/tokens', { token: root })).body as any[]).map((t) => [t.id, t]));
    expect(listed.get(team.id)).toMatchObject({ max_burn_cents_per_hour: ceiling, burn_cents_per_hour: a!.rate + b!.rate });
    expect(listed.get(two.id)).toMatchObject({ burn_cents_per_hour: b!.rate });

    // a volume burns too: 10,000 GB of sandbox storage cost 96 cents an hour, 2,000 GB 20 cents
    const big = await call('POST', '/v1/volumes', { token: one.token, body: { name: 'data', provider: 'sandbox', region, size_gb: 10_000 } });
    expect(big.status, JSON.stringify(big.body)).toBe(402);
    expect(big.body.detail).toMatch(/this volume would burn 96 cents an hour/);
    const fits = await call('POST', '/v1/volumes', { token: one.token, body: { name: 'data', provider: 'sandbox', region, size_gb: 2_000 } });
    expect(fits.status, JSON.stringify(fits.body)).toBe(201);
    expect((await self(team.token)).burn_cents_per_hour).toBe(ceiling);
    expect((await self(root)).burn_cents_per_hour).toBe(ceiling);

    // ending a machine frees its rate
    expect((await call('POST', `/v1/instances/${first.body.id}/terminate`, { token: root })).status).toBe(200);
    expect((await self(team.token)).burn_cents_per_hour).toBe(b!.rate + 20);
    expect((await rent(one.token, c!)).status).toBe(c!.rate <= a!.rate ? 201 : 402);
  });

  it('is never passed by rents and volumes asked for at once by several tokens under it', async () => {
    const { token: root } = await world.fundedTenant(500);
    const nodes = await take(16);
    const ceiling = nodes.slice(0, 5).reduce((sum, n) => sum + n.rate, 0) + 7;
    const team = await child(root, { max_burn_usd_per_hour: usd(ceiling) });
    const agents = [await child(team.token), await child(team.token), await child(team.token)];
    const answers = await Promise.all([
      ...nodes.map((node, i) => rent(agents[i % 3]!.token, node)),
      ...[0, 1, 2].map((i) => call('POST', '/v1/volumes', { token: agents[i]!.token, body: { name: 'v', provider: 'sandbox', region, size_gb: 1_000 } })),
    ]);
    expect(answers.map((a) => a.status).every((s) => s === 201 || s === 402), JSON.stringify(answers.map((a) => a.body))).toBe(true);
    const refusals = answers.filter((a) => a.status === 402);
    expect(refusals.length).toBeGreaterThan(0);
    for (const refusal of refusals) expect(refusal.body.detail).toMatch(/ceiling is \d+/);
    const instances = ((await call('GET', '/v1/instances', { token: root })).body as any[]).filter((i) => i.status !== 'failed');
    const volumes = (await call('GET', '/v1/volumes', { token: root })).body as any[];
    const burning = instances.reduce((sum, i) => sum + i.rate_cents_per_hour, 0) + volumes.length * 10;
    expect(burning).toBeLessThanOrEqual(ceiling);
    expect((await self(team.token)).burn_cents_per_hour).toBe(burning);
    // whatever was refused, the one that fit was taken: what is left cannot hold the cheapest refused
    const cheapestRefused = Math.min(...answers.map((a, i) => (a.status === 402 ? (i < nodes.length ? nodes[i]!.rate : 10) : Infinity)));
    expect(burning + cheapestRefused).toBeGreaterThan(ceiling);
  });

  it('refuses at booking (402) a reservation or spot claim whose rate alone passes it, as a rental would be; nothing held', async () => {
    const { token: root } = await world.fundedTenant(100);
    const [node] = await take(1, (o) => o.rate >= 50 && o.rate <= 400 && o.spotPriceUsdPerHour !== null);
    const parent = await child(root, { max_burn_usd_per_hour: usd(node!.rate - 1) });
    const agent = await child(parent.token, { max_burn_usd_per_hour: usd(node!.rate - 1) });
    const startsAt = new Date(world.clock.now().getTime() + 10 * MINUTE).toISOString();
    expect((await rent(agent.token, node!)).status).toBe(402);

    const reservation = await call('POST', '/v1/reservations', { token: agent.token, body: { name: 'later', node_id: node!.id, hours: 2, starts_at: startsAt } });
    expect(reservation.status, JSON.stringify(reservation.body)).toBe(402);
    expect(reservation.body.detail).toMatch(new RegExp(`would burn ${node!.rate} cents an hour once started.* ceiling of this token is ${node!.rate - 1}`));
    const bid = Math.ceil(node!.rate / node!.gpuCount);
    const claim = await call('POST', '/v1/spot-claims', { token: agent.token, body: { name: 'spot', node_id: node!.id, gpu_count: node!.gpuCount, max_price_per_gpu_hour: usd(bid), hours: 2 } });
    expect(claim.status, JSON.stringify(claim.body)).toBe(402);
    expect(claim.body.detail).toMatch(new RegExp(`spot claim would burn ${bid * node!.gpuCount} cents an hour once started`));
    expect((await self(agent.token)).committed_cents).toBe(0);
    expect((await call('GET', '/v1/reservations', { token: agent.token })).body).toEqual([]);
    expect((await call('GET', '/v1/spot-claims', { token: agent.token })).body).toEqual([]);

    // a rate that fits the ceiling alone is booked, whatever burns now: that is checked at its start
    const within = Math.floor((node!.rate - 1) / node!.gpuCount);
    const fits = await call('POST', '/v1/spot-claims', { token: agent.token, body: { name: 'spot', node_id: node!.id, gpu_count: node!.gpuCount, max_price_per_gpu_hour: usd(within), hours: 2 } });
    expect(fits.status, JSON.stringify(fits.body)).toBe(201);
    expect((await call('DELETE', `/v1/spot-claims/${fits.body.id}`, { token: agent.token })).status).toBe(200);
  });

  it('fails a reservation that cannot start for it, nothing charged, and keeps a spot claim waiting until there is room', async () => {
    const { token: root } = await world.fundedTenant(100);
    const [running, booked] = await take(2, (o) => o.rate >= 50 && o.rate <= 200 && o.spotPriceUsdPerHour === null);
    const agent = await child(root, { max_burn_usd_per_hour: usd(running!.rate + booked!.rate - 1) });
    const reservation = await call('POST', '/v1/reservations', {
      token: agent.token,
      body: { name: 'later', node_id: booked!.id, hours: 2, starts_at: new Date(world.clock.now().getTime() + 10 * MINUTE).toISOString() },
    });
    expect(reservation.status, JSON.stringify(reservation.body)).toBe(201);
    const machine = await rent(agent.token, running!);
    expect(machine.status).toBe(201);
    const balance = (await world.balance(root)).balance_cents;

    world.clock.set(new Date(reservation.body.starts_at));
    await sweep();
    const failed = (await call('GET', `/v1/reservations/${reservation.body.id}`, { token: agent.token })).body;
    expect(failed.status).toBe('failed');
    expect(failed.failure).toMatch(/not started, nothing charged: this rental would burn .* ceiling is/);
    expect((await world.balance(root)).balance_cents).toBe(balance);
    // what is left committed is the running machine's first hour alone
    expect((await self(agent.token)).committed_cents).toBe(running!.rate);

    // a spot claim whose machine does not fit waits with why, and is rented once the room is there
    const [spot] = await take(1, (o) => o.rate >= 50 && o.rate <= 400 && o.spotPriceUsdPerHour !== null);
    await world.sandbox.cloud.setSpotPrice(spot!.id.slice('sandbox:'.length), usd(booked!.rate));
    world.clock.advance(MINUTE);
    const bid = Math.ceil(booked!.rate / spot!.gpuCount);
    const claim = await call('POST', '/v1/spot-claims', { token: agent.token, body: { name: 'spot', node_id: spot!.id, gpu_count: spot!.gpuCount, max_price_per_gpu_hour: usd(bid), hours: 3 } });
    expect(claim.status, JSON.stringify(claim.body)).toBe(201);
    await sweep();
    const waiting = (await call('GET', `/v1/spot-claims/${claim.body.id}`, { token: agent.token })).body;
    expect(waiting).toMatchObject({ status: 'pending', instance_id: null });
    expect(waiting.last_error).toMatch(/would burn .* ceiling is/);
    expect((await call('POST', `/v1/instances/${machine.body.id}/terminate`, { token: agent.token })).status).toBe(200);
    await sweep();
    expect((await call('GET', `/v1/spot-claims/${claim.body.id}`, { token: agent.token })).body).toMatchObject({ status: 'active', last_error: null });
  });

  it('is what get_token_self tells an agent over MCP, and an MCP rent past it fails with the burn and the ceiling', async () => {
    const { token: root } = await world.fundedTenant(50);
    const [a, b] = await take(2);
    const agent = await child(root, { max_burn_usd_per_hour: usd(a!.rate + 1) });
    expect((await rent(agent.token, a!)).status).toBe(201);
    const client = new Client({ name: 'burn-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${world.api.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${agent.token}` } } }));
    try {
      const me = (await client.callTool({ name: 'get_token_self', arguments: {} })) as CallToolResult;
      expect(me.structuredContent).toMatchObject({ max_burn_cents_per_hour: a!.rate + 1, burn_cents_per_hour: a!.rate, burn_left_cents_per_hour: 1 });
      const over = (await client.callTool({ name: 'rent_instance', arguments: { node_id: b!.id, idempotency_key: 'mcp-over' } })) as CallToolResult;
      expect(over.isError).toBe(true);
      expect((over.content[0] as { text: string }).text).toContain(`burns ${a!.rate} cents an hour now and its ceiling is ${a!.rate + 1}`);
    } finally {
      await client.close();
    }
  });
});
