import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../adapters/clock/manual-clock.ts';
import { startApi, type TestApi } from '../support/api.ts';
import { freshPostgres, postgresReachable, type TestDatabase } from '../support/database.ts';
import { freshRedisPrefix, redisReachable, TEST_REDIS_URL } from '../support/redis.ts';

/** A TCP hop in front of Redis that the test can cut (every connection dropped, none accepted) and restore. */
class Cable {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  port = 0;

  async connect(): Promise<void> {
    const target = new URL(TEST_REDIS_URL);
    this.server = createServer((client) => {
      const upstream = createConnection({ host: target.hostname, port: Number(target.port || 6379) });
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  async cut(): Promise<void> {
    const closed = new Promise((resolve) => this.server?.close(resolve));
    for (const socket of this.sockets) socket.destroy();
    await closed;
    this.server = null;
  }
}

const open: { close(): Promise<void> }[] = [];
let database: TestDatabase | null = null;
let cable: Cable | null = null;
afterEach(async () => {
  while (open.length) await open.pop()!.close();
  await cable?.cut();
  await database?.drop();
  database = null;
});

const until = async (check: () => Promise<boolean>, ms: number): Promise<void> => {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

const remaining = (res: { headers: Headers }) => Number(/remaining=(\d+)/.exec(res.headers.get('ratelimit') ?? '')?.[1]);

describe.runIf((await postgresReachable()) && (await redisReachable()))('replicas when Redis goes away and comes back', () => {
  it('fail open to per-replica counting, then share again; a replica cut off from revocations reads tokens through the database', async () => {
    database = await freshPostgres();
    cable = new Cable();
    await cable.connect();
    const clock = new ManualClock(new Date('2026-11-21T12:00:00.000Z'));
    const config = { redis: { url: `redis://127.0.0.1:${cable.port}`, prefix: freshRedisPrefix() }, tokenCacheMs: 5_000, rateLimits: { publicPerMinute: 100_000, perTokenPerMinute: 20 } };
    const a = await startApi(config, { database, clock });
    open.push(a);
    const b = await startApi(config, { database, clock });
    open.push(b);
    const { token } = await a.newTenant();
    const limited = (await a.call('POST', '/v1/tokens', { token, body: { name: 'limited' } })).body;
    const agent = (await a.call('POST', '/v1/tokens', { token, body: { name: 'agent' } })).body;
    const self = (api: TestApi, bearer: string) => api.call('GET', '/v1/tokens/self', { token: bearer });

    // shared: what one replica counted, the other sees
    expect(remaining(await self(a, limited.token))).toBe(19);
    expect(remaining(await self(b, limited.token))).toBe(18);
    expect((await self(b, agent.token)).status).toBe(200); // b caches the agent's row for 5 s (its clock stands still)

    await cable.cut();
    // no 500: a counts alone from zero, its own budget of 20, then refuses
    const alone: number[] = [];
    for (let i = 0; i < 21; i++) alone.push((await self(a, limited.token)).status);
    expect(alone).toEqual([...Array(20).fill(200), 429]);
    expect((await self(b, limited.token)).status).toBe(200); // b's own count
    // a revocation while b cannot hear it: b reads tokens through the database meanwhile, so it holds there too
    expect((await a.call('DELETE', `/v1/tokens/${agent.id}`, { token })).status).toBe(204);
    expect((await self(a, agent.token)).status).toBe(401);
    expect((await self(b, agent.token)).status).toBe(401);

    await cable.connect(); // same port: both replicas reconnect on their own
    // counting is shared again (the count Redis kept, 2, goes on): one replica's request shows in the other's
    await until(async () => (await self(a, limited.token)).status === 200 && remaining(await self(b, limited.token)) < 18, 10_000);
    const onA = remaining(await self(a, limited.token));
    expect(remaining(await self(b, limited.token))).toBe(onA - 1);
  });
});
