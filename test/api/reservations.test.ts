import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Offer } from '../../core/market/offer.ts';
import { ReservationStarter } from '../../core/reservations/reservation-starter.ts';
import type { Provider } from '../../core/ports/providers.ts';
import { TOKENS } from '../../hosts/composition/control-plane.ts';
import { searchFilterOf } from '../../hosts/http/schemas/catalog.ts';
import { startApi, type TestApi } from '../support/api.ts';
import { freshDatabase, postgresReachable, type TestDatabase } from '../support/database.ts';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';

/**
 * Reservations over HTTP (issue 12), on the test's clock: made (quoted, the cap commitment taken, no money
 * moved), started by the sweep through the rental path, removed at ends_at, cancelled, failed. The races run
 * on PostgreSQL, where a second session can stand in the middle of a start.
 */
const MINUTE = 60_000;
const HOUR = 3_600_000;
const onPostgres = await postgresReachable();

let database: TestDatabase;
let world: RentalWorld;
beforeAll(async () => {
  database = await freshDatabase();
  world = await rentalWorld({}, { faulty: true, database });
});
afterAll(async () => {
  await world?.close();
  await database?.drop();
});

type Rated = Offer & { rate: number; perGpu: number };
const call = (...args: Parameters<RentalWorld['api']['call']>) => world.api.call(...args);
const later = (ms: number) => new Date(world.clock.now().getTime() + ms).toISOString();
const reserve = (token: string, body: Record<string, unknown>) =>
  call('POST', '/v1/reservations', { token, body: { name: 'booked', hours: 2, starts_at: later(10 * MINUTE), ...body } });
