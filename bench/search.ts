/**
 * Benchmark of GET /v1/gpus over a 50,000-offer sandbox, each figure beside a baseline measured in the
 * same run: two bare Express routes, one answering `{"ok":true}`, one answering the very bytes of the
 * search answer. Run with `npm run bench:search`; BENCH_SECONDS sets each measured run (default 10),
 * BENCH_STORAGE=pglite skips a local PostgreSQL.
 *
 * Goals: cached answers sent as is >= 90 % of the bare route sending the same answer;
 * cached answers to clients accepting gzip or brotli >= 50 % of the bare `{"ok":true}` route; cache
 * misses (5,000 different queries) p99 < 15 ms.
 */
import { once } from 'node:events';
import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import autocannon, { type Result } from 'autocannon';
import express, { type Express } from 'express';
import { pino } from 'pino';
import { createSandboxProvider } from '../adapters/providers/sandbox/index.ts';
import type { StorageTarget } from '../adapters/storage/mikro-storage.ts';
import { ceilingCents } from '../core/market/pricing.ts';
import { createControlPlane } from '../hosts/composition/control-plane.ts';
import { createHttpApp } from '../hosts/http/app.ts';
import { freshPostgres, postgresReachable } from '../test/support/database.ts';

const CONNECTIONS = 32;
const WARMUP_SECONDS = 2;
const SECONDS = positiveNumberFromEnv('BENCH_SECONDS', 10);
const OFFERS = 50_000;
const GOAL = { cachedShareOfSamePayload: 0.9, compressedShareOfBare: 0.5, missP99Ms: 15 };
const SEARCH = '/v1/gpus';
const FILTERED = '/v1/gpus?gpu_type=H100&min_vram_gb=80&max_price_per_gpu_hour=3.5';
/** What browsers, curl --compressed and Node's fetch send. */
const EVERY_CODING = 'gzip, deflate, br';

const MISSES_MODULE = fileURLToPath(new URL('./search-misses.cjs', import.meta.url));
const MISS_PATHS = (createRequire(import.meta.url)(MISSES_MODULE) as { PATHS: string[] }).PATHS;
const MISSES_LABEL = `/v1/gpus?min_vram_gb=16&max_price_per_gpu_hour=<${MISS_PATHS.length.toLocaleString('en')} ceilings>`;

/** A failed check: the figures would mean nothing, so the run stops with exit code 1. */
class BenchFailure extends Error {}

interface Target {
  label: string;
  url: string;
  headers: Record<string, string>;
  /** The Content-Encoding the answer must come in; absent: none. */
  coding?: 'gzip' | 'br';
  /** Each request takes the next of the 5,000 different queries (bench/search-misses.cjs). */
  misses?: boolean;
}

interface Row {
  label: string;
  coding: string;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** As sent: compressed when the answer is. */
  wireBytes: number;
  /** CPU time of the server's thread per request (user + system): steadier than req/s on a shared machine. */
  cpuUsPerRequest: number;
  /** The machine's 1-minute load average when the row was measured. */
  load: number;
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

/**
 * The bare Express baselines: the same framework and socket handling, none of our work. The same payload
 * twice: as text, encoded per request (what a handler usually sends, and the baseline the goal is stated
 * against), and as bytes made once, like our cached answer (the best a bare route can do).
 */
function bareApp(payload: string): Express {
  const bytes = Buffer.from(payload);
  const app = express();
  // Like the control plane's app: no ETag, so both send the same bytes the same way.
  app.set('etag', false);
  app.get('/bare', (_req, res) => {
    res.json({ ok: true });
  });
  app.get('/bare-payload-text', (_req, res) => {
    res.type('json').send(payload);
  });
  app.get('/bare-payload-bytes', (_req, res) => {
    res.type('json').send(bytes);
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
      logLevel: 'info',
      market: { backgroundRefresh: false },
      billing: { sweep: false },
    },
    // production's default level (info): every request is followed to its end, a 4xx or 5xx would be written
    // (none is: the run checks every status); what is written goes nowhere here
    { providers: [createSandboxProvider({ offers: OFFERS })], logger: pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: true })) },
  );
  const { server, origin } = await listen(createHttpApp(plane));
  return {
    origin,
    async cleanup() {
      await closeServer(server);
      await plane.close();
    },
  };
}

