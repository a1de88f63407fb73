import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxProvider } from '../../adapters/providers/sandbox/index.ts';
import type { Offer } from '../../core/market/offer.ts';
import { rateCentsPerHour } from '../../core/market/pricing.ts';
import { startApi, type TestApi } from '../support/api.ts';

/** The same seeded market the server's default sandbox lists, read straight from the adapter at the server's hour (spot prices move hourly). */
const offers: Offer[] = await createSandboxProvider({ clock: () => Date.parse('2026-11-21T12:00:00.000Z') }).listOffers();
const rentable = offers.filter((offer) => offer.available > 0);
const cents = (offer: Offer) => rateCentsPerHour(offer.priceUsdPerHour, 0);
const perGpu = (offer: Offer) => Math.ceil(cents(offer) / offer.gpuCount);

let api: TestApi;
let token: string;
const search = (query = '') => api.call('GET', `/v1/gpus?limit=1000${query ? `&${query}` : ''}`, { token });
const idsOf = (body: { nodes: { id: string }[] }) => body.nodes.map((node) => node.id).sort();
const expectedIds = (keep: (offer: Offer) => boolean) => rentable.filter(keep).map((offer) => offer.id).sort();

beforeAll(async () => {
  api = await startApi();
  ({ token } = await api.newTenant());
});
afterAll(() => api.close());

