/**
 * Benchmark of renting: POST /v1/instances over HTTP from 16 tenants at once, each renting node after
 * node on the sandbox provider (a 50,000-offer market) for BENCH_SECONDS, beside a baseline measured in
 * the same run: 16 concurrent loops of a single-row UPDATE of an account's balance on the same
 * database. A rental is one price check, one transaction (locks, checks, insert, ledger, commitment),
 * one provider call and one update. `npm run bench:rent`.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { pino } from 'pino';
import { createSandboxProvider } from '../adapters/providers/sandbox/index.ts';
import { createControlPlane } from '../hosts/composition/control-plane.ts';
import { createHttpApp } from '../hosts/http/app.ts';
import { freshDatabase } from '../test/support/database.ts';

const TENANTS = 16;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const OPERATOR_KEY = 'bench-operator-key-0123456789';

async function json(url: string, init: RequestInit & { body?: string }, expected: number): Promise<any> {
  const res = await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...(init.headers as Record<string, string>) } });
  const body = await res.json();
  if (res.status !== expected) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

async function main(): Promise<void> {
  const database = await freshDatabase();
  const sandbox = createSandboxProvider({ offers: 50_000 });
  const plane = await createControlPlane(
    {
      storage: database.target,
      operatorKeys: [OPERATOR_KEY],
      rateLimits: { publicPerMinute: 1_000_000, perTokenPerMinute: 100_000_000 },
      logLevel: 'silent',
      market: { backgroundRefresh: false },
      billing: { sweep: false, defaultMaxBurnCentsPerHour: null },
    },
    { logger: pino({ level: 'silent' }), providers: [sandbox] },
  );
  const server = createHttpApp(plane).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const cpus = os.cpus();
    console.log(`machine: ${cpus.length} × ${cpus[0]?.model ?? 'CPU'}, Node ${process.version}, storage: ${database.target.kind}`);
    const offers = (await sandbox.listOffers()).filter((o) => o.available > 0).map((o) => o.id);
    const tenants = [];
    for (let t = 0; t < TENANTS; t++) {
      const tenant = await json(`${base}/v1/tenants`, { method: 'POST', body: JSON.stringify({ name: `bench-${t}` }) }, 201);
      const token = await json(`${base}/v1/tokens`, { method: 'POST', body: JSON.stringify({ tenant_id: tenant.id, bootstrap_secret: tenant.bootstrap_secret, scopes: ['rent'] }) }, 201);
      await json(`${base}/v1/operator/tenants/${tenant.id}/credit`, { method: 'POST', headers: { 'x-service-operator-key': OPERATOR_KEY }, body: JSON.stringify({ amount_usd: 100_000, reason: 'bench' }) }, 201);
      tenants.push({ id: tenant.id as string, token: token.token as string, nodes: offers.filter((_, i) => i % TENANTS === t) });
    }

    // rentals: each tenant rents its own nodes one after another
    const latencies: number[] = [];
    let failures = 0;
    const deadline = performance.now() + SECONDS * 1000;
    await Promise.all(
      tenants.map(async (tenant) => {
        for (let n = 0; performance.now() < deadline && n < tenant.nodes.length; n++) {
          const started = performance.now();
          const res = await fetch(`${base}/v1/instances`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${tenant.token}` },
            body: JSON.stringify({ node_id: tenant.nodes[n], idempotency_key: `bench-${n}` }),
          });
          await res.arrayBuffer();
          if (res.status === 201) latencies.push(performance.now() - started);
          else failures++;
        }
      }),
    );
    const rentals = latencies.length / SECONDS;

    // baseline: the same concurrency, each loop one single-row UPDATE on the same database
    let updates = 0;
    const baseDeadline = performance.now() + SECONDS * 1000;
    await Promise.all(
      tenants.map(async (tenant) => {
        while (performance.now() < baseDeadline) {
          await plane.storage.execute('update accounts set balance_cents = balance_cents where tenant_id = ?', [tenant.id]);
          updates++;
        }
      }),
    );

    latencies.sort((a, b) => a - b);
    const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((latencies.length * p) / 100))]?.toFixed(1);
    const ledger = await plane.storage.execute<{ n: string }[]>(`select count(*) as n from ledger_entries where kind = 'rental_hour'`);
    console.log(`\n${TENANTS} tenants at once, ${SECONDS} s each run`);
    console.log(`rentals:  ${rentals.toFixed(0)} per second (p50 ${pct(50)} ms, p99 ${pct(99)} ms), ${failures} refused`);
    console.log(`baseline: ${(updates / SECONDS).toFixed(0)} single-row updates per second`);
    console.log(`ratio:    ${((rentals / (updates / SECONDS)) * 100).toFixed(1)}% of the baseline`);
    console.log(`check:    ${ledger[0]?.n} first-hour charges for ${latencies.length} rentals; ${(await sandbox.cloud.listMachines()).length} machines upstream`);
    if (Number(ledger[0]?.n) !== latencies.length || failures > 0) process.exitCode = 1;
  } finally {
    server.closeAllConnections();
    server.close();
    await plane.close();
    await database.drop();
  }
}

await main();
