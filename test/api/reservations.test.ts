import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Offer } from '../../core/market/offer.ts';
import { ReservationStarter } from '../../core/reservations/reservation-starter.ts';
import { startApi, type TestApi } from '../support/api.ts';
import { freshDatabase, postgresReachable, type TestDatabase } from '../support/database.ts';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';
import { sshKeygen } from '../support/ssh-keys.ts';

/**
 * Reservations over HTTP, on the test's clock: made (quoted, the cap commitment taken, no money
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
async function fresh(filter: (o: Rated) => boolean = (o) => o.rate >= 30 && o.rate <= 600): Promise<Rated[]> {
  const offers = await world.offers();
  return offers.map((o) => ({ ...o, perGpu: perGpu(o) })).filter((o) => !used.has(o.id) && filter(o));
}
async function takeNode(filter: (o: Rated) => boolean = () => true): Promise<Rated> {
  const [node] = await fresh((o) => o.rate >= 30 && o.rate <= 600 && filter(o));
  if (!node) throw new Error('no offer left for this test');
  used.add(node.id);
  return node;
}
/**
 * Every offer of a GPU type and count (at least `size`, at distinct per-GPU prices, none used yet, the cheapest
 * affordable), cheapest first; all taken by the caller.
 */
async function takeGroup(size: number): Promise<Rated[]> {
  const groups = new Map<string, Rated[]>();
  for (const o of await world.offers()) groups.set(`${o.gpuType}/${o.gpuCount}`, [...(groups.get(`${o.gpuType}/${o.gpuCount}`) ?? []), { ...o, perGpu: perGpu(o) }]);
  for (const offers of groups.values()) {
    const distinct = offers.filter((o, i) => i === 0 || o.perGpu > offers[i - 1]!.perGpu);
    if (distinct.length < size || distinct.length !== offers.length || offers[0]!.rate > 600 || offers.some((o) => used.has(o.id))) continue;
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
    // a renter that is not root cancels only what its own subtree made (MADE_BY_ANOTHER), then its own
    const others = await call('DELETE', `/v1/reservations/${made.body.id}`, { token: renter });
    expect(others.status).toBe(403);
    expect(others.body.detail).toMatch(/made by another credential/);
    expect((await reservation(token, made.body.id)).status).toBe('scheduled');
    const own = await reserve(renter, { node_id: (await takeNode()).id });
    expect((await call('DELETE', `/v1/reservations/${own.body.id}`, { token: renter })).status).toBe(200);
    expect((await call('DELETE', `/v1/reservations/${made.body.id}`, { token })).status).toBe(200);
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

/** The ledger entries of one rental, oldest first. */
const entriesOf = async (token: string, instanceId: string) =>
  ((await call('GET', '/v1/billing/ledger', { token })).body as { reference: string | null; description: string | null; amount_cents: number; kind: string }[])
    .filter((e) => e.reference === instanceId)
    .reverse();

describe('the start, by the sweep', () => {
  it('rents the node at starts_at as the token that reserved it, and removes the machine at ends_at', async () => {
    const { token } = await world.fundedTenant(50);
    const node = await takeNode();
    const made = (await reserve(token, { node_id: node.id, hours: 2 })).body;
    world.clock.advance(5 * MINUTE);
    await sweep();
    expect(await reservation(token, made.id)).toMatchObject({ status: 'scheduled', instance_id: null });

    expect((await startOf(made)).reservations_started).toBeGreaterThanOrEqual(1);
    const started = await reservation(token, made.id);
    expect(started).toMatchObject({ status: 'active', instance_id: expect.stringMatching(/^ins_/), rate_cents_per_hour: node.rate, failure: null });
    const rental = await instance(token, started.instance_id);
    expect(rental).toMatchObject({ node_id: node.id, idempotency_key: made.id, name: 'booked', rate_cents_per_hour: node.rate, charged_cents: node.rate, window_ends_at: made.ends_at });
    // the reservation's commitment became the rental's: counted once
    expect(await committed(token)).toBe(2 * node.rate);
    expect((await world.balance(token)).balance_cents).toBe(5_000 - node.rate);
    expect((await call('GET', '/v1/reservations/due', { token })).body).toEqual([]);

    world.clock.advance(30_000);
    expect((await instance(token, rental.id)).status).toBe('running');
    world.clock.set(new Date(Date.parse(made.starts_at) + HOUR));
    expect((await sweep()).blocks_paid).toBeGreaterThanOrEqual(1);
    world.clock.set(new Date(made.ends_at));
    await sweep();
    expect(await instance(token, rental.id)).toMatchObject({ status: 'terminated', terminated_at: made.ends_at, charged_cents: 2 * node.rate });
    expect(await reservation(token, made.id)).toMatchObject({ status: 'completed', instance_id: rental.id });
    expect((await world.sandbox.cloud.listMachines()).filter((m) => m.label === rental.id && m.status !== 'terminated')).toHaveLength(0);
    const entries = await entriesOf(token, rental.id);
    expect(entries.map((e) => e.description)).toEqual([`first hour (reservation ${made.id})`, `hour block (reservation ${made.id})`]);
    expect(entries.reduce((sum, e) => sum + e.amount_cents, 0)).toBe(-2 * node.rate);
    expect((await call('DELETE', `/v1/reservations/${made.id}`, { token })).status).toBe(409);
  });

  it('one whose rental is terminated by hand is completed', async () => {
    const { token } = await world.fundedTenant(50);
    const made = (await reserve(token, { node_id: (await takeNode()).id })).body;
    await startOf(made);
    const { instance_id } = await reservation(token, made.id);
    expect((await call('POST', `/v1/instances/${instance_id}/terminate`, { token })).status).toBe(200);
    expect(await reservation(token, made.id)).toMatchObject({ status: 'completed' });
  });

  it("sets the machine up from the reservation's template and SSH key; a template deleted meanwhile fails it", async () => {
    const { token } = await world.fundedTenant(50);
    const saved = async (name: string) => (await call('POST', '/v1/ssh-keys', { token, body: { name, public_key: sshKeygen('ed25519').publicLine } })).body;
    const [templateKey, ownKey] = [await saved('template'), await saved('own')];
    const template = async () =>
      (await call('POST', '/v1/templates', { token, body: { name: 'notebook', image: 'jupyter/base-notebook:latest', ssh_key_ids: [templateKey.id], env: { MODE: 'booked' }, termination_hours: 10 } })).body;
    const [kept, deleted] = [await template(), await template()];
    const made = (await reserve(token, { node_id: (await takeNode()).id, template_id: kept.id, ssh_key_id: ownKey.id })).body;
    const doomed = (await reserve(token, { node_id: (await takeNode()).id, template_id: deleted.id })).body;
    expect((await call('DELETE', `/v1/templates/${deleted.id}`, { token })).status).toBe(204);
    await startOf(made);
    const { instance_id } = await reservation(token, made.id);
    // the window is the reservation's, not the template's 10 hours
    expect(await instance(token, instance_id)).toMatchObject({ template_id: kept.id, ssh_key_id: ownKey.id, image: 'jupyter/base-notebook:latest', window_ends_at: made.ends_at });
    const machine = (await world.sandbox.cloud.listMachines()).find((m) => m.label === instance_id)!;
    expect(machine.options).toMatchObject({ sshPublicKeys: [ownKey.public_key], env: { MODE: 'booked' } });
    expect(await reservation(token, doomed.id)).toMatchObject({ status: 'failed', instance_id: null, failure: expect.stringContaining(deleted.id) });
    expect(await committed(token)).toBe(2 * (await reservation(token, made.id)).rate_cents_per_hour);
  });

  it('fails while funds are short: nothing charged, the commitment released', async () => {
    const node = await takeNode();
    const { token } = await world.fundedTenant(usd(node.rate - 1));
    const made = (await reserve(token, { node_id: node.id })).body;
    expect(await committed(token)).toBe(2 * node.rate);
    expect((await startOf(made)).reservations_failed).toBeGreaterThanOrEqual(1);
    const failed = await reservation(token, made.id);
    expect(failed).toMatchObject({ status: 'failed', instance_id: null });
    expect(failed.failure).toMatch(/nothing charged.*first hour costs/);
    expect(await committed(token)).toBe(0);
    expect((await world.balance(token)).balance_cents).toBe(node.rate - 1);
    expect((await world.ledger(token)).map((e) => e.kind)).toEqual(['credit']);
    expect((await call('GET', '/v1/instances', { token })).body).toEqual([]);
  });

  it('fails on a paused account, and is cancelled when its token is revoked, releasing the commitment along the chain', async () => {
    const paused = await world.fundedTenant(50);
    const onHold = (await reserve(paused.token, { node_id: (await takeNode()).id })).body;
    expect((await call('POST', '/v1/billing/stop', { token: paused.token, body: {} })).status).toBe(200);

    const root = await world.fundedTenant(50);
    const agent = (await call('POST', '/v1/tokens', { token: root.token, body: { scopes: ['read', 'rent'], spend_limit_usd: 100 } })).body;
    const node = await takeNode();
    const revoked = (await reserve(agent.token, { node_id: node.id })).body;
    const tokens = async () => new Map<string, number>((await call('GET', '/v1/tokens', { token: root.token })).body.map((t: { id: string; committed_cents: number }) => [t.id, t.committed_cents]));
    expect(await tokens()).toEqual(new Map([[root.tokenId, 2 * node.rate], [agent.id, 2 * node.rate]]));
    expect((await call('DELETE', `/v1/tokens/${agent.id}`, { token: root.token })).status).toBe(204);

    await startOf(revoked.starts_at < onHold.starts_at ? onHold : revoked);
    const first = await reservation(paused.token, onHold.id);
    expect(first).toMatchObject({ status: 'failed', instance_id: null });
    expect(first.failure).toMatch(/paused/);
    expect(await committed(paused.token)).toBe(0);
    // ending its credential cancelled it at once, its commitment given back
    const second = await reservation(root.token, revoked.id);
    expect(second).toMatchObject({ status: 'cancelled', instance_id: null });
    expect(second.failure).toMatch(/ended/);
    expect(await tokens()).toEqual(new Map([[root.tokenId, 0], [agent.id, 0]]));
    for (const t of [paused.token, root.token]) expect((await call('GET', '/v1/instances', { token: t })).body).toEqual([]);
  });

  it('is cancelled when its token merely expires, as a revocation does: at the next pass, or at its start, its commitment given back along the chain', async () => {
    const root = await world.fundedTenant(50);
    const issue = async (body: Record<string, unknown>) => {
      const made = await call('POST', '/v1/tokens', { token: root.token, body: { scopes: ['read', 'rent'], spend_limit_usd: 100, ...body } });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      return made.body as { id: string; token: string };
    };
    // one expires before its reservation starts, and a pass runs in between; the other expires and its start comes first
    const early = await issue({ expires_at: later(5 * MINUTE) });
    const late = await issue({ expires_at: later(20 * MINUTE) });
    const [earlyNode, lateNode] = [await takeNode(), await takeNode()];
    const first = (await reserve(early.token, { node_id: earlyNode.id, starts_at: later(60 * MINUTE) })).body;
    const second = (await reserve(late.token, { node_id: lateNode.id, starts_at: later(30 * MINUTE) })).body;
    const tokens = async () => new Map<string, number>((await call('GET', '/v1/tokens', { token: root.token })).body.map((t: { id: string; committed_cents: number }) => [t.id, t.committed_cents]));
    expect((await tokens()).get(root.tokenId)).toBe(2 * earlyNode.rate + 2 * lateNode.rate);

    world.clock.set(new Date(world.clock.now().getTime() + 10 * MINUTE));
    await sweep();
    const cancelled = await reservation(root.token, first.id);
    expect(cancelled).toMatchObject({ status: 'cancelled', instance_id: null });
    expect(cancelled.failure).toMatch(/ended/);
    expect(await tokens()).toEqual(new Map([[root.tokenId, 2 * lateNode.rate], [early.id, 0], [late.id, 2 * lateNode.rate]]));

    // the second's token expires and a runner that does not hold the sweep's lock (the start steps alone) takes its
    // start before any pass looked at it: the start cancels it, nothing rented
    world.clock.set(new Date(second.starts_at));
    const starter = new ReservationStarter({
      storage: world.api.plane.storage,
      clock: world.api.plane.clock,
      rentals: world.api.plane.services.rentals,
      market: world.api.plane.services.market,
      providers: world.api.plane.providers,
    });
    expect(await starter.startDue()).toMatchObject({ started: 0, failed: 0 });
    const atStart = await reservation(root.token, second.id);
    expect(atStart).toMatchObject({ status: 'cancelled', instance_id: null });
    expect(atStart.failure).toMatch(/ended/);
    expect(await tokens()).toEqual(new Map([[root.tokenId, 0], [early.id, 0], [late.id, 0]]));
    expect((await call('GET', '/v1/instances', { token: root.token })).body).toEqual([]);
    expect((await world.balance(root.token)).balance_cents).toBe(5_000);
  });

  it('fails when the window passed before a sweep could start it', async () => {
    const { token } = await world.fundedTenant(50);
    const made = (await reserve(token, { node_id: (await takeNode()).id, hours: 1 })).body;
    world.clock.set(new Date(made.ends_at));
    await sweep();
    expect(await reservation(token, made.id)).toMatchObject({ status: 'failed', failure: expect.stringMatching(/window ended/) });
    expect(await committed(token)).toBe(0);
    expect((await world.balance(token)).balance_cents).toBe(5_000);
  });

  it('a provider that refuses the machine fails it: the first hour refunded, both entries naming the reservation', async () => {
    const { token } = await world.fundedTenant(50);
    const made = (await reserve(token, { node_id: (await takeNode()).id })).body;
    world.faults!.failNextCreates(1, 'rejected');
    await startOf(made);
    const failed = await reservation(token, made.id);
    expect(failed).toMatchObject({ status: 'failed', instance_id: expect.stringMatching(/^ins_/), failure: expect.stringMatching(/refused/) });
    expect(await instance(token, failed.instance_id)).toMatchObject({ status: 'failed', charged_cents: 0 });
    expect((await world.balance(token)).balance_cents).toBe(5_000);
    expect(await committed(token)).toBe(0);
    expect((await entriesOf(token, failed.instance_id)).map((e) => e.description)).toEqual([`first hour (reservation ${made.id})`, `unused time refunded (reservation ${made.id})`]);
  });

  it('a machine that never comes up fails at the provisioning deadline, costing nothing', async () => {
    const { token } = await world.fundedTenant(50);
    const made = (await reserve(token, { node_id: (await takeNode()).id })).body;
    await world.sandbox.cloud.mishapNextProvisions(1, 'stuck');
    await startOf(made);
    expect((await reservation(token, made.id)).status).toBe('active');
    world.clock.advance(16 * MINUTE);
    await sweep();
    expect(await reservation(token, made.id)).toMatchObject({ status: 'failed', failure: expect.any(String) });
    expect((await world.balance(token)).balance_cents).toBe(5_000);
    expect(await committed(token)).toBe(0);
  });

  it('a provider that cannot be reached is retried next pass, not failed', async () => {
    const { token } = await world.fundedTenant(50);
    const node = await takeNode();
    const made = (await reserve(token, { node_id: node.id })).body;
    world.faults!.setOutage(true);
    try {
      const report = await startOf(made);
      expect(report.errors.join(' ')).toMatch(new RegExp(`reservation ${made.id}: .*retried next pass`));
      expect(await reservation(token, made.id)).toMatchObject({ status: 'scheduled', instance_id: null });
      expect(await committed(token)).toBe(2 * node.rate);
    } finally {
      world.faults!.setOutage(false);
    }
    world.clock.advance(MINUTE);
    await sweep();
    const started = await reservation(token, made.id);
    expect(started.status).toBe('active');
    // the window still ends at ends_at, though the start came a minute late
    expect((await instance(token, started.instance_id)).window_ends_at).toBe(made.ends_at);
    expect(await committed(token)).toBe(2 * node.rate);
  });
});

describe('a node that is gone, and a search, at the start', () => {
  it('a gone node rents the next cheapest of its gpu type and count within max_price_per_gpu_hour', async () => {
    const { token } = await world.fundedTenant(50);
    const [first, second] = await takeGroup(2);
    const made = (await reserve(token, { node_id: first!.id, max_price_per_gpu_hour: usd(second!.perGpu) })).body;
    expect(made.rate_cents_per_hour).toBe(first!.rate);
    await world.sandbox.cloud.withdrawOffer(offerIdOf(first!.id));
    await startOf(made);
    const started = await reservation(token, made.id);
    expect(started).toMatchObject({ status: 'active', rate_cents_per_hour: second!.rate });
    expect(await instance(token, started.instance_id)).toMatchObject({ node_id: second!.id, gpu_type: first!.gpuType, gpu_count: first!.gpuCount, charged_cents: second!.rate });
  });

  it('without a tolerance it never rents above the quote: it fails, the commitment released', async () => {
    const { token } = await world.fundedTenant(50);
    const [first] = await takeGroup(2);
    const made = (await reserve(token, { node_id: first!.id })).body;
    await world.sandbox.cloud.withdrawOffer(offerIdOf(first!.id));
    await startOf(made);
    const failed = await reservation(token, made.id);
    expect(failed).toMatchObject({ status: 'failed', instance_id: null });
    expect(failed.failure).toMatch(new RegExp(`at or under ${first!.perGpu} cents per GPU-hour`));
    expect(await committed(token)).toBe(0);
    expect((await world.balance(token)).balance_cents).toBe(5_000);
  });

  it('a node whose price rose over the ceiling gives way to one within it', async () => {
    const { token } = await world.fundedTenant(50);
    const [first, second] = await takeGroup(2);
    const made = (await reserve(token, { node_id: first!.id, max_price_per_gpu_hour: usd(second!.perGpu) })).body;
    await world.sandbox.cloud.repriceOffer(offerIdOf(first!.id), usd((second!.perGpu + 5) * first!.gpuCount));
    await startOf(made);
    const started = await reservation(token, made.id);
    expect((await instance(token, started.instance_id)).node_id).toBe(second!.id);
  });

  it('a search rents its cheapest match at that moment, never above the quote', async () => {
    const { token } = await world.fundedTenant(50);
    const group = await takeGroup(3);
    const [cheapest, , dearest] = group;
    const search = { gpu_type: cheapest!.gpuType, gpu_count: cheapest!.gpuCount, provider: 'sandbox' };
    const made = (await reserve(token, { search })).body;
    expect(made.rate_cents_per_hour).toBe(cheapest!.rate);
    // meanwhile the dearest becomes the cheapest, and the quoted one goes
    await world.sandbox.cloud.repriceOffer(offerIdOf(dearest!.id), usd(cheapest!.rate - cheapest!.gpuCount));
    await world.sandbox.cloud.withdrawOffer(offerIdOf(cheapest!.id));
    await startOf(made);
    const started = await reservation(token, made.id);
    expect(started).toMatchObject({ status: 'active', rate_cents_per_hour: cheapest!.rate - cheapest!.gpuCount });
    expect((await instance(token, started.instance_id)).node_id).toBe(dearest!.id);
    // the rental holds quote x hours at its own (lower) rate
    expect(await committed(token)).toBe(2 * (cheapest!.rate - cheapest!.gpuCount));
  });
});

describe('a search with nothing left at the start', () => {
  it('fails saying so, nothing charged, the commitment released', async () => {
    const { token } = await world.fundedTenant(50);
    const group = await takeGroup(2);
    const made = (await reserve(token, { search: { gpu_type: group[0]!.gpuType, gpu_count: group[0]!.gpuCount } })).body;
    for (const offer of group) await world.sandbox.cloud.withdrawOffer(offerIdOf(offer.id));
    await startOf(made);
    expect(await reservation(token, made.id)).toMatchObject({ status: 'failed', instance_id: null, failure: expect.stringMatching(/no node matches its search at or under/) });
    expect(await committed(token)).toBe(0);
    expect((await world.balance(token)).balance_cents).toBe(5_000);
  });
});

describe('cancelling', () => {
  it('before the start: cancelled, free, the commitment released, and it never starts', async () => {
    const { token } = await world.fundedTenant(50);
    const made = (await reserve(token, { node_id: (await takeNode()).id })).body;
    const cancelled = await call('DELETE', `/v1/reservations/${made.id}`, { token });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ id: made.id, status: 'cancelled', instance_id: null });
    expect(await committed(token)).toBe(0);
    await startOf(made);
    expect(await reservation(token, made.id)).toMatchObject({ status: 'cancelled', instance_id: null });
    expect((await call('GET', '/v1/instances', { token })).body).toEqual([]);
    expect(await world.balance(token)).toMatchObject({ balance_cents: 5_000 });
    expect((await call('DELETE', `/v1/reservations/${made.id}`, { token })).status).toBe(409);
  });

  it('during the window: cancelled, the machine terminated with the usual refund', async () => {
    const { token } = await world.fundedTenant(50);
    const node = await takeNode();
    const made = (await reserve(token, { node_id: node.id, hours: 3 })).body;
    await startOf(made);
    const { instance_id } = await reservation(token, made.id);
    world.clock.advance(30_000);
    expect((await instance(token, instance_id)).status).toBe('running');
    world.clock.set(new Date(Date.parse(made.starts_at) + HOUR));
    await sweep();
    world.clock.set(new Date(Date.parse(made.starts_at) + 90 * MINUTE));
    const cancelled = await call('DELETE', `/v1/reservations/${made.id}`, { token });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', instance_id });
    const cost = Math.ceil((node.rate * 90) / 60);
    expect(await instance(token, instance_id)).toMatchObject({ status: 'terminated', charged_cents: cost });
    expect((await entriesOf(token, instance_id)).map((e) => e.description)).toEqual([
      `first hour (reservation ${made.id})`,
      `hour block (reservation ${made.id})`,
      `unused time refunded (reservation ${made.id})`,
    ]);
    expect(await committed(token)).toBe(cost);
    expect((await world.balance(token)).balance_cents).toBe(5_000 - cost);
    expect((await call('DELETE', `/v1/reservations/${made.id}`, { token })).status).toBe(409);
    expect((await reservation(token, made.id)).status).toBe('cancelled');
  });
});