describe('GET /v1/gpus', () => {
  it('needs a bearer token with read', async () => {
    expect((await api.call('GET', '/v1/gpus')).status).toBe(401);
    const billingOnly = await api.call('POST', '/v1/tokens', { token, body: { scopes: ['billing'] } });
    const res = await api.call('GET', '/v1/gpus', { token: billingOnly.body.token });
    expect(res.status).toBe(403);
    expect(res.body.detail).toMatch(/read/);
  });

  it('answers every rentable offer as a node, cheapest first, priced in whole cents rounded up', async () => {
    const res = await search();
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(rentable.length);
    expect(idsOf(res.body)).toEqual(expectedIds(() => true));
    const prices = res.body.nodes.map((node: any) => node.price_per_hour_cents);
    expect(prices).toEqual([...prices].sort((a, b) => a - b));
    const byId = new Map(offers.map((offer) => [offer.id, offer]));
    for (const node of res.body.nodes) {
      const offer = byId.get(node.id)!;
      expect(node.price_per_hour_cents).toBe(cents(offer));
      expect(node.price_per_hour_cents).toBeGreaterThanOrEqual(Number(offer.priceUsdPerHour) * 100 - 1e-9);
      expect(node.price_per_gpu_hour_cents).toBe(Math.ceil(node.price_per_hour_cents / node.gpu_count));
      expect(node.spot_price_per_gpu_hour_cents).toBe(offer.spotPriceUsdPerHour ? Math.ceil(rateCentsPerHour(offer.spotPriceUsdPerHour, 0) / node.gpu_count) : null);
      expect(node.supported_operations).toEqual(['terminate', 'reboot', 'schedule_removal', 'spot', 'custom_image', 'registry_auth', 'command', 'env', 'ports', 'startup_script', 'ssh_keys', 'volumes']);
    }
    // the sandbox has a spot market on some offers, not all: the field is a price on those, null on the rest
    const spot = res.body.nodes.filter((node: any) => node.spot_price_per_gpu_hour_cents !== null);
    expect(spot.length).toBeGreaterThan(0);
    expect(spot.length).toBeLessThan(res.body.nodes.length);
    for (const node of spot) expect(node.spot_price_per_gpu_hour_cents).toBeLessThan(node.price_per_gpu_hour_cents);
    expect(res.body.nodes[0]).toMatchObject({
      id: expect.stringMatching(/^sandbox:\d+$/),
      provider: 'sandbox',
      gpu_type: expect.any(String),
      gpu_model: expect.any(String),
      price_verified: expect.any(Boolean),
      docker_in_docker: expect.any(Boolean),
      attributes: expect.objectContaining({ reliability: expect.any(Number) }),
    });
    expect(res.body.rentals_open).toBe(true);
    expect(res.body.ignored_filters).toEqual([]);
    expect(res.body.providers).toEqual([
      {
        provider: 'sandbox',
        status: 'ok',
        error: null,
        snapshot_age_seconds: 0,
        fetched_at: '2026-11-21T12:00:00.000Z',
        count: rentable.length,
        ignored_filters: [],
        extra_filter_keys: expect.arrayContaining(['reliability', 'cuda']),
      },
    ]);
  });

  it('answers `limit` nodes (default 100) and counts every match in `total`', async () => {
    const all = await search();
    const first = await api.call('GET', '/v1/gpus', { token });
    expect(first.body.nodes).toHaveLength(100);
    expect(first.body.total).toBe(rentable.length);
    const five = await api.call('GET', '/v1/gpus?limit=5', { token });
    expect(five.body.nodes.map((n: any) => n.id)).toEqual(all.body.nodes.slice(0, 5).map((n: any) => n.id));
  });

  const h100 = offers.find((offer) => offer.gpuType === 'H100')!;
  const cases: [string, string, (offer: Offer) => boolean][] = [
    ['gpu_type (family, any spelling)', 'gpu_type=h100', (o) => o.gpuType === 'H100'],
    ['gpu_type with spaces', 'gpu_type=RTX%204090', (o) => o.gpuType === 'RTX4090'],
    ['gpu_count (exactly)', 'gpu_count=8', (o) => o.gpuCount === 8],
    ['min_vram_gb', 'min_vram_gb=48', (o) => o.vramGb >= 48],
    ['min_download_mbps', 'min_download_mbps=1000', (o) => o.downloadMbps !== null && o.downloadMbps >= 1000],
    ['min_ports', 'min_ports=100', (o) => o.ports !== null && o.ports >= 100],
    ['min_cpus', 'min_cpus=64', (o) => o.cpus >= 64],
    ['min_ram_gb', 'min_ram_gb=256.5', (o) => o.ramGb >= 256.5],
    ['min_disk_gb', 'min_disk_gb=1000', (o) => o.diskGb >= 1000],
    ['country (any case)', `country=${h100.country!.toLowerCase()}`, (o) => o.country === h100.country],
    ['region (any case)', `region=${h100.region!.toUpperCase()}`, (o) => o.region?.toLowerCase() === h100.region!.toLowerCase()],
    ['docker_in_docker=true', 'docker_in_docker=true', (o) => o.dockerInDocker],
    ['docker_in_docker=false', 'docker_in_docker=false', (o) => !o.dockerInDocker],
    ['mig=1', 'mig=1', (o) => o.mig],
    ['baremetal=true', 'baremetal=true', (o) => o.baremetal],
    ['virtualized=0', 'virtualized=0', (o) => !o.virtualized],
    ['provider', 'provider=sandbox', () => true],
    ['extra_filters numeric', 'extra_filters=reliability%3E%3D0.99', (o) => Number(o.attributes.reliability) >= 0.99],
    ['extra_filters text and flag', 'extra_filters=form_factor%3DSXM,static_ip%3Dtrue', (o) => o.attributes.form_factor === 'sxm' && o.attributes.static_ip === true],
    ['several filters at once', 'gpu_count=8&min_vram_gb=80&docker_in_docker=true', (o) => o.gpuCount === 8 && o.vramGb >= 80 && o.dockerInDocker],
  ];
  it.each(cases)('filters by %s: exactly the matching offers', async (_name, query, keep) => {
    const expected = expectedIds(keep);
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(rentable.length + (query.startsWith('provider') ? 1 : 0));
    const res = await search(query);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(idsOf(res.body)).toEqual(expected);
    expect(res.body.total).toBe(expected.length);
    expect(res.body.providers[0].count).toBe(expected.length);
  });

  it('max_price_per_gpu_hour is a per-GPU ceiling, not a whole-machine price', async () => {
    const eightGpu = rentable.filter((o) => o.gpuCount === 8).sort((a, b) => perGpu(a) - perGpu(b))[3]!;
    const ceiling = perGpu(eightGpu);
    const res = await search(`max_price_per_gpu_hour=${(ceiling / 100).toFixed(2)}`);
    expect(idsOf(res.body)).toEqual(expectedIds((o) => perGpu(o) <= ceiling));
    // the 8-GPU machine costs far more than the ceiling as a whole, and is still in
    expect(cents(eightGpu)).toBeGreaterThan(ceiling);
    expect(idsOf(res.body)).toContain(eightGpu.id);
    for (const node of res.body.nodes) expect(node.price_per_gpu_hour_cents).toBeLessThanOrEqual(ceiling);
    // one cent lower leaves out every node at exactly the ceiling
    const lower = await search(`max_price_per_gpu_hour=${((ceiling - 1) / 100).toFixed(2)}`);
    expect(idsOf(lower.body)).not.toContain(eightGpu.id);
    // a ceiling with sub-cent digits compares with the whole-cent prices shown: 0.009 below a cent is still below it
    const subCent = await search(`max_price_per_gpu_hour=${(ceiling / 100).toFixed(2)}9`);
    expect(idsOf(subCent.body)).toEqual(idsOf(res.body));
    expect((await search('max_price_per_gpu_hour=0')).body.total).toBe(0);
  });

  it('reports extra_filters keys no provider knows instead of dropping them', async () => {
    const res = await search('extra_filters=reliability%3E%3D0.95,colour%3Dblue');
    expect(res.status).toBe(200);
    expect(idsOf(res.body)).toEqual(expectedIds((o) => Number(o.attributes.reliability) >= 0.95));
    expect(res.body.ignored_filters).toEqual(['colour=blue']);
    expect(res.body.providers[0].ignored_filters).toEqual(['colour=blue']);
  });

  const bad: [string, string][] = [
    ['gpu_count=0', 'gpu_count'],
    ['gpu_count=1.5', 'gpu_count'],
    ['gpu_count=two', 'gpu_count'],
    ['gpu_count=65', 'gpu_count'],
    ['min_vram_gb=-1', 'min_vram_gb'],
    ['min_vram_gb=lots', 'min_vram_gb'],
    ['min_download_mbps=-5', 'min_download_mbps'],
    ['min_ports=-1', 'min_ports'],
    ['min_ports=2.5', 'min_ports'],
    ['min_cpus=0', 'min_cpus'],
    ['min_ram_gb=-0.5', 'min_ram_gb'],
    ['min_disk_gb=1e3', 'min_disk_gb'],
    ['max_price_per_gpu_hour=-1', 'max_price_per_gpu_hour'],
    ['max_price_per_gpu_hour=cheap', 'max_price_per_gpu_hour'],
    ['max_price_per_gpu_hour=100001', 'max_price_per_gpu_hour'],
    ['docker_in_docker=maybe', 'docker_in_docker'],
    ['mig=', 'mig'],
    ['gpu_type=', 'gpu_type'],
    ['country=', 'country'],
    ['provider=nimbus', 'provider'],
    ['extra_filters=reliability', 'extra_filters'],
    ['extra_filters=%3D5', 'extra_filters'],
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['gpu_count=1&gpu_count=2', 'gpu_count'],
    ['gpu_typ=H100', 'query'],
  ];
  it.each(bad)('%s answers 422 naming the parameter', async (query, name) => {
    const res = await api.call('GET', `/v1/gpus?${query}`, { token });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.detail).toContain(name);
    expect(res.body.errors[0].loc[0]).toBe('query');
  });

  it('names the enabled providers when asked for another one', async () => {
    const res = await api.call('GET', '/v1/gpus?provider=vast', { token });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/enabled: sandbox/);
  });
});

