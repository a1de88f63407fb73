import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../adapters/clock/manual-clock.ts';
import { startApi, type TestApi } from '../support/api.ts';
import { freshPostgres, postgresReachable, type TestDatabase } from '../support/database.ts';
import { freshRedisPrefix, redisReachable, TEST_REDIS_URL as REDIS_URL } from '../support/redis.ts';

const open: { close(): Promise<void> }[] = [];
let database: TestDatabase | null = null;
afterEach(async () => {
  while (open.length) await open.pop()!.close();
  await database?.drop();
  database = null;
});

/** Replicas on one database and one Redis; a key prefix of their own, so concurrent test files never share counters. */
async function replicas(count: number, config: Parameters<typeof startApi>[0], redisUrl = REDIS_URL): Promise<TestApi[]> {
  database = await freshPostgres();
  const clock = new ManualClock(new Date('2026-11-21T12:00:00.000Z'));
  const prefix = freshRedisPrefix();
  const started: TestApi[] = [];
  for (let i = 0; i < count; i++) {
    const api = await startApi({ redis: { url: redisUrl, prefix }, ...config }, { database, clock });
    open.push(api);
    started.push(api);
  }
  return started;
}

const until = async (check: () => Promise<boolean>, ms: number): Promise<number> => {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return performance.now() - started;
};

describe.runIf((await postgresReachable()) && (await redisReachable()))('replicas sharing Redis', () => {
  it('counts one per-token budget across replicas', async () => {
    const [a, b] = (await replicas(2, { rateLimits: { publicPerMinute: 100_000, perTokenPerMinute: 10 } })) as [TestApi, TestApi];
    const { token } = await a.newTenant();
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await (i % 2 ? b : a).call('GET', '/v1/tokens/self', { token })).status);
    // the bootstrap exchange spent none of the token's budget: 8 here, 2 left in all
    expect(statuses).toEqual(Array(8).fill(200));
    const more = await Promise.all([a, b, a, b].map((api) => api.call('GET', '/v1/tokens/self', { token })));
    expect(more.map((res) => res.status).sort()).toEqual([200, 200, 429, 429]);
    const refused = more.find((res) => res.status === 429)!;
    expect(refused.headers.get('ratelimit')).toMatch(/^limit=10, remaining=0, reset=\d+$/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('a token revoked on one replica is refused by the other at once, not after its 5 s cache', async () => {
    const [a, b] = (await replicas(2, { tokenCacheMs: 5_000 })) as [TestApi, TestApi];
    const { token } = await a.newTenant();
    const child = await a.call('POST', '/v1/tokens', { token, body: { name: 'agent' } });
    const self = (api: TestApi) => api.call('GET', '/v1/tokens/self', { token: child.body.token });
    expect((await self(b)).status).toBe(200); // cached on b now, for 5 s on its (stopped) clock
    expect((await a.call('DELETE', `/v1/tokens/${child.body.id}`, { token })).status).toBe(204);
    // b's clock is stopped: its cached token never runs out, so a refusal is the revocation heard (milliseconds; the
    // bound is only how long to keep asking on a loaded machine)
    const took = await until(async () => (await self(b)).status === 401, 30_000);
    console.log(`revoked on a, refused by b after ${took.toFixed(1)} ms`);
  });

  it('with Redis unreachable, requests are answered and each replica counts its own budget (fail open, not 500)', async () => {
    const [a, b] = (await replicas(2, { rateLimits: { publicPerMinute: 100_000, perTokenPerMinute: 3 } }, 'redis://127.0.0.1:9')) as [TestApi, TestApi];
    const { token } = await a.newTenant();
    const onA = [];
    for (let i = 0; i < 4; i++) onA.push((await a.call('GET', '/v1/tokens/self', { token })).status);
    expect(onA).toEqual([200, 200, 200, 429]);
    expect((await b.call('GET', '/v1/tokens/self', { token })).status).toBe(200);
    // revocation still works where it is made
    const child = await a.call('POST', '/v1/tokens', { token: (await b.newTenant('other')).token, body: { name: 'x' } });
    expect(child.status).toBe(201);
  });
});
