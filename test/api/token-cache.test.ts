import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../adapters/clock/manual-clock.ts';
import { startApi, type TestApi } from '../support/api.ts';
import { freshPostgres, postgresReachable } from '../support/database.ts';

describe.runIf(await postgresReachable())('authenticated tokens across replicas', () => {
  it('a revocation takes effect at once where it is made, and on every other replica within the cache time', async () => {
    const database = await freshPostgres();
    const clock = new ManualClock(new Date('2026-11-21T12:00:00.000Z'));
    const replicas: TestApi[] = [];
    try {
      replicas.push(await startApi({ tokenCacheMs: 5_000 }, { database, clock }));
      replicas.push(await startApi({ tokenCacheMs: 5_000 }, { database, clock }));
      const [a, b] = replicas as [TestApi, TestApi];
      const { token } = await a.newTenant();
      const child = await a.call('POST', '/v1/tokens', { token, body: { name: 'agent' } });
      const self = (api: TestApi) => api.call('GET', '/v1/tokens/self', { token: child.body.token });
      expect((await self(b)).status).toBe(200); // b has read the row now

      expect((await a.call('DELETE', `/v1/tokens/${child.body.id}`, { token })).status).toBe(204);
      expect((await self(a)).status).toBe(401);
      expect((await self(b)).status).toBe(200); // still within b's 5 s

      clock.advance(5_000);
      expect((await self(b)).status).toBe(401);
    } finally {
      for (const replica of replicas) await replica.close();
      await database.drop();
    }
  });

  it('with the cache off, every request reads the token row', async () => {
    const database = await freshPostgres();
    const clock = new ManualClock(new Date('2026-11-21T12:00:00.000Z'));
    const replicas: TestApi[] = [];
    try {
      replicas.push(await startApi({ tokenCacheMs: 0 }, { database, clock }));
      replicas.push(await startApi({ tokenCacheMs: 0 }, { database, clock }));
      const [a, b] = replicas as [TestApi, TestApi];
      const { token } = await a.newTenant();
      const child = await a.call('POST', '/v1/tokens', { token, body: { name: 'agent' } });
      expect((await b.call('GET', '/v1/tokens/self', { token: child.body.token })).status).toBe(200);
      await a.call('DELETE', `/v1/tokens/${child.body.id}`, { token });
      expect((await b.call('GET', '/v1/tokens/self', { token: child.body.token })).status).toBe(401);
    } finally {
      for (const replica of replicas) await replica.close();
      await database.drop();
    }
  });
});
