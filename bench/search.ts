/**
 * Benchmark of GET /v1/gpus over a 50,000-offer sandbox, next to two bare Express routes: one
 * answering `{ok:true}`, one answering a body as large as the real search answer. Run with
 * `npm run bench:search`; BENCH_SECONDS sets each measured run (default 10), BENCH_STORAGE=pglite
 * skips a local PostgreSQL.
 */
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import autocannon, { type Result } from 'autocannon';
import express, { type Express } from 'express';
import { createSandboxProvider } from '../adapters/providers/sandbox/index.ts';
import type { StorageTarget } from '../adapters/storage/mikro-storage.ts';
import { createControlPlane } from '../hosts/composition/control-plane.ts';
import { createHttpApp } from '../hosts/http/app.ts';
import { freshPostgres, postgresReachable } from '../test/support/database.ts';

const CONNECTIONS = 32;
const WARMUP_SECONDS = 2;
const SECONDS = positiveNumberFromEnv('BENCH_SECONDS', 10);
const OFFERS = 50_000;
const GOAL = { minShareOfBare: 0.5, maxP99Ms: 25 };
const SEARCHES = ['/v1/gpus', '/v1/gpus?gpu_type=H100&min_vram_gb=80&max_price_per_gpu_hour=3.5'];
/**
 * Answers are cached per snapshot and query, so repeating two queries measures the cache. This row sends
 * 5,000 different queries in turn (more than the cache holds), so every request scans the 50,000 offers.
 */
const DISTINCT_QUERIES = Array.from({ length: 5_000 }, (_, i) => `/v1/gpus?min_vram_gb=16&max_price_per_gpu_hour=${(0.5 + i / 1_000).toFixed(3)}`);
const DISTINCT_LABEL = '/v1/gpus?min_vram_gb=16&max_price_per_gpu_hour=<5,000 values>';

/** A failed check: the figures would mean nothing, so the run stops with exit code 1. */
class BenchFailure extends Error {}

interface Target {
  label: string;
  url: string;
  headers: Record<string, string>;
  /** Paths sent in turn instead of the URL's own. */
  paths?: string[];
}

interface Row {
  label: string;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  bodyBytes: number;
}

interface Storage {
  target: StorageTarget;
  description: string;
  drop(): Promise<void>;
}

type Cleanup = () => Promise<void>;

function positiveNumberFromEnv(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number of seconds, got "${text}"`);
  return value;
}

async function listen(app: Express): Promise<{ server: Server; origin: string }> {
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { server, origin: `http://127.0.0.1:${port}` };
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
}

async function openStorage(): Promise<Storage> {
  if (process.env.BENCH_STORAGE !== 'pglite' && (await postgresReachable())) {
    const database = await freshPostgres();
    if (database.target.kind !== 'postgres') throw new Error('freshPostgres answered a non-PostgreSQL target');
    const url = new URL(database.target.url);
    url.password = '';
    return { target: database.target, description: `PostgreSQL, fresh database ${url.toString()}`, drop: database.drop };
  }
  return { target: { kind: 'pglite', dataDir: 'memory://bench' }, description: 'PGlite, in memory', drop: async () => undefined };
}

/** The bare Express baselines: the same framework and socket handling, none of our work. */
function bareApp(payload: string): Express {
  const app = express();
  // Like the control plane's app: no ETag, so both send the same bytes the same way.
  app.set('etag', false);
  app.get('/bare', (_req, res) => {
    res.json({ ok: true });
  });
  app.get('/bare-payload', (_req, res) => {
    res.type('json').send(payload);
  });
  return app;
}

async function startControlPlane(target: StorageTarget): Promise<{ origin: string; cleanup: Cleanup }> {
  const plane = await createControlPlane(
    {
      storage: target,
      operatorKeys: [],
      // High enough never to answer 429 under load: the limiter's own cost stays in the figure.
      rateLimits: { publicPerMinute: 1_000_000, perTokenPerMinute: 100_000_000 },
      logLevel: 'silent',
      market: { backgroundRefresh: false },
    },
    { providers: [createSandboxProvider({ offers: OFFERS })] },
  );
  // app.ts logs every request through pino-http on plane.logger, as in production; 'silent' makes it cheap but not free.
  const { server, origin } = await listen(createHttpApp(plane));
  return {
    origin,
    async cleanup() {
      await closeServer(server);
      await plane.close();
    },
  };
}

async function fetchText(url: string, init: RequestInit, expectedStatus: number): Promise<string> {
  const response = await fetch(url, init);
  const text = await response.text();
  if (response.status !== expectedStatus) {
    throw new BenchFailure(`${init.method ?? 'GET'} ${url} answered ${response.status}, expected ${expectedStatus}: ${text.slice(0, 300)}`);
  }
  return text;
}

async function postJson<T>(url: string, body: unknown): Promise<T> {
  const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
  return JSON.parse(await fetchText(url, init, 201)) as T;
}

async function issueReadToken(origin: string): Promise<string> {
  const tenant = await postJson<{ id: string; bootstrap_secret: string }>(`${origin}/v1/tenants`, { name: 'bench' });
  const issued = await postJson<{ token: string }>(`${origin}/v1/tokens`, {
    tenant_id: tenant.id,
    bootstrap_secret: tenant.bootstrap_secret,
    scopes: ['read'],
  });
  return issued.token;
}

