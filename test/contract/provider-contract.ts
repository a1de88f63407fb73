import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Offer } from '../../core/market/offer.ts';
import {
  MACHINE_OPTIONS,
  ProviderFailure,
  supportedOperations,
  type CreateMachineRequest,
  type MachineOption,
  type Provider,
} from '../../core/ports/providers.ts';

/**
 * What the upstream kept of a create, read from the fake server (or the sandbox) in the request's terms.
 * A key is present only where that provider echoes the option; `startupScript` may hold more than the script.
 */
export interface EchoedOptions {
  image?: string | null;
  registryUsername?: string | null;
  command?: string | null;
  env?: Record<string, string>;
  ports?: number[];
  startupScript?: string | null;
  sshPublicKeys?: string[];
  volumeIds?: string[];
}

/** What a provider's contract test needs: the adapter, pointed at its fake server (or the sandbox). */
export interface ProviderHarness {
  provider: Provider;
  close(): Promise<void>;
  /** What the upstream recorded for a machine it made. */
  echoed?(machineId: string): Promise<EchoedOptions>;
  /** The offer a create with every option goes to (default: the first with capacity). */
  offerForOptions?(offers: Offer[]): Offer;
  /** An upstream volume a machine of `offer` can attach (required when the provider lists `volumes`). */
  volumeFor?(offer: Offer): Promise<string>;
}

/** Two keys of different types: a provider that installs only the first would be caught. */
export const CONTRACT_KEYS = [
  'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIContractTestKey contract@test',
  'ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBContractSecond second@test',
];

/** The value the contract asks for each option, so the echo can be compared with it. */
const FULL_OPTIONS = {
  image: 'ghcr.io/example/trainer:1.2',
  registryAuth: { username: 'robot', password: 's3cret-token' },
  command: 'python train.py --epochs 3',
  env: { DATASET: 'imagenet', RUN_ID: '42' },
  ports: [8888, 6006],
  startupScript: 'echo ready > /tmp/ready',
  sshPublicKeys: CONTRACT_KEYS,
} as const;

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

    it('lists the create options it carries out: known ones, each once, all in supported_operations', () => {
      expect(provider.machineOptions.length).toBeGreaterThan(0);
      for (const option of provider.machineOptions) expect(MACHINE_OPTIONS).toContain(option);
      expect(new Set(provider.machineOptions).size).toBe(provider.machineOptions.length);
      expect(supportedOperations(provider)).toEqual(expect.arrayContaining([...provider.machineOptions]));
    });

    it('accepts a create with every option it lists, and keeps each where it echoes it', async () => {
      const offers = (await provider.listOffers()).filter((o) => o.available > 0);
      const offer = harness.offerForOptions?.(offers) ?? offers[0]!;
      const has = (option: MachineOption) => provider.machineOptions.includes(option);
      if (has('volumes')) expect(harness.volumeFor, 'a provider listing volumes needs volumeFor in its harness').toBeDefined();
      const volumeIds = has('volumes') ? [await harness.volumeFor!(offer)] : [];
      const label = `ins_options${Date.now().toString(36)}`;
      const request = machineRequest({
        offerId: offer.id.slice(name.length + 1),
        label,
        name: 'every option',
        ...(has('custom_image') && { image: FULL_OPTIONS.image }),
        ...(has('registry_auth') && { registryAuth: { ...FULL_OPTIONS.registryAuth } }),
        ...(has('command') && { command: FULL_OPTIONS.command }),
        ...(has('env') && { env: { ...FULL_OPTIONS.env } }),
        ...(has('ports') && { ports: [...FULL_OPTIONS.ports] }),
        ...(has('startup_script') && { startupScript: FULL_OPTIONS.startupScript }),
        ...(has('ssh_keys') && { sshPublicKeys: [...FULL_OPTIONS.sshPublicKeys] }),
        volumeIds,
      });
      const created = await provider.createMachine(request);
      expect(created.label).toBe(label);

      expect(harness.echoed, 'the harness reads back what the upstream kept').toBeDefined();
      const echoed = await harness.echoed!(created.machineId);
      if (has('custom_image') && 'image' in echoed) expect(echoed.image).toBe(FULL_OPTIONS.image);
      if (has('registry_auth') && 'registryUsername' in echoed) expect(echoed.registryUsername).toBe(FULL_OPTIONS.registryAuth.username);
      if (has('command') && 'command' in echoed) expect(echoed.command).toBe(FULL_OPTIONS.command);
      if (has('env') && echoed.env) expect(echoed.env).toMatchObject(FULL_OPTIONS.env);
      if (has('ports') && echoed.ports) expect(echoed.ports).toEqual(expect.arrayContaining([...FULL_OPTIONS.ports]));
      if (has('startup_script') && 'startupScript' in echoed) expect(echoed.startupScript).toContain(FULL_OPTIONS.startupScript);
      if (has('ssh_keys') && echoed.sshPublicKeys) expect(echoed.sshPublicKeys).toEqual(expect.arrayContaining([...FULL_OPTIONS.sshPublicKeys]));
      if (has('volumes') && echoed.volumeIds) expect(echoed.volumeIds).toEqual(volumeIds);
      await provider.terminateMachine(created.machineId);
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