const reservation = async (token: string, id: string) => {
  const res = await call('GET', `/v1/reservations/${id}`, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};
const instance = async (token: string, id: string) => (await call('GET', `/v1/instances/${id}`, { token })).body;
const committed = async (token: string): Promise<number> => (await call('GET', '/v1/tokens/self', { token })).body.committed_cents;
const sweep = async () => {
  const res = await call('POST', '/v1/operator/sweep', { headers: OPERATOR });
  expect(res.status).toBe(200);
  return res.body;
};
/** Moves the clock to the reservation's start and runs a pass. */
const startOf = async (r: { starts_at: string }) => {
  world.clock.set(new Date(r.starts_at));
  return sweep();
};
const offerIdOf = (nodeId: string) => nodeId.slice('sandbox:'.length);
const perGpu = (o: Offer & { rate: number }) => Math.ceil(o.rate / o.gpuCount);
const usd = (cents: number) => (cents / 100).toFixed(2);

/** Offers no test has used yet (each test takes its own, so capacity never runs out between tests). */
const used = new Set<string>();
async function fresh(filter: (o: Rated) => boolean = () => true): Promise<Rated[]> {
  const offers = await world.offers((o) => o.rate >= 60 && o.rate <= 600);
  return offers.map((o) => ({ ...o, perGpu: perGpu(o) })).filter((o) => !used.has(o.id) && filter(o));
}
async function takeNode(filter?: (o: Rated) => boolean): Promise<Rated> {
  const [node] = await fresh(filter);
  if (!node) throw new Error('no offer left for this test');
  used.add(node.id);
  return node;
}
/** A GPU type and count with several offers at distinct per-GPU prices, cheapest first; all taken by the caller. */
async function takeGroup(size: number): Promise<Rated[]> {
  const groups = new Map<string, Rated[]>();
  for (const o of await fresh()) groups.set(`${o.gpuType}/${o.gpuCount}`, [...(groups.get(`${o.gpuType}/${o.gpuCount}`) ?? []), o]);
  for (const offers of groups.values()) {
    const distinct = offers.filter((o, i) => i === 0 || o.perGpu > offers[i - 1]!.perGpu);
    if (distinct.length < size || distinct.length !== offers.length) continue;
    for (const o of offers) used.add(o.id);
    return offers;
  }
  throw new Error(`no GPU type with ${size} offers at distinct prices left`);
}

describe('making a reservation', () => {
  it('quotes the node, holds quote x hours on the token chain and moves no money', async () => {
    const { token } = await world.fundedTenant(50);
    const node = await takeNode();
    const startsAt = later(30 * MINUTE);
    const res = await reserve(token, { node_id: node.id, starts_at: startsAt, hours: 3, name: 'training run' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^res_[a-z0-9]+$/),
      status: 'scheduled',
      starts_at: startsAt,
      hours: 3,
      ends_at: new Date(Date.parse(startsAt) + 3 * HOUR).toISOString(),
      node_id: node.id,
      search: null,
      instance_id: null,
      rate_cents_per_hour: node.rate,
      failure: null,
      created_at: world.clock.now().toISOString(),
    });
    expect(await committed(token)).toBe(3 * node.rate);
    expect(await world.balance(token)).toMatchObject({ balance_cents: 5_000, owed_cents: 0 });
    expect((await world.ledger(token)).map((e) => e.kind)).toEqual(['credit']);
    expect(await reservation(token, res.body.id)).toEqual(res.body);
    expect((await call('GET', '/v1/reservations', { token })).body).toEqual([res.body]);
  });

  it('quotes a search at its cheapest match now, as GET /v1/gpus answers it', async () => {
    const { token } = await world.fundedTenant(50);
    const [cheapest] = await takeGroup(2);
    const search = { gpu_type: cheapest!.gpuType, gpu_count: cheapest!.gpuCount, provider: 'sandbox' };
    const gpus = (await call('GET', `/v1/gpus?gpu_type=${encodeURIComponent(search.gpu_type)}&gpu_count=${search.gpu_count}&provider=sandbox&limit=1`, { token })).body;
    const res = await reserve(token, { search, hours: 4 });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ node_id: null, search, rate_cents_per_hour: gpus.nodes[0].price_per_hour_cents });
    expect(await committed(token)).toBe(4 * gpus.nodes[0].price_per_hour_cents);
  });

  it('refuses what cannot be booked, naming the field, and holds nothing (422, never 500)', async () => {
    const { token } = await world.fundedTenant(50);
    const node = await takeNode();
    const bodies: [Record<string, unknown>, string][] = [
      [{ node_id: node.id, starts_at: later(4 * MINUTE) }, 'starts_at'],
      [{ node_id: node.id, starts_at: later(91 * 24 * HOUR) }, 'starts_at'],
      [{ node_id: node.id, starts_at: '2000-01-01T00:00:00Z' }, 'starts_at'],
      [{ node_id: node.id, starts_at: 'tomorrow at noon' }, 'starts_at'],
      [{ node_id: node.id, hours: 0 }, 'hours'],
      [{ node_id: node.id, hours: 721 }, 'hours'],
      [{ node_id: node.id, hours: 1.5 }, 'hours'],
      [{ node_id: node.id, hours: '2' }, 'hours'],
      [{ node_id: node.id, hours: undefined }, 'hours'],
      [{ node_id: node.id, name: '  ' }, 'name'],
      [{ node_id: node.id, name: undefined }, 'name'],
      [{ node_id: node.id, search: { gpu_type: 'H100' } }, 'node_id'],
      [{}, 'node_id'],
      [{ search: { gpus: 2 } }, 'search'],
      [{ search: { gpu_count: 0 } }, 'search'],
      [{ search: 'H100' }, 'search'],
      [{ node_id: 'nimbus:1' }, 'node_id'],
      [{ node_id: node.id, template_id: 'tpl_unknown0' }, 'template_id'],
      [{ node_id: node.id, ssh_key_id: 'key_unknown0' }, 'ssh_key_id'],
      [{ node_id: node.id, template_id: 'not-an-id' }, 'template_id'],
      [{ node_id: node.id, max_price_per_gpu_hour: -1 }, 'max_price_per_gpu_hour'],
      [{ node_id: node.id, max_price_per_gpu_hour: 'cheap' }, 'max_price_per_gpu_hour'],
      [{ node_id: node.id, max_price_per_gpu_hour: usd(node.perGpu - 1) }, 'max_price_per_gpu_hour'],
      [{ node_id: node.id, gpus: 2 }, 'gpus'],
      [{ node_id: node.id, idempotency_key: '' }, 'idempotency_key'],
    ];
    for (const [body, field] of bodies) {
      const res = await reserve(token, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.detail, JSON.stringify(body)).toContain(field);
    }
    for (const raw of ['{"node_id": ', '[]', 'null', '"x"']) {
      const res = await call('POST', '/v1/reservations', { token, rawBody: raw });
      expect(res.status, raw).toBeGreaterThanOrEqual(400);
      expect(res.status, raw).toBeLessThan(500);
    }
    expect(await committed(token)).toBe(0);
    expect((await call('GET', '/v1/reservations', { token })).body).toEqual([]);
  });

  it('answers 409 when the node is gone or nothing matches the search now', async () => {
    const { token } = await world.fundedTenant(50);
    const node = await takeNode();
    await world.sandbox.cloud.withdrawOffer(offerIdOf(node.id));
    expect((await reserve(token, { node_id: node.id })).status).toBe(409);
    const none = await reserve(token, { search: { gpu_type: 'H100', min_vram_gb: 9999 } });
    expect(none.status).toBe(409);
    expect(none.body.detail).toMatch(/no node matches/);
    expect(await committed(token)).toBe(0);
  });

  it('replays a retry with the same idempotency key (held once) and refuses the key for another body', async () => {
    const { token } = await world.fundedTenant(50);
    const node = await takeNode();
    const body = { node_id: node.id, starts_at: later(HOUR), idempotency_key: 'book-1' };
    const [first, second] = await Promise.all([reserve(token, body), reserve(token, body)]);
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body.id).toBe(first.body.id);
    expect([first.headers.get('idempotent-replayed'), second.headers.get('idempotent-replayed')].sort()).toEqual(['true', null].sort());
    expect(await committed(token)).toBe(2 * node.rate);
    const other = await reserve(token, { ...body, hours: 3 });
    expect(other.status).toBe(409);
    expect(other.body.detail).toMatch(/idempotency_key/);
    expect(await committed(token)).toBe(2 * node.rate);
  });

  it('reading needs read, making and cancelling need rent', async () => {
    const { token } = await world.fundedTenant(50);
    const node = await takeNode();
    const made = await reserve(token, { node_id: node.id });
    const reader = (await call('POST', '/v1/tokens', { token, body: { scopes: ['read'] } })).body.token;
    const renter = (await call('POST', '/v1/tokens', { token, body: { scopes: ['rent'] } })).body.token;
    expect((await reserve(reader, { node_id: node.id })).status).toBe(403);
    expect((await call('DELETE', `/v1/reservations/${made.body.id}`, { token: reader })).status).toBe(403);
    for (const path of ['/v1/reservations', '/v1/reservations/due', `/v1/reservations/${made.body.id}`]) {
      expect((await call('GET', path, { token: reader })).status, path).toBe(200);
      expect((await call('GET', path, { token: renter })).status, path).toBe(403);
    }
    expect((await call('DELETE', `/v1/reservations/${made.body.id}`, { token: renter })).status).toBe(200);
  });

  it("answers 404 for another tenant's ids and never lists them", async () => {
    const owner = await world.fundedTenant(50);
    const other = await world.fundedTenant(50);
    const made = await reserve(owner.token, { node_id: (await takeNode()).id });
    expect((await call('GET', `/v1/reservations/${made.body.id}`, { token: other.token })).status).toBe(404);
    expect((await call('DELETE', `/v1/reservations/${made.body.id}`, { token: other.token })).status).toBe(404);
    expect((await call('GET', '/v1/reservations/res_unknown0', { token: owner.token })).status).toBe(404);
    expect((await call('GET', '/v1/reservations', { token: other.token })).body).toEqual([]);
    expect((await call('GET', '/v1/reservations/due', { token: other.token })).body).toEqual([]);
    expect((await reservation(owner.token, made.body.id)).status).toBe('scheduled');
  });

  it('/due lists the scheduled reservations starting within the next hour, soonest first', async () => {
    const { token } = await world.fundedTenant(50);
    const soon = await reserve(token, { node_id: (await takeNode()).id, starts_at: later(50 * MINUTE) });
    const sooner = await reserve(token, { node_id: (await takeNode()).id, starts_at: later(20 * MINUTE) });
    const edge = await reserve(token, { node_id: (await takeNode()).id, starts_at: later(60 * MINUTE) });
    await reserve(token, { node_id: (await takeNode()).id, starts_at: later(61 * MINUTE) });
    const cancelled = await reserve(token, { node_id: (await takeNode()).id, starts_at: later(30 * MINUTE) });
    expect((await call('DELETE', `/v1/reservations/${cancelled.body.id}`, { token })).status).toBe(200);
    const due = (await call('GET', '/v1/reservations/due', { token })).body;
    expect(due.map((r: { id: string }) => r.id)).toEqual([sooner.body.id, soon.body.id, edge.body.id]);
    for (const r of [soon, sooner, edge, cancelled]) await call('DELETE', `/v1/reservations/${r.body.id}`, { token });
  });
});
