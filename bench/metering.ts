/**
 * Benchmark of metering on PostgreSQL, each figure beside a plain-SQL baseline measured in the same run:
 *  - ingest: POST /v1/metering/usage over HTTP from 16 connections (autocannon on a worker thread; 16 tenants,
 *    then one tenant and one kind, whose records all take the same running total's row lock) beside 16
 *    connections each sending single-row INSERTs into a table of the same shape (same columns, indexes and
 *    checks; no running total). Goal: >= 25% of the plain rate.
 *  - settle: 1,000,000 unsettled records (100 tenants) posted to the ledger by the sweep's settle step, beside
 *    the plain statements that write the same rows (INSERT the ledger entries, UPDATE the records, UPDATE the
 *    balances) in one transaction on copies of the tables. Goal: within 3x of the plain statements.
 * `npm run bench:metering` (BENCH_SECONDS, BENCH_SETTLE_RECORDS to change the sizes).
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { pino } from 'pino';
import { createControlPlane } from '../hosts/composition/control-plane.ts';
import { createHttpApp } from '../hosts/http/app.ts';
import { freshPostgres, postgresReachable } from '../test/support/database.ts';

const CONNECTIONS = 16;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const SETTLE_RECORDS = Number(process.env.BENCH_SETTLE_RECORDS ?? 1_000_000);
const SETTLE_TENANTS = 100;
const OPERATOR_KEY = 'bench-operator-key-0123456789';

const REQUESTS_MODULE = fileURLToPath(new URL('./metering-requests.cjs', import.meta.url));

const goal = (met: boolean) => (met ? 'goal met' : 'GOAL MISSED');

async function json(url: string, init: RequestInit & { body?: string }, expected: number): Promise<any> {
  const res = await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...(init.headers as Record<string, string>) } });
  const body = await res.json();
  if (res.status !== expected) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/** `loops` concurrent loops of `work` for SECONDS; answers how many per second succeeded. */
async function rate(loops: number, work: (loop: number, n: number) => Promise<boolean>): Promise<{ perSecond: number; failures: number }> {
  let done = 0;
  let failures = 0;
  const started = performance.now();
  const deadline = started + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: loops }, async (_, loop) => {
      for (let n = 0; performance.now() < deadline; n++) {
        if (await work(loop, n)) done++;
        else failures++;
      }
    }),
  );
  return { perSecond: done / ((performance.now() - started) / 1000), failures };
}

