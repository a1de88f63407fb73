/**
 * GET /v1/gpus on two replicas behind a round-robin proxy against one replica, measured in the same run:
 * every replica a process of its own (`node hosts/http/main.ts`) on one PostgreSQL and one Redis,
 * as deployed (rate-limit counters in Redis, shared snapshots), over a sandbox of 50,000 offers. Rows:
 * one replica direct, one replica behind the proxy (what the proxy alone costs), two replicas behind it.
 * `npm run bench:search-replicas`; BENCH_SECONDS sets each measured run (default 10); BENCH_BOTH=1 adds the
 * second replica measured direct (the two should match: a gap is the machine's noise, not the code).
 * Needs PostgreSQL (TEST_DATABASE_URL or the local one) and Redis (TEST_REDIS_URL or the local one).
 */
import os from 'node:os';
import { resolve } from 'node:path';
import autocannon, { type Result } from 'autocannon';
import { freshPostgres, postgresReachable } from '../test/support/database.ts';
import { listening, SERVER_MAIN, spawnEntry, stop, type Spawned } from '../test/support/processes.ts';
import { freshRedisPrefix, redisReachable, TEST_REDIS_URL } from '../test/support/redis.ts';

const SECONDS = Number(process.env.BENCH_SECONDS || 10);
const WARMUP_SECONDS = 2;
const CONNECTIONS = 32;
const OFFERS = 50_000;
const PROXY = resolve(import.meta.dirname, 'round-robin-proxy.ts');
/** A cached search, and a filtered one: what most callers send. */
const PATHS = ['/v1/gpus?limit=20', '/v1/gpus?gpu_type=H100&min_vram_gb=80&max_price_per_gpu_hour=3.5'];

interface Row {
  label: string;
  path: string;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  load: number;
}

async function json<T>(url: string, init: { method?: string; token?: string; body?: unknown } = {}): Promise<T> {
  const response = await fetch(url, {
    method: init.method ?? 'GET',
    headers: { ...(init.body !== undefined && { 'content-type': 'application/json' }), ...(init.token && { authorization: `Bearer ${init.token}` }) },
    ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
  });
  if (!response.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

async function measure(label: string, origin: string, path: string, token: string): Promise<Row> {
  const options = { url: `${origin}${path}`, connections: CONNECTIONS, headers: { authorization: `Bearer ${token}` } };
  await autocannon({ ...options, duration: WARMUP_SECONDS });
  const result: Result = await autocannon({ ...options, duration: SECONDS });
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new Error(`${label} ${path}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
  }
  return { label, path, reqPerSec: result.requests.average, p50Ms: result.latency.p50, p99Ms: result.latency.p99, load: os.loadavg()[0]! };
}

async function main(): Promise<void> {
  if (!(await postgresReachable()) || !(await redisReachable())) throw new Error('bench/search-replicas needs PostgreSQL and Redis');
  const database = await freshPostgres();
  const processes: Spawned[] = [];
  try {
    const env = {
      DATABASE_URL: database.target.kind === 'postgres' ? database.target.url : '',
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: freshRedisPrefix(),
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      SWEEP: 'off',
      SANDBOX_OFFERS: String(OFFERS),
      RATE_LIMIT_PER_MINUTE: '1000000000',
      RATE_LIMIT_PUBLIC_PER_MINUTE: '1000000000',
    };
    // LOG_LEVEL=warn hides the "listening" line: read the port from an info-level start instead
    const replicas = [spawnEntry(SERVER_MAIN, { ...env, LOG_LEVEL: 'info' }), spawnEntry(SERVER_MAIN, { ...env, LOG_LEVEL: 'info' })];
    processes.push(...replicas);
    const [a, b] = await Promise.all(replicas.map((replica) => listening(replica)));
    const proxyOne = spawnEntry(PROXY, {}, ['0', a!]);
    const proxyTwo = spawnEntry(PROXY, {}, ['0', a!, b!]);
    processes.push(proxyOne, proxyTwo);
    const [one, two] = await Promise.all(
      [proxyOne, proxyTwo].map(async (proxy) => `http://127.0.0.1:${(await proxy.line((entry) => typeof entry.port === 'number')).port as number}`),
    );

    const tenant = await json<{ id: string; bootstrap_secret: string }>(`${a}/v1/tenants`, { method: 'POST', body: { name: 'bench' } });
    const { token } = await json<{ token: string }>(`${a}/v1/tokens`, {
      method: 'POST',
      body: { tenant_id: tenant.id, bootstrap_secret: tenant.bootstrap_secret, scopes: ['read'] },
    });
    // both replicas hold the same snapshot (listed once, loaded by the other) before anything is measured
    for (const origin of [a!, b!]) for (const path of PATHS) await json(`${origin}${path}`, { token });

    const rows: Row[] = [];
    for (const path of PATHS) {
      rows.push(await measure('1 replica, direct', a!, path, token));
      if (process.env.BENCH_BOTH) rows.push(await measure('the other replica, direct', b!, path, token));
      rows.push(await measure('1 replica, behind the proxy', one!, path, token));
      rows.push(await measure('2 replicas, behind the proxy', two!, path, token));
    }
    console.log(`\nGET /v1/gpus, ${OFFERS.toLocaleString('en')} offers, ${CONNECTIONS} connections, ${SECONDS} s a row, ${os.cpus().length} CPUs (shared)\n`);
    console.log('| setup | query | req/s | p50 ms | p99 ms | load |');
    console.log('|---|---|---:|---:|---:|---:|');
    for (const row of rows) {
      console.log(`| ${row.label} | \`${row.path}\` | ${Math.round(row.reqPerSec).toLocaleString('en')} | ${row.p50Ms} | ${row.p99Ms} | ${row.load.toFixed(2)} |`);
    }
    for (const path of PATHS) {
      const single = rows.find((row) => row.path === path && row.label === '1 replica, behind the proxy');
      const double = rows.find((row) => row.path === path && row.label === '2 replicas, behind the proxy');
      console.log(`\n${path}: two replicas ${(double!.reqPerSec / single!.reqPerSec).toFixed(2)}x one replica's req/s through the same proxy, p99 ${double!.p99Ms} vs ${single!.p99Ms} ms`);
    }
  } finally {
    await Promise.all(processes.map((process) => stop(process)));
    await database.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