describe('GET /v1/marketplace', () => {
  const market = (query = '') => api.call('GET', `/v1/marketplace${query ? `?${query}` : ''}`, { token });

  it('groups offers by gpu_type, provider and region with counts, verified price ranges and availability', async () => {
    const res = await market();
    expect(res.status).toBe(200);
    const expected = new Map<string, Offer[]>();
    for (const offer of offers) {
      const key = `${offer.gpuType}|${offer.provider}|${offer.region}`;
      expected.set(key, [...(expected.get(key) ?? []), offer]);
    }
    expect(res.body.groups).toHaveLength(expected.size);
    let sawUnverified = false;
    for (const group of res.body.groups) {
      const members = expected.get(`${group.gpu_type}|${group.provider}|${group.region}`)!;
      const verified = members.filter((o) => o.priceVerified);
      expect(group.offers).toBe(members.length);
      expect(group.verified_offers).toBe(verified.length);
      expect(group.available_machines).toBe(members.reduce((sum, o) => sum + o.available, 0));
      expect(group.available_gpus).toBe(members.reduce((sum, o) => sum + o.available * o.gpuCount, 0));
      if (verified.length === 0) {
        sawUnverified = true;
        expect([group.min_price_cents, group.max_price_cents, group.min_price_per_gpu_cents]).toEqual([null, null, null]);
      } else {
        expect(group.min_price_cents).toBe(Math.min(...verified.map(cents)));
        expect(group.max_price_cents).toBe(Math.max(...verified.map(cents)));
        expect(group.min_price_per_gpu_cents).toBe(Math.min(...verified.map(perGpu)));
        expect(group.max_price_per_gpu_cents).toBe(Math.max(...verified.map(perGpu)));
      }
    }
    expect(sawUnverified).toBe(true);
    const keys = res.body.groups.map((g: any) => `${g.gpu_type}|${g.provider}|${g.region}`);
    expect(keys).toEqual([...keys].sort((a: string, b: string) => a.localeCompare(b)));
    expect(res.body.recent_instances).toEqual([]);
    expect(res.body.ignored_filters).toEqual([]);
    expect(res.body.providers[0]).toMatchObject({ provider: 'sandbox', status: 'ok', count: offers.length });
  });

  it('takes the search filters and reports ignored ones', async () => {
    const res = await market('gpu_type=A100&extra_filters=colour%3Dred');
    expect(res.status).toBe(200);
    expect(res.body.groups.length).toBeGreaterThan(0);
    expect(res.body.groups.every((g: any) => g.gpu_type === 'A100')).toBe(true);
    expect(res.body.groups.reduce((sum: number, g: any) => sum + g.offers, 0)).toBe(offers.filter((o) => o.gpuType === 'A100').length);
    expect(res.body.ignored_filters).toEqual(['colour=red']);
  });

  it('bounds recent_limit to 1..100 and needs a bearer token', async () => {
    expect((await market('recent_limit=100')).status).toBe(200);
    for (const value of ['0', '101', 'ten']) {
      const res = await market(`recent_limit=${value}`);
      expect(res.status).toBe(422);
      expect(res.body.detail).toContain('recent_limit');
    }
    expect((await market('gpu_count=0')).status).toBe(422);
    expect((await api.call('GET', '/v1/marketplace')).status).toBe(401);
  });
});
