import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../adapters/clock/manual-clock.ts';
import type { Resolver } from '../../adapters/webhooks/undici-transport.ts';
import { DeliveryWorker } from '../../core/webhooks/delivery-worker.ts';
import { StandardWebhookSigner } from '../../adapters/webhooks/standard-signer.ts';
import { UndiciWebhookTransport } from '../../adapters/webhooks/undici-transport.ts';
import { AesGcmSecretBox } from '../../adapters/crypto/aes-gcm-secret-box.ts';
import { RandomIds } from '../../adapters/crypto/node-secrets.ts';
import { ManualPayments } from '../../adapters/payments/manual/adapter.ts';
import type { OffSessionCharge, OffSessionOutcome } from '../../core/ports/payments.ts';
import { startApi, type TestApi } from '../support/api.ts';
import { freshPostgres } from '../support/database.ts';
import { SWEEP_MAIN, spawnEntry, stop } from '../support/processes.ts';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';

const SECRETS_KEY = randomBytes(32);
const HOUR = 3_600_000;

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** Whether the standardwebhooks package verified it, at the control plane's clock's time. */
  verified: boolean;
  type: string;
  id: string;
}

/** A local receiver that checks every signature; it answers `failures` 500s first, then 204s. */
class Receiver {
  readonly received: Received[] = [];
  secret = '';
  failures = 0;
  private server!: Server;
  url = '';
  private readonly clock: ManualClock;

