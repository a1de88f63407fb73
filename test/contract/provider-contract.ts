import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Offer } from '../../core/market/offer.ts';
import { ProviderFailure, type CreateMachineRequest, type Provider } from '../../core/ports/providers.ts';

/** What a provider's contract test needs: the adapter, pointed at its fake server (or the sandbox). */
export interface ProviderHarness {
  provider: Provider;
  close(): Promise<void>;
}

const DECIMAL_USD = /^\d+(\.\d+)?$/;

/** A create that asks for nothing beyond the machine, with the fields given changed. */
export const machineRequest = (fields: Pick<CreateMachineRequest, 'offerId' | 'label'> & Partial<CreateMachineRequest>): CreateMachineRequest => ({
  name: 'test',
  sshPublicKeys: [],
  image: null,
  registryAuth: null,
  command: null,
  env: {},
  ports: [],
  startupScript: null,
  volumeIds: [],
  ...fields,
});

/** The ProviderFailure a call ends in; fails the test when the call succeeds or throws anything else. */
export const failureOf = (promise: Promise<unknown>): Promise<ProviderFailure> =>
  promise.then(
    () => {
      throw new Error('expected a ProviderFailure');
    },
    (error: unknown) => {
      expect(error).toBeInstanceOf(ProviderFailure);
      return error as ProviderFailure;
    },
  );

const expectOfferInOurUnits = (offer: Offer, provider: string) => {
  expect(offer.id.startsWith(`${provider}:`)).toBe(true);
  expect(offer.provider).toBe(provider);
  expect(offer.gpuType).toMatch(/^[A-Z0-9]+$/);
  expect(offer.gpuModel.length).toBeGreaterThan(0);
  expect(Number.isInteger(offer.gpuCount) && offer.gpuCount >= 1).toBe(true);
  expect(offer.vramGb).toBeGreaterThan(0);
  // per-GPU VRAM, in GB: no card has more than 300 GB or reports MB by mistake
  expect(offer.vramGb).toBeLessThanOrEqual(300);
  expect(offer.priceUsdPerHour).toMatch(DECIMAL_USD);
  expect(typeof offer.priceVerified).toBe('boolean');
  expect(offer.cpus).toBeGreaterThanOrEqual(0);
  expect(offer.ramGb).toBeGreaterThanOrEqual(0);
  expect(offer.diskGb).toBeGreaterThanOrEqual(0);
  if (offer.country !== null) expect(offer.country).toMatch(/^[A-Z]{2}$/);
  expect(offer.available).toBeGreaterThanOrEqual(0);
  for (const key of Object.keys(offer.attributes)) expect(typeof key).toBe('string');
};

/** The behaviour every provider adapter must show, whatever cloud sits behind it. */
export function providerContract(name: string, open: () => Promise<ProviderHarness>): void {
  describe(`provider contract: ${name}`, () => {
    let harness: ProviderHarness;
    let provider: Provider;

    beforeAll(async () => {
      harness = await open();
      provider = harness.provider;
    });
    afterAll(async () => {
      await harness?.close();
    });

    it('is named and lists offers in our units', async () => {
      expect(provider.name).toBe(name);
      const offers = await provider.listOffers();
      expect(offers.length).toBeGreaterThan(0);
      for (const offer of offers) expectOfferInOurUnits(offer, name);
      expect(new Set(offers.map((o) => o.id)).size).toBe(offers.length);
    });

    it('checks one offer live by its id, and answers null for one that is gone', async () => {
      const [first] = await provider.listOffers();
      const offerId = first!.id.slice(name.length + 1);
      const live = await provider.getOffer(offerId);
      expect(live?.id).toBe(first!.id);
      expect(live?.priceUsdPerHour).toBe(first!.priceUsdPerHour);
      expect(await provider.getOffer('999999999')).toBeNull();
    });

    it('tells its own offer ids by their form alone', async () => {
      for (const offer of await provider.listOffers()) expect(provider.isOfferId(offer.id.slice(name.length + 1))).toBe(true);
      for (const bad of ['', 'nope', ' 1', '../1', 'x'.repeat(300)]) expect(provider.isOfferId(bad)).toBe(false);
    });

    it('creates a machine that carries our label, finds it again, and terminates it idempotently', async () => {
      const offers = await provider.listOffers();
      const offer = offers.find((o) => o.available > 0)!;
      const label = `ins_contract${Date.now().toString(36)}`;
      const created = await provider.createMachine(
        machineRequest({
          offerId: offer.id.slice(name.length + 1),
          label,
          name: 'contract test',
          sshPublicKeys: ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIContractTestKey contract@test'],
        }),
      );
      expect(created.machineId.length).toBeGreaterThan(0);
      expect(created.label).toBe(label);
      expect(['provisioning', 'running']).toContain(created.status);

      const fetched = await provider.getMachine(created.machineId);
      expect(fetched?.machineId).toBe(created.machineId);
      expect(fetched?.label).toBe(label);

      const ours = await provider.listMachines();
      expect(ours.some((m) => m.machineId === created.machineId && m.label === label)).toBe(true);

      await provider.terminateMachine(created.machineId);
      await provider.terminateMachine(created.machineId);
      const after = await provider.getMachine(created.machineId);
      expect(after === null || after.status === 'terminated').toBe(true);
    });

    it('reports a create on an offer that does not exist as a definite rejection', async () => {
      const failure = await failureOf(
        provider.createMachine(machineRequest({ offerId: '999999999', label: 'ins_missing', name: 'x' })),
      );
      expect(failure.kind).toBe('rejected');
    });

    it('answers null for a machine it does not know', async () => {
      expect(await provider.getMachine('999999999')).toBeNull();
    });
  });
}
