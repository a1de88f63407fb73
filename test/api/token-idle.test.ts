import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';

/**
 * The dead-man switch on tokens over HTTP, on the test's clock: a token with idle_timeout_minutes whose agent goes
 * silent has its machines terminated at the first sweep after its deadline, billed to that deadline; one that keeps
 * sending heartbeats (or whose children do) is left alone for days.
 */
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

let world: RentalWorld;
let hooks: { server: Server; url: string; received: { type: string; data: any }[] };
beforeAll(async () => {
  world = await rentalWorld({ secretsKey: randomBytes(32), webhooks: { allowHttp: true, delivery: false } }, { sandbox: { spotPreemptionsPerHour: 0 } });
  const received: { type: string; data: any }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      received.push({ type: body.type, data: body.data });
      res.writeHead(204).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  hooks = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received };
});
afterAll(async () => {
  hooks?.server.closeAllConnections();
  await new Promise((resolve) => hooks?.server.close(resolve));
  await world?.close();
});

const call = (...args: Parameters<RentalWorld['api']['call']>) => world.api.call(...args);
const sweep = async () => {
  const res = await call('POST', '/v1/operator/sweep', { headers: OPERATOR });
  expect(res.status).toBe(200);
  expect(res.body.errors, JSON.stringify(res.body.errors)).toEqual([]);
  return res.body;
};
const issue = (token: string, body: Record<string, unknown>) => call('POST', '/v1/tokens', { token, body: { scopes: ['read', 'rent', 'manage'], ...body } });
const heartbeat = (token: string) => call('POST', '/v1/tokens/self/heartbeat', { token });
const self = async (token: string) => (await call('GET', '/v1/tokens/self', { token })).body;
const instance = async (token: string, id: string) => (await call('GET', `/v1/instances/${id}`, { token })).body;
const cost = (rate: number, minutes: number) => Math.ceil((rate * Math.max(60, minutes)) / 60);
const at = (ms: number) => new Date(ms).toISOString();
const used = new Set<string>();
async function node(filter: (o: { rate: number; spotPriceUsdPerHour?: string | null }) => boolean = () => true) {
  const found = (await world.offers((o) => o.rate >= 60 && o.rate <= 400 && !used.has(o.id) && filter(o)))[0]!;
  used.add(found.id);
  return found;
}

describe('idle_timeout_minutes on tokens', () => {
  it('is shown with its deadline, inherited by children, and never longer (or absent) under a parent with one', async () => {
    const { token } = await world.fundedTenant(1);
    const now = world.clock.now().getTime();
    const agent = await issue(token, { idle_timeout_minutes: 30 });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);
    expect(agent.body).toMatchObject({ idle_timeout_minutes: 30, idle_deadline_at: at(now + 30 * MINUTE) });
    expect(await self(agent.body.token)).toMatchObject({ idle_timeout_minutes: 30, idle_deadline_at: at(now + 30 * MINUTE) });
    const plain = await issue(token, {});
    expect(plain.body).toMatchObject({ idle_timeout_minutes: null, idle_deadline_at: null });

    const inherited = await issue(agent.body.token, {});
    expect(inherited.body.idle_timeout_minutes).toBe(30);
    expect((await issue(agent.body.token, { idle_timeout_minutes: 10 })).body.idle_timeout_minutes).toBe(10);
    for (const refused of [31, null]) {
      const res = await issue(agent.body.token, { idle_timeout_minutes: refused });
      expect(res.status).toBe(422);
      expect(res.body.detail).toMatch(/idle_timeout_minutes|idle minutes/);
    }
    for (const bad of [4, 1441, 7.5, '30']) expect((await issue(token, { idle_timeout_minutes: bad })).status).toBe(422);
    const listed = (await call('GET', '/v1/tokens', { token })).body as any[];
    expect(listed.find((t) => t.id === agent.body.id)).toMatchObject({ idle_timeout_minutes: 30, idle_deadline_at: at(now + 30 * MINUTE) });
  });

  it('moves the deadline on activity at most once a minute, and answers the heartbeat with it', async () => {
    const { token } = await world.fundedTenant(1);
    const agent = (await issue(token, { idle_timeout_minutes: 5 })).body;
    const start = world.clock.now().getTime();
    world.clock.advance(30_000);
    // within the minute after the last write (the issue), nothing is written
    expect((await heartbeat(agent.token)).body).toEqual({ idle_timeout_minutes: 5, idle_deadline_at: at(start + 5 * MINUTE) });
    world.clock.advance(40_000);
    const beat = await heartbeat(agent.token);
    expect(beat.status).toBe(200);
    expect(beat.body.idle_deadline_at).toBe(at(start + 70_000 + 5 * MINUTE));
    expect((await self(agent.token)).idle_deadline_at).toBe(at(start + 70_000 + 5 * MINUTE));
    world.clock.advance(20_000);
    await call('GET', '/v1/instances', { token: agent.token });
    expect((await self(agent.token)).idle_deadline_at).toBe(at(start + 70_000 + 5 * MINUTE));
  });

  it('refuses a token past its deadline with a 401 saying so, before any sweep, and its children with it after one', async () => {
    const { token } = await world.fundedTenant(1);
    const agent = (await issue(token, { idle_timeout_minutes: 5 })).body;
    const child = (await issue(agent.token, {})).body;
    world.clock.advance(5 * MINUTE);
    const refused = await heartbeat(agent.token);
    expect(refused.status).toBe(401);
    expect(refused.body.detail).toMatch(/timed out idle/);
    expect((await call('GET', '/v1/tokens/self', { token: child.token })).status).toBe(401);
    await sweep();
    const listed = (await call('GET', '/v1/tokens', { token })).body as any[];
    expect(listed.filter((t) => t.id === agent.id || t.id === child.id).map((t) => t.revoked_at)).toEqual([at(world.clock.now().getTime()), at(world.clock.now().getTime())]);
    expect((await self(token)).revoked_at).toBeNull();
  });
});

