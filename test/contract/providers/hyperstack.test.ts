import { afterEach, describe, expect, it } from 'vitest';
import { createHyperstackProvider, hyperstackModule, type HyperstackProviderConfig } from '../../../adapters/providers/hyperstack/index.ts';
import type { Provider, Rebootable, VolumeHost } from '../../../core/ports/providers.ts';
import { fastHyperstackConfig } from '../../fakes/hyperstack/adapter-config.ts';
import { startFakeHyperstack, type FakeHyperstack } from '../../fakes/hyperstack/server.ts';
import { failureOf, machineRequest, providerContract } from '../provider-contract.ts';
import { volumeHostContract } from '../volume-host-contract.ts';

const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOurHyperstackKey alice@laptop';

const keysOf = (fake: FakeHyperstack, machineId: string): string[] => {
  const vm = fake.state.vms.get(Number(machineId))!;
  const pair = fake.state.keypairs.find((k) => k.name === vm.keyName && k.environment === vm.environment)!;
  return [pair.public_key, ...[...(vm.userData ?? '').matchAll(/^ {2}- (".*")$/gm)].map((m) => JSON.parse(m[1]!) as string)];
};

providerContract('hyperstack', async () => {
  const fake = await startFakeHyperstack();
  const provider = createHyperstackProvider(fastHyperstackConfig(fake));
  return {
    provider,
    close: fake.close,
    echoed: async (machineId) => {
      const vm = fake.state.vms.get(Number(machineId))!;
      const volume = [...fake.state.volumes.values()].find((v) => v.name === vm.volumeName && v.environment === vm.environment);
      return { sshPublicKeys: keysOf(fake, machineId), startupScript: vm.userData, volumeIds: volume ? [String(volume.id)] : [] };
    },
    volumeFor: async (offer) => (await (provider as VolumeHost).createVolume({ label: 'vol_contract', name: 'contract', sizeGb: 10, region: offer.region! })).volumeId,
  };
});

volumeHostContract('hyperstack', async () => {
  const fake = await startFakeHyperstack();
  const provider = createHyperstackProvider(fastHyperstackConfig(fake));
  return {
    provider,
    region: 'CANADA-1',
    priceUsdPerGbMonth: '0.06',
    reportsInUse: true,
    attach: async (volumeId) =>
      (await provider.createMachine(machineRequest({ offerId: 'n3-A100x1@CANADA-1', label: 'ins_attach1', sshPublicKeys: [KEY], volumeIds: [volumeId] }))).machineId,
    upstreamLabelOf: async (volumeId) => fake.state.volumes.get(Number(volumeId))?.name ?? null,
    close: fake.close,
  };
});

