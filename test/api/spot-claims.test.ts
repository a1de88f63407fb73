import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Reconciler, type ReconcileCounts } from '../../core/billing/reconciler.ts';
import type { Offer } from '../../core/market/offer.ts';
import { SpotClaimKeeper } from '../../core/spot/spot-claim-keeper.ts';
import { startApi, type TestApi } from '../support/api.ts';
import { freshDatabase, postgresReachable, type TestDatabase } from '../support/database.ts';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';

/**
 * Spot claims over HTTP, on the test's clock and a sandbox whose spot prices the tests pin (no random
 * preemptions: each one here is the test's): made (the cap commitment taken, no money moved), rented by the sweep
 * at the spot price, preempted and rented again, released, expired; every machine billed by the started minute.
 */
const MINUTE = 60_000;
const HOUR = 3_600_000;
const onPostgres = await postgresReachable();

let database: TestDatabase;
let world: RentalWorld;
beforeAll(async () => {
  database = await freshDatabase();
  world = await rentalWorld({}, { database, sandbox: { spotPreemptionsPerHour: 0 } });
});
afterAll(async () => {
  await world?.close();
  await database?.drop();
});

const call = (...args: Parameters<RentalWorld['api']['call']>) => world.api.call(...args);
const claimFor = (token: string, body: Record<string, unknown>) => call('POST', '/v1/spot-claims', { token, body: { name: 'spot', hours: 4, ...body } });
const claimOf = async (token: string, id: string) => {
  const res = await call('GET', `/v1/spot-claims/${id}`, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};
const instance = async (token: string, id: string) => (await call('GET', `/v1/instances/${id}`, { token })).body;
const committed = async (token: string): Promise<number> => (await call('GET', '/v1/tokens/self', { token })).body.committed_cents;
const sweep = async () => {
  const res = await call('POST', '/v1/operator/sweep', { headers: OPERATOR });
  expect(res.status).toBe(200);
  expect(res.body.errors, JSON.stringify(res.body.errors)).toEqual([]);
  return res.body;
};
const usd = (cents: number) => (cents / 100).toFixed(2);
const offerIdOf = (nodeId: string) => nodeId.slice('sandbox:'.length);
/** The ledger entries of one rental, oldest first. */
const entriesOf = async (token: string, instanceId: string) =>
  ((await call('GET', '/v1/billing/ledger', { token })).body as { reference: string | null; description: string | null; amount_cents: number; kind: string }[])
    .filter((e) => e.reference === instanceId)
    .reverse();
/** What a spot machine costs for the minutes from its creation to `end`: every started minute, no minimum. */
const minuteCost = (rate: number, createdAt: string, end: string) => Math.ceil((rate * Math.ceil((Date.parse(end) - Date.parse(createdAt)) / MINUTE)) / 60);

type Spot = Offer & { rate: number; spotRate: number; spotPerGpu: number };
const used = new Set<string>();
/**
 * Every offer of one GPU type and count no test used yet, their spot prices pinned at distinct shares of their
 * on-demand price (so the cheapest spot offer is known), cheapest spot first; all taken by the caller.
 */
async function takeSpotGroup(size: number): Promise<Spot[]> {
  const groups = new Map<string, (Offer & { rate: number })[]>();
  for (const o of await world.offers()) groups.set(`${o.gpuType}/${o.gpuCount}`, [...(groups.get(`${o.gpuType}/${o.gpuCount}`) ?? []), o]);
  for (const offers of groups.values()) {
    if (offers.length < size || offers.some((o) => used.has(o.id)) || offers[0]!.rate > 800 || offers[0]!.rate < 40) continue;
    const pinned: Spot[] = [];
    for (const [i, o] of offers.entries()) {
      used.add(o.id);
      // 40%, 45%, 50%... of the on-demand price, in whole cents (the sandbox keeps 4 decimals)
      const spotRate = Math.max(1, Math.floor((o.rate * (40 + 5 * i)) / 100)) + i * o.gpuCount;
      await world.sandbox.cloud.setSpotPrice(offerIdOf(o.id), usd(spotRate));
      pinned.push({ ...o, spotRate, spotPerGpu: Math.ceil(spotRate / o.gpuCount) });
    }
    // the market's snapshot is read again once a minute
    world.clock.advance(MINUTE);
    return pinned.sort((a, b) => a.spotPerGpu - b.spotPerGpu || a.id.localeCompare(b.id));
  }
  throw new Error(`no GPU type with ${size} offers left`);
}

describe('making a spot claim', () => {
  it('holds bid x gpu_count x hours on the token chain, moves no money, and lists it', async () => {
    const { token } = await world.fundedTenant(50);
    const [node] = await takeSpotGroup(1);
    const bid = node!.spotPerGpu + 3;
    const res = await claimFor(token, { node_id: node!.id, max_price_per_gpu_hour: usd(bid), gpu_count: node!.gpuCount, hours: 3, name: 'cheap run' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^spc_[a-z0-9]+$/),
      status: 'pending',
      name: 'cheap run',
      node_id: node!.id,
      search: null,
      gpu_count: node!.gpuCount,
      bid_cents_per_gpu_hour: bid,
      hours: 3,
      instance_id: null,
      preemptions: 0,
      charged_cents: 0,
      last_error: null,
      ends_at: new Date(world.clock.now().getTime() + 3 * HOUR).toISOString(),
      created_at: world.clock.now().toISOString(),
    });
    expect(await committed(token)).toBe(bid * node!.gpuCount * 3);
    expect((await world.balance(token)).balance_cents).toBe(5_000);
    expect(await claimOf(token, res.body.id)).toEqual(res.body);
    expect((await call('GET', '/v1/spot-claims', { token })).body).toEqual([res.body]);
    expect((await call('DELETE', `/v1/spot-claims/${res.body.id}`, { token })).body).toMatchObject({ status: 'released', charged_cents: 0 });
    expect(await committed(token)).toBe(0);
  });

  it('nodes of the sandbox list spot in supported_operations beside their spot price', async () => {
    const { token } = await world.fundedTenant(1);
    const gpus = (await call('GET', '/v1/gpus?provider=sandbox&limit=50', { token })).body;
    expect(gpus.nodes.length).toBeGreaterThan(0);
    for (const node of gpus.nodes) expect(node.supported_operations).toContain('spot');
    expect(gpus.nodes.some((node: { spot_price_per_gpu_hour_cents: number | null }) => node.spot_price_per_gpu_hour_cents !== null)).toBe(true);
  });

  it('refuses bad bodies naming the field, 422 and never 500, holding nothing', async () => {
    const { token } = await world.fundedTenant(50);
    const [node] = await takeSpotGroup(1);
    const ok = { node_id: node!.id, max_price_per_gpu_hour: usd(node!.spotPerGpu), gpu_count: node!.gpuCount };
    const bodies: [Record<string, unknown>, string][] = [
      [{ ...ok, max_price_per_gpu_hour: undefined }, 'max_price_per_gpu_hour'],
      [{ ...ok, max_price_per_gpu_hour: '0.123' }, 'max_price_per_gpu_hour'],
      [{ ...ok, max_price_per_gpu_hour: -1 }, 'max_price_per_gpu_hour'],
      [{ ...ok, max_price_per_gpu_hour: 0 }, 'max_price_per_gpu_hour'],
      [{ ...ok, max_price_per_gpu_hour: 'cheap' }, 'max_price_per_gpu_hour'],
      [{ ...ok, max_price_per_gpu_hour: '1e3' }, 'max_price_per_gpu_hour'],
      [{ ...ok, gpu_count: 0 }, 'gpu_count'],
      [{ ...ok, gpu_count: 1.5 }, 'gpu_count'],
      [{ ...ok, gpu_count: undefined }, 'gpu_count'],
      [{ ...ok, gpu_count: node!.gpuCount + 1 }, 'gpu_count'],
      [{ ...ok, hours: 0 }, 'hours'],
      [{ ...ok, hours: 721 }, 'hours'],
      [{ ...ok, hours: 2.5 }, 'hours'],
      [{ ...ok, hours: '3' }, 'hours'],
      [{ ...ok, name: ' ' }, 'name'],
      [{ ...ok, node_id: undefined }, 'node_id'],
      [{ ...ok, search: { gpu_type: 'H100' } }, 'node_id'],
      [{ ...ok, node_id: 'nimbus:1' }, 'node_id'],
      [{ ...ok, node_id: undefined, search: { gpu_type: 'H100', max_price_per_gpu_hour: 2 } }, 'max_price_per_gpu_hour'],
      [{ ...ok, node_id: undefined, search: { gpu_type: 'H100', gpu_count: 3 }, gpu_count: 2 }, 'gpu_count'],
      [{ ...ok, node_id: undefined, search: { gpus: 2 } }, 'search'],
      [{ ...ok, template_id: 'tpl_unknown0' }, 'template_id'],
      [{ ...ok, ssh_key_id: 'nope' }, 'ssh_key_id'],
      [{ ...ok, bid: 2 }, 'bid'],
    ];
    for (const [body, field] of bodies) {
      const res = await claimFor(token, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.detail, JSON.stringify(body)).toContain(field);
    }
    for (const raw of ['{"node_id": ', '[]', 'null', '"x"']) {
      const res = await call('POST', '/v1/spot-claims', { token, rawBody: raw });
      expect(res.status, raw).toBeGreaterThanOrEqual(400);
      expect(res.status, raw).toBeLessThan(500);
    }
    expect(await committed(token)).toBe(0);
    expect((await call('GET', '/v1/spot-claims', { token })).body).toEqual([]);
  });

  it('caps: 402 beyond the cap, 422 without hours for a capped token or one with max_rental_hours', async () => {
    const root = await world.fundedTenant(100);
    const [node] = await takeSpotGroup(1);
    const bid = node!.spotPerGpu;
    const perHour = bid * node!.gpuCount;
    const body = { node_id: node!.id, max_price_per_gpu_hour: usd(bid), gpu_count: node!.gpuCount };
    const capped = (await call('POST', '/v1/tokens', { token: root.token, body: { scopes: ['read', 'rent'], spend_limit_usd: usd(5 * perHour) } })).body;
    const limited = (await call('POST', '/v1/tokens', { token: root.token, body: { scopes: ['read', 'rent'], max_rental_hours: 2 } })).body;
    expect((await claimFor(capped.token, { ...body, hours: undefined })).status).toBe(422);
    expect((await claimFor(limited.token, { ...body, hours: undefined })).status).toBe(422);
    expect((await claimFor(limited.token, { ...body, hours: 3 })).status).toBe(422);
    expect((await claimFor(limited.token, { ...body, hours: 2 })).status).toBe(201);
    const over = await claimFor(capped.token, { ...body, hours: 6 });
    expect(over.status).toBe(402);
    expect(over.body.detail).toMatch(/cap leaves/);
    expect((await claimFor(capped.token, { ...body, hours: 3 })).status).toBe(201);
    expect((await claimFor(capped.token, { ...body, hours: 3 })).status).toBe(402);
    expect((await claimFor(capped.token, { ...body, hours: 2 })).status).toBe(201);
    expect(await committed(capped.token)).toBe(5 * perHour);
    // an uncapped root claims until released
    expect((await claimFor(root.token, { ...body, hours: undefined })).body).toMatchObject({ hours: null, ends_at: null });
    for (const c of (await call('GET', '/v1/spot-claims', { token: root.token })).body) await call('DELETE', `/v1/spot-claims/${c.id}`, { token: root.token });
    expect(await committed(capped.token)).toBe(0);
  });

  it("reading needs read, making and releasing need rent; another tenant's ids are 404", async () => {
    const owner = await world.fundedTenant(50);
    const other = await world.fundedTenant(50);
    const [node] = await takeSpotGroup(1);
    const made = (await claimFor(owner.token, { node_id: node!.id, max_price_per_gpu_hour: usd(node!.spotPerGpu), gpu_count: node!.gpuCount })).body;
    const reader = (await call('POST', '/v1/tokens', { token: owner.token, body: { scopes: ['read'] } })).body.token;
    const renter = (await call('POST', '/v1/tokens', { token: owner.token, body: { scopes: ['rent'] } })).body.token;
    expect((await claimFor(reader, { node_id: node!.id, max_price_per_gpu_hour: '1', gpu_count: node!.gpuCount })).status).toBe(403);
    expect((await call('DELETE', `/v1/spot-claims/${made.id}`, { token: reader })).status).toBe(403);
    for (const path of ['/v1/spot-claims', `/v1/spot-claims/${made.id}`]) {
      expect((await call('GET', path, { token: reader })).status, path).toBe(200);
      expect((await call('GET', path, { token: renter })).status, path).toBe(403);
    }
    expect((await call('GET', `/v1/spot-claims/${made.id}`, { token: other.token })).status).toBe(404);
    expect((await call('DELETE', `/v1/spot-claims/${made.id}`, { token: other.token })).status).toBe(404);
    expect((await call('GET', '/v1/spot-claims/spc_unknown0', { token: owner.token })).status).toBe(404);
    expect((await call('GET', '/v1/spot-claims', { token: other.token })).body).toEqual([]);
    expect((await claimOf(owner.token, made.id)).status).toBe('pending');
    // a renter that is not root releases only what its own subtree made
    const others = await call('DELETE', `/v1/spot-claims/${made.id}`, { token: renter });
    expect(others.status).toBe(403);
    expect(others.body.detail).toMatch(/made by another credential/);
    expect((await claimOf(owner.token, made.id)).status).toBe('pending');
    expect((await call('DELETE', `/v1/spot-claims/${made.id}`, { token: owner.token })).status).toBe(200);
    expect((await call('DELETE', `/v1/spot-claims/${made.id}`, { token: owner.token })).status).toBe(409);
  });
});

