import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxProvider, type SandboxConfig } from '../../../adapters/providers/sandbox/index.ts';
import type { SandboxProvider } from '../../../adapters/providers/sandbox/adapter.ts';
import { HOUR_MS } from '../../../adapters/providers/sandbox/spot.ts';
import { MikroStorage } from '../../../adapters/storage/mikro-storage.ts';
import { isSpotMarket, type SpotMachineRequest } from '../../../core/ports/providers.ts';
import type { Offer } from '../../../core/market/offer.ts';
import { FaultyProvider } from '../../support/faulty-provider.ts';
import { freshDatabase, type TestDatabase } from '../../support/database.ts';
import { failureOf, machineRequest } from '../provider-contract.ts';
import { spotMarketContract } from '../spot-market-contract.ts';

let database: TestDatabase;
let storage: MikroStorage;
beforeAll(async () => {
  database = await freshDatabase();
  storage = await MikroStorage.open(database.target);
});
afterAll(async () => {
  await storage?.close();
  await database?.drop();
});

/** An empty simulated cloud, as a fresh database has it: machine serials (the random draws' keys) from 1 again. */
const emptyCloud = async () => {
  await storage.execute('delete from sandbox_machines');
  await storage.execute('delete from sandbox_offers');
  await storage.execute('alter sequence sandbox_machine_serial restart');
  return storage;
};

const manualClock = (start = Date.UTC(2026, 0, 1, 0, 30)) => {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms), set: (ms: number) => void (now = ms) };
};

const sandboxHarness = (provider: SandboxProvider) => ({
  provider,
  setSpotPrice: (offer: Offer, price: string) => provider.cloud.setSpotPrice(offer.id.slice('sandbox:'.length), price),
  offerWithoutSpot: (offers: Offer[]) => offers.find((o) => o.spotPriceUsdPerHour === null),
  close: async () => {},
});

// by price only here: a seeded random preemption could land inside a test
spotMarketContract('sandbox', async () => sandboxHarness(createSandboxProvider({ seed: 7, spotPreemptionsPerHour: 0 }, await emptyCloud())));
spotMarketContract('sandbox', async () => sandboxHarness(createSandboxProvider({ seed: 7, spotPreemptionsPerHour: 0 })));

const bidAt = (offer: Offer, bidUsdPerHour: string, label = 'ins_spot1'): SpotMachineRequest => ({
  ...machineRequest({ offerId: offer.id.slice('sandbox:'.length), label }),
  bidUsdPerHour,
});

const units = (usd: string): number => Math.round(Number(usd) * 10_000);

