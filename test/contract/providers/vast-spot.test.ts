import { afterEach, describe, expect, it } from 'vitest';
import { createVastProvider, type VastProviderConfig } from '../../../adapters/providers/vast/index.ts';
import type { VastProvider } from '../../../adapters/providers/vast/adapter.ts';
import { isSpotMarket, supportedOperations, type SpotMachineRequest } from '../../../core/ports/providers.ts';
import { startFakeVast, type FakeVast } from '../../fakes/vast/server.ts';
import { failureOf, machineRequest } from '../provider-contract.ts';
import { spotMarketContract } from '../spot-market-contract.ts';

const KEY = 'vast-test-key';
const FAST: Partial<VastProviderConfig> = { searchIntervalMs: 0, backoffBaseMs: 1, backoffMaxMs: 20, timeoutMs: 2_000 };
/** The disk the adapter allocates by default, which the asks' storage is priced for. */
const DISK_GB = 32;

/** What the fake bills an hour for the disk, as its search computes it. */
const storageHour = (fake: FakeVast, offerId: number): number => (fake.state.offers.get(offerId)!.storage_cost * DISK_GB) / 30 / 24;

spotMarketContract('vast', async () => {
  const fake = await startFakeVast({ apiKey: KEY });
  return {
    provider: createVastProvider({ apiKey: KEY, baseUrl: fake.url, ...FAST }),
    // the spot price is the minimum bid plus storage: the minimum bid moves
    setSpotPrice: async (offer, price) => {
      const id = Number(offer.id.slice('vast:'.length));
      fake.setMinBid(id, Number(price) - storageHour(fake, id));
    },
    offerWithoutSpot: (offers) => {
      const offer = offers[0]!;
      (fake.state.offers.get(Number(offer.id.slice('vast:'.length))) as { min_bid: number | null }).min_bid = null;
      return offer;
    },
    close: () => fake.close(),
  };
});

let fake: FakeVast;
const open = async (): Promise<VastProvider> => {
  fake = await startFakeVast({ apiKey: KEY });
  return createVastProvider({ apiKey: KEY, baseUrl: fake.url, ...FAST });
};
afterEach(async () => {
  await fake?.close();
});

