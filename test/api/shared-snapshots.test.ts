import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../adapters/clock/manual-clock.ts';
import { createSandboxProvider } from '../../adapters/providers/sandbox/index.ts';
import type { Provider } from '../../core/ports/providers.ts';
import { startApi, type TestApi } from '../support/api.ts';
import { freshPostgres, postgresReachable } from '../support/database.ts';

/** Each replica's provider, counting the listings asked of it (the upstream call a snapshot costs). */
function counting(listings: { count: number }, options: Parameters<typeof createSandboxProvider>[0] = {}): Provider {
  const provider = createSandboxProvider(options);
  const listOffers = provider.listOffers.bind(provider);
  provider.listOffers = (signal) => {
    listings.count++;
    return listOffers(signal);
  };
  return provider;
}

const ids = (body: any) => body.nodes.map((node: any) => node.id);
const sandboxReport = (body: any) => body.providers.find((p: any) => p.provider === 'sandbox');

describe.runIf(await postgresReachable())('provider snapshots shared by replicas', () => {
  it('one replica lists a provider per interval; the others serve the offers it stored, the same generation', async () => {
    const database = await freshPostgres();
    const clock = new ManualClock(new Date('2026-11-21T12:00:00.000Z'));
    const listings = { count: 0 };
    const replicas: TestApi[] = [];
    try {
      for (let i = 0; i < 3; i++) replicas.push(await startApi({}, { providers: [counting(listings)], database, clock }));
      const [a, b, c] = replicas as [TestApi, TestApi, TestApi];
      const { token } = await a.newTenant();
      const search = (api: TestApi) => api.call('GET', '/v1/gpus?limit=50', { token });

      // all three at once before any snapshot exists: one lists, the other two wait for its offers
      const first = await Promise.all([search(a), search(b), search(c)]);
      expect(listings.count).toBe(1);
      expect(first.map((res) => res.status)).toEqual([200, 200, 200]);
      expect(ids(first[1]!.body)).toEqual(ids(first[0]!.body));
      expect(ids(first[2]!.body)).toEqual(ids(first[0]!.body));
      expect(first.map((res) => sandboxReport(res.body).fetched_at)).toEqual(Array(3).fill('2026-11-21T12:00:00.000Z'));

      // between refreshes a replica only looks at the generation: no listing
      clock.advance(30_000);
      await Promise.all(replicas.map((api) => api.plane.services.market.refreshDue()));
      expect(listings.count).toBe(1);

      // due: every replica tries, one lists, the others load the new generation
      clock.advance(31_000);
      await Promise.all(replicas.map((api) => api.plane.services.market.refreshDue()));
      await Promise.all(replicas.map((api) => api.plane.services.market.refreshDue()));
      expect(listings.count).toBe(2);
      clock.advance(5_000); // the sync interval: the losers load what the winner stored
      await Promise.all(replicas.map((api) => api.plane.services.market.refreshDue()));
      const later = await Promise.all([search(a), search(b), search(c)]);
      expect(later.map((res) => sandboxReport(res.body).fetched_at)).toEqual(Array(3).fill('2026-11-21T12:01:01.000Z'));
      expect(listings.count).toBe(2);
    } finally {
      for (const replica of replicas) await replica.close();
      await database.drop();
    }
  });

  it('a replica that took the lease and died is replaced once the lease runs out; a failed listing is reported by every replica', async () => {
    const database = await freshPostgres();
    const clock = new ManualClock(new Date('2026-11-21T12:00:00.000Z'));
    const listings = { count: 0 };
    const replicas: TestApi[] = [];
    try {
      const failing = createSandboxProvider();
      for (let i = 0; i < 2; i++) replicas.push(await startApi({ market: { providerTimeoutMs: 1_000 } }, { providers: [i === 0 ? failing : counting(listings)], database, clock }));
      const [a, b] = replicas as [TestApi, TestApi];
      const { token } = await a.newTenant();
      // a claims the lease and never stores (as if it died mid-listing)
      await a.plane.storage.execute(`insert into market_snapshots (provider, refresh_started_at, lease_until) values ('sandbox', ?, ?)`, [
        clock.now(),
        new Date(clock.now().getTime() + 6_000),
      ]);
      clock.advance(6_000);
      const res = await b.call('GET', '/v1/gpus?limit=5', { token });
      expect(res.status).toBe(200);
      // the lease ran out, but a refresh started 6 s ago: b waits for the interval
      expect(listings.count).toBe(0);
      clock.advance(54_000);
      await b.plane.services.market.refreshDue();
      expect(listings.count).toBe(1);
      expect(sandboxReport((await b.call('GET', '/v1/gpus?limit=5', { token })).body)).toMatchObject({ status: 'ok' });

      // the next listing fails where it runs (a); b reports the failure too, serving the last offers
      failing.cloud.failNextReads(1_000);
      clock.advance(60_000);
      await a.plane.services.market.refreshDue();
      clock.advance(5_000);
      await b.plane.services.market.refreshDue();
      const failed = await b.call('GET', '/v1/gpus?limit=5', { token });
      expect(sandboxReport(failed.body)).toMatchObject({ status: 'error', error: expect.stringMatching(/simulated outage/), snapshot_age_seconds: 65 });
      expect(failed.body.nodes.length).toBe(5);
    } finally {
      for (const replica of replicas) await replica.close();
      await database.drop();
    }
  });
});
