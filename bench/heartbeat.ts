/**
 * Benchmark of the dead-man switch's heartbeat: POST /v1/tokens/self/heartbeat from one token with
 * idle_timeout_minutes, 16 connections at once, for BENCH_SECONDS, beside a baseline measured in the same run with
 * the same token and connections: GET /v1/tokens/self (one read of the token chain per request). Runs alternate
 * (baseline, heartbeat, heartbeat, baseline) so drift in the machine's load falls on both. It also counts the
 * writes the heartbeats made to the tokens table (at most one a minute per token is the rule). `npm run bench:heartbeat`.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import autocannon from 'autocannon';
import { pino } from 'pino';
import { createControlPlane } from '../hosts/composition/control-plane.ts';
import { createHttpApp } from '../hosts/http/app.ts';
import { freshDatabase } from '../test/support/database.ts';

const CONNECTIONS = 16;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);

interface Row {
  perSecond: number;
  p50: number;
  p99: number;
  failures: number;
}

async function post(url: string, body: unknown, authorization?: string): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(authorization && { authorization }) }, body: JSON.stringify(body) });
  const answer = await res.json();
  if (res.status !== 201) throw new Error(`${url}: ${res.status} ${JSON.stringify(answer)}`);
  return answer;
}

async function main(): Promise<void> {
  const database = await freshDatabase();
  const plane = await createControlPlane(
    {
      storage: database.target,
      operatorKeys: [],
      rateLimits: { publicPerMinute: 1_000_000, perTokenPerMinute: 100_000_000 },
      logLevel: 'silent',
      market: { backgroundRefresh: false },
      billing: { sweep: false },
    },
    { logger: pino({ level: 'silent' }), providers: [] },
  );
  const server = createHttpApp(plane).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const cpus = os.cpus();
    console.log(`machine: ${cpus.length} × ${cpus[0]?.model ?? 'CPU'}, Node ${process.version}, storage: ${database.target.kind}, load ${os.loadavg()[0]!.toFixed(2)}`);
    const tenant = await post(`${base}/v1/tenants`, { name: 'bench' });
    const root = await post(`${base}/v1/tokens`, { tenant_id: tenant.id, bootstrap_secret: tenant.bootstrap_secret, scopes: ['read', 'manage'] });
    // the agent's token, with the switch, under a root without one: each heartbeat is activity of the agent's chain
    const agent = await post(`${base}/v1/tokens`, { name: 'agent', scopes: ['read'], idle_timeout_minutes: 30 }, `Bearer ${root.token}`);
    const authorization = `Bearer ${agent.token}`;

    const tokenWrites = async (): Promise<number | null> => {
      if (database.target.kind !== 'postgres') return null;
      // statistics reach the view about a second after the transactions that made them
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const [row] = await plane.storage.execute<{ n: string }[]>(`select pg_stat_clear_snapshot(), n_tup_upd as n from pg_stat_user_tables where relname = 'tokens'`);
      return Number(row?.n ?? 0);
    };

    const run = async (kind: 'self' | 'heartbeat', seconds: number): Promise<Row> => {
      const result = await autocannon({
        url: base,
        connections: CONNECTIONS,
        duration: seconds,
        workers: 1,
        // bench/autocannon.d.ts types the requests of the other benches only; headers are autocannon's own
        requests: [
          (kind === 'self' ? { method: 'GET', path: '/v1/tokens/self', headers: { authorization } } : { method: 'POST', path: '/v1/tokens/self/heartbeat', headers: { authorization } }) as unknown as {
            path: string;
          },
        ],
      });
      return { perSecond: result['2xx'] / result.duration, p50: result.latency.p50, p99: result.latency.p99, failures: result.non2xx + result.errors };
    };
    await run('self', 2); // warm-up
    await run('heartbeat', 2);
    const rows = { self: [] as Row[], heartbeat: [] as Row[] };
    let writes = 0;
    let measured = true;
    for (const kind of ['self', 'heartbeat', 'heartbeat', 'self'] as const) {
      const before = kind === 'heartbeat' ? await tokenWrites() : null;
      rows[kind].push(await run(kind, SECONDS));
      const after = kind === 'heartbeat' ? await tokenWrites() : null;
      if (before === null || after === null) measured &&= kind !== 'heartbeat';
      else writes += after - before;
    }

    const mean = (list: Row[], key: keyof Row) => list.reduce((sum, row) => sum + row[key], 0) / list.length;
    const line = (name: string, list: Row[]) =>
      `${name.padEnd(22)} ${mean(list, 'perSecond').toFixed(0).padStart(6)} per second   p50 ${mean(list, 'p50').toFixed(1)} ms   p99 ${mean(list, 'p99').toFixed(1)} ms   ${mean(list, 'failures').toFixed(0)} failed`;
    console.log(`\none token (idle_timeout_minutes 30), ${CONNECTIONS} connections, 2 x ${SECONDS} s each`);
    console.log(line('heartbeat (POST)', rows.heartbeat));
    console.log(line('baseline GET self', rows.self));
    console.log(`ratio:                 ${((mean(rows.heartbeat, 'perSecond') / mean(rows.self, 'perSecond')) * 100).toFixed(0)}% of the baseline`);
    const total = rows.heartbeat.reduce((sum, row) => sum + row.perSecond * SECONDS, 0);
    console.log(
      measured
        ? `writes:                ${writes} row updates of tokens for ${total.toFixed(0)} heartbeats over ${2 * SECONDS} s (the agent's row, at most once a minute)`
        : 'writes:                not counted (PGlite has no statistics view)',
    );
    if (mean(rows.heartbeat, 'failures') > 0 || mean(rows.self, 'failures') > 0 || (measured && writes > Math.ceil((2 * SECONDS + 3 * 1.5 + 4) / 60) + 1)) process.exitCode = 1;
  } finally {
    server.closeAllConnections();
    server.close();
    await plane.close();
    await database.drop();
  }
}

await main();