describe.each(['database', 'memory'] as const)('the sandbox spot market with its state in %s', (kind) => {
  const open = async (config: SandboxConfig = {}) => {
    const clock = manualClock();
    const provider = createSandboxProvider(
      { seed: 11, provisioningMs: 30_000, spotPreemptionsPerHour: 0, clock: clock.now, ...config },
      kind === 'database' ? await emptyCloud() : undefined,
    );
    return { provider, cloud: provider.cloud, clock };
  };

  it('gives some offers a spot market, under their on-demand price, and moves it once an hour', async () => {
    const { provider, clock } = await open();
    const offers = await provider.listOffers();
    const spot = offers.filter((o) => o.spotPriceUsdPerHour !== null);
    expect(spot.length / offers.length).toBeGreaterThan(0.4);
    expect(spot.length / offers.length).toBeLessThan(0.8);
    for (const offer of spot) {
      expect(offer.spotPriceUsdPerHour).toMatch(/^\d+\.\d{2,4}$/);
      expect(units(offer.spotPriceUsdPerHour!)).toBeLessThan(units(offer.priceUsdPerHour));
      expect(units(offer.spotPriceUsdPerHour!)).toBeGreaterThan(0);
    }
    const prices = () => provider.listOffers().then((list) => list.map((o) => o.spotPriceUsdPerHour));
    const now = await prices();
    clock.advance(HOUR_MS / 2 - 1); // still the same hour (the clock starts at half past)
    expect(await prices()).toEqual(now);
    clock.advance(1);
    const next = await prices();
    expect(next.filter((p, i) => p !== now[i]).length).toBeGreaterThan(spot.length / 2);
    expect(next.map((p) => p === null)).toEqual(now.map((p) => p === null));
  });

  it('is the same market for the same seed, whichever process or start, and another for another seed', async () => {
    const { provider, clock } = await open();
    const again = createSandboxProvider({ seed: 11, clock: clock.now });
    const other = createSandboxProvider({ seed: 12, clock: clock.now });
    const spotOf = (list: Offer[]) => list.map((o) => o.spotPriceUsdPerHour);
    expect(spotOf(await again.listOffers())).toEqual(spotOf(await provider.listOffers()));
    expect(spotOf(await other.listOffers())).not.toEqual(spotOf(await provider.listOffers()));
  });

  it('walks without drifting away: a month of hourly prices stays around its centre, in runs', async () => {
    const { provider, clock } = await open();
    const offer = (await provider.listOffers()).find((o) => o.spotPriceUsdPerHour !== null && o.gpuCount === 1)!;
    const id = offer.id.slice(8);
    const shares: number[] = [];
    for (let hour = 0; hour < 24 * 30; hour++) {
      const live = (await provider.getOffer(id))!;
      shares.push(units(live.spotPriceUsdPerHour!) / units(live.priceUsdPerHour));
      clock.advance(HOUR_MS);
    }
    const mean = shares.reduce((a, b) => a + b, 0) / shares.length;
    expect(mean).toBeGreaterThan(0.35);
    expect(mean).toBeLessThan(0.55);
    expect(Math.min(...shares)).toBeGreaterThanOrEqual(0.149);
    expect(Math.max(...shares)).toBeLessThanOrEqual(0.951);
    // consecutive hours are close (a walk, not noise): the mean hourly step is well under the spread
    const steps = shares.slice(1).map((s, i) => Math.abs(s - shares[i]!));
    const meanStep = steps.reduce((a, b) => a + b, 0) / steps.length;
    const spread = Math.sqrt(shares.reduce((sum, s) => sum + (s - mean) ** 2, 0) / shares.length);
    expect(meanStep).toBeLessThan(spread);
  });

  it('preempts a spot machine at the first hour its walking price is over the bid, and not before', async () => {
    const { provider, clock } = await open();
    const offer = (await provider.listOffers()).find((o) => o.spotPriceUsdPerHour !== null && o.available > 0)!;
    const id = offer.id.slice(8);
    const machine = await provider.createSpotMachine(bidAt(offer, offer.spotPriceUsdPerHour!));
    expect(machine.priceUsdPerHour).toBe(offer.spotPriceUsdPerHour);
    // walk the clock hour by hour: the machine lives exactly while each hour's price is at most the bid
    const bid = units(offer.spotPriceUsdPerHour!);
    let overAt: number | null = null;
    for (let hour = 1; hour <= 24 * 14 && overAt === null; hour++) {
      clock.set(Date.UTC(2026, 0, 1, hour));
      const price = units((await provider.getOffer(id))!.spotPriceUsdPerHour!);
      const status = (await provider.getMachine(machine.machineId))!.status;
      if (price > bid) overAt = hour;
      else expect(status).not.toBe('preempted');
    }
    expect(overAt, 'within two weeks the walk rises over a bid at the starting price').not.toBeNull();
    expect((await provider.getMachine(machine.machineId))?.status).toBe('preempted');
    clock.set(Date.UTC(2026, 0, 1, overAt!) - 1);
    expect((await provider.getMachine(machine.machineId))?.status).not.toBe('preempted');
  });

  it('keeps a preempted machine preempted when the price falls back, and reports it until terminated', async () => {
    const { provider, cloud } = await open();
    const offer = (await provider.listOffers()).find((o) => o.spotPriceUsdPerHour !== null && o.available > 0)!;
    const id = offer.id.slice(8);
    const machine = await provider.createSpotMachine(bidAt(offer, offer.spotPriceUsdPerHour!));
    await cloud.setSpotPrice(id, '999');
    await cloud.setSpotPrice(id, null);
    expect((await provider.getMachine(machine.machineId))?.status).toBe('preempted');
    expect(await cloud.preemptMachine(machine.machineId)).toBe(true); // it already is: it stays so
    expect((await provider.listMachines()).map((m) => m.status)).toEqual(['preempted']);
    await expect(provider.rebootMachine(machine.machineId)).rejects.toThrow(/not running/);
    await provider.terminateMachine(machine.machineId);
    expect((await provider.getMachine(machine.machineId))?.status).toBe('terminated');
    expect((await provider.getOffer(id))?.available).toBe(offer.available);
  });

  it('preempts a machine now on the knob, only a live spot machine', async () => {
    const { provider, cloud } = await open();
    const offers = (await provider.listOffers()).filter((o) => o.spotPriceUsdPerHour !== null && o.available > 0);
    const spot = await provider.createSpotMachine(bidAt(offers[0]!, '50', 'ins_spot2'));
    const onDemand = await provider.createMachine(machineRequest({ offerId: offers[1]!.id.slice(8), label: 'ins_demand' }));
    expect(await cloud.preemptMachine(onDemand.machineId)).toBe(false);
    expect(await cloud.preemptMachine('sbx-nope')).toBe(false);
    expect(await cloud.preemptMachine(spot.machineId)).toBe(true);
    expect((await provider.getMachine(spot.machineId))?.status).toBe('preempted');
    expect((await provider.getMachine(onDemand.machineId))?.status).not.toBe('preempted');
    await provider.terminateMachine(spot.machineId);
    expect(await cloud.preemptMachine(spot.machineId)).toBe(false);
  });

  it('pins a spot price on any offer until cleared: bids under it refused, over it kept through the hours', async () => {
    const { provider, cloud, clock } = await open();
    const offer = (await provider.listOffers()).find((o) => o.spotPriceUsdPerHour === null && o.available > 0)!;
    const id = offer.id.slice(8);
    expect((await failureOf(provider.createSpotMachine(bidAt(offer, '100')))).message).toMatch(/no spot market/);
    await cloud.setSpotPrice(id, '0.5');
    expect((await provider.getOffer(id))?.spotPriceUsdPerHour).toBe('0.50');
    expect((await failureOf(provider.createSpotMachine(bidAt(offer, '0.49999')))).message).toMatch(/under the spot price 0.50/);
    const kept = await provider.createSpotMachine(bidAt(offer, '0.5'));
    clock.advance(10 * 24 * HOUR_MS);
    expect((await provider.getMachine(kept.machineId))?.status).toBe('running');
    // cleared: the offer has no spot market of its own, so its spot machines are reclaimed
    await cloud.setSpotPrice(id, null);
    expect((await provider.getOffer(id))?.spotPriceUsdPerHour).toBeNull();
    expect((await provider.getMachine(kept.machineId))?.status).toBe('preempted');
    await expect(cloud.setSpotPrice(id, '1.23456')).rejects.toThrow(RangeError);
  });

  it('reprices the walk with the on-demand price: a repriced offer can preempt a machine at once', async () => {
    const { provider, cloud } = await open();
    const offer = (await provider.listOffers()).find((o) => o.spotPriceUsdPerHour !== null && o.available > 0)!;
    const id = offer.id.slice(8);
    const machine = await provider.createSpotMachine(bidAt(offer, offer.spotPriceUsdPerHour!));
    await cloud.repriceOffer(id, '9999'); // far over any price: its spot share is too
    expect(units((await provider.getOffer(id))!.spotPriceUsdPerHour!)).toBeGreaterThan(units(offer.spotPriceUsdPerHour!));
    expect((await provider.getMachine(machine.machineId))?.status).toBe('preempted');
  });

  it('refuses a bid that is not a decimal, and a spot create on an offer that does not exist', async () => {
    const { provider } = await open();
    const offer = (await provider.listOffers()).find((o) => o.spotPriceUsdPerHour !== null && o.available > 0)!;
    for (const bad of ['-1', '1e3', 'cheap', '']) expect((await failureOf(provider.createSpotMachine(bidAt(offer, bad)))).kind).toBe('rejected');
    const missing = { ...bidAt(offer, '10'), offerId: '999999999' };
    expect((await failureOf(provider.createSpotMachine(missing))).kind).toBe('rejected');
    expect(await provider.listMachines()).toEqual([]);
  });

  it('draws random preemptions from the seed: the same moments on every run, about the configured rate', async () => {
    const lifetimes = async () => {
      const { provider, clock } = await open({ spotPreemptionsPerHour: 0.05 });
      const offers = (await provider.listOffers()).filter((o) => o.spotPriceUsdPerHour !== null && o.available > 0).slice(0, 40);
      // bids far over the market: only the random draws preempt; one after the other, as the draws follow the order of creation
      const machines = [];
      for (const [i, o] of offers.entries()) machines.push(await provider.createSpotMachine(bidAt(o, '10000', `ins_rand${i}`)));
      const ended = new Map<string, number>();
      for (let hour = 1; hour <= 24 * 30; hour++) {
        clock.advance(HOUR_MS);
        for (const m of await provider.listMachines()) if (m.status === 'preempted' && !ended.has(m.machineId)) ended.set(m.machineId, hour);
      }
      return machines.map((m) => ended.get(m.machineId) ?? null);
    };
    const first = await lifetimes();
    expect(await lifetimes()).toEqual(first);
    const preempted = first.filter((h) => h !== null).length;
    // 40 machines, 720 hours at 5% an hour: nearly all go; their mean life is near 20 hours
    expect(preempted).toBeGreaterThan(34);
    const mean = first.filter((h): h is number => h !== null).reduce((a, b) => a + b, 0) / preempted;
    expect(mean).toBeGreaterThan(10);
    expect(mean).toBeLessThan(35);
  });

  it('passes through the tests\' misbehaving wrapper, create faults included', async () => {
    const { provider } = await open();
    const wrapped = new FaultyProvider(provider);
    expect(isSpotMarket(wrapped)).toBe(true);
    const offer = (await provider.listOffers()).find((o) => o.spotPriceUsdPerHour !== null && o.available > 0)!;
    wrapped.failNextCreates(1, 'rejected');
    expect((await failureOf((wrapped as unknown as typeof provider).createSpotMachine(bidAt(offer, '100')))).kind).toBe('rejected');
    const made = await (wrapped as unknown as typeof provider).createSpotMachine(bidAt(offer, '100'));
    expect(wrapped.calls.create).toBe(2);
    expect((await wrapped.getMachine(made.machineId))?.status).toBe('provisioning');
  });
});

