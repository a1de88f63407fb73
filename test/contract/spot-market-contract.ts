import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Offer } from '../../core/market/offer.ts';
import { isSpotMarket, supportedOperations, type Provider, type SpotMachineRequest, type SpotMarket } from '../../core/ports/providers.ts';
import { compareDecimal } from '../../adapters/providers/shared/decimal.ts';
import { failureOf, machineRequest } from './provider-contract.ts';

/** What a spot market's contract test needs: the adapter over its fake (or the sandbox), and the market's hand. */
export interface SpotMarketHarness {
  provider: Provider & SpotMarket;
  /** Moves the offer's spot price (whole machine, exact decimal USD per hour) as the market would. */
  setSpotPrice(offer: Offer, priceUsdPerHour: string): Promise<void>;
  /** An offer with capacity and no spot market, to be refused on; absent where every offer has one. */
  offerWithoutSpot?(offers: Offer[]): Offer | undefined;
  close(): Promise<void>;
}

const DECIMAL_USD = /^\d+(\.\d+)?$/;

/** Exact decimal text one ten-thousandth of a dollar under `usd` (every spot price here is at least 0.0002). */
const justUnder = (usd: string): string => {
  const [whole = '0', fraction = ''] = usd.split('.');
  const scale = Math.max(4, fraction.length);
  const units = BigInt(whole + fraction.padEnd(scale, '0')) - 10n ** BigInt(scale - 4);
  const digits = units.toString().padStart(scale + 1, '0');
  return `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
};

/** Twice the price, exact: a market that rose over any bid at the old price. */
const doubled = (usd: string): string => {
  const [whole = '0', fraction = ''] = usd.split('.');
  const digits = (BigInt(whole + fraction) * 2n).toString().padStart(fraction.length + 1, '0');
  return fraction.length === 0 ? digits : `${digits.slice(0, -fraction.length)}.${digits.slice(-fraction.length)}`;
};

/** The behaviour every spot market must show: the lead's spot claims rely on exactly this. */
export function spotMarketContract(name: string, open: () => Promise<SpotMarketHarness>): void {
  describe(`spot market contract: ${name}`, () => {
    let harness: SpotMarketHarness;
    let provider: Provider & SpotMarket;
    let serial = 0;
    const label = () => `ins_spot${Date.now().toString(36)}${serial++}`;
    const spotOffers = async () => (await provider.listOffers()).filter((o) => o.available > 0 && typeof o.spotPriceUsdPerHour === 'string');
    const spotRequest = (offer: Offer, bidUsdPerHour: string, ours = label()): SpotMachineRequest => ({
      ...machineRequest({ offerId: offer.id.slice(name.length + 1), label: ours, name: 'spot contract' }),
      bidUsdPerHour,
    });

    beforeAll(async () => {
      harness = await open();
      provider = harness.provider;
    });
    afterAll(async () => {
      await harness?.close();
    });

    it('is a spot market, and says so in supported_operations', () => {
      expect(isSpotMarket(provider)).toBe(true);
      expect(supportedOperations(provider)).toContain('spot');
    });

    it('reports spot prices as exact decimals, the same in a listing and in a live check', async () => {
      const offers = await provider.listOffers();
      const priced = offers.filter((o) => o.spotPriceUsdPerHour !== null && o.spotPriceUsdPerHour !== undefined);
      expect(priced.length).toBeGreaterThan(0);
      for (const offer of priced) expect(offer.spotPriceUsdPerHour).toMatch(DECIMAL_USD);
      const [first] = priced;
      const live = await provider.getOffer(first!.id.slice(name.length + 1));
      expect(live?.spotPriceUsdPerHour).toBe(first!.spotPriceUsdPerHour);
    });

    it('runs a spot machine at a bid at or over the spot price, with our label, not preempted', async () => {
      const [offer] = await spotOffers();
      const ours = label();
      const created = await provider.createSpotMachine(spotRequest(offer!, offer!.spotPriceUsdPerHour!, ours));
      expect(created.label).toBe(ours);
      expect(['provisioning', 'running']).toContain(created.status);
      expect(['provisioning', 'running']).toContain((await provider.getMachine(created.machineId))?.status);
      const listed = (await provider.listMachines()).find((m) => m.machineId === created.machineId);
      expect(listed).toMatchObject({ label: ours });
      expect(['provisioning', 'running']).toContain(listed!.status);
      await provider.terminateMachine(created.machineId);
    });

    it('refuses a bid under the spot price as a rejection, and leaves nothing running upstream', async () => {
      const [offer] = await spotOffers();
      const ours = label();
      const failure = await failureOf(provider.createSpotMachine(spotRequest(offer!, justUnder(offer!.spotPriceUsdPerHour!), ours)));
      expect(failure.kind).toBe('rejected');
      const left = (await provider.listMachines()).filter((m) => m.label === ours);
      expect(left.every((m) => m.status === 'terminated')).toBe(true);
    });

    it('refuses a spot create on an offer without a spot market', async () => {
      const offer = harness.offerWithoutSpot?.((await provider.listOffers()).filter((o) => o.available > 0));
      if (!harness.offerWithoutSpot) return; // every offer of this provider has a spot market
      expect(offer, 'the harness names an offer without a spot market').toBeDefined();
      const failure = await failureOf(provider.createSpotMachine(spotRequest(offer!, '100')));
      expect(failure.kind).toBe('rejected');
    });

    it('reports a machine preempted once the market rises over its bid, in getMachine and listMachines, and terminates it', async () => {
      const [offer] = await spotOffers();
      const bid = offer!.spotPriceUsdPerHour!;
      const created = await provider.createSpotMachine(spotRequest(offer!, bid));
      await harness.setSpotPrice(offer!, doubled(bid));
      expect((await provider.getMachine(created.machineId))?.status).toBe('preempted');
      expect((await provider.listMachines()).find((m) => m.machineId === created.machineId)?.status).toBe('preempted');
      // the market is over the bid now (a provider may state the moved price a hair off what was set: floats on its wire)
      const risen = (await provider.getOffer(offer!.id.slice(name.length + 1)))?.spotPriceUsdPerHour;
      expect(compareDecimal(risen!, bid)).toBeGreaterThan(0);

      await provider.terminateMachine(created.machineId);
      await provider.terminateMachine(created.machineId);
      const after = await provider.getMachine(created.machineId);
      expect(after === null || after.status === 'terminated').toBe(true);
    });

    it('keeps a machine whose bid still covers the risen market', async () => {
      const [offer] = await spotOffers();
      const price = offer!.spotPriceUsdPerHour!;
      const created = await provider.createSpotMachine(spotRequest(offer!, doubled(doubled(price))));
      await harness.setSpotPrice(offer!, doubled(price));
      expect(['provisioning', 'running']).toContain((await provider.getMachine(created.machineId))?.status);
      await provider.terminateMachine(created.machineId);
    });
  });
}
