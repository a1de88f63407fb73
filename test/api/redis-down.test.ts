import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../adapters/clock/manual-clock.ts';
import { startApi, type TestApi } from '../support/api.ts';
import { freshPostgres, postgresReachable, type TestDatabase } from '../support/database.ts';
import { canRunPrivateRedis, startPrivateRedis, type PrivateRedis } from '../support/private-redis.ts';

const open: { close(): Promise<void> }[] = [];
let database: TestDatabase | null = null;
let redis: PrivateRedis | null = null;
afterAll(async () => {
  while (open.length) await open.pop()!.close();
  await redis?.kill();
  await database?.drop();
});

/** Waits for `check` to hold (polling what the server answers), at most `ms`; answers how long it took. */
const until = async (check: () => Promise<boolean>, ms: number): Promise<number> => {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return performance.now() - started;
};

const readyz = (api: TestApi) => api.call('GET', '/readyz');

describe.runIf((await postgresReachable()) && canRunPrivateRedis())('two replicas when their Redis process dies', () => {
  // two replicas started, Redis killed, restarted and frozen: room for a loaded machine
  it('stay up (degraded, limits per replica), a revocation made meanwhile holds on both at once, and they share again when Redis is back', { timeout: 90_000 }, async () => {
    redis = await startPrivateRedis();
    database = await freshPostgres();
    // the clock stands still: a cached token row would never expire, so only reading through can see a revocation
    const clock = new ManualClock(new Date('2026-11-21T12:00:00.000Z'));
    const config = { redis: { url: redis.url, prefix: 'gcp-test:' }, tokenCacheMs: 5_000, rateLimits: { publicPerMinute: 100_000, perTokenPerMinute: 50 } };
    const a = await startApi(config, { database, clock });
    open.push(a);
    const b = await startApi(config, { database, clock });
    open.push(b);
    for (const api of [a, b]) await api.plane.services.market.refreshDue();
    await until(async () => (await readyz(b)).body.status === 'ready', 5_000);
    expect((await readyz(b)).body.checks.redis).toEqual({ ok: true, detail: 'connected' });

    const { token } = await a.newTenant();
    const agent = (await a.call('POST', '/v1/tokens', { token, body: { name: 'agent' } })).body;
    const self = (api: TestApi, bearer: string) => api.call('GET', '/v1/tokens/self', { token: bearer });
    expect((await self(b, agent.token)).status).toBe(200); // b now caches the agent's row

    await redis.kill();
    await until(async () => (await readyz(b)).body.status === 'degraded', 5_000);
    const degraded = await readyz(b);
    expect(degraded.status).toBe(200);
    expect(degraded.body.checks.redis).toEqual({ ok: false, detail: expect.stringMatching(/^unreachable/) });
    expect(degraded.body.checks.database.ok).toBe(true);
    // limits fall back to each replica's memory: answered, never a 500
    for (const api of [a, b]) expect((await self(api, token)).status).toBe(200);

    // revoked on a while b cannot hear it: b reads the row through the database
    const revoked = performance.now();
    expect((await a.call('DELETE', `/v1/tokens/${agent.id}`, { token })).status).toBe(204);
    await until(async () => (await self(b, agent.token)).status === 401, 5_000);
    const propagation = performance.now() - revoked;
    expect(propagation).toBeLessThan(5_000);

    await redis.start();
    await until(async () => (await readyz(a)).body.status === 'ready' && (await readyz(b)).body.status === 'ready', 10_000);
    expect((await self(b, agent.token)).status).toBe(401);
    expect((await self(b, token)).status).toBe(200);

    // a Redis that hangs rather than going away is noticed by its silence (a PING every half second, 2 s without a byte)
    const second = (await a.call('POST', '/v1/tokens', { token, body: { name: 'second agent' } })).body;
    expect((await self(b, second.token)).status).toBe(200);
    redis.freeze();
    try {
      const frozenAt = performance.now();
      expect((await a.call('DELETE', `/v1/tokens/${second.id}`, { token })).status).toBe(204);
      await until(async () => (await self(b, second.token)).status === 401, 5_000);
      expect(performance.now() - frozenAt).toBeLessThan(5_000);
    } finally {
      redis.thaw();
    }
  });
});