describe('hyperstack adapter', () => {
  let fake: FakeHyperstack;
  const open = async (overrides: Partial<HyperstackProviderConfig> = {}): Promise<Provider & Rebootable & VolumeHost> => {
    fake = await startFakeHyperstack();
    return createHyperstackProvider(fastHyperstackConfig(fake, overrides));
  };
  afterEach(async () => {
    await fake?.close();
  });

  it('lists each flavor in its region at the pricebook price per GPU times the count, in stock or not', async () => {
    const provider = await open();
    const offers = await provider.listOffers();
    expect(offers.map((o) => o.id).sort()).toEqual(['n3-A100x1@CANADA-1', 'n3-A100x8@CANADA-1', 'n3-H100x1@CANADA-1', 'n3-H100x1@NORWAY-1', 'n3-L40x2@NORWAY-1', 'n3-RTX-A6000x1@NORWAY-1'].map((id) => `hyperstack:${id}`));
    const byId = (id: string) => offers.find((o) => o.id === `hyperstack:${id}`)!;
    expect(byId('n3-A100x8@CANADA-1')).toMatchObject({ gpuType: 'A100', gpuModel: 'A100-80G-PCIe', gpuCount: 8, vramGb: 80, priceUsdPerHour: '10.8', cpus: 252, ramGb: 960, country: 'CA', available: 1 });
    expect(byId('n3-H100x1@NORWAY-1')).toMatchObject({ gpuType: 'H100', priceUsdPerHour: '1.9', country: 'NO', available: 0 });
    expect(byId('n3-RTX-A6000x1@NORWAY-1')).toMatchObject({ gpuType: 'A6000', vramGb: 48, priceUsdPerHour: '0.5' });
    expect(byId('n3-L40x2@NORWAY-1')).toMatchObject({ gpuType: 'L40', vramGb: 48, priceUsdPerHour: '2' });
  });

  it("makes the region's environment once, imports the key there, and creates with a floating IP on port 22 and our id as name and label", async () => {
    const provider = await open();
    const machine = await provider.createMachine(machineRequest({ offerId: 'n3-A100x1@CANADA-1', label: 'ins_wire01', sshPublicKeys: [KEY], startupScript: 'echo hi' }));
    await provider.createMachine(machineRequest({ offerId: 'n3-A100x1@CANADA-1', label: 'ins_wire02', sshPublicKeys: [KEY] }));
    expect(fake.state.exchangesTo('POST', '/core/environments').map((e) => e.body)).toEqual([{ name: 'cp-canada-1', region: 'CANADA-1' }]);
    expect(fake.state.exchangesTo('POST', '/core/keypairs').map((e) => e.body)).toEqual([{ environment_name: 'cp-canada-1', name: 'cp-ins_wire01', public_key: KEY }]);
    expect(fake.state.exchangesTo('POST', '/core/virtual-machines')[0]!.body).toEqual({
      name: 'ins_wire01',
      environment_name: 'cp-canada-1',
      flavor_name: 'n3-A100x1',
      image_name: 'Ubuntu Server 22.04 LTS R535 CUDA 12.2',
      key_name: 'cp-ins_wire01',
      count: 1,
      labels: ['ins_wire01'],
      assign_floating_ip: true,
      enable_port_randomization: false,
      user_data: '#cloud-config\nruncmd:\n  - ["bash", "-c", "echo hi"]\n',
    });
    expect(machine).toMatchObject({ label: 'ins_wire01', status: 'provisioning', sshHost: null });
    fake.state.bootMs = 0;
    expect(await provider.getMachine(machine.machineId)).toMatchObject({ status: 'running', sshHost: expect.stringMatching(/^192\.0\.2\./), sshPort: 22 });
  });

  it('waits for a machine still being created before deleting it (Hyperstack refuses then), and answers unavailable when it stays so', async () => {
    const provider = await open({ deleteWaitMs: 0 });
    fake.state.bootMs = 60_000;
    const machine = await provider.createMachine(machineRequest({ offerId: 'n3-A100x1@CANADA-1', label: 'ins_slow1', sshPublicKeys: [KEY] }));
    const failure = await failureOf(provider.terminateMachine(machine.machineId));
    expect(failure.kind).toBe('unavailable');
    expect(fake.state.vms.has(Number(machine.machineId))).toBe(true);
    // once it is up, the delete goes through
    fake.state.bootMs = 0;
    await provider.terminateMachine(machine.machineId);
    expect(fake.state.vms.size).toBe(0);
  });

  it('maps the refusal of a delete racing the create to unavailable, never rejected', async () => {
    const provider = await open();
    fake.state.bootMs = 0;
    const machine = await provider.createMachine(machineRequest({ offerId: 'n3-A100x1@CANADA-1', label: 'ins_race1', sshPublicKeys: [KEY] }));
    fake.state.vms.get(Number(machine.machineId))!.status = 'ACTIVE';
    // read as up, but the delete still meets Hyperstack's refusal for a machine being created
    fake.state.failNext(1, 400, { path: `/core/virtual-machines/${machine.machineId}`, method: 'DELETE', message: 'Cannot delete a virtual machine while it is still creating' });
    const failure = await failureOf(provider.terminateMachine(machine.machineId));
    expect(failure).toMatchObject({ kind: 'unavailable', status: 400 });
    expect(fake.state.vms.has(Number(machine.machineId))).toBe(true);
  });

  it('hard-reboots a running machine and refuses one that is not', async () => {
    const provider = await open();
    fake.state.bootMs = 0;
    const machine = await provider.createMachine(machineRequest({ offerId: 'n3-A100x1@CANADA-1', label: 'ins_boot1', sshPublicKeys: [KEY] }));
    await provider.rebootMachine(machine.machineId);
    expect(fake.state.vms.get(Number(machine.machineId))!.hardReboots).toBe(1);
    fake.state.vms.get(Number(machine.machineId))!.status = 'SHUTOFF';
    expect((await failureOf(provider.rebootMachine(machine.machineId))).kind).toBe('rejected');
  });

  it('refuses a flavor out of stock, a create without a key, and options it cannot carry out', async () => {
    const provider = await open();
    expect((await failureOf(provider.createMachine(machineRequest({ offerId: 'n3-H100x1@NORWAY-1', label: 'ins_stock', sshPublicKeys: [KEY] })))).kind).toBe('rejected');
    expect((await failureOf(provider.createMachine(machineRequest({ offerId: 'n3-A100x1@CANADA-1', label: 'ins_nokey' })))).kind).toBe('rejected');
    expect((await failureOf(provider.createMachine(machineRequest({ offerId: 'n3-A100x1@CANADA-1', label: 'ins_env', sshPublicKeys: [KEY], env: { A: '1' } })))).message).toMatch(/cannot carry out env/);
    expect(fake.state.vms.size).toBe(0);
  });

  it('reads a 500 on a create as ambiguous, never retried', async () => {
    const provider = await open();
    await provider.createMachine(machineRequest({ offerId: 'n3-A100x1@CANADA-1', label: 'ins_warm', sshPublicKeys: [KEY] }));
    fake.state.failNext(1, 500, { path: '/core/virtual-machines' });
    expect((await failureOf(provider.createMachine(machineRequest({ offerId: 'n3-A100x1@CANADA-1', label: 'ins_lost', sshPublicKeys: [KEY] })))).kind).toBe('ambiguous');
    expect(fake.state.exchangesTo('POST', '/core/virtual-machines')).toHaveLength(2);
  });
});

describe('hyperstack module', () => {
  it('is enabled by HYPERSTACK_API_KEY and moves with HYPERSTACK_BASE_URL', () => {
    expect(hyperstackModule.fromEnv({})).toBeNull();
    expect(hyperstackModule.fromEnv({ HYPERSTACK_API_KEY: 'k', HYPERSTACK_BASE_URL: 'http://127.0.0.1:9/v1', HYPERSTACK_VOLUME_USD_PER_GB_MONTH: '0.08' })).toEqual({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9/v1', volumePriceUsdPerGbMonth: '0.08' });
    expect(() => hyperstackModule.fromEnv({ HYPERSTACK_BASE_URL: 'http://x/v1' })).toThrow(/HYPERSTACK_API_KEY/);
  });
});