describe('spend caps', () => {
  it('a capped token cannot reserve beyond its cap, and its reservations and rentals together stay within it', async () => {
    const root = await world.fundedTenant(500);
    const cheaper = await takeNode();
    const node = await takeNode((o) => o.rate >= cheaper.rate);
    const cap = 5 * node.rate;
    const agent = (await call('POST', '/v1/tokens', { token: root.token, body: { scopes: ['read', 'rent'], spend_limit_usd: usd(cap), max_rental_hours: 4 } })).body;
    expect((await reserve(agent.token, { node_id: node.id, hours: 5 })).status).toBe(422);
    expect((await reserve(agent.token, { node_id: node.id, hours: undefined })).status).toBe(422);
    expect((await reserve(agent.token, { node_id: node.id, hours: 4 })).status).toBe(201);
    const over = await reserve(agent.token, { node_id: node.id, hours: 2 });
    expect(over.status).toBe(402);
    expect(over.body.detail).toMatch(/cap leaves/);
    expect(await committed(agent.token)).toBe(4 * node.rate);
    const dearer = await takeNode((o) => o.rate > node.rate);
    expect((await world.rent(agent.token, { node_id: dearer.id, termination_hours: 1 })).status).toBe(402);
    expect((await world.rent(agent.token, { node_id: cheaper.id, termination_hours: 1 })).status).toBe(201);
    expect(await committed(agent.token)).toBe(4 * node.rate + cheaper.rate);
    expect(await committed(agent.token)).toBeLessThanOrEqual(cap);
  });

  it('whatever the order of reserving, renting, cancelling and starting, the commitment never exceeds the cap', async () => {
    const root = await world.fundedTenant(2_000);
    const nodes = [await takeNode(), await takeNode(), await takeNode()];
    const cap = 9 * nodes[0]!.rate;
    const agent = (await call('POST', '/v1/tokens', { token: root.token, body: { scopes: ['read', 'rent'], spend_limit_usd: usd(cap) } })).body;
    let seed = 12;
    const random = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648), seed % n);
    const scheduled: { id: string; cents: number }[] = [];
    let held = 0;
    for (let step = 0; step < 30; step++) {
      const node = nodes[random(nodes.length)]!;
      const hours = 1 + random(4);
      const action = random(4);
      if (action === 0) {
        const res = await reserve(agent.token, { node_id: node.id, hours, starts_at: later((10 + random(50)) * MINUTE) });
        expect(res.status, JSON.stringify(res.body)).toBe(held + node.rate * hours > cap ? 402 : 201);
        if (res.status === 201) scheduled.push({ id: res.body.id, cents: node.rate * hours });
        if (res.status === 201) held += node.rate * hours;
      } else if (action === 1) {
        const res = await world.rent(agent.token, { node_id: node.id, termination_hours: hours });
        if (res.status !== 409) expect(res.status, JSON.stringify(res.body)).toBe(held + node.rate * hours > cap ? 402 : 201);
        if (res.status === 201) held += node.rate * hours;
      } else if (action === 2 && scheduled.length > 0) {
        const [gone] = scheduled.splice(random(scheduled.length), 1);
        const res = await call('DELETE', `/v1/reservations/${gone!.id}`, { token: agent.token });
        if (res.status === 200 && res.body.instance_id === null) held -= gone!.cents;
      } else {
        world.clock.advance((5 + random(60)) * MINUTE);
        await sweep();
        scheduled.splice(0, scheduled.length, ...(await call('GET', '/v1/reservations/due', { token: agent.token })).body.map((r: { id: string; rate_cents_per_hour: number; hours: number }) => ({ id: r.id, cents: r.rate_cents_per_hour * r.hours })));
      }
      const now = await committed(agent.token);
      if (action !== 3) expect(now, `step ${step}`).toBe(held);
      held = now;
      expect(now, `step ${step}`).toBeLessThanOrEqual(cap);
    }
  });
});

