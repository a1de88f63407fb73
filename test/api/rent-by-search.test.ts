import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxProvider } from '../../adapters/providers/sandbox/index.ts';
import type { Offer } from '../../core/market/offer.ts';
import type { Provider } from '../../core/ports/providers.ts';
import { startApi, type TestApi } from '../support/api.ts';
import { offerGroups, offerIdOf, usd } from '../support/offer-groups.ts';
import { renamedProvider } from '../support/renamed-provider.ts';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';

/**
 * Renting by specification (docs/decisions.md, "Rent by specification and quotes"): POST /v1/instances with a
 * search rents its cheapest match whose live price is verified and within the ceiling, over HTTP on PostgreSQL.
 */
let world: RentalWorld;
let takeGroup: ReturnType<typeof offerGroups>;
beforeAll(async () => {
  world = await rentalWorld({}, { sandbox: { offers: 600 } });
  takeGroup = offerGroups(world);
});
afterAll(() => world.close());

const call = (...args: Parameters<RentalWorld['api']['call']>) => world.api.call(...args);
const reprice = async (nodeId: string, perGpuCents: number) => {
  const res = await call('POST', `/v1/operator/sandbox/offers/${nodeId}/price`, { headers: OPERATOR, body: { price_per_gpu_hour_usd: usd(perGpuCents) } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
};
const rentalCharges = async (token: string) => (await world.ledger(token)).filter((e) => e.kind === 'rental_hour');

describe('POST /v1/instances with a search', () => {
  it('rents the cheapest verified match and names the node it chose; unverified cheaper ones are passed over', async () => {
    const { token } = await world.fundedTenant(100);
    const { verified, all, search } = await takeGroup(2, { cheaperUnverified: true });
    const cheapest = verified[0]!;
    expect(all[0]!.rate).toBeLessThan(cheapest.rate);
    const res = await world.rent(token, { search, termination_hours: 2, name: 'by-search' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ node_id: cheapest.id, rate_cents_per_hour: cheapest.rate, charged_cents: cheapest.rate, name: 'by-search', gpu_count: search.gpu_count });
    expect((await rentalCharges(token)).map((e) => e.amount_cents)).toEqual([-cheapest.rate]);
    expect((await call('GET', '/v1/tokens/self', { token })).body.committed_cents).toBe(2 * cheapest.rate);
  });

  it('skips a node that vanished and one whose live price rose above the ceiling, and rents the next', async () => {
    const { token } = await world.fundedTenant(100);
    const { verified, search } = await takeGroup(3);
    const [gone, dearer, next] = verified;
    const ceiling = next!.perGpu;
    await world.sandbox.cloud.withdrawOffer(offerIdOf(gone!.id));
    await reprice(dearer!.id, ceiling + 7);
    // the market's snapshot still lists both as they were: only the live checks find them out
    const listed = (await call('GET', `/v1/gpus?gpu_type=${encodeURIComponent(search.gpu_type)}&gpu_count=${search.gpu_count}&provider=sandbox`, { token })).body.nodes.map((n: any) => n.id);
    expect(listed).toEqual(expect.arrayContaining([gone!.id, dearer!.id]));

    const res = await world.rent(token, { search: { ...search, max_price_per_gpu_hour: usd(ceiling) } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ node_id: next!.id, rate_cents_per_hour: next!.rate });
    expect(await rentalCharges(token)).toHaveLength(1);
  });

  it('nothing passing is a 409 saying what was tried and why; nothing is charged', async () => {
    const { token } = await world.fundedTenant(100);
    const { verified, search } = await takeGroup(2);
    const [gone, dearer] = verified;
    await world.sandbox.cloud.withdrawOffer(offerIdOf(gone!.id));
    await reprice(dearer!.id, dearer!.perGpu + 50);
    const ceiling = dearer!.perGpu;
    const res = await world.rent(token, { search: { ...search, max_price_per_gpu_hour: usd(ceiling) }, idempotency_key: 'nothing-left' });
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(res.body.detail).toContain(`${gone!.id} is gone`);
    expect(res.body.detail).toContain(`${dearer!.id} costs ${dearer!.perGpu + 50} cents per GPU-hour now, above the ceiling of ${ceiling}`);
    expect(await world.ledger(token)).toHaveLength(1); // the credit alone
    expect((await world.balance(token)).balance_cents).toBe(10_000);
    // a search nothing in the market matches says so
    const none = await world.rent(token, { search: { gpu_type: 'H100', max_price_per_gpu_hour: '0.01' } });
    expect(none.status).toBe(409);
    expect(none.body.detail).toMatch(/no node in the market matches it/);
  });

  it('exactly one of node_id, search and quote_id, and a search it can read: 422 naming the field otherwise', async () => {
    const { token } = await world.fundedTenant(10);
    const { verified, search } = await takeGroup(1);
    const both = await world.rent(token, { node_id: verified[0]!.id, search });
    expect(both.status).toBe(422);
    expect(both.body.detail).toMatch(/exactly one of node_id, search and quote_id; this request sends node_id and search/);
    const three = await world.rent(token, { search, quote_id: 'quo_abc123' });
    expect(three.status).toBe(422);
    expect(three.body.errors[0].loc).toEqual(['body', 'quote_id']);
    const unknown = await world.rent(token, { search: { gpu_colour: 'green' } });
    expect(unknown.status).toBe(422);
    const badCeiling = await world.rent(token, { search: { ...search, max_price_per_gpu_hour: 'cheap' } });
    expect(badCeiling.status).toBe(422);
    expect(JSON.stringify(badCeiling.body.errors)).toMatch(/max_price_per_gpu_hour/);
    expect(await world.ledger(token)).toHaveLength(1);
  });

  it('funds and caps hold as for a node id: 402 short of the first hour, 422 without hours on a capped token', async () => {
    const { verified, search } = await takeGroup(1);
    const poor = await world.fundedTenant(usd(verified[0]!.rate - 1));
    const short = await world.rent(poor.token, { search });
    expect(short.status).toBe(402);
    expect(await rentalCharges(poor.token)).toHaveLength(0);
    const { token } = await world.fundedTenant(100);
    const agent = (await call('POST', '/v1/tokens', { token, body: { scopes: ['rent'], spend_limit_usd: usd(verified[0]!.rate * 2) } })).body.token;
    expect((await world.rent(agent, { search })).status).toBe(422);
    expect((await world.rent(agent, { search, termination_hours: 3 })).status).toBe(402);
    expect((await world.rent(agent, { search, termination_hours: 2 })).status).toBe(201);
  });
});

describe('idempotency of a search rental', () => {
  it('the same key and search sent at once rents one machine, charged once; a retry after the market moved replays the same node', async () => {
    const { token } = await world.fundedTenant(100);
    const { verified, search } = await takeGroup(2);
    const [cheapest, second] = verified;
    const body = { search, termination_hours: 1, idempotency_key: 'search-parallel' };
    const answers = await Promise.all(Array.from({ length: 12 }, () => world.rent(token, body)));
    expect(answers.map((r) => r.status)).toEqual(Array(12).fill(201));
    expect(new Set(answers.map((r) => r.body.id)).size).toBe(1);
    expect(answers.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(11);
    expect(answers[0]!.body.node_id).toBe(cheapest!.id);
    expect(await rentalCharges(token)).toHaveLength(1);
    expect((await world.sandbox.cloud.listMachines()).filter((m) => m.label === answers[0]!.body.id)).toHaveLength(1);

    // the node chosen is gone and another is cheapest now: a retry still answers the first rental
    await world.sandbox.cloud.withdrawOffer(offerIdOf(cheapest!.id));
    await reprice(second!.id, 1);
    const retry = await world.rent(token, body);
    expect(retry.status).toBe(201);
    expect(retry.body).toMatchObject({ id: answers[0]!.body.id, node_id: cheapest!.id });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    // the key with another search is a 409
    const other = await world.rent(token, { ...body, search: { ...search, max_price_per_gpu_hour: '99' } });
    expect(other.status).toBe(409);
    expect(other.body.detail).toMatch(/idempotency_key/);
    expect(await rentalCharges(token)).toHaveLength(1);
  });
});

describe('a search whose cheapest match is at a provider that cannot carry the options', () => {
  let api: TestApi;
  let token: string;
  let sandbox: Provider;
  beforeAll(async () => {
    sandbox = createSandboxProvider({ provisioningMs: 0 });
    // the same market a tenth cheaper, at a cloud that installs SSH keys and nothing else (as Lambda does)
    const renamed = renamedProvider(createSandboxProvider({ provisioningMs: 0 }), 'narrow');
    const cheaper = (offer: Offer): Offer => ({ ...offer, priceUsdPerHour: (Number(offer.priceUsdPerHour) * 0.9).toFixed(4) });
    const narrow: Provider = {
      ...renamed,
      machineOptions: ['ssh_keys'],
      listOffers: async (signal) => (await renamed.listOffers(signal)).map(cheaper),
      getOffer: async (offerId, signal) => {
        const offer = await renamed.getOffer(offerId, signal);
        return offer && cheaper(offer);
      },
    };
    api = await startApi({ payments: { kind: 'manual' }, market: { rentalsOpen: true } }, { providers: [narrow, sandbox] });
    const tenant = await api.newTenant();
    token = tenant.token;
    expect((await api.call('POST', `/v1/operator/tenants/${tenant.tenantId}/credit`, { headers: OPERATOR, body: { amount_usd: '500.00', reason: 'test funds' } })).status).toBe(201);
  });
  afterAll(() => api?.close());

  it('rents the next candidate, at a provider that can; nothing asked of it: the cheaper node; none that can: 409 saying why', async () => {
    const offer = (await sandbox.listOffers()).filter((o) => o.priceVerified && o.available > 0 && Number(o.priceUsdPerHour) < 3).sort((a, b) => Number(a.priceUsdPerHour) - Number(b.priceUsdPerHour))[0]!;
    const search = { gpu_type: offer.gpuType, gpu_count: offer.gpuCount };
    const rent = (body: Record<string, unknown>) => api.call('POST', '/v1/instances', { token, body: { search, termination_hours: 1, ...body } });

    const plain = await rent({ name: 'plain' });
    expect(plain.status, JSON.stringify(plain.body)).toBe(201);
    expect(plain.body.provider).toBe('narrow');
    for (const options of [{ startup_script: 'echo hi' }, { ports: [8888] }, { env: { MODE: 'train' } }]) {
      const rented = await rent(options);
      expect(rented.status, `${JSON.stringify(options)}: ${JSON.stringify(rented.body)}`).toBe(201);
      expect(rented.body.provider).toBe('sandbox');
    }
    // a dry run chooses as the rental does
    expect((await rent({ startup_script: 'echo hi', dry_run: true })).body.node_id).toMatch(/^sandbox:/);

    const nowhere = await rent({ search: { ...search, provider: 'narrow' }, startup_script: 'echo hi' });
    expect(nowhere.status).toBe(409);
    expect(nowhere.body.detail).toMatch(/passed over: narrow cannot carry out startup_script/);
  });
});