  constructor(clock: ManualClock) {
    this.clock = clock;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const parsed = JSON.parse(body) as { id: string; type: string };
        this.received.push({ headers: req.headers, body, verified: this.verify(body, req.headers), type: parsed.type, id: parsed.id });
        if (this.failures > 0) {
          this.failures--;
          res.writeHead(500).end('not now');
        } else res.writeHead(204).end();
      });
    });
    this.server.listen(0, '127.0.0.1');
    await new Promise((resolve) => this.server.once('listening', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
    return this;
  }

  /** Webhook.verify checks the timestamp against Date.now(): for this synchronous call, now is the test's clock. */
  private verify(body: string, headers: IncomingHttpHeaders): boolean {
    const realNow = Date.now;
    Date.now = () => this.clock.now().getTime();
    try {
      new Webhook(this.secret).verify(body, headers as Record<string, string>);
      return true;
    } catch {
      return false;
    } finally {
      Date.now = realNow;
    }
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

let world: RentalWorld;
let api: TestApi;
let receiver: Receiver;

beforeAll(async () => {
  world = await rentalWorld({ secretsKey: SECRETS_KEY, webhooks: { allowHttp: true, delivery: false } });
  api = world.api;
  receiver = await new Receiver(world.clock).start();
});
afterAll(async () => {
  await receiver.close();
  await world.close();
});

const deliver = () => api.plane.services.webhookDeliveries.deliverDue();

async function register(token: string, target: Receiver, body: Record<string, unknown> = {}) {
  const res = await api.call('POST', '/v1/webhook-endpoints', { token, body: { url: target.url, ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  target.secret = res.body.secret;
  return res.body as { id: string; secret: string };
}

const deliveries = async (token: string, endpointId: string) => (await api.call('GET', `/v1/webhook-endpoints/${endpointId}/deliveries`, { token })).body as any[];

describe('webhook endpoints', () => {
  it('registers an endpoint with a Standard Webhooks secret shown once; lists, gets and deletes it (deleted again: 404)', async () => {
    const { token } = await api.newTenant();
    const created = await api.call('POST', '/v1/webhook-endpoints', { token, body: { url: receiver.url, events: ['instance.running', 'balance.low'], description: 'ops' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ url: receiver.url, events: ['instance.running', 'balance.low'], description: 'ops', disabled_at: null, failing_since: null });
    expect(created.body.id).toMatch(/^whe_/);
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(created.body.secret.slice(6), 'base64')).toHaveLength(32);

    const listed = await api.call('GET', '/v1/webhook-endpoints', { token });
    expect(listed.body.map((e: any) => e.id)).toEqual([created.body.id]);
    expect(listed.body[0]).not.toHaveProperty('secret');
    const one = await api.call('GET', `/v1/webhook-endpoints/${created.body.id}`, { token });
    expect(one.body).not.toHaveProperty('secret');
    // kept sealed: the database holds no secret in the clear
    const [row] = await api.plane.storage.execute<{ secret_sealed: string }[]>('select secret_sealed from webhook_endpoints where id = ?', [created.body.id]);
    expect(row!.secret_sealed).not.toContain(created.body.secret.slice(6));

    expect((await api.call('DELETE', `/v1/webhook-endpoints/${created.body.id}`, { token })).status).toBe(204);
    expect((await api.call('DELETE', `/v1/webhook-endpoints/${created.body.id}`, { token })).status).toBe(404);
    expect((await api.call('GET', `/v1/webhook-endpoints/${created.body.id}`, { token })).status).toBe(404);
    expect((await api.call('GET', '/v1/webhook-endpoints', { token })).body).toEqual([]);
  });

  it('refuses, with 422, a bad URL, plain http to another host, private, loopback and link-local targets, an unknown event type', async () => {
    const { token } = await api.newTenant();
    const refused = [
      'not a url',
      'ftp://example.com/hook',
      'http://example.com/hook',
      'https://10.1.2.3/hook',
      'https://192.168.0.7/hook',
      'https://172.20.0.1/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://[fe80::1]/hook',
      'https://[fd00::1]/hook',
      'https://[::ffff:10.0.0.1]/hook',
      'https://0.0.0.0/hook',
      'https://user:pass@example.com/hook',
    ];
    for (const url of refused) {
      const res = await api.call('POST', '/v1/webhook-endpoints', { token, body: { url } });
      expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(422);
      expect(res.body.detail).toEqual(expect.any(String));
    }
    const badEvent = await api.call('POST', '/v1/webhook-endpoints', { token, body: { url: receiver.url, events: ['instance.exploded'] } });
    expect(badEvent.status).toBe(422);
    expect((await api.call('GET', '/v1/webhook-endpoints', { token })).body).toEqual([]);
  });

  it('refuses, with 422, IPv4 inside IPv6: compatible, mapped (either spelling), translated, 6to4, NAT64 and Teredo forms of loopback and private addresses', async () => {
    const { token } = await api.newTenant();
    const refused = [
      'https://[::7f00:1]/hook', // IPv4-compatible 127.0.0.1
      'https://[::127.0.0.1]/hook',
      'https://[::ffff:7f00:1]/hook', // IPv4-mapped, in hex
      'https://[::ffff:0:7f00:1]/hook', // IPv4-translated 127.0.0.1
      'https://[::ffff:0:a9fe:a9fe]/hook', // IPv4-translated 169.254.169.254
      'https://[2002:7f00:1::1]/hook', // 6to4 of 127.0.0.1
      'https://[2002:a00:1::1]/hook', // 6to4 of 10.0.0.1
      'https://[2002:5db8:d822::1]/hook', // 6to4 of a public address: still a relay, not a host
      'https://[64:ff9b::7f00:1]/hook', // NAT64 of 127.0.0.1
      'https://[64:ff9b:1::a00:1]/hook', // local-use NAT64 of 10.0.0.1
      'https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook', // Teredo, client 127.0.0.1
      'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook', // Teredo
      'https://[100::1]/hook', // discard-only
      'https://[5f00::1]/hook', // segment routing
      'https://[3fff::1]/hook', // documentation
    ];
    for (const url of refused) {
      const res = await api.call('POST', '/v1/webhook-endpoints', { token, body: { url } });
      expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(422);
      expect(res.body.detail).toMatch(/public addresses only/);
    }
    expect((await api.call('GET', '/v1/webhook-endpoints', { token })).body).toEqual([]);
  });

  it('another tenant sees none of it: 404 on get, delete, test and deliveries', async () => {
    const owner = await api.newTenant();
    const other = await api.newTenant();
    const { id } = await register(owner.token, receiver);
    for (const [method, path] of [
      ['GET', `/v1/webhook-endpoints/${id}`],
      ['DELETE', `/v1/webhook-endpoints/${id}`],
      ['POST', `/v1/webhook-endpoints/${id}/test`],
      ['GET', `/v1/webhook-endpoints/${id}/deliveries`],
    ] as const) {
      expect((await api.call(method, path, { token: other.token })).status, `${method} ${path}`).toBe(404);
    }
    expect((await api.call('GET', '/v1/webhook-endpoints', { token: other.token })).body).toEqual([]);
    expect((await api.call('GET', `/v1/webhook-endpoints/${id}`, { token: owner.token })).status).toBe(200);
  });

  it('holds at most WEBHOOK_MAX_ENDPOINTS_PER_TENANT endpoints (default 20, disabled ones count, deleted ones not): past it 409 naming the limit; 40 parallel creates at 19 leave 20', async () => {
    const { token, tenantId } = await api.newTenant();
    const other = await api.newTenant();
    for (let i = 0; i < 19; i++) await register(token, receiver, { description: `n${i}` });
    const raced = await Promise.all(Array.from({ length: 40 }, () => api.call('POST', '/v1/webhook-endpoints', { token, body: { url: receiver.url } })));
    expect(raced.filter((r) => r.status === 201)).toHaveLength(1);
    const refused = raced.filter((r) => r.status !== 201);
    expect(refused.map((r) => r.status)).toEqual(Array(39).fill(409));
    expect(refused[0]!.body.detail).toMatch(/20 webhook endpoints.*WEBHOOK_MAX_ENDPOINTS_PER_TENANT/);
    const held = async () => (await api.plane.storage.execute<{ n: number }[]>('select count(*)::int as n from webhook_endpoints where tenant_id = ? and deleted_at is null', [tenantId]))[0]!.n;
    expect(await held()).toBe(20);
    expect((await api.call('GET', '/v1/webhook-endpoints', { token })).body).toHaveLength(20);
    // another tenant's endpoints are its own count
    await register(other.token, receiver);
    // a disabled endpoint still counts; a deleted one frees its place
    const [first, second] = (await api.call('GET', '/v1/webhook-endpoints', { token })).body;
    await api.plane.storage.execute(`update webhook_endpoints set disabled_at = now(), disabled_reason = 'test' where id = ?`, [first.id]);
    expect((await api.call('POST', '/v1/webhook-endpoints', { token, body: { url: receiver.url } })).status).toBe(409);
    expect((await api.call('DELETE', `/v1/webhook-endpoints/${second.id}`, { token })).status).toBe(204);
    expect((await api.call('POST', '/v1/webhook-endpoints', { token, body: { url: receiver.url } })).status).toBe(201);
    expect((await api.call('POST', '/v1/webhook-endpoints', { token, body: { url: receiver.url } })).status).toBe(409);
    expect(await held()).toBe(20);
  });

  it('WEBHOOK_MAX_ENDPOINTS_PER_TENANT set lower is the limit', async () => {
    const small = await startApi({ secretsKey: SECRETS_KEY, webhooks: { allowHttp: true, delivery: false, maxEndpointsPerTenant: 2 } });
    try {
      const { token } = await small.newTenant();
      for (const expected of [201, 201, 409]) expect((await small.call('POST', '/v1/webhook-endpoints', { token, body: { url: receiver.url } })).status).toBe(expected);
      expect((await small.call('POST', '/v1/webhook-endpoints', { token, body: { url: receiver.url } })).body.detail).toMatch(/2 webhook endpoints/);
    } finally {
      await small.close();
    }
  });

  it('needs the manage scope to register, read to list', async () => {
    const { token } = await api.newTenant();
    const reader = await api.call('POST', '/v1/tokens', { token, body: { scopes: ['read'] } });
    expect((await api.call('POST', '/v1/webhook-endpoints', { token: reader.body.token, body: { url: receiver.url } })).status).toBe(403);
    expect((await api.call('GET', '/v1/webhook-endpoints', { token: reader.body.token })).status).toBe(200);
  });
});

describe('delivery', () => {
  it('POST /test sends a signed webhook.test event: webhook-id, webhook-timestamp, webhook-signature v1 verified by standardwebhooks', async () => {
    const { token } = await api.newTenant();
    const { id } = await register(token, receiver);
    const before = receiver.received.length;
    const scheduled = await api.call('POST', `/v1/webhook-endpoints/${id}/test`, { token });
    expect(scheduled.status).toBe(202);
    expect(scheduled.body).toMatchObject({ type: 'webhook.test', attempt: 1, status: 'pending' });
    expect(await deliver()).toBe(1);
    const got = receiver.received.slice(before);
    expect(got).toHaveLength(1);
    expect(got[0]!.verified).toBe(true);
    expect(got[0]!.headers['webhook-id']).toBe(scheduled.body.event_id);
    expect(got[0]!.headers['webhook-timestamp']).toBe(String(Math.floor(world.clock.now().getTime() / 1000)));
    expect(got[0]!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(JSON.parse(got[0]!.body)).toEqual({ id: scheduled.body.event_id, type: 'webhook.test', created_at: world.clock.now().toISOString(), data: { endpoint_id: id } });
    // signed with another secret, the same request does not verify
    expect(() => new Webhook(`whsec_${randomBytes(32).toString('base64')}`).verify(got[0]!.body, got[0]!.headers as Record<string, string>)).toThrow();
    const [attempt] = await deliveries(token, id);
    expect(attempt).toMatchObject({ event_id: scheduled.body.event_id, type: 'webhook.test', attempt: 1, status: 'succeeded', response_status: 204, next_attempt_at: null });
  });

  it('tells a rental: instance.running when the machine comes up, instance.terminated when it is gone, each signed and delivered once', async () => {
    const { token } = await world.fundedTenant(100);
    const { id } = await register(token, receiver);
    const [node] = await world.offers((o) => o.rate > 50);
    const rented = await world.rent(token, { node_id: node!.id });
    expect(rented.status, JSON.stringify(rented.body)).toBe(201);
    world.clock.advance(20_000);
    expect((await api.call('GET', `/v1/instances/${rented.body.id}`, { token })).body.status).toBe('running');
    expect((await api.call('POST', `/v1/instances/${rented.body.id}/terminate`, { token })).body.status).toBe('terminated');
    const before = receiver.received.length;
    expect(await deliver()).toBe(2);
    expect(await deliver()).toBe(0);
    // attempts are sent several at a time: the order they arrive in is not promised
    const got = receiver.received.slice(before).sort((a, b) => a.type.localeCompare(b.type));
    expect(got.map((r) => r.type)).toEqual(['instance.running', 'instance.terminated']);
    expect(got.every((r) => r.verified)).toBe(true);
    expect(JSON.parse(got[0]!.body).data).toMatchObject({ instance_id: rented.body.id, status: 'running', node_id: node!.id });
    expect(JSON.parse(got[1]!.body).data).toMatchObject({ instance_id: rented.body.id, status: 'terminated' });
    expect((await deliveries(token, id)).map((d) => d.status)).toEqual(['succeeded', 'succeeded']);
    world.clock.advance(-20_000);
  });

  it('tells deposits confirmed and rejected, only to endpoints listening to them', async () => {
    const { token } = await api.newTenant();
    const all = await register(token, receiver);
    const deposits = await new Receiver(world.clock).start();
    try {
      const only = await register(token, deposits, { events: ['deposit.rejected'] });
      const a = await api.call('POST', '/v1/billing/deposits', { token, body: { amount_usd: 25, reference: 'wire 1' } });
      const b = await api.call('POST', '/v1/billing/deposits', { token, body: { amount_usd: 7, reference: 'wire 2' } });
      expect((await api.call('POST', `/v1/billing/deposits/${a.body.id}/confirm`, { headers: OPERATOR })).status).toBe(200);
      expect((await api.call('POST', `/v1/billing/deposits/${b.body.id}/reject`, { headers: OPERATOR, body: { reason: 'unknown sender' } })).status).toBe(200);
      const before = receiver.received.length;
      await deliver();
      const got = receiver.received.slice(before).sort((a, b) => a.type.localeCompare(b.type));
      expect(got.map((r) => r.type)).toEqual(['deposit.confirmed', 'deposit.rejected']);
      expect(JSON.parse(got[0]!.body).data).toMatchObject({ deposit_id: a.body.id, amount_cents: 2500, amount_usd: '25.00', kind: 'bank_transfer' });
      expect(deposits.received.map((r) => r.type)).toEqual(['deposit.rejected']);
      expect(deposits.received[0]!.verified).toBe(true);
      expect((await deliveries(token, only.id)).map((d) => d.type)).toEqual(['deposit.rejected']);
      expect((await deliveries(token, all.id))).toHaveLength(2);
    } finally {
      await deposits.close();
    }
  });

  it('tells the money running out: balance.low once per fall, then breaker.tripped and the machine terminated', async () => {
    const start = world.clock.now().getTime();
    const { token } = await world.fundedTenant('1.50');
    const target = await new Receiver(world.clock).start();
    try {
      const { id } = await register(token, target);
      const [node] = await world.offers((o) => o.rate >= 80 && o.rate <= 140);
      const rented = await world.rent(token, { node_id: node!.id });
      expect(rented.status, JSON.stringify(rented.body)).toBe(201);
      world.clock.advance(20_000);
      await api.call('GET', `/v1/instances/${rented.body.id}`, { token });
      const sweep = async () => expect((await api.call('POST', '/v1/operator/sweep', { headers: OPERATOR })).status).toBe(200);
      await sweep(); // 150 - rate cents left: under an hour of the machine
      await sweep(); // told once, not every pass
      world.clock.advance(3 * HOUR); // the hours after the first are not paid: owed passes what is left
      await sweep();
      await deliver();
      const types = target.received.map((r) => r.type).sort();
      expect(types).toEqual(['balance.low', 'breaker.tripped', 'instance.running', 'instance.terminated']);
      expect(target.received.every((r) => r.verified)).toBe(true);
      const low = JSON.parse(target.received.find((r) => r.type === 'balance.low')!.body).data;
      expect(low).toMatchObject({ balance_cents: 150 - node!.rate, available_cents: 150 - node!.rate, burn_cents_per_hour: node!.rate, threshold_cents: node!.rate });
      const tripped = JSON.parse(target.received.find((r) => r.type === 'breaker.tripped')!.body).data;
      expect(tripped.reason).toMatch(/funds exhausted/);
      expect((await deliveries(token, id)).every((d) => d.status === 'succeeded')).toBe(true);
    } finally {
      await target.close();
      world.clock.set(new Date(start));
    }
  });

  it('tells reservations started and failed (its window passed before a sweep could start it)', async () => {
    const start = world.clock.now().getTime();
    const root = await world.fundedTenant(100);
    const target = await new Receiver(world.clock).start();
    try {
      await register(root.token, target, { events: ['reservation.started', 'reservation.failed'] });
      const [a, b] = await world.offers((o) => o.rate > 20 && o.rate < 500);
      const early = new Date(start + 10 * 60_000).toISOString();
      const startsAt = new Date(start + 75 * 60_000).toISOString();
      const kept = await api.call('POST', '/v1/reservations', { token: root.token, body: { name: 'kept', hours: 1, starts_at: startsAt, node_id: a!.id } });
      const lost = await api.call('POST', '/v1/reservations', { token: root.token, body: { name: 'lost', hours: 1, starts_at: early, node_id: b!.id } });
      expect([kept.status, lost.status], JSON.stringify([kept.body, lost.body])).toEqual([201, 201]);
      // no sweep ran through the lost one's hour: at the kept one's start its window is over
      world.clock.set(new Date(startsAt));
      expect((await api.call('POST', '/v1/operator/sweep', { headers: OPERATOR })).status).toBe(200);
      await deliver();
      const byType = new Map(target.received.map((r) => [r.type, JSON.parse(r.body).data]));
      expect([...byType.keys()].sort()).toEqual(['reservation.failed', 'reservation.started']);
      expect(byType.get('reservation.started')).toMatchObject({ reservation_id: kept.body.id, instance_id: expect.stringMatching(/^ins_/), failure: null });
      expect(byType.get('reservation.failed')).toMatchObject({ reservation_id: lost.body.id, instance_id: null, failure: expect.stringMatching(/window ended/) });
    } finally {
      await target.close();
      world.clock.set(new Date(start));
    }
  });

  it('tells instance.failed when the provider refuses the machine (refunded)', async () => {
    const { token } = await world.fundedTenant(50);
    const target = await new Receiver(world.clock).start();
    try {
      await register(token, target);
      const [node] = await world.offers();
      world.sandbox.cloud.failNextCreates(1, 'rejected');
      expect((await world.rent(token, { node_id: node!.id })).status).toBe(409);
      await deliver();
      expect(target.received.map((r) => r.type)).toEqual(['instance.failed']);
      expect(JSON.parse(target.received[0]!.body).data).toMatchObject({ status: 'failed', failure: expect.stringMatching(/refused/) });
    } finally {
      await target.close();
    }
  });

  it('tells a spot machine taken back: instance.preempted (from the reconciler), then instance.terminated', async () => {
    const start = world.clock.now().getTime();
    const { token } = await world.fundedTenant(100);
    const target = await new Receiver(world.clock).start();
    try {
      await register(token, target, { events: ['instance.preempted', 'instance.terminated'] });
      const offers = await world.offers((o) => o.rate >= 40 && o.rate <= 800);
      const offer = offers[offers.length - 1]!;
      const spotRate = Math.max(1, Math.floor(offer.rate * 0.4));
      await world.sandbox.cloud.setSpotPrice(offer.id.slice('sandbox:'.length), (spotRate / 100).toFixed(2));
      world.clock.advance(60_000); // the market reads its snapshot again
      const bid = ((Math.ceil(spotRate / offer.gpuCount) + 3) / 100).toFixed(2);
      const claim = await api.call('POST', '/v1/spot-claims', { token, body: { name: 'spot', hours: 2, node_id: offer.id, gpu_count: offer.gpuCount, max_price_per_gpu_hour: bid } });
      expect(claim.status, JSON.stringify(claim.body)).toBe(201);
      const sweep = async () => expect((await api.call('POST', '/v1/operator/sweep', { headers: OPERATOR })).status).toBe(200);
      await sweep();
      const instanceId = (await api.call('GET', `/v1/spot-claims/${claim.body.id}`, { token })).body.instance_id as string;
      expect(instanceId).toMatch(/^ins_/);
      world.clock.advance(30_000);
      expect((await api.call('GET', `/v1/instances/${instanceId}`, { token })).body.status).toBe('running');
      world.clock.advance(2 * 60_000);
      await sweep(); // seen running
      const machine = (await world.sandbox.cloud.listMachines()).find((m) => m.label === instanceId)!;
      expect(await world.sandbox.cloud.preemptMachine(machine.machineId)).toBe(true);
      world.clock.advance(60_000);
      await sweep();
      expect(await api.call('DELETE', `/v1/spot-claims/${claim.body.id}`, { token }).then((r) => r.status)).toBe(200);
      await deliver();
      const mine = target.received.filter((r) => JSON.parse(r.body).data.instance_id === instanceId);
      expect(mine.map((r) => r.type).sort()).toEqual(['instance.preempted', 'instance.terminated']);
      expect(mine.every((r) => r.verified)).toBe(true);
      expect(JSON.parse(mine.find((r) => r.type === 'instance.preempted')!.body).data).toMatchObject({ preempted_at: world.clock.now().toISOString(), failure: expect.stringMatching(/preempted/) });
    } finally {
      await target.close();
      world.clock.set(new Date(start));
    }
  });

  it('the outbox row exists only if the change committed: a rolled back change leaves no event', async () => {
    const { token, tenantId } = await world.fundedTenant(100);
    await register(token, receiver);
    const [node] = await world.offers((o) => o.rate > 50);
    const rented = await world.rent(token, { node_id: node!.id });
    const events = () => api.plane.storage.execute<{ type: string }[]>('select type from webhook_events where tenant_id = ? order by created_at, id', [tenantId]);
    const running = (commit: boolean) =>
      api.plane.storage.transaction(async (uow) => {
        const locked = await uow.instances.lock(tenantId, rented.body.id);
        await uow.instances.update({ ...locked!, status: 'running', startedAt: world.clock.now() });
        if (!commit) throw new Error('rolled back on purpose');
      });
    await expect(running(false)).rejects.toThrow('rolled back on purpose');
    expect(await events()).toEqual([]);
    expect((await api.call('GET', `/v1/instances/${rented.body.id}`, { token })).body.status).toBe('provisioning');
    await running(true);
    expect(await events()).toEqual([{ type: 'instance.running' }]);
    const [pending] = await api.plane.storage.execute<{ n: number }[]>(`select count(*)::int as n from webhook_deliveries d join webhook_events e on e.id = d.event_id where e.tenant_id = ?`, [tenantId]);
    expect(pending!.n).toBe(1);
    await api.call('POST', `/v1/instances/${rented.body.id}/terminate`, { token });
    await deliver();
  });

  it('writes nothing to the outbox for a tenant nobody listens for (or for types its endpoints did not ask for)', async () => {
    const { token, tenantId } = await world.fundedTenant(100);
    const count = async () => (await api.plane.storage.execute<{ n: number }[]>('select count(*)::int as n from webhook_events where tenant_id = ?', [tenantId]))[0]!.n;
    const [node] = await world.offers((o) => o.rate > 50);
    const first = await world.rent(token, { node_id: node!.id });
    await api.call('POST', `/v1/instances/${first.body.id}/terminate`, { token });
    expect(await count()).toBe(0);
    await register(token, receiver, { events: ['deposit.confirmed'] });
    const second = await world.rent(token, { node_id: node!.id });
    await api.call('POST', `/v1/instances/${second.body.id}/terminate`, { token });
    expect(await count()).toBe(0);
  });

  it('an event is delivered once to a healthy endpoint even with two workers claiming at once', async () => {
    const { token } = await api.newTenant();
    const { id } = await register(token, receiver);
    const storage = api.plane.storage;
    const worker = () =>
      new DeliveryWorker({
        storage,
        clock: world.clock,
        ids: new RandomIds(),
        secretBox: new AesGcmSecretBox(SECRETS_KEY),
        signer: new StandardWebhookSigner(),
        transport: new UndiciWebhookTransport({ allowHttpLocalhost: true }),
        settings: { batchSize: 5, concurrency: 4 },
      });
    const [one, two] = [worker(), worker()];
    const events: string[] = [];
    for (let i = 0; i < 40; i++) events.push((await api.call('POST', `/v1/webhook-endpoints/${id}/test`, { token })).body.event_id);
    const before = receiver.received.length;
    const made = await Promise.all([one.deliverDue(), two.deliverDue(), one.deliverDue(), two.deliverDue()]);
    expect(made.reduce((a, b) => a + b, 0)).toBe(40);
    expect(made.filter((n) => n > 0).length).toBeGreaterThan(1); // both took a share
    const got = receiver.received.slice(before).map((r) => r.id);
    expect(got.sort()).toEqual([...events].sort());
    expect(new Set(got).size).toBe(40);
    expect(receiver.received.slice(before).every((r) => r.verified)).toBe(true);
  });

  it('a receiver failing 3 times gets the event on the 4th try, after 1, 4 and 16 minutes; the webhook-id stays the same', async () => {
    const { token } = await api.newTenant();
    const { id } = await register(token, receiver);
    const sent = await api.call('POST', `/v1/webhook-endpoints/${id}/test`, { token });
    receiver.failures = 3;
    const before = receiver.received.length;
    const start = world.clock.now().getTime();
    expect(await deliver()).toBe(1);
    const [next, first] = await deliveries(token, id);
    expect(first).toMatchObject({ attempt: 1, status: 'failed', response_status: 500, error: 'answered HTTP 500', next_attempt_at: new Date(start + 60_000).toISOString() });
    expect(next).toMatchObject({ attempt: 2, status: 'pending', response_status: null, next_attempt_at: new Date(start + 60_000).toISOString() });
    expect((await api.call('GET', `/v1/webhook-endpoints/${id}`, { token })).body.failing_since).toBe(new Date(start).toISOString());
    world.clock.advance(59_000);
    expect(await deliver()).toBe(0); // not yet due
    for (const gap of [1_000, 4 * 60_000, 16 * 60_000]) {
      world.clock.advance(gap);
      expect(await deliver()).toBe(1);
    }
    const got = receiver.received.slice(before);
    expect(got).toHaveLength(4);
    expect(got.every((r) => r.verified && r.headers['webhook-id'] === sent.body.event_id)).toBe(true);
    const attempts = await deliveries(token, id);
    expect(attempts.map((d) => [d.attempt, d.status, d.response_status])).toEqual([
      [4, 'succeeded', 204],
      [3, 'failed', 500],
      [2, 'failed', 500],
      [1, 'failed', 500],
    ]);
    expect((await api.call('GET', `/v1/webhook-endpoints/${id}`, { token })).body).toMatchObject({ failing_since: null, disabled_at: null });
    world.clock.set(new Date(start));
  });

  it('an endpoint failing for 24 hours is disabled and says so; retries stop, later events are not scheduled for it', async () => {
    const { token } = await api.newTenant();
    const down = await new Receiver(world.clock).start();
    const start = world.clock.now().getTime();
    try {
      const { id } = await register(token, down);
      down.failures = 1_000;
      await api.call('POST', `/v1/webhook-endpoints/${id}/test`, { token });
      // every 30 minutes: the attempts fall at 0, 30, 60, 90, 180, 450 min (1, 4, 16, 64, 256 min after the last, on
      // the next tick), then every 6 h (810, 1170 min), the last at the day's end (1440 min)
      for (let minutes = 0; minutes <= 25 * 60; minutes += 30) {
        world.clock.set(new Date(start + minutes * 60_000));
        await deliver();
      }
      expect(down.received).toHaveLength(9);
      expect(down.received.every((r) => r.verified)).toBe(true);
      const made = (await deliveries(token, id)).reverse();
      expect(made.map((d) => (new Date(d.created_at).getTime() - start) / 60_000)).toEqual([0, 0, 30, 60, 90, 180, 450, 810, 1170]);
      const endpoint = (await api.call('GET', `/v1/webhook-endpoints/${id}`, { token })).body;
      expect(endpoint.disabled_at).toBe(new Date(start + 24 * HOUR).toISOString());
      expect(endpoint.disabled_reason).toMatch(/failed since .* \(24 hours\); the last: answered HTTP 500/);
      expect((await deliveries(token, id))[0]).toMatchObject({ attempt: 9, status: 'failed', next_attempt_at: null });
      expect((await api.call('POST', `/v1/webhook-endpoints/${id}/test`, { token })).status).toBe(409);
      world.clock.advance(HOUR);
      await deliver();
      expect(down.received).toHaveLength(9);
    } finally {
      await down.close();
      world.clock.set(new Date(start));
    }
  });
});

describe('the worker in the server', () => {
  it('delivers without being asked: a server polls for due attempts (every 50 ms here)', async () => {
    const clock = new ManualClock(new Date());
    const server = await startApi({ secretsKey: SECRETS_KEY, webhooks: { allowHttp: true, delivery: true, pollMs: 50 } }, { clock });
    const target = await new Receiver(clock).start();
    try {
      const { token } = await server.newTenant();
      const created = await server.call('POST', '/v1/webhook-endpoints', { token, body: { url: target.url } });
      target.secret = created.body.secret;
      const sent = await server.call('POST', `/v1/webhook-endpoints/${created.body.id}/test`, { token });
      for (let waited = 0; target.received.length === 0 && waited < 5_000; waited += 25) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(target.received.map((r) => [r.id, r.verified])).toEqual([[sent.body.event_id, true]]);
    } finally {
      await target.close();
      await server.close();
    }
  });
});

describe('the worker in the sweep daemon', () => {
  it('npm run sweep delivers what a server recorded (the same database, the same SECRETS_KEY)', async () => {
    const database = await freshPostgres();
    const clock = new ManualClock(new Date());
    const server = await startApi({ secretsKey: SECRETS_KEY, webhooks: { allowHttp: true, delivery: false } }, { clock, database });
    const target = await new Receiver(clock).start();
    let daemon: ReturnType<typeof spawnEntry> | null = null;
    try {
      const { token } = await server.newTenant();
      const created = await server.call('POST', '/v1/webhook-endpoints', { token, body: { url: target.url } });
      target.secret = created.body.secret;
      const sent = await server.call('POST', `/v1/webhook-endpoints/${created.body.id}/test`, { token });
      const url = database.target.kind === 'postgres' ? database.target.url : '';
      daemon = spawnEntry(SWEEP_MAIN, { DATABASE_URL: url, SECRETS_KEY: SECRETS_KEY.toString('base64'), WEBHOOKS_ALLOW_HTTP: 'true', LOG_LEVEL: 'info' });
      for (let waited = 0; target.received.length === 0 && waited < 30_000; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(target.received.map((r) => [r.id, r.verified]), daemon.output().slice(-2000)).toEqual([[sent.body.event_id, true]]);
      // recorded once the receiver's answer is back in the daemon: a moment after the receiver has it
      const attempts = async () => (await server.call('GET', `/v1/webhook-endpoints/${created.body.id}/deliveries`, { token })).body;
      for (let waited = 0; (await attempts())[0]?.status === 'sending' && waited < 10_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await attempts()).toMatchObject([{ status: 'succeeded', response_status: 204 }]);
    } finally {
      if (daemon) await stop(daemon);
      await target.close();
      await server.close();
      await database.drop();
    }
  }, 60_000);
});

/** The embedded processor, its off-session charges declined as a bank would. */
class DecliningManual extends ManualPayments {
  override async chargeOffSession(_charge: OffSessionCharge): Promise<OffSessionOutcome> {
    return { ok: false, reason: 'card_declined: Your card was declined.' };
  }
}

describe('auto-recharge', () => {
  it('tells auto_recharge.failed when the card is declined, once (the attempt is not repeated until the tenant acts)', async () => {
    const declining = await startApi({ secretsKey: SECRETS_KEY, webhooks: { allowHttp: true, delivery: false } }, { payments: new DecliningManual('http://127.0.0.1:1'), clock: world.clock });
    const target = await new Receiver(world.clock).start();
    try {
      const { token } = await declining.newTenant();
      const started = await declining.call('POST', '/v1/billing/checkout', { token, body: { amount_usd: 5 } });
      expect((await fetch(`${declining.baseUrl}${new URL(started.body.url).pathname}/pay`, { method: 'POST', redirect: 'manual' })).status).toBe(303);
      const created = await declining.call('POST', '/v1/webhook-endpoints', { token, body: { url: target.url, events: ['auto_recharge.failed'] } });
      target.secret = created.body.secret;
      await declining.call('PUT', '/v1/billing/auto-recharge', { token, body: { enabled: true, threshold_usd: 10, amount_usd: 20 } });
      for (let i = 0; i < 2; i++) expect((await declining.call('POST', '/v1/operator/sweep', { headers: OPERATOR })).status).toBe(200);
      await declining.plane.services.webhookDeliveries.deliverDue();
      expect(target.received.map((r) => r.type)).toEqual(['auto_recharge.failed']);
      expect(target.received[0]!.verified).toBe(true);
      expect(JSON.parse(target.received[0]!.body).data).toMatchObject({ amount_cents: 2000, amount_usd: '20.00', error: expect.stringMatching(/card_declined/), suspended: true });
    } finally {
      await target.close();
      await declining.close();
    }
  });
});

describe('SSRF at delivery', () => {
  let rebinding: TestApi;
  const lookups: string[] = [];
  // the name resolves to a public address when registered, then to loopback (DNS rebinding)
  const resolver: Resolver = async (hostname) => {
    lookups.push(hostname);
    if (hostname !== 'rebind.test') throw new Error('ENOTFOUND');
    return [{ address: lookups.filter((h) => h === 'rebind.test').length === 1 ? '93.184.216.34' : '127.0.0.1', family: 4 }];
  };
  beforeAll(async () => {
    rebinding = await startApi({ secretsKey: SECRETS_KEY, webhooks: { allowHttp: true, delivery: false } }, { webhookResolver: resolver, clock: new ManualClock(new Date()) });
  });
  afterAll(() => rebinding.close());

  it('a host name that resolves to 127.0.0.1 at delivery is refused there, nothing sent (localhost is allowed by name only)', async () => {
    const { token } = await rebinding.newTenant();
    const created = await rebinding.call('POST', '/v1/webhook-endpoints', { token, body: { url: 'https://rebind.test/hook' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const before = receiver.received.length;
    await rebinding.call('POST', `/v1/webhook-endpoints/${created.body.id}/test`, { token });
    expect(await rebinding.plane.services.webhookDeliveries.deliverDue()).toBe(1);
    const attempt = (await rebinding.call('GET', `/v1/webhook-endpoints/${created.body.id}/deliveries`, { token })).body.find((d: any) => d.attempt === 1);
    expect(attempt).toMatchObject({ status: 'failed', response_status: null });
    expect(attempt.error).toMatch(/rebind\.test resolves to 127\.0\.0\.1/);
    expect(receiver.received.length).toBe(before);
    expect(lookups.filter((h) => h === 'rebind.test').length).toBeGreaterThanOrEqual(2);

    // an unresolvable name, and a name pointing at loopback from the start, are refused at registration
    expect((await rebinding.call('POST', '/v1/webhook-endpoints', { token, body: { url: 'https://nowhere.test/hook' } })).status).toBe(422);
  });

  it('a name that resolves to IPv4 inside IPv6 at delivery (compatible, mapped, 6to4, NAT64, Teredo) is refused there, nothing sent', async () => {
    const embedded = ['::7f00:1', '::ffff:7f00:1', '::ffff:127.0.0.1', '::ffff:0:7f00:1', '2002:7f00:1::1', '64:ff9b::a9fe:a9fe', '2001:0:4136:e378:8000:63bf:80ff:fffe'];
    const asked = new Map<string, number>();
    // each name resolves to a public address when registered, then to its embedded form
    const resolver: Resolver = async (hostname) => {
      const n = /^h(\d+)\.embedded\.test$/.exec(hostname);
      if (!n) throw new Error('ENOTFOUND');
      asked.set(hostname, (asked.get(hostname) ?? 0) + 1);
      return asked.get(hostname) === 1 ? [{ address: '2606:4700:4700::1111', family: 6 }] : [{ address: embedded[Number(n[1])]!, family: 6 }];
    };
    const rebound = await startApi({ secretsKey: SECRETS_KEY, webhooks: { allowHttp: true, delivery: false, timeoutMs: 2_000 } }, { webhookResolver: resolver, clock: new ManualClock(new Date()) });
    try {
      const { token } = await rebound.newTenant();
      const ids: string[] = [];
      for (let i = 0; i < embedded.length; i++) {
        const created = await rebound.call('POST', '/v1/webhook-endpoints', { token, body: { url: `https://h${i}.embedded.test/hook` } });
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        ids.push(created.body.id);
        await rebound.call('POST', `/v1/webhook-endpoints/${created.body.id}/test`, { token });
      }
      expect(await rebound.plane.services.webhookDeliveries.deliverDue()).toBe(embedded.length);
      for (const [i, id] of ids.entries()) {
        const attempt = (await rebound.call('GET', `/v1/webhook-endpoints/${id}/deliveries`, { token })).body.find((d: any) => d.attempt === 1);
        expect(attempt, embedded[i]).toMatchObject({ status: 'failed', response_status: null });
        expect(attempt.error, embedded[i]).toBe(`the host h${i}.embedded.test resolves to ${embedded[i]}, a private, loopback, link-local or reserved address: webhooks go to public addresses only`);
      }
    } finally {
      await rebound.close();
    }
  });

  it('without WEBHOOKS_ALLOW_HTTP, localhost is refused like any loopback target', async () => {
    const strict = await startApi({ secretsKey: SECRETS_KEY, webhooks: { delivery: false } });
    try {
      const { token } = await strict.newTenant();
      for (const url of [receiver.url, 'https://localhost/hook', 'https://127.0.0.1/hook', 'https://[::1]/hook']) {
        expect((await strict.call('POST', '/v1/webhook-endpoints', { token, body: { url } })).status, url).toBe(422);
      }
    } finally {
      await strict.close();
    }
  });

  it('without SECRETS_KEY on PostgreSQL, registering says the operator must set it (409), nothing stored', async () => {
    const keyless = await startApi({ webhooks: { delivery: false } });
    try {
      expect(keyless.plane.storage.target.kind).toBe('postgres');
      const { token } = await keyless.newTenant();
      const res = await keyless.call('POST', '/v1/webhook-endpoints', { token, body: { url: 'https://93.184.216.34/hook' } });
      expect(res.status).toBe(409);
      expect(res.body.detail).toMatch(/SECRETS_KEY/);
    } finally {
      await keyless.close();
    }
  });
});
