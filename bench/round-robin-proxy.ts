/**
 * A round-robin HTTP proxy in front of several replicas, on Node's http alone (what a load balancer does,
 * minus health checks): `node bench/round-robin-proxy.ts <port> <origin> <origin>...`. Keep-alive agents
 * on both sides, so the figures measure the replicas and not connection set-up. Prints the port it listens on.
 */
import { Agent, createServer, request } from 'node:http';

const [portText, ...origins] = process.argv.slice(2);
if (!portText || origins.length === 0) {
  console.error('usage: round-robin-proxy.ts <port> <origin>...');
  process.exit(2);
}
const upstreams = origins.map((origin) => new URL(origin));
const agent = new Agent({ keepAlive: true, maxSockets: 256 });
let next = 0;

const server = createServer((req, res) => {
  const target = upstreams[next++ % upstreams.length]!;
  const upstream = request(
    { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('error', () => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
    res.end('{"detail":"upstream replica unreachable"}');
  });
  req.pipe(upstream);
});
server.keepAliveTimeout = 60_000;
server.listen(Number(portText), '127.0.0.1', () => {
  const address = server.address();
  console.log(JSON.stringify({ port: typeof address === 'object' && address ? address.port : null }));
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
