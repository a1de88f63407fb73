import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_KEY } from '../support/api.ts';
import { freshPostgres, postgresReachable } from '../support/database.ts';
import { parseSamples, valueOf, type Sample } from '../support/prometheus.ts';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';

const METRICS_TOKEN = 'metrics-token-for-the-scraper-0123';
const HOUR = 3_600_000;

let world: RentalWorld;
beforeAll(async () => {
  world = await rentalWorld({ metrics: { token: METRICS_TOKEN }, secretsKey: randomBytes(32), webhooks: { allowHttp: true, delivery: false } });
});
afterAll(() => world.close());

async function scrape(): Promise<Sample[]> {
  const res = await fetch(`${world.api.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(res.status).toBe(200);
  return parseSamples(await res.text());
}

/** How each named sample moved while `work` ran. */
async function moved(work: () => Promise<unknown>, ...wanted: [name: string, labels?: Record<string, string>][]): Promise<number[]> {
  const before = await scrape();
  await work();
  const after = await scrape();
  return wanted.map(([name, labels]) => valueOf(after, name, labels) - valueOf(before, name, labels));
}

describe('GET /metrics', () => {
  it('answers an operator key or the metrics token in the Prometheus text format, anything else 401 {detail}', async () => {
    const url = `${world.api.baseUrl}/metrics`;
    const tenant = await world.api.newTenant();
    for (const headers of [{}, { authorization: 'Bearer wrong-token-wrong-token-0000' }, { authorization: `Bearer ${tenant.token}` }, { 'x-service-operator-key': 'not-the-operator-key-000' }, { authorization: METRICS_TOKEN }]) {
      const res = await fetch(url, { headers });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(((await res.json()) as { detail: string }).detail).toMatch(/X-Service-Operator-Key.*METRICS_TOKEN/);
    }
    for (const headers of [{ 'x-service-operator-key': OPERATOR_KEY }, { authorization: `Bearer ${METRICS_TOKEN}` }]) {
      const res = await fetch(url, { headers });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      const text = await res.text();
      for (const name of ['http_requests_total', 'http_request_duration_seconds', 'rentals_created_total', 'sweep_pass_duration_seconds', 'provider_call_duration_seconds', 'ledger_amount_cents_total', 'webhook_deliveries_total']) {
        expect(text).toContain(`# TYPE ${name} `);
      }
    }
  });

  it('counts requests by route template and status, never by raw path', async () => {
    const { token } = await world.api.newTenant();
    const missing = 'ins_0000metricsprobe';
    const labels = { method: 'GET', route: '/v1/instances/{instance_id}', status: '404' };
    const [requests, timed, unmatched] = await moved(
      async () => {
        for (let i = 0; i < 3; i++) expect((await world.api.call('GET', `/v1/instances/${missing}${i}`, { token })).status).toBe(404);
        expect((await world.api.call('GET', `/no/such/path/${missing}`)).status).toBe(404);
      },
      ['http_requests_total', labels],
      ['http_request_duration_seconds_count', labels],
      ['http_requests_total', { route: 'unmatched', status: '404' }],
    );
    expect(requests).toBe(3);
    expect(timed).toBe(3);
    expect(unmatched).toBe(1);
    const text = await (await fetch(`${world.api.baseUrl}/metrics`, { headers: OPERATOR })).text();
    expect(text).not.toContain(missing);
  });

  it('counts rentals made and refused, provider calls and their errors, and ledger cents by kind', async () => {
    const tenant = await world.fundedTenant(100);
    const [node, other] = await world.offers((offer) => offer.rate >= 60 && offer.rate <= 400);
    const [created, createCalls, debited, credited] = await moved(
      async () => expect((await world.rent(tenant.token, { node_id: node!.id })).status).toBe(201),
      ['rentals_created_total', { provider: 'sandbox' }],
      ['provider_calls_total', { provider: 'sandbox', operation: 'createMachine', outcome: 'ok' }],
      ['ledger_amount_cents_total', { kind: 'rental_hour', direction: 'debit' }],
      ['ledger_entries_total', { kind: 'credit' }],
    );
    expect(created).toBe(1);
    expect(createCalls).toBe(1);
    expect(debited).toBe(node!.rate);
    expect(credited).toBe(0);

    world.sandbox.cloud.failNextCreates(1, 'rejected');
    const [refused, errors, calls, refunded, charged] = await moved(
      async () => expect((await world.rent(tenant.token, { node_id: other!.id })).body.detail).toMatch(/refused the machine/),
      ['rentals_failed_total', { provider: 'sandbox', reason: 'refused' }],
      ['provider_call_errors_total', { provider: 'sandbox', operation: 'createMachine', kind: 'rejected' }],
      ['provider_call_duration_seconds_count', { provider: 'sandbox', operation: 'createMachine' }],
      ['ledger_amount_cents_total', { kind: 'refund', direction: 'credit' }],
      ['ledger_amount_cents_total', { kind: 'rental_hour', direction: 'debit' }],
    );
    expect([refused, errors, calls]).toEqual([1, 1, 1]);
    // the first hour charged, then given back in full
    expect(charged).toBe(other!.rate);
    expect(refunded).toBe(other!.rate);

    const [credits] = await moved(() => world.fundedTenant('12.34'), ['ledger_amount_cents_total', { kind: 'credit', direction: 'credit' }]);
    expect(credits).toBe(1_234);
  });

  it('a refused rental (no funds) moves no ledger counter: only committed entries count', async () => {
    const poor = await world.fundedTenant('0.01');
    const [node] = await world.offers((offer) => offer.rate >= 60);
    const [entries, created] = await moved(async () => expect((await world.rent(poor.token, { node_id: node!.id })).status).toBe(402), ['ledger_entries_total'], ['rentals_created_total']);
    expect([entries, created]).toEqual([0, 0]);
  });

  it('times each sweep pass and its steps and counts what it did', async () => {
    const tenant = await world.fundedTenant(100);
    const [node] = await world.offers((offer) => offer.rate >= 60 && offer.rate <= 400);
    const rented = await world.rent(tenant.token, { node_id: node!.id });
    expect(rented.status, JSON.stringify(rented.body)).toBe(201);
    world.clock.set(new Date(world.clock.now().getTime() + HOUR));
    let blocksPaid = 0;
    const [passes, timed, steps, blocks, blockCents, listings] = await moved(
      async () => {
        const res = await world.api.call('POST', '/v1/operator/sweep', { headers: OPERATOR });
        expect(res.status).toBe(200);
        blocksPaid = res.body.blocks_paid;
      },
      ['sweep_passes_total', { outcome: 'ran' }],
      ['sweep_pass_duration_seconds_count'],
      ['sweep_step_duration_seconds_count', { step: 'hour blocks' }],
      ['sweep_items_total', { item: 'blocks_paid' }],
      ['ledger_entries_total', { kind: 'rental_hour' }],
      ['provider_calls_total', { provider: 'sandbox', operation: 'listMachines' }],
    );
    expect(blocksPaid).toBeGreaterThanOrEqual(1);
    expect([passes, timed, steps]).toEqual([1, 1, 1]);
    expect(blocks).toBe(blocksPaid);
    expect(blockCents).toBe(blocksPaid);
    expect(listings).toBe(1); // the reconcile step, counted at the provider port
  });

  it('times and counts webhook delivery attempts by outcome and the receiver status class', async () => {
    let answer = 500;
    const receiver: Server = createServer((req, res) => req.resume().on('end', () => res.writeHead(answer).end()));
    await new Promise((done) => receiver.listen(0, '127.0.0.1', () => done(null)));
    try {
      const { token } = await world.api.newTenant();
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
      const endpoint = await world.api.call('POST', '/v1/webhook-endpoints', { token, body: { url } });
      expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
      const deliver = async () => {
        expect((await world.api.call('POST', `/v1/webhook-endpoints/${endpoint.body.id}/test`, { token })).status).toBeLessThan(300);
        await world.api.plane.services.webhookDeliveries.deliverDue();
      };
      const [failed, failedTimed] = await moved(deliver, ['webhook_deliveries_total', { outcome: 'failed', status_class: '5xx' }], ['webhook_delivery_duration_seconds_count', { outcome: 'failed' }]);
      expect([failed, failedTimed]).toEqual([1, 1]);
      answer = 204;
      world.clock.set(new Date(world.clock.now().getTime() + HOUR)); // the failed attempt's retry is due too
      const [delivered] = await moved(deliver, ['webhook_deliveries_total', { outcome: 'delivered', status_class: '2xx' }]);
      expect(delivered).toBe(2);
    } finally {
      receiver.closeAllConnections();
      await new Promise((done) => receiver.close(() => done(null)));
    }
  });
});