describe('the sweep keeps a claim', () => {
  it('rents the cheapest spot offer at or under the bid at the spot price; a preempted machine pays its started minutes and the next one is rented', async () => {
    const { token } = await world.fundedTenant(100);
    const group = await takeSpotGroup(2);
    const [cheapest, next] = group as [Spot, Spot];
    const bid = next.spotPerGpu;
    const made = (await claimFor(token, { search: { gpu_type: cheapest.gpuType }, gpu_count: cheapest.gpuCount, max_price_per_gpu_hour: usd(bid), hours: 5 })).body;

    expect((await sweep()).spot_claims_rented).toBeGreaterThanOrEqual(1);
    const active = await claimOf(token, made.id);
    expect(active).toMatchObject({ status: 'active', instance_id: expect.stringMatching(/^ins_/), preemptions: 0, charged_cents: cheapest.spotRate });
    const first = await instance(token, active.instance_id);
    expect(first).toMatchObject({ node_id: cheapest.id, rate_cents_per_hour: cheapest.spotRate, idempotency_key: `${made.id}:1`, window_ends_at: made.ends_at });
    expect(first.supported_operations).toContain('spot');
    // the claim's commitment is its own: its machines add none
    expect(await committed(token)).toBe(bid * cheapest.gpuCount * 5);

    world.clock.advance(30_000);
    expect((await instance(token, first.id)).status).toBe('running');
    world.clock.advance(16 * MINUTE + 20_000);
    await sweep(); // seen running now
    const seenAt = world.clock.now().toISOString();
    const machine = (await world.sandbox.cloud.listMachines()).find((m) => m.label === first.id)!;
    expect(await world.sandbox.cloud.preemptMachine(machine.machineId)).toBe(true);
    // the cheapest one's price rises over the bid: the next machine is the other offer
    await world.sandbox.cloud.setSpotPrice(offerIdOf(cheapest.id), usd((bid + 5) * cheapest.gpuCount));
    world.clock.advance(2 * MINUTE);
    const pass = await sweep();
    expect(pass.preempted).toBe(1);

    const ended = await instance(token, first.id);
    const cost = minuteCost(cheapest.spotRate, first.created_at, seenAt);
    expect(ended).toMatchObject({ status: 'terminated', terminated_at: seenAt, charged_cents: cost });
    expect(cost).toBeLessThan(cheapest.spotRate); // 17 minutes, no one-hour minimum
    const entries = await entriesOf(token, first.id);
    expect(entries.map((e) => e.description)).toEqual([`first hour (spot claim ${made.id})`, `unused time refunded (spot claim ${made.id})`]);
    expect(entries.map((e) => e.amount_cents)).toEqual([-cheapest.spotRate, cheapest.spotRate - cost]);
    expect((await world.sandbox.cloud.listMachines()).filter((m) => m.label === first.id && m.status !== 'terminated')).toEqual([]);

    const again = await claimOf(token, made.id);
    expect(again).toMatchObject({ status: 'active', preemptions: 1, charged_cents: cost + next.spotRate });
    const second = await instance(token, again.instance_id);
    expect(second).toMatchObject({ node_id: next.id, rate_cents_per_hour: next.spotRate, idempotency_key: `${made.id}:2` });
    expect(Date.parse(second.created_at)).toBeGreaterThan(Date.parse(ended.terminated_at));

    // released: the machine ends now, billed to the started minute, the rest of its hour refunded
    world.clock.advance(30_000 + 5 * MINUTE);
    await instance(token, second.id);
    const released = (await call('DELETE', `/v1/spot-claims/${made.id}`, { token })).body;
    const secondCost = minuteCost(next.spotRate, second.created_at, world.clock.now().toISOString());
    expect(released).toMatchObject({ status: 'released', instance_id: second.id, preemptions: 1, charged_cents: cost + secondCost });
    expect(await instance(token, second.id)).toMatchObject({ status: 'terminated', charged_cents: secondCost });
    expect(await committed(token)).toBe(cost + secondCost);
    expect((await world.balance(token)).balance_cents).toBe(10_000 - cost - secondCost);
    await sweep();
    expect((await claimOf(token, made.id)).status).toBe('released');
    expect((await world.sandbox.cloud.listMachines()).filter((m) => (m.label === first.id || m.label === second.id) && m.status !== 'terminated')).toEqual([]);
  });

  it('waits pending, saying why, while no spot offer is at or under the bid, and rents once one is', async () => {
    const { token } = await world.fundedTenant(50);
    const [node] = await takeSpotGroup(1);
    await world.sandbox.cloud.setSpotPrice(offerIdOf(node!.id), usd((node!.spotPerGpu + 10) * node!.gpuCount));
    world.clock.advance(MINUTE);
    const made = (await claimFor(token, { node_id: node!.id, gpu_count: node!.gpuCount, max_price_per_gpu_hour: usd(node!.spotPerGpu), hours: 2 })).body;
    await sweep();
    const waiting = await claimOf(token, made.id);
    expect(waiting).toMatchObject({ status: 'pending', instance_id: null });
    expect(waiting.last_error).toMatch(/above the bid|no spot offer/);
    await world.sandbox.cloud.setSpotPrice(offerIdOf(node!.id), usd(node!.spotRate));
    world.clock.advance(MINUTE);
    await sweep();
    expect(await claimOf(token, made.id)).toMatchObject({ status: 'active', last_error: null, charged_cents: node!.spotRate });
    await call('DELETE', `/v1/spot-claims/${made.id}`, { token });
  });

  it('expires at ends_at: its machine removed, billed to then, the cap keeping only what it spent', async () => {
    const { token } = await world.fundedTenant(50);
    const [node] = await takeSpotGroup(1);
    const bid = node!.spotPerGpu + 1;
    const made = (await claimFor(token, { node_id: node!.id, gpu_count: node!.gpuCount, max_price_per_gpu_hour: usd(bid), hours: 2 })).body;
    world.clock.advance(20 * MINUTE);
    await sweep();
    const { instance_id } = await claimOf(token, made.id);
    const rental = await instance(token, instance_id);
    world.clock.advance(30_000);
    await instance(token, instance_id);
    world.clock.set(new Date(Date.parse(made.created_at) + HOUR + 20 * MINUTE));
    expect((await sweep()).blocks_paid).toBeGreaterThanOrEqual(1);
    world.clock.set(new Date(Date.parse(made.ends_at) + MINUTE));
    expect((await sweep()).spot_claims_expired).toBeGreaterThanOrEqual(1);
    const cost = minuteCost(node!.spotRate, rental.created_at, made.ends_at);
    expect(await instance(token, instance_id)).toMatchObject({ status: 'terminated', terminated_at: made.ends_at, charged_cents: cost });
    expect(await claimOf(token, made.id)).toMatchObject({ status: 'expired', instance_id, charged_cents: cost });
    expect(await committed(token)).toBe(cost);
    expect((await world.sandbox.cloud.listMachines()).filter((m) => m.label === instance_id && m.status !== 'terminated')).toEqual([]);
    expect((await call('DELETE', `/v1/spot-claims/${made.id}`, { token })).status).toBe(409);
    // nothing rented after the end
    await sweep();
    expect((await claimOf(token, made.id)).instance_id).toBe(instance_id);
  });

  it('a machine preempted in the pass that ends the claim is billed to its last sighting and counted', async () => {
    const { token } = await world.fundedTenant(50);
    const [node] = await takeSpotGroup(1);
    const made = (await claimFor(token, { node_id: node!.id, gpu_count: node!.gpuCount, max_price_per_gpu_hour: usd(node!.spotPerGpu), hours: 1 })).body;
    await sweep();
    const { instance_id } = await claimOf(token, made.id);
    const rental = await instance(token, instance_id);
    world.clock.advance(40 * MINUTE);
    await sweep();
    const seenAt = world.clock.now().toISOString();
    const machine = (await world.sandbox.cloud.listMachines()).find((m) => m.label === instance_id)!;
    await world.sandbox.cloud.preemptMachine(machine.machineId);
    world.clock.set(new Date(Date.parse(made.ends_at) + MINUTE));
    const pass = await sweep();
    expect([pass.preempted, pass.spot_claims_expired, pass.spot_claims_rented]).toEqual([1, 1, 0]);
    const cost = minuteCost(node!.spotRate, rental.created_at, seenAt);
    expect(await instance(token, instance_id)).toMatchObject({ status: 'terminated', terminated_at: seenAt, charged_cents: cost });
    expect(await claimOf(token, made.id)).toMatchObject({ status: 'expired', preemptions: 1, instance_id, charged_cents: cost });
    expect(await committed(token)).toBe(cost);
  });

  it('shows preempted between the reconciler and the claim step; released then, the preemption counted', async () => {
    const { token } = await world.fundedTenant(50);
    const [node] = await takeSpotGroup(1);
    const made = (await claimFor(token, { node_id: node!.id, gpu_count: node!.gpuCount, max_price_per_gpu_hour: usd(node!.spotPerGpu), hours: 3 })).body;
    await sweep();
    const { instance_id } = await claimOf(token, made.id);
    world.clock.advance(5 * MINUTE);
    await sweep();
    const machine = (await world.sandbox.cloud.listMachines()).find((m) => m.label === instance_id)!;
    await world.sandbox.cloud.preemptMachine(machine.machineId);
    // the reconciler alone, as the first step of a pass
    const plane = world.api.plane;
    const counts: ReconcileCounts = { adopted: 0, failedProvisioning: 0, goneUpstream: 0, orphansTerminated: 0, terminationsRetried: 0, preempted: 0, errors: [] };
    await new Reconciler({ storage: plane.storage, clock: plane.clock, rentals: plane.services.rentals, provisioningDeadlineMs: 15 * MINUTE }).reconcile(world.sandbox, counts);
    expect(counts).toMatchObject({ preempted: 1, errors: [] });
    expect(await claimOf(token, made.id)).toMatchObject({ status: 'preempted', instance_id, preemptions: 0 });
    const released = (await call('DELETE', `/v1/spot-claims/${made.id}`, { token })).body;
    expect(released).toMatchObject({ status: 'released', instance_id, preemptions: 1 });
    expect((await instance(token, instance_id)).status).toBe('terminated');
    await sweep();
    expect(await claimOf(token, made.id)).toEqual(released);
  });

  it('a pending claim with funds short rents nothing and says so', async () => {
    const { token } = await world.fundedTenant('0.01');
    const [node] = await takeSpotGroup(1);
    const made = (await claimFor(token, { node_id: node!.id, gpu_count: node!.gpuCount, max_price_per_gpu_hour: usd(node!.spotPerGpu), hours: 1 })).body;
    await sweep();
    const claim = await claimOf(token, made.id);
    expect(claim).toMatchObject({ status: 'pending', instance_id: null, charged_cents: 0 });
    expect(claim.last_error).toMatch(/first hour costs/);
    expect((await world.balance(token)).balance_cents).toBe(1);
  });
});

