import { afterEach, describe, expect, it } from 'vitest';
import { createLambdaProvider } from '../../adapters/providers/lambda/index.ts';
import { createSandboxProvider } from '../../adapters/providers/sandbox/index.ts';
import type { SandboxProvider } from '../../adapters/providers/sandbox/adapter.ts';
import { startFakeLambda, type FakeLambda } from '../fakes/lambda/server.ts';
import { startApi, type TestApi } from '../support/api.ts';
import { freshPostgres, postgresReachable } from '../support/database.ts';
import { ManualClock } from '../../adapters/clock/manual-clock.ts';
import { configFromEnv } from '../../hosts/composition/config.ts';
import { startFakeRunpod } from '../fakes/runpod/server.ts';
import { startFakeVast } from '../fakes/vast/server.ts';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

async function serve(config: Parameters<typeof startApi>[0] = {}, sandbox: SandboxProvider = createSandboxProvider(), extra: { lambda?: FakeLambda } = {}) {
  const providers = [sandbox, ...(extra.lambda ? [lambdaOn(extra.lambda)] : [])];
  // a real cloud (the Lambda fake) beside the embedded card processor: a trial, so the processor is named
  const api = await startApi({ payments: { kind: 'manual' }, ...config }, { providers });
  open.push(api);
  const { token } = await api.newTenant();
  return { api, token, sandbox, feed: () => api.plane.services.market.feed('sandbox')! };
}

const lambdaOn = (fake: FakeLambda) =>
  createLambdaProvider({ apiKey: fake.state.apiKey, baseUrl: fake.url, minIntervalMs: 0, launchIntervalMs: 0, retries: 0, timeoutMs: 2_000 });

async function fakeLambda(): Promise<FakeLambda> {
  const fake = await startFakeLambda();
  open.push(fake);
  return fake;
}

const providerOf = (body: any, name: string) => body.providers.find((p: any) => p.provider === name);

/** The sandbox's listings wait until `release` (those already begun, and those asked before it). */
function holdListings(sandbox: SandboxProvider): { release(): void; asked(): number } {
  const list = sandbox.listOffers.bind(sandbox);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let asked = 0;
  sandbox.listOffers = async (signal) => {
    asked++;
    await released;
    return list(signal);
  };
  return { release, asked: () => asked };
}