describe('the sweep ends an idle token', () => {
  it("terminates its subtree's machines billed to the deadline, refunds the unused time, cancels reservations, releases spot claims", async () => {
    const { token: root } = await world.fundedTenant(500);
    const endpoint = await call('POST', '/v1/webhook-endpoints', { token: root, body: { url: hooks.url, events: ['token.idle_timeout'] } });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
    const agent = (await issue(root, { name: 'agent', idle_timeout_minutes: 30 })).body;
    const worker = (await issue(agent.token, { name: 'worker' })).body;
    const start = world.clock.now().getTime();
    const a = await node();
    const b = await node();
    const mine = await world.rent(agent.token, { node_id: a.id });
    const theirs = await world.rent(worker.token, { node_id: b.id });
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    const reservation = await call('POST', '/v1/reservations', {
      token: worker.token,
      body: { node_id: (await node()).id, name: 'later', starts_at: at(start + 6 * HOUR), hours: 2 },
    });
    expect(reservation.status, JSON.stringify(reservation.body)).toBe(201);
    const spot = await node((o) => o.spotPriceUsdPerHour !== null);
    const claim = await call('POST', '/v1/spot-claims', {
      token: agent.token,
      body: { node_id: spot.id, gpu_count: spot.gpuCount, max_price_per_gpu_hour: (Math.ceil(spot.rate / spot.gpuCount) / 100).toFixed(2), name: 'spot' },
    });
    expect(claim.status, JSON.stringify(claim.body)).toBe(201);
    await sweep();
    const spotMachine = (await call('GET', `/v1/spot-claims/${claim.body.id}`, { token: root })).body.instance_id;
    expect(spotMachine).toMatch(/^ins_/);

    // the worker's heartbeats keep the agent alive too, past the first hour (paid to start + 2 h by the sweep)
    for (let minute = 20; minute <= 80; minute += 20) {
      world.clock.set(new Date(start + minute * MINUTE));
      expect((await heartbeat(worker.token)).status).toBe(200);
      await sweep();
    }
    const deadline = start + 110 * MINUTE;
    const heldBefore = (await call('GET', '/v1/tokens', { token: root })).body.find((t: any) => t.id === agent.id).committed_cents;
    expect((await self(agent.token)).idle_deadline_at).toBe(at(deadline));
    world.clock.set(new Date(deadline - 1_000));
    expect((await sweep()).idle_timeouts).toBe(0);
    expect((await instance(root, mine.body.id)).status).toBe('running');

    world.clock.set(new Date(deadline + 40_000));
    const pass = await sweep();
    expect(pass.idle_timeouts).toBe(1);
    for (const [id, rate] of [
      [mine.body.id, a.rate],
      [theirs.body.id, b.rate],
    ] as const) {
      const ended = await instance(root, id);
      expect(ended.status).toBe('terminated');
      expect(ended.terminated_at).toBe(at(deadline));
      expect(ended.charged_cents).toBe(cost(rate, 110));
    }
    const ledger = (await call('GET', '/v1/billing/ledger?limit=1000', { token: root })).body as any[];
    const refund = ledger.find((e) => e.reference === mine.body.id && e.kind === 'refund');
    expect(refund.amount_cents).toBe(2 * a.rate - cost(a.rate, 110));
    expect(refund.description).toMatch(new RegExp(`token ${agent.id} timed out idle`));
    expect(ledger.reduce((sum, e) => sum + e.amount_cents, 0)).toBe((await world.balance(root)).balance_cents);

    const cancelled = (await call('GET', `/v1/reservations/${reservation.body.id}`, { token: root })).body;
    expect(cancelled).toMatchObject({ status: 'cancelled' });
    expect((await call('GET', `/v1/spot-claims/${claim.body.id}`, { token: root })).body).toMatchObject({ status: 'released' });
    expect((await instance(root, spotMachine)).terminated_at).toBe(at(deadline));
    // the reservation's hold (quote x hours) is released from the agent's chain
    const committed = async () => (await call('GET', '/v1/tokens', { token: root })).body.find((t: any) => t.id === agent.id).committed_cents;
    expect(await committed()).toBeLessThanOrEqual(heldBefore - 2 * reservation.body.rate_cents_per_hour);
    for (const secret of [agent.token, worker.token]) {
      const res = await call('GET', '/v1/instances', { token: secret });
      expect(res.status).toBe(401);
      expect(res.body.detail).toMatch(/timed out idle/);
    }
    expect((await self(root)).revoked_at).toBeNull();
    expect((await sweep()).idle_timeouts).toBe(0);

    await world.api.plane.services.webhookDeliveries.deliverDue();
    const told = hooks.received.filter((r) => r.type === 'token.idle_timeout' && r.data.token_id === agent.id);
    expect(told).toHaveLength(1);
    expect(told[0]!.data).toMatchObject({
      name: 'agent',
      idle_timeout_minutes: 30,
      idle_deadline_at: at(deadline),
      tokens_ended: expect.arrayContaining([agent.id, worker.id]),
      instances_terminated: expect.arrayContaining([mine.body.id, theirs.body.id, spotMachine]),
      reservations_cancelled: [reservation.body.id],
      spot_claims_released: [claim.body.id],
    });
  });

  it('says on the ledger that the token timed out idle for a machine with nothing to refund (ended in its first hour)', async () => {
    const { token: root } = await world.fundedTenant(100);
    const agent = (await issue(root, { name: 'quiet', idle_timeout_minutes: 20 })).body;
    const a = await node();
    const rented = await world.rent(agent.token, { node_id: a.id });
    expect(rented.status).toBe(201);
    world.clock.advance(21 * MINUTE);
    expect((await sweep()).idle_timeouts).toBe(1);
    expect(await instance(root, rented.body.id)).toMatchObject({ status: 'terminated', charged_cents: a.rate });
    const lines = ((await call('GET', '/v1/billing/ledger?limit=1000', { token: root })).body as any[]).filter((e) => e.reference === rented.body.id);
    // the first hour is the least a machine costs: nothing is refunded, and a line of its own says why it ended
    expect(lines.reduce((sum, e) => sum + e.amount_cents, 0)).toBe(-a.rate);
    expect(lines.filter((e) => new RegExp(`token ${agent.id} timed out idle`).test(e.description))).toHaveLength(1);
    expect((await world.balance(root)).balance_cents).toBe(10_000 - a.rate);
  });

  it('leaves a token that keeps sending heartbeats alone for days', async () => {
    const { token: root } = await world.fundedTenant(2_000);
    const agent = (await issue(root, { idle_timeout_minutes: 60 })).body;
    const n = await node();
    const rented = await world.rent(agent.token, { node_id: n.id });
    expect(rented.status).toBe(201);
    const start = world.clock.now().getTime();
    for (let minute = 50; minute <= 3 * 24 * 60; minute += 50) {
      world.clock.set(new Date(start + minute * MINUTE));
      expect((await heartbeat(agent.token)).status).toBe(200);
      await sweep();
      expect((await self(agent.token)).revoked_at).toBeNull();
    }
    const after = await instance(agent.token, rented.body.id);
    expect(after.status).toBe('running');
    expect((await self(agent.token)).revoked_at).toBeNull();
  });
});