async function main(): Promise<void> {
  if (!(await postgresReachable())) throw new Error('bench:metering needs PostgreSQL (TEST_DATABASE_URL or 127.0.0.1:5432)');
  const database = await freshPostgres();
  const plane = await createControlPlane(
    {
      storage: { ...database.target, ...(database.target.kind === 'postgres' && { poolSize: 20 }) },
      operatorKeys: [OPERATOR_KEY],
      rateLimits: { publicPerMinute: 1_000_000, perTokenPerMinute: 100_000_000 },
      logLevel: 'silent',
      market: { backgroundRefresh: false },
      billing: { sweep: false },
      metering: { prices: { gpu_seconds: { unit: 'second', usd_per_unit: '0.0004' } } },
    },
    { logger: pino({ level: 'silent' }) },
  );
  const server = createHttpApp(plane).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const url = database.target.kind === 'postgres' ? database.target.url : '';
  const sql = (text: string, params: unknown[] = []) => plane.storage.execute<Record<string, unknown>[]>(text, params);
  try {
    const cpus = os.cpus();
    console.log(`machine: ${cpus.length} × ${cpus[0]?.model ?? 'CPU'}, Node ${process.version}, PostgreSQL`);

    // ---- ingest ------------------------------------------------------------------------------
    const tenants: { token: string }[] = [];
    for (let t = 0; t < CONNECTIONS; t++) {
      const tenant = await json(`${base}/v1/tenants`, { method: 'POST', body: JSON.stringify({ name: `bench-${t}` }) }, 201);
      const token = await json(`${base}/v1/tokens`, { method: 'POST', body: JSON.stringify({ tenant_id: tenant.id, bootstrap_secret: tenant.bootstrap_secret, scopes: ['billing'] }) }, 201);
      tenants.push({ token: token.token });
    }
    // autocannon on a worker thread, so the load generator does not share the server's event loop
    const load = async (tokens: string[], seconds: number) => {
      process.env.BENCH_METERING_TOKENS = JSON.stringify(tokens);
      const cpuBefore = process.threadCpuUsage();
      const result = await autocannon({
        url: base,
        connections: CONNECTIONS,
        duration: seconds,
        workers: 1,
        requests: [{ method: 'POST', path: '/v1/metering/usage', setupRequest: REQUESTS_MODULE }],
      });
      const cpu = process.threadCpuUsage(cpuBefore);
      return {
        perSecond: result['2xx'] / result.duration,
        failures: result.non2xx + result.errors,
        p50: result.latency.p50,
        p99: result.latency.p99,
        // the server runs on this thread alone (autocannon on its own): its CPU per record
        cpuUs: (cpu.user + cpu.system) / Math.max(1, result['2xx'] + result.non2xx),
      };
    };
    const tokens = tenants.map((t) => t.token);
    await load(tokens, 2); // warm-up
    const spread = await load(tokens, SECONDS);
    const hot = await load([tokens[0]!], SECONDS);

    await sql(`create table usage_baseline (like usage_records including all)`);
    const clients = await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        return client;
      }),
    );
    const tenantIds = (await sql(`select tenant_id from accounts order by tenant_id`)).map((r) => String(r.tenant_id));
    let serial = 0;
    const insert = async (loop: number, n: number) => {
      const id = `usg_base${serial++}`;
      await clients[loop]!.query(
        `insert into usage_baseline (id, tenant_id, resource_kind, quantity, unit, unit_price_usd, amount_cents, started_at, ended_at, reference, unique_key, request, created_at)
         values ($1, $2, 'gpu_seconds', $3::numeric, 'second', 0.0004, 1, $4, null, $5, $6, null, $4)`,
        [id, tenantIds[loop % tenantIds.length], `${1 + (n % 97)}.25`, new Date(), `job-${n}`, `rec:${id}`],
      );
      return true;
    };
    const plain = await rate(CONNECTIONS, insert);
    await Promise.all(clients.map((c) => c.end()));
    const checked = await sql(`select count(*) as n, sum(amount_cents) as cents from usage_records`);
    const ratio = spread.perSecond / plain.perSecond;
    console.log(`\ningest, ${CONNECTIONS} connections, ${SECONDS} s each run`);
    console.log(`  POST /v1/metering/usage, 16 tenants:        ${spread.perSecond.toFixed(0)} records/s (p50 ${spread.p50} ms, p99 ${spread.p99} ms, server ${spread.cpuUs.toFixed(0)} µs CPU each, ${spread.failures} failed)`);
    console.log(`  POST /v1/metering/usage, 1 tenant, 1 kind:  ${hot.perSecond.toFixed(0)} records/s (p50 ${hot.p50} ms, p99 ${hot.p99} ms, server ${hot.cpuUs.toFixed(0)} µs CPU each, ${hot.failures} failed; each record waits for the kind's running total)`);
    console.log(`  plain single-row INSERT, same table shape:  ${plain.perSecond.toFixed(0)} rows/s`);
    console.log(`  ratio: ${(ratio * 100).toFixed(1)}% of the plain rate (goal >= 25%): ${goal(ratio >= 0.25)}`);
    console.log(`  check: ${checked[0]?.n} records, ${checked[0]?.cents} cents`);

    // ---- settle ------------------------------------------------------------------------------
    await sql(`drop table usage_baseline`);
    await sql(`update usage_records set settled_at = now() where settled_at is null`); // the ingest run's records are out of the way
    const perTenant = Math.ceil(SETTLE_RECORDS / SETTLE_TENANTS);
    const settleTenants: string[] = [];
    for (let t = 0; t < SETTLE_TENANTS; t++) {
      const { tenant } = await plane.services.tenancy.createTenant(`settle-${t}`);
      await plane.services.billing.credit(tenant.id, 10_000_000, 'bench funds'); // 100,000 USD: every record fits
      settleTenants.push(tenant.id);
    }
    await sql(
      `insert into usage_records (id, tenant_id, resource_kind, quantity, unit, unit_price_usd, amount_cents, started_at, unique_key, created_at)
       select 'usg_s' || g, t.id, 'gpu_seconds', 2.5, 'second', 0.0004, g % 3, now(), 'rec:usg_s' || g, now()
         from generate_series(0, ? - 1) g join unnest(?::text[]) with ordinality as t(id, k) on t.k - 1 = g % ?`,
      [perTenant * SETTLE_TENANTS, `{${settleTenants.join(',')}}`, SETTLE_TENANTS],
    );
    // copies for the baseline: same columns, indexes, checks and foreign keys
    await sql(`create table b_usage (like usage_records including all)`);
    await sql(`insert into b_usage select * from usage_records where settled_at is null`);
    await sql(`create table b_ledger (like ledger_entries including all)`);
    await sql(`create table b_accounts (like accounts including all)`);
    await sql(`insert into b_accounts select * from accounts`);
    // LIKE copies no foreign key: the ledger's own (to the account) is checked for every entry, so the copy has it too
    await sql(`alter table b_ledger add foreign key (tenant_id) references b_accounts (tenant_id)`);
    await sql(`vacuum analyze`);
    const [unsettled] = await sql(`select count(*) as n, sum(amount_cents) as cents from usage_records where settled_at is null`);

    const baseline = new pg.Client({ connectionString: url });
    await baseline.connect();
    let started = performance.now();
    await baseline.query('begin');
    await baseline.query(
      `insert into b_ledger (id, tenant_id, kind, amount_cents, balance_after_cents, reference, description, unique_key, created_at)
       select 'led_' || substr(md5('usage:' || r.id), 1, 20), r.tenant_id, 'usage', -r.amount_cents, 0, r.id, r.resource_kind, 'usage:' || r.id, now()
         from b_usage r where r.settled_at is null`,
    );
    await baseline.query(`update b_usage set settled_at = now() where settled_at is null`);
    await baseline.query(
      `update b_accounts a set balance_cents = a.balance_cents - s.total
         from (select tenant_id, sum(amount_cents) as total from b_usage group by tenant_id) s where a.tenant_id = s.tenant_id`,
    );
    await baseline.query('commit');
    const plainMs = performance.now() - started;
    await baseline.end();

    started = performance.now();
    const settled = await plane.services.metering.settleAll();
    const settleMs = performance.now() - started;
    const [after] = await sql(`select count(*) as n from ledger_entries where kind = 'usage'`);
    const [left] = await sql(`select count(*) as n from usage_records where settled_at is null`);
    const settleRatio = settleMs / plainMs;
    console.log(`\nsettle ${Number(unsettled?.n).toLocaleString('en')} unsettled records of ${SETTLE_TENANTS} tenants (${unsettled?.cents} cents)`);
    console.log(`  sweep settle step (one set-based statement): ${(settleMs / 1000).toFixed(2)} s, ${settled.settled.toLocaleString('en')} records, ${settled.amountCents} cents`);
    console.log(`  plain INSERT + UPDATE + UPDATE, same rows:   ${(plainMs / 1000).toFixed(2)} s`);
    console.log(`  ratio: ${settleRatio.toFixed(2)}x the plain statements (goal <= 3x): ${goal(settleRatio <= 3)}`);
    console.log(`  check: ${after?.n} usage entries in the ledger, ${left?.n} records left unsettled`);
    if (ratio < 0.25 || settleRatio > 3 || Number(left?.n) !== 0 || settled.settled !== Number(unsettled?.n)) process.exitCode = 1;
  } finally {
    server.closeAllConnections();
    server.close();
    await plane.close();
    await database.drop();
  }
}

await main();
// autocannon's worker thread (workers: 1) keeps a MessagePort open once it is done: the run would never end
process.exit();