describe.runIf(onPostgres)('starts racing each other and a cancel (PostgreSQL)', () => {
  let replica: TestApi;
  let admin: pg.Client;
  beforeAll(async () => {
    replica = await startApi({ providers: [{ name: 'sandbox', config: {} }] }, { clock: world.clock, database: { target: database.target, drop: async () => undefined } });
    admin = new pg.Client({ connectionString: (database.target as { url: string }).url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await replica?.close();
  });

  /** A starter of its own over a control plane's parts: the sweep's step without the sweep's lock. */
  const starterOf = (api: TestApi) =>
    new ReservationStarter({
      storage: api.plane.storage,
      clock: api.plane.clock,
      rentals: api.plane.services.rentals,
      market: api.plane.services.market,
      providers: api.plane.providers,
    });
  const lockWaiters = async () => (await admin.query(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`)).rows[0].n as number;
  async function waitForLockWaiters(count: number) {
    for (let i = 0; i < 500; i++) {
      if ((await lockWaiters()) >= count) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`fewer than ${count} sessions waited for a lock`);
  }
  /** Another session holds the tenant's account row until `release`. */
  async function holdAccount(tenantId: string) {
    const client = new pg.Client({ connectionString: (database.target as { url: string }).url });
    await client.connect();
    await client.query('begin');
    await client.query('select tenant_id from accounts where tenant_id = $1 for update', [tenantId]);
    return async () => {
      await client.query('commit');
      await client.end();
    };
  }
  const rentalsOf = async (reservationId: string) =>
    (await admin.query(`select id from instances where idempotency_key = $1`, [reservationId])).rows.map((row) => row.id as string);

  it('two sweeps racing (and two bare starters on two replicas) start it once', async () => {
    const { token } = await world.fundedTenant(50);
    const node = await takeNode();
    const made = (await reserve(token, { node_id: node.id })).body;
    world.clock.set(new Date(made.starts_at));
    const reports = await Promise.all([
      sweep(),
      replica.call('POST', '/v1/operator/sweep', { headers: OPERATOR }).then((res) => res.body),
      starterOf(world.api).startDue(),
      starterOf(replica).startDue(),
    ]);
    expect(reports.flatMap((r) => r.errors).join(' ')).not.toContain(made.id);
    const rentals = await rentalsOf(made.id);
    expect(rentals).toHaveLength(1);
    expect((await reservation(token, made.id)).instance_id).toBe(rentals[0]);
    expect((await entriesOf(token, rentals[0]!)).filter((e) => e.kind === 'rental_hour')).toHaveLength(1);
    expect((await world.sandbox.cloud.listMachines()).filter((m) => m.label === rentals[0])).toHaveLength(1);
    expect(await committed(token)).toBe(2 * node.rate);
  });

  it('a start taken up again while the first is still renting makes one rental', async () => {
    const { token, tenantId } = await world.fundedTenant(50);
    const node = await takeNode();
    const made = (await reserve(token, { node_id: node.id })).body;
    world.clock.set(new Date(made.starts_at));
    const release = await holdAccount(tenantId);
    const first = starterOf(world.api).startDue();
    await waitForLockWaiters(1);
    // the first start looks dead: its claim is old, so another starter takes the reservation up too
    await admin.query(`update reservations set claimed_at = claimed_at - interval '11 minutes' where id = $1`, [made.id]);
    const second = starterOf(replica).startDue();
    await waitForLockWaiters(2);
    await release();
    const [a, b] = await Promise.all([first, second]);
    expect([...a.errors, ...b.errors]).toEqual([]);
    const rentals = await rentalsOf(made.id);
    expect(rentals).toHaveLength(1);
    expect(await reservation(token, made.id)).toMatchObject({ status: 'active', instance_id: rentals[0] });
    expect((await world.balance(token)).balance_cents).toBe(5_000 - node.rate);
    expect(await committed(token)).toBe(2 * node.rate);
  });

  it('a cancel that lands while the start waits for the account wins: it never starts, nothing charged', async () => {
    const { token, tenantId } = await world.fundedTenant(50);
    const made = (await reserve(token, { node_id: (await takeNode()).id })).body;
    world.clock.set(new Date(made.starts_at));
    const release = await holdAccount(tenantId);
    const cancel = call('DELETE', `/v1/reservations/${made.id}`, { token });
    await waitForLockWaiters(1);
    const start = starterOf(world.api).startDue();
    await waitForLockWaiters(2);
    await release();
    expect((await cancel).status).toBe(200);
    // the start reached the account lock (it had claimed the reservation) and found it cancelled there
    expect((await start).errors.join(' ')).not.toContain(made.id);
    expect(await reservation(token, made.id)).toMatchObject({ status: 'cancelled', instance_id: null });
    expect(await rentalsOf(made.id)).toEqual([]);
    expect((await world.balance(token)).balance_cents).toBe(5_000);
    expect(await committed(token)).toBe(0);
  });
});