/** The first search waits for the sandbox's full listing; measuring before it would time that instead. */
async function warmSnapshot(url: string, headers: Record<string, string>): Promise<string> {
  const started = performance.now();
  const body = await fetchText(url, { headers }, 200);
  const { total } = JSON.parse(body) as { total: number };
  console.log(`snapshot warm after ${Math.round(performance.now() - started)} ms: total ${total} of ${OFFERS} offers`);
  if (!(total >= OFFERS * 0.8 && total <= OFFERS)) throw new BenchFailure(`expected a total around ${OFFERS}, got ${total}`);
  return body;
}

function assertClean(label: string, result: Result): void {
  if (result.non2xx === 0 && result.errors === 0) return;
  const codes = JSON.stringify(result.statusCodeStats);
  throw new BenchFailure(`${label}: ${result.non2xx} non-2xx answers, ${result.errors} errors (${result.timeouts} timeouts), status codes ${codes}`);
}

async function measure(target: Target): Promise<Row> {
  const body = await fetchText(target.url, { headers: target.headers }, 200);
  // One worker thread fires the requests, so the load generator does not share the server's event loop.
  const options = {
    url: target.url,
    headers: target.headers,
    connections: CONNECTIONS,
    workers: 1,
    ...(target.paths && { requests: target.paths.map((path) => ({ method: 'GET' as const, path })) }),
  };
  console.log(`measuring ${target.label} ...`);
  await autocannon({ ...options, duration: WARMUP_SECONDS });
  const result = await autocannon({ ...options, duration: SECONDS });
  assertClean(target.label, result);
  return {
    label: target.label,
    reqPerSec: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    bodyBytes: Buffer.byteLength(body),
  };
}

function printMachine(): void {
  const cpus = os.cpus();
  console.log(`machine: ${cpus.length} × ${cpus[0]?.model ?? 'unknown CPU'}, ${os.platform()} ${os.arch()}, Node ${process.version}`);
  console.log(`load: autocannon, ${CONNECTIONS} connections on 1 worker thread, ${SECONDS} s per run after a ${WARMUP_SECONDS} s warm-up`);
}

function printTable(rows: Row[]): void {
  const header = ['route', 'req/s', 'p50 ms', 'p99 ms', 'body bytes'];
  const lines = rows.map((row) => [`GET ${row.label}`, row.reqPerSec.toFixed(0), String(row.p50Ms), String(row.p99Ms), String(row.bodyBytes)]);
  const widths = header.map((title, i) => Math.max(title.length, ...lines.map((line) => line[i]!.length)));
  const format = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  console.log();
  console.log(format(header));
  for (const line of lines) console.log(format(line));
}

function printGoals(bare: Row, payload: Row, searches: Row[]): void {
  console.log();
  console.log(`goals: req/s >= ${GOAL.minShareOfBare * 100}% of GET ${bare.label}, p99 < ${GOAL.maxP99Ms} ms`);
  for (const row of searches) {
    const share = row.reqPerSec / bare.reqPerSec;
    const misses = [
      ...(share >= GOAL.minShareOfBare ? [] : ['throughput']),
      ...(row.p99Ms < GOAL.maxP99Ms ? [] : ['p99']),
    ];
    const verdict = misses.length === 0 ? 'GOAL MET' : `GOAL MISSED (${misses.join(', ')})`;
    const ofPayload = (row.reqPerSec / payload.reqPerSec) * 100;
    console.log(
      `GET ${row.label}: ${(share * 100).toFixed(1)}% of bare req/s (${ofPayload.toFixed(1)}% of bare-payload), p99 ${row.p99Ms} ms: ${verdict}`,
    );
  }
}

async function run(cleanups: Cleanup[]): Promise<void> {
  printMachine();
  const storage = await openStorage();
  cleanups.push(storage.drop);
  console.log(`storage: ${storage.description}`);

  const plane = await startControlPlane(storage.target);
  cleanups.push(plane.cleanup);
  const headers = { authorization: `Bearer ${await issueReadToken(plane.origin)}` };
  const payload = await warmSnapshot(`${plane.origin}${SEARCHES[0]!}`, headers);

  const bare = await listen(bareApp(payload));
  cleanups.push(() => closeServer(bare.server));
  const bareRow = await measure({ label: '/bare', url: `${bare.origin}/bare`, headers: {} });
  const payloadRow = await measure({ label: '/bare-payload', url: `${bare.origin}/bare-payload`, headers: {} });
  await closeServer(bare.server);
  cleanups.pop();

  const searchRows: Row[] = [];
  for (const path of SEARCHES) searchRows.push(await measure({ label: path, url: `${plane.origin}${path}`, headers }));
  searchRows.push(await measure({ label: DISTINCT_LABEL, url: `${plane.origin}${DISTINCT_QUERIES[0]!}`, headers, paths: DISTINCT_QUERIES }));

  printTable([bareRow, payloadRow, ...searchRows]);
  printGoals(bareRow, payloadRow, searchRows);
}

async function main(): Promise<void> {
  const cleanups: Cleanup[] = [];
  try {
    await run(cleanups);
  } catch (error) {
    if (!(error instanceof BenchFailure)) throw error;
    console.error(`\n!!! BENCHMARK INVALID: ${error.message}\n`);
    process.exitCode = 1;
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}

await main();
