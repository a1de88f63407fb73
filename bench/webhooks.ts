/**
 * bench/webhooks (npm run bench:webhooks): what webhooks cost and how fast they go, on PostgreSQL.
 *
 * 1. The outbox on the rental path: N transactions that lock an instance and change its status (half of them tell
 *    an event, to a tenant with one endpoint), through the evented instance store, vs the same updates through the
 *    plain store (no previous-status read, no outbox row).
 * 2. Delivery: E events to a local receiver (HTTP/1.1 keep-alive, answers 204 at once) by one worker and by two
 *    workers sharing the outbox, vs a baseline of the same signed POSTs sent by undici at the same concurrency
 *    without the database (what the network edge alone allows).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { pino } from 'pino';
import { ManualClock } from '../adapters/clock/manual-clock.ts';
import { AesGcmSecretBox } from '../adapters/crypto/aes-gcm-secret-box.ts';
import { RandomIds } from '../adapters/crypto/node-secrets.ts';
import { MikroInstanceStore } from '../adapters/storage/stores/instance-store.ts';
import { StandardWebhookSigner } from '../adapters/webhooks/standard-signer.ts';
import { UndiciWebhookTransport } from '../adapters/webhooks/undici-transport.ts';
import type { Instance } from '../core/rentals/instance.ts';
import { DeliveryWorker } from '../core/webhooks/delivery-worker.ts';
import { createControlPlane } from '../hosts/composition/control-plane.ts';
import { freshPostgres, postgresReachable } from '../test/support/database.ts';

const UPDATES = Number(process.env.BENCH_UPDATES ?? 2_000);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 2_000);
const KEY = randomBytes(32);

if (!(await postgresReachable())) throw new Error('bench/webhooks needs PostgreSQL (TEST_DATABASE_URL, default the local server)');
const database = await freshPostgres();
const clock = new ManualClock(new Date());
const plane = await createControlPlane(
  {
    storage: database.target,
    operatorKeys: ['bench-operator-key-0123456789'],
    rateLimits: { publicPerMinute: 1e6, perTokenPerMinute: 1e6 },
    logLevel: 'silent',
    secretsKey: KEY,
    market: { backgroundRefresh: false },
    billing: { sweep: false },
    webhooks: { allowHttp: true, delivery: false },
  },
  { clock, logger: pino({ level: 'silent' }) },
);
const storage = plane.storage;

let received = 0;
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    received++;
    res.writeHead(204).end();
  });
});
receiver.listen(0, '127.0.0.1');
await new Promise((resolve) => receiver.once('listening', resolve));
const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const { tenant, bootstrapSecret } = await plane.services.tenancy.createTenant('bench');
const issued = await plane.services.tenancy.issueToken({ kind: 'bootstrap', tenantId: tenant.id, secret: bootstrapSecret }, { scopes: ['read', 'rent', 'manage', 'billing'] });
// registered as an operations token under the root one, as a deployment wires alerts: each delivery checks its chain
const ops = await plane.services.tenancy.issueToken({ kind: 'token', token: issued.token }, { scopes: ['read', 'manage'], spendLimitCents: 100 });
await plane.services.webhooks.create(tenant.id, { url, events: null, description: null }, ops.token.id);

// ---- 1. the outbox on the rental path -----------------------------------------------------------------------
const now = clock.now();
const instance = (id: string): Instance => ({
  id, tenantId: tenant.id, tokenId: 'tok_bench', nodeId: 'sandbox:1', provider: 'sandbox', offerId: '1', name: null, status: 'provisioning',
  gpuType: 'H100', gpuCount: 1, rateCentsPerHour: 100, createdAt: now, startedAt: null, paidUntil: new Date(now.getTime() + 3_600_000),
  removalScheduledAt: null, windowEndsAt: null, terminatedAt: null, machineId: null, sshHost: null, sshPort: null, idempotencyKey: null,
  requestDigest: 'x', chargedCents: 100, commitmentCents: 100, lastSeenAt: null, failure: null, launch: null, image: null, templateId: null,
  sshKeyId: null, volumeIds: [], ledgerNote: null, minimumMinutes: 60, preemptedAt: null, recovery: null,
} as Instance);
const ids = ['ins_benchevented', 'ins_benchplainxx'];
await storage.transaction((uow) => uow.accounts.lock(tenant.id, now)); // instances belong to an account
for (const id of ids) await storage.transaction((uow) => uow.instances.add({ ...instance(id), tokenId: issued.token.id }));
// a tenant without endpoints (most of them): its events write nothing
const quiet = await plane.services.tenancy.createTenant('quiet');
const quietToken = await plane.services.tenancy.issueToken({ kind: 'bootstrap', tenantId: quiet.tenant.id, secret: quiet.bootstrapSecret }, { scopes: ['read'] });
await storage.transaction((uow) => uow.accounts.lock(quiet.tenant.id, now));
await storage.transaction((uow) => uow.instances.add({ ...instance('ins_benchquietxx'), tenantId: quiet.tenant.id, tokenId: quietToken.token.id }));

/** One transaction: lock the instance, flip its status (running every other time: an event when evented). */
async function flip(id: string, i: number, plain: boolean, tenantId = tenant.id): Promise<number> {
  const started = performance.now();
  await storage.transaction(async (uow) => {
    const locked = await uow.instances.lock(tenantId, id);
    const next: Instance = { ...locked!, status: i % 2 === 0 ? 'running' : 'provisioning', startedAt: i % 2 === 0 ? now : null };
    if (plain) await new MikroInstanceStore((uow.instances as unknown as { db: never }).db).update(next);
    else await uow.instances.update(next);
  });
  return performance.now() - started;
}
// interleaved, one evented then one plain, so both see the same load (the bench machine is shared)
const evented: number[] = [];
const plain: number[] = [];
const unheard: number[] = [];
for (let i = 0; i < UPDATES + 200; i++) {
  const [e, p, q] = [await flip(ids[0]!, i, false), await flip(ids[1]!, i, true), await flip('ins_benchquietxx', i, false, quiet.tenant.id)];
  if (i >= 200) [evented[i - 200], plain[i - 200], unheard[i - 200]] = [e, p, q]; // the first 200 warm up
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const us = (ms: number) => (ms * 1000).toFixed(0);
const total = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
console.log(
  `instance updates (${UPDATES} each, interleaved, half telling an event): evented median ${us(median(evented))} us, mean ${us(total(evented) / UPDATES)} us; ` +
    `plain median ${us(median(plain))} us, mean ${us(total(plain) / UPDATES)} us (${(total(evented) / total(plain)).toFixed(2)}x); ` +
    `evented for a tenant without endpoints median ${us(median(unheard))} us, mean ${us(total(unheard) / UPDATES)} us (${(total(unheard) / total(plain)).toFixed(2)}x)`,
);
await storage.execute('delete from webhook_deliveries');

// ---- 2. delivery ----------------------------------------------------------------------------------------------
const worker = () =>
  new DeliveryWorker({
    storage, clock, ids: new RandomIds(), secretBox: new AesGcmSecretBox(KEY), signer: new StandardWebhookSigner(),
    transport: new UndiciWebhookTransport({ allowHttpLocalhost: true }),
  });
async function schedule(): Promise<void> {
  for (let i = 0; i < EVENTS; i += 500) {
    await storage.transaction(async (uow) => {
      for (let j = i; j < Math.min(EVENTS, i + 500); j++) await uow.events.emit({ tenantId: tenant.id, type: 'balance.low', data: { n: j }, at: clock.now() });
    });
  }
}
async function deliverWith(workers: DeliveryWorker[]): Promise<number> {
  await schedule();
  received = 0;
  const started = performance.now();
  await Promise.all(workers.map((w) => w.deliverDue()));
  const ms = performance.now() - started;
  if (received !== EVENTS) throw new Error(`received ${received} of ${EVENTS}`);
  return ms;
}
async function baseline(): Promise<number> {
  const agent = new Agent({ keepAliveTimeout: 10_000 });
  const signer = new StandardWebhookSigner();
  const secret = signer.newSecret();
  received = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < EVENTS) {
        const n = next++;
        const body = JSON.stringify({ id: `evt_${n}`, type: 'balance.low', created_at: new Date().toISOString(), data: { n } });
        const answer = await request(url, { method: 'POST', dispatcher: agent, body, headers: { 'content-type': 'application/json', 'webhook-id': `evt_${n}`, 'webhook-timestamp': '0', 'webhook-signature': signer.sign(secret, `evt_${n}`, new Date(), body) } });
        await answer.body.dump();
      }
    }),
  );
  const ms = performance.now() - started;
  await agent.close();
  return ms;
}
const rate = (ms: number) => Math.round((EVENTS / ms) * 1000);
console.log(`load average before delivery: ${(await import('node:os')).loadavg().map((x) => x.toFixed(1)).join(' ')}`);
const runs = { one: [] as number[], two: [] as number[], base: [] as number[] };
await deliverWith([worker()]); // warm
for (let round = 0; round < 3; round++) {
  runs.one.push(await deliverWith([worker()]));
  runs.two.push(await deliverWith([worker(), worker()]));
  runs.base.push(await baseline());
}
console.log(
  `delivery of ${EVENTS} events (median of 3): one worker ${rate(median(runs.one))}/s, two workers ${rate(median(runs.two))}/s; ` +
    `baseline (undici alone, 8 at once, signed, no database) ${rate(median(runs.base))}/s`,
);

receiver.close();
await plane.close();
await database.drop();
// autocannon's worker thread (workers: 1) keeps a MessagePort open once it is done: the run would never end
process.exit();