const bidOn = (offerId: number, bidUsdPerHour: string, label = 'ins_spot01'): SpotMachineRequest => ({
  ...machineRequest({ offerId: String(offerId), label, sshPublicKeys: ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIVastSpot spot@vast'] }),
  bidUsdPerHour,
});
const creates = () => fake.requestsTo('PUT', /^\/api\/v0\/asks\/\d+\/$/);

describe('vast interruptible instances', () => {
  it('is a spot market: the spot price of an ask is its min_bid plus its storage at our disk, added exactly', async () => {
    const provider = await open();
    expect(isSpotMarket(provider)).toBe(true);
    expect(supportedOperations(provider)).toContain('spot');
    // RTX 4090 ask: min_bid 0.21; storage 0.1 USD/GB-month x 32 GB / 720 h, which the wire prints 0.0044444444444444444
    const offers = new Map((await provider.listOffers()).map((o) => [o.id, o]));
    expect(String(storageHour(fake, 31415926))).toBe('0.0044444444444444444');
    expect(String(0.21 + storageHour(fake, 31415926))).toBe('0.21444444444444444'); // what a float sum would say
    expect(offers.get('vast:31415926')?.spotPriceUsdPerHour).toBe('0.2144444444444444444');
  });

  it('adds the exact decimals of min_bid and storage_total_cost, and has no spot price without a min_bid', async () => {
    const provider = await open();
    const ask = fake.state.offers.get(31415926)!;
    ask.min_bid = 0.2;
    ask.storage_cost = 2.25; // storage 0.1 an hour, which the wire prints 0.09999999999999999
    expect((await provider.getOffer('31415926'))?.spotPriceUsdPerHour).toBe('0.29999999999999999');
    (ask as { min_bid: number | null }).min_bid = null;
    expect((await provider.getOffer('31415926'))?.spotPriceUsdPerHour).toBeNull();
    const failure = await failureOf(provider.createSpotMachine(bidOn(31415926, '5')));
    expect(failure.kind).toBe('rejected');
    expect(failure.message).toMatch(/no spot market/);
    expect(creates()).toHaveLength(0);
  });

  it('sends the bid less the ask\'s storage as `price`, rounded down, with the usual create body', async () => {
    const provider = await open();
    const ask = fake.state.offers.get(27182818)!; // RTX 3090: min_bid 0.11
    ask.storage_cost = 0.9; // storage 0.04 an hour
    const created = await provider.createSpotMachine(bidOn(27182818, '0.1900000049'));
    const [sent] = creates();
    expect(sent!.body).toMatchObject({ client_id: 'me', label: 'ins_spot01', runtype: 'ssh', target_state: 'running', price: 0.15 });
    const instance = fake.state.instances.get(Number(created.machineId))!;
    expect(instance).toMatchObject({ isBid: true, bid: 0.15, intended: 'running' });
    expect(created).toMatchObject({ label: 'ins_spot01', status: 'provisioning' });
    // an interruptible rental leaves the ask listed: anyone may outbid it
    expect((await provider.getOffer('27182818'))?.available).toBe(1);
  });

  it('refuses a bid that does not cover the storage, or is over Vast\'s range, before any create', async () => {
    const provider = await open();
    const ask = fake.state.offers.get(27182818)!;
    ask.storage_cost = 0.9; // storage 0.04 an hour
    for (const bid of ['0.04', '0.0409', '200', '1e2', '-1']) {
      expect((await failureOf(provider.createSpotMachine(bidOn(27182818, bid)))).kind).toBe('rejected');
    }
    expect(creates()).toHaveLength(0);
    expect((await failureOf(provider.createSpotMachine(bidOn(99999999, '5')))).kind).toBe('rejected');
  });

  it('destroys the stopped instance Vast makes for a bid under the minimum, and answers a rejection', async () => {
    const provider = await open();
    fake.setMinBid(27182818, 0.5);
    const failure = await failureOf(provider.createSpotMachine(bidOn(27182818, '0.4')));
    expect(failure.kind).toBe('rejected');
    expect(failure.message).toMatch(/invalid_price/);
    expect(creates()).toHaveLength(1);
    expect(fake.requestsTo('DELETE', /^\/api\/v0\/instances\/\d+\/$/)).toHaveLength(1);
    expect(fake.state.instances.size).toBe(0);
  });

  it('reads an outbid instance as preempted: min_bid rising over its bid, or an on-demand renter taking the ask', async () => {
    const provider = await open();
    const first = await provider.createSpotMachine(bidOn(27182818, '1', 'ins_spot01'));
    const second = await provider.createSpotMachine(bidOn(27182818, '3', 'ins_spot02'));
    fake.setMinBid(27182818, 2);
    const wire = fake.state.instances.get(Number(first.machineId))!;
    expect(wire).toMatchObject({ intended: 'stopped' });
    expect((await provider.getMachine(first.machineId))?.status).toBe('preempted');
    expect((await provider.getMachine(second.machineId))?.status).toBe('running');

    await provider.createMachine(machineRequest({ offerId: '27182818', label: 'ins_demand1' }));
    const statuses = Object.fromEntries((await provider.listMachines()).map((m) => [m.label, m.status]));
    expect(statuses).toEqual({ ins_spot01: 'preempted', ins_spot02: 'preempted', ins_demand1: 'running' });
  });

  it('tells a stopped on-demand instance (stopped) from an outbid interruptible one (preempted)', async () => {
    const provider = await open();
    const demand = await provider.createMachine(machineRequest({ offerId: '31415926', label: 'ins_demand2' }));
    const spot = await provider.createSpotMachine(bidOn(27182818, '1', 'ins_spot03'));
    fake.state.instances.get(Number(demand.machineId))!.intended = 'stopped';
    fake.outbid(Number(spot.machineId));
    expect((await provider.getMachine(demand.machineId))?.status).toBe('stopped');
    expect((await provider.getMachine(spot.machineId))?.status).toBe('preempted');
    await provider.terminateMachine(spot.machineId);
    expect(await provider.getMachine(spot.machineId)).toBeNull();
  });
});