describe('per-provider snapshots behind GET /v1/gpus', () => {
  it('asks a provider at most every 60 seconds, measured on the clock, and reports the snapshot age', async () => {
    const { api, token, feed, sandbox } = await serve();
    const get = () => api.call('GET', '/v1/gpus?limit=1', { token });
    expect((await get()).status).toBe(200);
    await get();
    expect(feed().refreshCount).toBe(1);

    api.clock.advance(30_000);
    const older = await get();
    expect(providerOf(older.body, 'sandbox')).toMatchObject({ status: 'ok', snapshot_age_seconds: 30, fetched_at: '2026-11-21T12:00:00.000Z' });
    expect(feed().refreshCount).toBe(1);
    // with snapshots shared through PostgreSQL that search also began a look at the store; it ends before the
    // clock moves on, so the search below finds the feed idle (else it joins the look and begins no refresh)
    await feed().refreshIfDue();
    expect(feed().refreshCount).toBe(1);

    api.clock.advance(30_000);
    // due now: the search begins the refresh and answers with the snapshot it has, without waiting for the listing
    // (held here until after the answer: a search that waited for it would never answer)
    const listing = holdListings(sandbox);
    const due = await get();
    expect(providerOf(due.body, 'sandbox').snapshot_age_seconds).toBe(60);
    expect(feed().refreshCount).toBe(2);
    listing.release();
    await feed().refreshIfDue();
    expect(listing.asked()).toBe(1);
    expect(providerOf((await get()).body, 'sandbox')).toMatchObject({ status: 'ok', snapshot_age_seconds: 0, fetched_at: '2026-11-21T12:01:00.000Z' });
    expect(feed().refreshCount).toBe(2);
  });

  it('keeps serving the last offers after a failed refresh, says so, and drops them after 10 minutes', async () => {
    const { api, token, sandbox, feed } = await serve();
    const get = () => api.call('GET', '/v1/gpus?limit=1000', { token });
    const before = await get();
    sandbox.cloud.failNextReads(1_000);

    api.clock.advance(61_000);
    await get();
    await feed().refreshIfDue();
    const failing = await get();
    expect(failing.status).toBe(200);
    expect(providerOf(failing.body, 'sandbox')).toMatchObject({
      status: 'error',
      error: expect.stringMatching(/simulated outage/),
      snapshot_age_seconds: 61,
      count: before.body.total,
    });
    expect(failing.body.nodes.map((n: any) => n.id)).toEqual(before.body.nodes.map((n: any) => n.id));

    api.clock.advance(540_000); // 10 minutes and 1 second after the last good fetch
    await get();
    await feed().refreshIfDue();
    const gone = await get();
    expect(gone.status).toBe(200);
    expect(gone.body).toMatchObject({ nodes: [], total: 0 });
    expect(providerOf(gone.body, 'sandbox')).toMatchObject({ status: 'error', snapshot_age_seconds: null, count: 0 });
  });

  it('answers in time when a provider does not: that provider reports its error, the others their offers', async () => {
    const lambda = await fakeLambda();
    // a provider that would answer in 10 minutes: a search that waited for it would not answer within the test
    const slow = createSandboxProvider({ latencyMs: 600_000 });
    const { api, token, feed } = await serve({ market: { providerTimeoutMs: 300 } }, slow, { lambda });

    const res = await api.call('GET', '/v1/gpus?limit=1000', { token });
    expect(res.status).toBe(200);
    expect(providerOf(res.body, 'sandbox')).toMatchObject({ status: 'error', error: expect.stringMatching(/no answer within 300 ms/), count: 0, snapshot_age_seconds: null });
    expect(providerOf(res.body, 'lambda')).toMatchObject({ status: 'ok', snapshot_age_seconds: 0 });
    expect(res.body.total).toBeGreaterThan(0);
    expect(res.body.nodes.every((n: any) => n.provider === 'lambda')).toBe(true);

    // the next answer does not wait again: the slow provider is asked again only after 60 s
    expect(feed().listingCount).toBe(1);
    expect((await api.call('GET', '/v1/gpus', { token })).status).toBe(200);
    expect(feed().listingCount).toBe(1);
  });

  it('merges providers cheapest first and reports, per provider, the filters it cannot apply', async () => {
    const lambda = await fakeLambda();
    const { api, token } = await serve({}, createSandboxProvider(), { lambda });
    const all = await api.call('GET', '/v1/gpus?limit=1000', { token });
    expect(all.body.rentals_open).toBe(false); // a real cloud is enabled
    const prices = all.body.nodes.map((n: any) => n.price_per_hour_cents);
    expect(prices).toEqual([...prices].sort((a: number, b: number) => a - b));
    expect(new Set(all.body.nodes.map((n: any) => n.provider))).toEqual(new Set(['sandbox', 'lambda']));
    expect(all.body.total).toBe(providerOf(all.body, 'sandbox').count + providerOf(all.body, 'lambda').count);

    const res = await api.call('GET', '/v1/gpus?limit=1000&min_download_mbps=500&extra_filters=reliability%3E%3D0.99,colour%3Dred', { token });
    expect(res.status).toBe(200);
    expect(providerOf(res.body, 'sandbox').ignored_filters).toEqual(['colour=red']);
    expect(providerOf(res.body, 'lambda').ignored_filters).toEqual(['min_download_mbps', 'reliability>=0.99', 'colour=red']);
    expect(res.body.ignored_filters).toEqual(['colour=red']);
    // Lambda states no bandwidth: its offers are listed with the filter reported as not applied
    const lambdaNodes = res.body.nodes.filter((n: any) => n.provider === 'lambda');
    expect(lambdaNodes.length).toBe(providerOf(all.body, 'lambda').count);
    for (const node of res.body.nodes.filter((n: any) => n.provider === 'sandbox')) {
      expect(node.download_mbps).toBeGreaterThanOrEqual(500);
      expect(node.attributes.reliability).toBeGreaterThanOrEqual(0.99);
    }

    const onlyLambda = await api.call('GET', '/v1/gpus?provider=LAMBDA&extra_filters=instance_type%3Dgpu_1x_a10', { token });
    expect(onlyLambda.body.providers.map((p: any) => p.provider)).toEqual(['lambda']);
    expect(onlyLambda.body.nodes.length).toBeGreaterThan(0);
    expect(onlyLambda.body.nodes.every((n: any) => n.attributes.instance_type === 'gpu_1x_a10')).toBe(true);
  });

  it('prices nodes with the markup once renting is open, and at the upstream price while it is closed', async () => {
    // one hour for both sandboxes and the reference: spot prices move hourly
    const hour = () => Date.parse('2026-11-21T12:00:00.000Z');
    const plain = await serve({ market: { rentalsOpen: false, markupBps: 1_500 } }, createSandboxProvider({ clock: hour }));
    const marked = await serve({ market: { rentalsOpen: true, markupBps: 1_500 } }, createSandboxProvider({ clock: hour }));
    const a = (await plain.api.call('GET', '/v1/gpus?limit=1000', { token: plain.token })).body.nodes;
    const b = (await marked.api.call('GET', '/v1/gpus?limit=1000', { token: marked.token })).body.nodes;
    const upstream = new Map((await createSandboxProvider({ clock: hour }).listOffers()).map((o) => [o.id, o]));
    const byId = new Map(b.map((n: any) => [n.id, n]));
    const cents = (usd: string, markup: bigint) => {
      const [whole, fraction = ''] = usd.split('.');
      const n = BigInt(whole! + fraction);
      const d = 10n ** BigInt(fraction.length);
      return (n * 100n * (10_000n + markup) + d * 10_000n - 1n) / (d * 10_000n);
    };
    const perGpu = (machine: bigint, count: number) => (machine + BigInt(count) - 1n) / BigInt(count);
    let spot = 0;
    for (const node of a) {
      const offer = upstream.get(node.id)!;
      const marked = byId.get(node.id) as any;
      expect(BigInt(node.price_per_hour_cents)).toBe(cents(offer.priceUsdPerHour, 0n));
      expect(BigInt(marked.price_per_hour_cents)).toBe(cents(offer.priceUsdPerHour, 1_500n));
      // the spot price by the same rule: per GPU, rounded up, marked up only while renting is open
      if (!offer.spotPriceUsdPerHour) {
        expect([node.spot_price_per_gpu_hour_cents, marked.spot_price_per_gpu_hour_cents]).toEqual([null, null]);
        continue;
      }
      spot++;
      expect(BigInt(node.spot_price_per_gpu_hour_cents)).toBe(perGpu(cents(offer.spotPriceUsdPerHour, 0n), offer.gpuCount));
      expect(BigInt(marked.spot_price_per_gpu_hour_cents)).toBe(perGpu(cents(offer.spotPriceUsdPerHour, 1_500n), offer.gpuCount));
    }
    expect(spot).toBeGreaterThan(0);
  });
});

