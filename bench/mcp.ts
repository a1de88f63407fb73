/**
 * Benchmark of the MCP endpoint: `tools/call search_gpus` over POST /mcp (stateless Streamable HTTP, a new
 * server and transport per request) beside the same search over REST (GET /v1/gpus) in the same run, on the
 * same server, 50,000 sandbox offers, the same token and filters. Each is measured twice, in the order
 * REST, MCP, MCP, REST, so a machine getting busier or quieter weighs on both alike. `npm run bench:mcp`;
 * BENCH_SECONDS sets each measured run (default 10).
 *
 * Goal: tool calls per second >= 50 % of the REST searches per second.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import autocannon from 'autocannon';
import { pino } from 'pino';
import { createSandboxProvider } from '../adapters/providers/sandbox/index.ts';
import { createControlPlane } from '../hosts/composition/control-plane.ts';
import { createHttpApp } from '../hosts/http/app.ts';
import { freshDatabase } from '../test/support/database.ts';

const CONNECTIONS = 16;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const GOAL = 0.5;
const FILTERS = { gpu_type: 'H100', min_vram_gb: 80, limit: 20 };
const REST_PATH = `/v1/gpus?${new URLSearchParams(Object.entries(FILTERS).map(([k, v]): [string, string] => [k, String(v)]))}`;
const MCP_BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_gpus', arguments: FILTERS } });
/** What the SDK's client sends: the transport refuses a POST that does not accept both. */
const MCP_ACCEPT = 'application/json, text/event-stream';

interface Row {
  perSecond: number;
  p50: number;
  p99: number;
  failures: number;
  cpuUs: number;
  bytes: number;
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
    { logger: pino({ level: 'silent' }), providers: [createSandboxProvider({ offers: 50_000 })] },
  );
  const server = createHttpApp(plane).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const cpus = os.cpus();
    console.log(`machine: ${cpus.length} × ${cpus[0]?.model ?? 'CPU'}, Node ${process.version}, storage: ${database.target.kind}, load ${os.loadavg()[0]!.toFixed(2)}`);
    const tenant: any = await (await fetch(`${base}/v1/tenants`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'bench' }) })).json();
    const issued: any = await (
      await fetch(`${base}/v1/tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tenant_id: tenant.id, bootstrap_secret: tenant.bootstrap_secret, scopes: ['read'] }),
      })
    ).json();
    const authorization = `Bearer ${issued.token}`;

    // the two must answer the same nodes, or the comparison means nothing
    const rest: any = await (await fetch(`${base}${REST_PATH}`, { headers: { authorization } })).json();
    const mcp: any = await (await fetch(`${base}/mcp`, { method: 'POST', headers: { authorization, accept: MCP_ACCEPT, 'content-type': 'application/json' }, body: MCP_BODY })).json();
    if (mcp.result?.isError || JSON.stringify(mcp.result?.structuredContent?.nodes) !== JSON.stringify(rest.nodes) || rest.nodes.length === 0) {
      throw new Error(`the tool and the REST search do not answer the same nodes: ${JSON.stringify(mcp).slice(0, 500)}`);
    }

    // autocannon on a worker thread, so the load generator does not share the server's event loop
    const run = async (kind: 'rest' | 'mcp', seconds: number): Promise<Row> => {
      const cpuBefore = process.threadCpuUsage();
      const result = await autocannon({
        url: base,
        connections: CONNECTIONS,
        duration: seconds,
        workers: 1,
        // bench/autocannon.d.ts types the requests of the other benches only; headers and body are autocannon's own
        requests: [
          (kind === 'rest'
            ? { method: 'GET', path: REST_PATH, headers: { authorization } }
            : { method: 'POST', path: '/mcp', headers: { authorization, accept: MCP_ACCEPT, 'content-type': 'application/json' }, body: MCP_BODY }) as unknown as { path: string },
        ],
      });
      const cpu = process.threadCpuUsage(cpuBefore);
      const answered = result['2xx'] + result.non2xx;
      return {
        perSecond: result['2xx'] / result.duration,
        p50: result.latency.p50,
        p99: result.latency.p99,
        failures: result.non2xx + result.errors,
        cpuUs: (cpu.user + cpu.system) / Math.max(1, answered),
        bytes: result.throughput.total / Math.max(1, answered),
      };
    };
    await run('rest', 2); // warm-up
    await run('mcp', 2);
    const rows = { rest: [] as Row[], mcp: [] as Row[] };
    for (const kind of ['rest', 'mcp', 'mcp', 'rest'] as const) rows[kind].push(await run(kind, SECONDS));

    const mean = (list: Row[], key: keyof Row) => list.reduce((sum, row) => sum + row[key], 0) / list.length;
    console.log(`\nsearch_gpus ${JSON.stringify(FILTERS)}, ${CONNECTIONS} connections, 2 x ${SECONDS} s each`);
    for (const kind of ['rest', 'mcp'] as const) {
      const label = kind === 'rest' ? `REST GET ${REST_PATH}` : 'MCP  POST /mcp tools/call search_gpus';
      console.log(
        `${label}: ${mean(rows[kind], 'perSecond').toFixed(0)}/s (runs ${rows[kind].map((r) => r.perSecond.toFixed(0)).join(', ')}), ` +
          `p50 ${mean(rows[kind], 'p50').toFixed(1)} ms, p99 ${mean(rows[kind], 'p99').toFixed(1)} ms, ` +
          `server CPU ${mean(rows[kind], 'cpuUs').toFixed(0)} µs/request, ${mean(rows[kind], 'bytes').toFixed(0)} B/answer, ${mean(rows[kind], 'failures')} failed`,
      );
    }
    const share = mean(rows.mcp, 'perSecond') / mean(rows.rest, 'perSecond');
    console.log(`ratio: ${(share * 100).toFixed(1)}% of REST (goal >= ${GOAL * 100}%: ${share >= GOAL ? 'met' : 'missed'}), load ${os.loadavg()[0]!.toFixed(2)}`);
    if (rows.rest.some((r) => r.failures > 0) || rows.mcp.some((r) => r.failures > 0)) process.exitCode = 1;
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
