import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../adapters/clock/manual-clock.ts';
import { AesGcmSecretBox } from '../../adapters/crypto/aes-gcm-secret-box.ts';
import { RandomIds } from '../../adapters/crypto/node-secrets.ts';
import { StandardWebhookSigner } from '../../adapters/webhooks/standard-signer.ts';
import { UndiciWebhookTransport } from '../../adapters/webhooks/undici-transport.ts';
import { DEFAULT_DELIVERY_SETTINGS, DeliveryWorker } from '../../core/webhooks/delivery-worker.ts';
import { startApi, type TestApi } from '../support/api.ts';
import { freshPostgres, postgresReachable } from '../support/database.ts';

const SECRETS_KEY = randomBytes(32);
/** What a worker lets one tenant hold at once, by default. */
const SHARE = DEFAULT_DELIVERY_SETTINGS.perTenant;

/**
 * A receiver that answers nothing until released, like endpoints answering after 30 s: it counts the requests it
 * holds, and the most it held at once.
 */
class SlowReceiver {
  private server!: Server;
  private readonly held = new Set<ServerResponse>();
  private released = false;
  mostHeld = 0;
  arrived = 0;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      req.on('end', () => {
        this.arrived++;
        if (this.released) return void res.writeHead(204).end();
        this.held.add(res);
        this.mostHeld = Math.max(this.mostHeld, this.held.size);
        res.on('close', () => this.held.delete(res));
      });
    });
    this.server.listen(0, '127.0.0.1');
    await new Promise((resolve) => this.server.once('listening', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  get holding(): number {
    return this.held.size;
  }

  /** Answers every request held, and every later one at once. */
  release(): void {
    this.released = true;
    for (const res of this.held) res.writeHead(204).end();
  }

  close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A receiver that answers 204 at once and notes when each event arrived. */
class FastReceiver {
  private server!: Server;
  readonly arrivals: { id: string; at: number }[] = [];
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.arrivals.push({ id: JSON.parse(Buffer.concat(chunks).toString()).id, at: performance.now() });
        res.writeHead(204).end();
      });
    });
    this.server.listen(0, '127.0.0.1');
    await new Promise((resolve) => this.server.once('listening', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function waitFor(what: string, done: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const until = performance.now() + ms;
  while (!(await done())) {
    if (performance.now() > until) throw new Error(`waited ${ms} ms for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Servers delivering every 100 ms, a POST allowed the 30 s. */
const SETTINGS = { secretsKey: SECRETS_KEY, webhooks: { allowHttp: true, delivery: true, pollMs: 100, timeoutMs: 30_000, maxEndpointsPerTenant: 40 } };

/**
 * Tenant B's 40 endpoints take every event and answer nothing; tenant C's test event must still arrive (and be
 * recorded) within 5 s, and B never holds more than its share of a worker's pool.
 */
async function slowNeighbour(replicas: TestApi[], eventsPerEndpoint: number): Promise<void> {
  const [api] = replicas as [TestApi];
  const slow = await new SlowReceiver().start();
  const fast = await new FastReceiver().start();
  cleanups.push(() => slow.close(), () => fast.close());
  const b = await api.newTenant('b');
  const endpoints: string[] = [];
  for (let i = 0; i < 40; i++) {
    const created = await api.call('POST', '/v1/webhook-endpoints', { token: b.token, body: { url: `${slow.url}/b/${i}` } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    endpoints.push(created.body.id);
  }
  for (let round = 0; round < eventsPerEndpoint; round++) {
    for (const id of endpoints) expect((await api.call('POST', `/v1/webhook-endpoints/${id}/test`, { token: b.token })).status).toBe(202);
  }
  await waitFor("B's endpoints to hold a request", () => slow.holding > 0, 10_000);

  const c = await api.newTenant('c');
  const endpoint = await api.call('POST', '/v1/webhook-endpoints', { token: c.token, body: { url: fast.url } });
  const asked = performance.now();
  const sent = await api.call('POST', `/v1/webhook-endpoints/${endpoint.body.id}/test`, { token: c.token });
  expect(sent.status).toBe(202);
  const recorded = async () => (await api.call('GET', `/v1/webhook-endpoints/${endpoint.body.id}/deliveries`, { token: c.token })).body[0]?.status === 'succeeded';
  await waitFor("C's event to be delivered and recorded", recorded, 15_000);
  const took = performance.now() - asked;
  expect(fast.arrivals.map((a) => a.id)).toEqual([sent.body.event_id]);
  expect(took, `C's event took ${Math.round(took)} ms`).toBeLessThan(5_000);
  // B still waits on its endpoints, holding its share of each worker and no more
  await waitFor(`B's endpoints to hold ${SHARE * replicas.length} requests`, () => slow.holding === SHARE * replicas.length, 5_000);
  expect(slow.mostHeld).toBe(SHARE * replicas.length);

  // once B's endpoints answer, every one of its events is delivered once
  slow.release();
  await waitFor("B's events", () => slow.arrived >= 40 * eventsPerEndpoint, 20_000);
  const attempts = () =>
    api.plane.storage.execute<{ succeeded: number; made: number }[]>(
      `select count(*) filter (where d.status = 'succeeded')::int as succeeded, count(*)::int as made
         from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id where w.tenant_id = ?`,
      [b.tenantId],
    );
  await waitFor("B's attempts recorded", async () => (await attempts())[0]!.succeeded === 40 * eventsPerEndpoint, 10_000);
  expect((await attempts())[0]!.made).toBe(40 * eventsPerEndpoint);
  expect(slow.arrived).toBe(40 * eventsPerEndpoint);
}

const onPostgres = await postgresReachable();

describe("one tenant's slow endpoints and another tenant's events", () => {
  it("B's 40 endpoints answering nothing hold B's share of the worker; C's test event arrives within 5 s meanwhile", async () => {
    const api = await startApi(SETTINGS, { clock: new ManualClock(new Date()) });
    cleanups.push(() => api.close());
    // two events per endpoint: more than B's share
    await slowNeighbour([api], 2);
  });

  it.runIf(onPostgres)('the same across two replicas on one PostgreSQL: B holds its share of each, C is delivered within 5 s', async () => {
    const database = await freshPostgres();
    cleanups.push(() => database.drop());
    const clock = new ManualClock(new Date());
    const one = await startApi(SETTINGS, { clock, database });
    cleanups.push(() => one.close());
    const two = await startApi(SETTINGS, { clock, database });
    cleanups.push(() => two.close());
    // three events per endpoint: more than B's share of both
    await slowNeighbour([one, two], 3);
  });

  it("claims take tenants in turns and hold each to its share: B's 30 waiting events do not go before C's one, B never has more than 4 in flight", async () => {
    const api = await startApi({ secretsKey: SECRETS_KEY, webhooks: { allowHttp: true, delivery: false } }, { clock: new ManualClock(new Date()) });
    cleanups.push(() => api.close());
    // answers after 30 ms, noting the order events came in and how many of each path it held at once
    const order: string[] = [];
    const holding = new Map<string, number>();
    const mostHeld = new Map<string, number>();
    const receiver = createServer((req, res) => {
      const path = req.url!;
      req.resume();
      req.on('end', () => {
        order.push(path);
        holding.set(path, (holding.get(path) ?? 0) + 1);
        mostHeld.set(path, Math.max(mostHeld.get(path) ?? 0, holding.get(path)!));
        setTimeout(() => {
          holding.set(path, holding.get(path)! - 1);
          res.writeHead(204).end();
        }, 30);
      });
    });
    receiver.listen(0, '127.0.0.1');
    await new Promise((resolve) => receiver.once('listening', resolve));
    cleanups.push(() => new Promise((resolve) => receiver.close(resolve)));
    const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    const b = await api.newTenant('b');
    const c = await api.newTenant('c');
    const bEndpoint = await api.call('POST', '/v1/webhook-endpoints', { token: b.token, body: { url: `${base}/b` } });
    const cEndpoint = await api.call('POST', '/v1/webhook-endpoints', { token: c.token, body: { url: `${base}/c` } });
    for (let i = 0; i < 30; i++) await api.call('POST', `/v1/webhook-endpoints/${bEndpoint.body.id}/test`, { token: b.token });
    await api.call('POST', `/v1/webhook-endpoints/${cEndpoint.body.id}/test`, { token: c.token });
    const worker = new DeliveryWorker({
      storage: api.plane.storage,
      clock: api.clock,
      ids: new RandomIds(),
      secretBox: new AesGcmSecretBox(SECRETS_KEY),
      signer: new StandardWebhookSigner(),
      transport: new UndiciWebhookTransport({ allowHttpLocalhost: true }),
      settings: { batchSize: 10, concurrency: 8, perTenant: 4 },
    });
    expect(await worker.deliverDue()).toBe(31);
    expect(order).toHaveLength(31);
    expect(order.indexOf('/c')).toBeLessThan(5); // in the first claim, beside B's first 4
    expect(mostHeld.get('/b')).toBe(4);
    const attempts = (await api.call('GET', `/v1/webhook-endpoints/${bEndpoint.body.id}/deliveries?limit=100`, { token: b.token })).body;
    expect(attempts.map((d: any) => d.status)).toEqual(Array(30).fill('succeeded'));
  });
});