describe('providers from the environment', () => {
  it('puts a real cloud behind the service with nothing but its API key (and, here, the fake\'s URL)', async () => {
    const vast = await startFakeVast();
    const runpod = await startFakeRunpod();
    const lambda = await fakeLambda();
    open.push(vast, runpod);
    const env = configFromEnv({
      SANDBOX_ENABLED: 'false',
      VAST_API_KEY: vast.state.apiKey,
      VAST_BASE_URL: vast.url,
      RUNPOD_API_KEY: runpod.apiKey,
      RUNPOD_BASE_URL: runpod.url,
      LAMBDA_API_KEY: lambda.state.apiKey,
      LAMBDA_BASE_URL: lambda.url,
      PAYMENTS: 'manual',
    });
    const api = await startApi({ providers: env.providers!, market: env.market!, payments: env.payments! });
    open.push(api);
    const { token } = await api.newTenant();
    const res = await api.call('GET', '/v1/gpus?limit=1000', { token });
    expect(res.status).toBe(200);
    expect(res.body.rentals_open).toBe(false);
    expect(res.body.providers.map((p: any) => [p.provider, p.status])).toEqual([
      ['vast', 'ok'],
      ['runpod', 'ok'],
      ['lambda', 'ok'],
    ]);
    for (const name of ['vast', 'runpod', 'lambda']) {
      expect(providerOf(res.body, name).count).toBeGreaterThan(0);
      expect(res.body.nodes.some((n: any) => n.provider === name && n.id.startsWith(`${name}:`))).toBe(true);
    }
    expect(res.body.total).toBe(res.body.providers.reduce((sum: number, p: any) => sum + p.count, 0));
  });
});