describe.runIf(await postgresReachable())('the sweep daemon on METRICS_PORT', () => {
  it('serves GET /metrics with the same credentials, and nothing else', async () => {
    const database = await freshPostgres();
    const probe = createServer();
    await new Promise((done) => probe.listen(0, '127.0.0.1', () => done(null)));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((done) => probe.close(() => done(null)));
    const env = {
      ...process.env,
      DATABASE_URL: (database.target as { url: string }).url,
      METRICS_PORT: String(port),
      METRICS_TOKEN,
      OPERATOR_KEYS: OPERATOR_KEY,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
    };
    const daemon = spawn(process.execPath, [resolve(import.meta.dirname, '../../hosts/sweep/main.ts')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      await new Promise<void>((listening, failed) => {
        let out = '';
        daemon.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes('sweep daemon metrics on')) listening();
        });
        daemon.once('exit', (code) => failed(new Error(`the daemon exited (${code}): ${out}`)));
      });
      const url = `http://127.0.0.1:${port}`;
      const scraped = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(scraped.status).toBe(200);
      expect(scraped.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(await scraped.text()).toContain('# TYPE sweep_pass_duration_seconds histogram');
      expect((await fetch(`${url}/metrics`, { headers: { 'x-service-operator-key': OPERATOR_KEY } })).status).toBe(200);
      const refused = await fetch(`${url}/metrics`);
      expect(refused.status).toBe(401);
      expect(((await refused.json()) as { detail: string }).detail).toMatch(/METRICS_TOKEN/);
      expect((await fetch(`${url}/v1/gpus`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status).toBe(404);
    } finally {
      const exited = new Promise((done) => daemon.once('exit', done));
      daemon.kill('SIGTERM');
      await exited;
      await database.drop();
    }
  }, 30_000);
});
