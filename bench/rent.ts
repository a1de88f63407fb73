/**
 * Benchmark of renting: POST /v1/instances over HTTP from 16 tenants at once, each renting node after
 * node on the sandbox provider (a 50,000-offer market) for BENCH_SECONDS, by node id, then by search, beside a
 * baseline measured in the same run: 16 concurrent loops of a single-row UPDATE of an account's balance on the
 * same database. A rental is one price check, one transaction (locks, checks, insert, ledger, commitment),
 * one provider call and one update; by search, the market's snapshot is searched first (a search that names one
 * node by its GPU type, count and host: a miss of the search cache each time) and the node's verified price is
 * checked against the ceiling. `npm run bench:rent`.
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
    // verified nodes, each found by a search of its own (GPU type, count and host id name one node)
    const seen = new Map<string, number>();
    const named = (o: { gpuType: string; gpuCount: number; attributes: Record<string, unknown> }) => `${o.gpuType}/${o.gpuCount}/${String(o.attributes.host_id)}`;
    const all = (await sandbox.listOffers()).filter((o) => o.available > 0 && o.priceVerified);
    for (const o of all) seen.set(named(o), (seen.get(named(o)) ?? 0) + 1);
    const offers = all.filter((o) => seen.get(named(o)) === 1);
    const tenants: { id: string; token: string; byId: object[]; bySearch: object[] }[] = [];
    for (let t = 0; t < TENANTS; t++) {
      const tenant = await json(`${base}/v1/tenants`, { method: 'POST', body: JSON.stringify({ name: `bench-${t}` }) }, 201);
      const token = await json(`${base}/v1/tokens`, { method: 'POST', body: JSON.stringify({ tenant_id: tenant.id, bootstrap_secret: tenant.bootstrap_secret, scopes: ['rent'] }) }, 201);
      await json(`${base}/v1/operator/tenants/${tenant.id}/credit`, { method: 'POST', headers: { 'x-service-operator-key': OPERATOR_KEY }, body: JSON.stringify({ amount_usd: 100_000, reason: 'bench' }) }, 201);
      const byId = offers.filter((_, i) => i % (2 * TENANTS) === t).map((o) => ({ node_id: o.id }));
      const bySearch = offers
        .filter((_, i) => i % (2 * TENANTS) === TENANTS + t)
        .map((o) => ({ search: { gpu_type: o.gpuType, gpu_count: o.gpuCount, extra_filters: `host_id=${String(o.attributes.host_id)}`, max_price_per_gpu_hour: 1_000 } }));
      tenants.push({ id: tenant.id as string, token: token.token as string, byId, bySearch });
    }

    /** Each tenant rents its own nodes one after another, for SECONDS: rentals a second and their latencies. */
    const rentAll = async (bodiesOf: (tenant: (typeof tenants)[number]) => object[], prefix: string) => {
      const latencies: number[] = [];
      let failures = 0;
      const deadline = performance.now() + SECONDS * 1000;
      await Promise.all(
        tenants.map(async (tenant) => {
          const bodies = bodiesOf(tenant);
          for (let n = 0; performance.now() < deadline && n < bodies.length; n++) {
            const started = performance.now();
            const res = await fetch(`${base}/v1/instances`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: `Bearer ${tenant.token}` },
              body: JSON.stringify({ ...bodies[n], idempotency_key: `${prefix}-${n}` }),
            });
            await res.arrayBuffer();
            if (res.status === 201) latencies.push(performance.now() - started);
            else failures++;
          }
        }),
      );
      latencies.sort((a, b) => a - b);
      const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((latencies.length * p) / 100))]?.toFixed(1);
      return { count: latencies.length, perSecond: latencies.length / SECONDS, p50: pct(50), p99: pct(99), failures };
    };
    // the market's snapshot is made before either run (the first search would wait for it otherwise)
    await plane.services.market.search({ extra: [] }, 1);
    const byId = await rentAll((tenant) => tenant.byId, 'id');
    const bySearch = await rentAll((tenant) => tenant.bySearch, 'search');

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

    const ledger = await plane.storage.execute<{ n: string }[]>(`select count(*) as n from ledger_entries where kind = 'rental_hour'`);
    const baseline = updates / SECONDS;
    const row = (label: string, r: typeof byId) =>
      `${label} ${r.perSecond.toFixed(0)} per second (p50 ${r.p50} ms, p99 ${r.p99} ms), ${r.failures} refused; ${((r.perSecond / baseline) * 100).toFixed(1)}% of the baseline`;
    console.log(`\n${TENANTS} tenants at once, ${SECONDS} s each run`);
    console.log(row('rent by node id:', byId));
    console.log(row('rent by search: ', bySearch));
    console.log(`baseline:         ${baseline.toFixed(0)} single-row updates per second`);
    console.log(`search / node id: ${((bySearch.perSecond / byId.perSecond) * 100).toFixed(1)}% of the rentals a second`);
    const rented = byId.count + bySearch.count;
    console.log(`check:    ${ledger[0]?.n} first-hour charges for ${rented} rentals; ${(await sandbox.cloud.listMachines()).length} machines upstream`);
    if (Number(ledger[0]?.n) !== rented || byId.failures + bySearch.failures > 0) process.exitCode = 1;
  } finally {
    server.closeAllConnections();
    server.close();
    await plane.close();
    await database.drop();
  }
}

await main();