/** One request, its bytes as sent (fetch would decode them). */
function get(url: string, headers: Record<string, string>): Promise<{ status: number; coding: string | undefined; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, coding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
      res.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

async function postJson<T>(url: string, body: unknown): Promise<T> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  if (response.status !== 201) throw new BenchFailure(`POST ${url} answered ${response.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
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
  const { status, body } = await get(url, headers);
  const text = body.toString('utf8');
  if (status !== 200) throw new BenchFailure(`GET ${url} answered ${status}: ${text.slice(0, 300)}`);
  const { total } = JSON.parse(text) as { total: number };
  console.log(`snapshot warm after ${Math.round(performance.now() - started)} ms: total ${total} of ${OFFERS} offers`);
  if (!(total >= OFFERS * 0.8 && total <= OFFERS)) throw new BenchFailure(`expected a total around ${OFFERS}, got ${total}`);
  return text;
}

/** The misses row means something only if its queries are different filters once the service reads them. */
function checkMissQueries(): void {
  const filters = new Set(MISS_PATHS.map((path) => ceilingCents(new URL(path, 'http://x').searchParams.get('max_price_per_gpu_hour')!)));
  if (filters.size !== MISS_PATHS.length) throw new BenchFailure(`the ${MISS_PATHS.length} miss queries are only ${filters.size} different filters`);
}

/** The answer comes in the coding asked for, and decodes to a search answer. */
async function probe(target: Target): Promise<number> {
  const url = target.misses ? new URL(MISS_PATHS[0]!, target.url).toString() : target.url;
  const { status, coding, body } = await get(url, target.headers);
  if (status !== 200) throw new BenchFailure(`${target.label} answered ${status}`);
  if (coding !== target.coding) throw new BenchFailure(`${target.label} came with Content-Encoding ${coding ?? 'none'}, expected ${target.coding ?? 'none'}`);
  const decoded = coding === 'gzip' ? gunzipSync(body) : coding === 'br' ? brotliDecompressSync(body) : body;
  if (!url.includes('/bare')) {
    const answer = JSON.parse(decoded.toString('utf8')) as { nodes?: unknown[] };
    if (!Array.isArray(answer.nodes)) throw new BenchFailure(`${target.label} did not decode to a search answer`);
  }
  return body.length;
}

function assertClean(label: string, result: Result): void {
  if (result.non2xx === 0 && result.errors === 0) return;
  const codes = JSON.stringify(result.statusCodeStats);
  throw new BenchFailure(`${label}: ${result.non2xx} non-2xx answers, ${result.errors} errors (${result.timeouts} timeouts), status codes ${codes}`);
}

async function measure(target: Target): Promise<Row> {
  const wireBytes = await probe(target);
  // One worker thread fires the requests, so the load generator does not share the server's event loop.
  // autocannon sends no Accept-Encoding of its own: rows that want compression set it in `headers`.
  const options = {
    url: target.url,
    headers: target.headers,
    connections: CONNECTIONS,
    workers: 1,
    ...(target.misses && { requests: [{ method: 'GET', path: MISS_PATHS[0]!, setupRequest: MISSES_MODULE }] }),
  };
  const coding = target.headers['accept-encoding'] ? `${target.headers['accept-encoding']} -> ${target.coding ?? 'identity'}` : 'none';
  console.log(`measuring ${target.label} (Accept-Encoding: ${coding}) ...`);
  await autocannon({ ...options, duration: WARMUP_SECONDS });
  // the servers run on this thread and autocannon on its own: this thread's CPU is the servers' alone
  const cpuBefore = process.threadCpuUsage();
  const result = await autocannon({ ...options, duration: SECONDS });
  const cpu = process.threadCpuUsage(cpuBefore);
  assertClean(target.label, result);
  return {
    label: target.label,
    coding,
    reqPerSec: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    wireBytes,
    cpuUsPerRequest: (cpu.user + cpu.system) / result.requests.total,
    load: os.loadavg()[0]!,
  };
}

function printMachine(): void {
  const cpus = os.cpus();
  console.log(`machine: ${cpus.length} × ${cpus[0]?.model ?? 'unknown CPU'}, ${os.platform()} ${os.arch()}, Node ${process.version}`);
  console.log(`load: autocannon, ${CONNECTIONS} connections on 1 worker thread, ${SECONDS} s per run after a ${WARMUP_SECONDS} s warm-up`);
}

function printTable(rows: Row[]): void {
  const header = ['route', 'Accept-Encoding', 'req/s', 'p50 ms', 'p99 ms', 'bytes sent', 'server CPU µs/req', 'load'];
  const lines = rows.map((row) => [
    `GET ${row.label}`,
    row.coding,
    row.reqPerSec.toFixed(0),
    String(row.p50Ms),
    String(row.p99Ms),
    String(row.wireBytes),
    row.cpuUsPerRequest.toFixed(0),
    row.load.toFixed(2),
  ]);
  const widths = header.map((title, i) => Math.max(title.length, ...lines.map((line) => line[i]!.length)));
  const format = (cells: string[]) => cells.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  console.log();
  console.log(format(header));
  for (const line of lines) console.log(format(line));
}

const verdict = (met: boolean): string => (met ? 'GOAL MET' : 'GOAL MISSED');
const perSecond = (row: Row): string => `${Math.round(row.reqPerSec).toLocaleString('en')} req/s`;

function printThroughputGoal(row: Row, baseline: Row, share: number, stricter?: Row): void {
  const ratio = row.reqPerSec / baseline.reqPerSec;
  const also = stricter ? `; ${((row.reqPerSec / stricter.reqPerSec) * 100).toFixed(1)}% of GET ${stricter.label} ${perSecond(stricter)}` : '';
  console.log(
    `GET ${row.label} [${row.coding}]: ${perSecond(row)} = ${(ratio * 100).toFixed(1)}% of GET ${baseline.label} ${perSecond(baseline)} (goal >= ${share * 100}%): ${verdict(ratio >= share)}${also}`,
  );
}

function printLatencyGoal(row: Row): void {
  console.log(`GET ${row.label} [${row.coding}]: p99 ${row.p99Ms} ms, ${perSecond(row)} (goal p99 < ${GOAL.missP99Ms} ms): ${verdict(row.p99Ms < GOAL.missP99Ms)}`);
}

async function run(cleanups: Cleanup[]): Promise<void> {
  printMachine();
  console.log(`load average at start: ${os.loadavg().map((load) => load.toFixed(2)).join(', ')}`);
  checkMissQueries();
  const storage = await openStorage();
  cleanups.push(storage.drop);
  console.log(`storage: ${storage.description}`);

  const plane = await startControlPlane(storage.target);
  cleanups.push(plane.cleanup);
  const auth = { authorization: `Bearer ${await issueReadToken(plane.origin)}` };
  const payload = await warmSnapshot(`${plane.origin}${SEARCH}`, auth);

  // The baselines run before the control plane's rows and again after them, and each goal is judged
  // against the better of the two: on a shared machine the load drifts during a run, and a baseline measured
  // only at a busy moment would flatter every row after it.
  const bare = await listen(bareApp(payload));
  cleanups.push(() => closeServer(bare.server));
  const baselines = async (): Promise<Row[]> => [
    await measure({ label: '/bare {"ok":true}', url: `${bare.origin}/bare`, headers: {} }),
    await measure({ label: '/bare-payload-text (the /v1/gpus answer)', url: `${bare.origin}/bare-payload-text`, headers: {} }),
    await measure({ label: '/bare-payload-bytes (the same, encoded once)', url: `${bare.origin}/bare-payload-bytes`, headers: {} }),
  ];
  const before = await baselines();

  const at = (path: string) => `${plane.origin}${path}`;
  const cached = [
    await measure({ label: SEARCH, url: at(SEARCH), headers: auth }),
    await measure({ label: FILTERED, url: at(FILTERED), headers: auth }),
  ];
  const compressed = [
    await measure({ label: SEARCH, url: at(SEARCH), headers: { ...auth, 'accept-encoding': 'gzip' }, coding: 'gzip' }),
    await measure({ label: SEARCH, url: at(SEARCH), headers: { ...auth, 'accept-encoding': 'br' }, coding: 'br' }),
  ];
  const misses = [
    await measure({ label: MISSES_LABEL, url: at(SEARCH), headers: auth, misses: true }),
    await measure({ label: MISSES_LABEL, url: at(SEARCH), headers: { ...auth, 'accept-encoding': EVERY_CODING }, coding: 'br', misses: true }),
  ];

  const after = await baselines();
  await closeServer(bare.server);
  cleanups.pop();
  const [bareRow, textRow, bytesRow] = before.map((row, i) => (after[i]!.reqPerSec > row.reqPerSec ? after[i]! : row)) as [Row, Row, Row];

  printTable([...before.map((row) => ({ ...row, label: `${row.label} (before)` })), ...cached, ...compressed, ...misses, ...after.map((row) => ({ ...row, label: `${row.label} (after)` }))]);
  console.log();
  console.log('goals, each beside its baseline from this run (the better of its two measurements):');
  for (const row of cached) printThroughputGoal(row, textRow, GOAL.cachedShareOfSamePayload, bytesRow);
  for (const row of compressed) printThroughputGoal(row, bareRow, GOAL.compressedShareOfBare);
  for (const row of misses) printLatencyGoal(row);
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
// autocannon's worker thread (workers: 1) keeps a MessagePort open once it is done: the run would never end
process.exit();