describe('the sandbox spot market in the database: one market for every process, across restarts', () => {
  it('a machine preempted by one process reads preempted in another, and after a restart', async () => {
    const clock = manualClock();
    const config = { seed: 11, spotPreemptionsPerHour: 0, clock: clock.now };
    const db = await emptyCloud();
    const a = createSandboxProvider(config, db);
    const b = createSandboxProvider(config, db);
    const offer = (await a.listOffers()).find((o) => o.spotPriceUsdPerHour !== null && o.available > 0)!;
    const machine = await a.createSpotMachine(bidAt(offer, offer.spotPriceUsdPerHour!));
    await b.cloud.setSpotPrice(offer.id.slice(8), '500');
    expect((await a.getOffer(offer.id.slice(8)))?.spotPriceUsdPerHour).toBe('500.00');
    expect((await a.getMachine(machine.machineId))?.status).toBe('preempted');
    const restarted = createSandboxProvider(config, storage);
    expect((await restarted.listMachines()).map((m) => [m.machineId, m.status])).toEqual([[machine.machineId, 'preempted']]);
  });

  it('a walk preemption foreseen at the create is the same in every process', async () => {
    const clock = manualClock();
    const config = { seed: 11, spotPreemptionsPerHour: 0, clock: clock.now };
    const db = await emptyCloud();
    const a = createSandboxProvider(config, db);
    const offer = (await a.listOffers()).find((o) => o.spotPriceUsdPerHour !== null && o.available > 0)!;
    const machine = await a.createSpotMachine(bidAt(offer, offer.spotPriceUsdPerHour!));
    const memory = createSandboxProvider(config);
    const twin = await memory.createSpotMachine(bidAt(offer, offer.spotPriceUsdPerHour!));
    for (let hour = 0; hour < 24 * 7; hour++) {
      clock.advance(HOUR_MS);
      expect((await createSandboxProvider(config, db).getMachine(machine.machineId))?.status).toBe((await memory.getMachine(twin.machineId))?.status);
    }
  });
});