describe('GET /v1/market/summary', () => {
  it('is public, built from verified non-zero prices, and cached for 60 seconds', async () => {
    const { api, feed } = await serve();
    const offers = await createSandboxProvider().listOffers();
    const first = await api.call('GET', '/v1/market/summary');
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('public, max-age=60');
    expect(first.body).toMatchObject({ updated_at: '2026-11-21T12:00:00.000Z', stale: false, rentals_open: true });
    const counted = offers.filter((o) => o.priceVerified && Number(o.priceUsdPerHour) > 0 && o.available > 0);
    expect(first.body.machines).toBe(counted.reduce((sum, o) => sum + o.available, 0));
    expect(first.body.gpus_available).toBe(counted.reduce((sum, o) => sum + o.available * o.gpuCount, 0));
    expect(first.body.families.map((f: any) => f.gpu_type)).toEqual([...new Set(counted.map((o) => o.gpuType))].sort());
    expect(first.body.families.length).toBeGreaterThanOrEqual(12);
    for (const family of first.body.families) {
      expect(family.min_price_per_gpu_hour).toBe(family.min_price_per_gpu_hour_cents / 100);
      expect(Object.keys(family).sort()).toEqual(
        ['available_gpus', 'gpu_model', 'gpu_type', 'machines', 'max_vram_gb', 'min_price_per_gpu_hour', 'min_price_per_gpu_hour_cents'].sort(),
      );
    }
    expect(feed().refreshCount).toBe(1);

    api.clock.advance(59_000);
    const cached = await api.call('GET', '/v1/market/summary');
    expect(cached.body.updated_at).toBe('2026-11-21T12:00:00.000Z');
    expect(cached.headers.get('cache-control')).toBe('public, max-age=1');
    expect(feed().refreshCount).toBe(1);

    api.clock.advance(2_000);
    const next = await Promise.all(Array.from({ length: 20 }, () => api.call('GET', '/v1/market/summary')));
    expect(new Set(next.map((r) => r.body.updated_at))).toEqual(new Set(['2026-11-21T12:01:01.000Z']));
    expect(next.every((r) => r.status === 200 && r.body.stale === false)).toBe(true);
    expect(feed().refreshCount).toBe(2); // twenty callers, one refresh
  });

  it('serves the last good summary marked stale after a failed refresh, for 10 minutes, then 503', async () => {
    const { api, sandbox } = await serve();
    const good = await api.call('GET', '/v1/market/summary');
    sandbox.cloud.failNextReads(1_000);

    api.clock.advance(61_000);
    const stale = await api.call('GET', '/v1/market/summary');
    expect(stale.status).toBe(200);
    expect(stale.body).toMatchObject({ stale: true, updated_at: good.body.updated_at, families: good.body.families });

    api.clock.advance(539_000); // exactly 10 minutes old
    expect((await api.call('GET', '/v1/market/summary')).body.stale).toBe(true);

    api.clock.advance(1_000);
    const gone = await api.call('GET', '/v1/market/summary');
    expect(gone.status).toBe(503);
    expect(gone.body.detail).toMatch(/no market has answered for 10 minutes/);
  });

  it('answers 503 when no market has answered yet, then recovers with the next refresh', async () => {
    const sandbox = createSandboxProvider();
    sandbox.cloud.failNextReads(1);
    const { api } = await serve({}, sandbox);
    const res = await api.call('GET', '/v1/market/summary');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ detail: expect.stringMatching(/no market has answered yet/) });
    expect((await api.call('GET', '/v1/market/summary')).status).toBe(503); // not asked again within the minute
    api.clock.advance(60_000);
    expect((await api.call('GET', '/v1/market/summary')).status).toBe(200);
  });

  it('carries rentals_open: false with a real cloud enabled, unless RENTALS_OPEN says otherwise', async () => {
    const lambda = await fakeLambda();
    const closed = await serve({}, createSandboxProvider(), { lambda });
    expect((await closed.api.call('GET', '/v1/market/summary')).body.rentals_open).toBe(false);
    const opened = await serve({ market: { rentalsOpen: true } }, createSandboxProvider(), { lambda });
    expect((await opened.api.call('GET', '/v1/market/summary')).body.rentals_open).toBe(true);
    const shut = await serve({ market: { rentalsOpen: false } });
    expect((await shut.api.call('GET', '/v1/market/summary')).body.rentals_open).toBe(false);
  });
});

describe.runIf(await postgresReachable())('the market summary across replicas', () => {
  it('is one snapshot in storage: every replica serves it and only one refreshes it', async () => {
    const database = await freshPostgres();
    const clock = new ManualClock(new Date('2026-11-21T12:00:00.000Z'));
    const replicas: TestApi[] = [];
    try {
      for (let i = 0; i < 3; i++) replicas.push(await startApi({}, { providers: [createSandboxProvider()], database, clock }));
      const refreshes = () => replicas.reduce((sum, r) => sum + r.plane.services.market.feed('sandbox')!.refreshCount, 0);

      const first = await replicas[0]!.call('GET', '/v1/market/summary');
      const others = await Promise.all(replicas.slice(1).map((r) => r.call('GET', '/v1/market/summary')));
      expect(others.map((r) => r.body)).toEqual([first.body, first.body]);
      expect(refreshes()).toBe(1);

      clock.advance(61_000);
      const all = await Promise.all(replicas.flatMap((r) => Array.from({ length: 5 }, () => r.call('GET', '/v1/market/summary'))));
      expect(all.every((r) => r.status === 200)).toBe(true);
      expect(refreshes()).toBe(2);
      const latest = await replicas[2]!.call('GET', '/v1/market/summary');
      expect(latest.body).toMatchObject({ updated_at: '2026-11-21T12:01:01.000Z', stale: false });
    } finally {
      for (const replica of replicas) await replica.close();
      await database.drop();
    }
  });
});