describe.runIf(onPostgres)('sweeps racing (PostgreSQL)', () => {
  let replica: TestApi;
  let admin: pg.Client;
  beforeAll(async () => {
    replica = await startApi({ providers: [{ name: 'sandbox', config: { spotPreemptionsPerHour: 0 } }] }, { clock: world.clock, database: { target: database.target, drop: async () => undefined } });
    admin = new pg.Client({ connectionString: (database.target as { url: string }).url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await replica?.close();
  });

  /** The sweep's step over a control plane's parts, without the sweep's lock. */
  const keeperOf = (api: TestApi) =>
    new SpotClaimKeeper({
      storage: api.plane.storage,
      clock: api.plane.clock,
      rentals: api.plane.services.rentals,
      market: api.plane.services.market,
      providers: api.plane.providers,
    });

  it('two sweeps and two bare steps on two replicas rent a pending claim once', async () => {
    const { token } = await world.fundedTenant(50);
    const [node] = await takeSpotGroup(1);
    const made = (await claimFor(token, { node_id: node!.id, gpu_count: node!.gpuCount, max_price_per_gpu_hour: usd(node!.spotPerGpu), hours: 2 })).body;
    const reports = await Promise.all([
      sweep(),
      replica.call('POST', '/v1/operator/sweep', { headers: OPERATOR }).then((res) => res.body),
      keeperOf(world.api).pass(),
      keeperOf(replica).pass(),
    ]);
    expect(reports.flatMap((r) => r.errors).join(' ')).not.toContain(made.id);
    const rentals = (await admin.query(`select id from instances where idempotency_key like $1`, [`${made.id}:%`])).rows.map((row) => row.id as string);
    expect(rentals).toHaveLength(1);
    expect(await claimOf(token, made.id)).toMatchObject({ status: 'active', instance_id: rentals[0], charged_cents: node!.spotRate });
    expect((await entriesOf(token, rentals[0]!)).filter((e) => e.kind === 'rental_hour')).toHaveLength(1);
    expect((await world.sandbox.cloud.listMachines()).filter((m) => m.label === rentals[0])).toHaveLength(1);
    // the next passes leave a claim with a live machine alone
    await Promise.all([keeperOf(world.api).pass(), keeperOf(replica).pass()]);
    expect((await admin.query(`select count(*)::int as n from instances where idempotency_key like $1`, [`${made.id}:%`])).rows[0].n).toBe(1);
  });
});
