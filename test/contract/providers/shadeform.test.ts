import { afterEach, describe, expect, it } from 'vitest';
import { providerNamed } from '../../../adapters/providers/registry.ts';
import { createShadeformProvider, shadeformModule, type ShadeformProviderConfig } from '../../../adapters/providers/shadeform/index.ts';
import type { Provider, Rebootable, SpotMarket, VolumeHost } from '../../../core/ports/providers.ts';
import { extraKeysOf, fastShadeformConfig, launchScriptOf } from '../../fakes/shadeform/adapter-config.ts';
import { startFakeShadeform, type FakeShadeform } from '../../fakes/shadeform/server.ts';
import { failureOf, machineRequest, providerContract } from '../provider-contract.ts';
import { spotMarketContract } from '../spot-market-contract.ts';
import { volumeHostContract } from '../volume-host-contract.ts';

const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOurShadeformKey alice@laptop';

providerContract('shadeform', async () => {
  const fake = await startFakeShadeform();
  const provider = createShadeformProvider(fastShadeformConfig(fake));
  return {
    provider,
    close: fake.close,
    echoed: async (machineId) => {
      const instance = fake.state.instances.get(machineId)!;
      const script = launchScriptOf(instance.launchConfiguration);
      return {
        sshPublicKeys: [...(instance.sshKeyId ? [fake.state.sshKeys.get(instance.sshKeyId)!.public_key] : []), ...extraKeysOf(script)],
        startupScript: script,
        volumeIds: instance.volumeIds,
      };
    },
    // a volume is of one cloud and region: an offer of a cloud that makes volumes there
    offerForOptions: (offers) => offers.find((o) => o.id === 'shadeform:massedcompute:A6000@us-central-1')!,
    volumeFor: async (offer) => (await provider.createVolume({ label: 'vol_contract', name: 'contract', sizeGb: 10, region: offer.region! })).volumeId,
  };
});

volumeHostContract('shadeform', async () => {
  const fake = await startFakeShadeform();
  // a deleted machine lets go of its volume once deleted, not while deleting
  fake.state.deleteMs = 0;
  const provider = createShadeformProvider(fastShadeformConfig(fake));
  return {
    provider,
    region: 'us-central-1',
    // ".0001" a GB-hour, 730 hours a month
    priceUsdPerGbMonth: '0.073',
    reportsInUse: true,
    attach: async (volumeId) =>
      (await provider.createMachine(machineRequest({ offerId: 'massedcompute:A6000@us-central-1', label: 'ins_attach1', sshPublicKeys: [KEY], volumeIds: [volumeId] }))).machineId,
    upstreamLabelOf: async (volumeId) => fake.state.volumes.get(volumeId)?.name ?? null,
    close: fake.close,
  };
});

spotMarketContract('shadeform', async () => {
  const fake = await startFakeShadeform();
  const provider = createShadeformProvider(fastShadeformConfig(fake));
  return {
    provider,
    setSpotPrice: async (offer, price) => fake.state.setSpotPrice(String(offer.attributes.cloud), String(offer.attributes.shade_instance_type), offer.region!, price),
    // Lambda's machines are sold on demand only
    offerWithoutSpot: (offers) => offers.find((o) => o.id === 'shadeform:lambdalabs:A6000@us-south-1'),
    close: fake.close,
  };
});

describe('shadeform adapter', () => {
  let fake: FakeShadeform;
  const open = async (overrides: Partial<ShadeformProviderConfig> = {}, enabledProviders: string[] = []): Promise<Provider & Rebootable & VolumeHost & SpotMarket> => {
    fake = await startFakeShadeform();
    return createShadeformProvider(fastShadeformConfig(fake, overrides), { enabledProviders, providerNamed });
  };
  afterEach(async () => {
    await fake?.close();
  });

  it('lists each type in each region it names, at its hourly_price in cents, with the cloud behind it in our names', async () => {
    const provider = await open();
    const offers = await provider.listOffers();
    expect(offers).toHaveLength(8);
    expect(offers.find((o) => o.id === 'shadeform:lambdalabs:A6000@us-south-1')).toMatchObject({
      underlyingCloud: 'lambda', gpuType: 'A6000', gpuCount: 1, vramGb: 48, priceUsdPerHour: '0.80', country: 'US', region: 'us-south-1', available: 1,
      attributes: { cloud: 'lambdalabs', shade_instance_type: 'A6000', cloud_instance_type: 'gpu_1x_a6000', underlying_cloud: 'lambda' },
    });
    expect(offers.find((o) => o.id === 'shadeform:lambdalabs:A6000@us-west-1')?.available).toBe(0);
    expect(offers.find((o) => o.id === 'shadeform:datacrunch:H100@FIN-01')).toMatchObject({ underlyingCloud: 'verda', priceUsdPerHour: '2.29', country: 'FI' });
    expect(offers.find((o) => o.id === 'shadeform:massedcompute:L40S@us-central-1')).toMatchObject({ underlyingCloud: 'massedcompute', gpuCount: 2, priceUsdPerHour: '1.80' });
  });

  it('reads the spot entry of a region as its spot price, none where spot is not available, and an entry without rental_type as on demand', async () => {
    const provider = await open();
    const offers = await provider.listOffers();
    expect(offers.find((o) => o.id === 'shadeform:massedcompute:A6000@us-central-1')).toMatchObject({ priceUsdPerHour: '0.62', spotPriceUsdPerHour: '0.31', available: 1 });
    expect(offers.find((o) => o.id === 'shadeform:massedcompute:L40S@us-central-1')?.spotPriceUsdPerHour).toBeNull();
    expect(offers.find((o) => o.id === 'shadeform:lambdalabs:A6000@us-south-1')?.spotPriceUsdPerHour).toBeNull();
    // spot alone in a region: listed, not available on demand
    fake.state.types.find((t) => t.cloud === 'vultr')!.spot.push({ region: 'lax', available: true, hourly_price: 70 });
    expect((await provider.listOffers()).filter((o) => o.id === 'shadeform:vultr:A100_80G@lax')).toEqual([expect.objectContaining({ available: 0, spotPriceUsdPerHour: '0.70' })]);
  });

  it('makes a spot machine with rental_type spot and its bid in a tag, reads it preempted once its price passes the bid, and refuses a bid under the spot price before any create', async () => {
    const provider = await open();
    const spot = await provider.createSpotMachine({ ...machineRequest({ offerId: 'massedcompute:A6000@us-central-1', label: 'ins_spot1', sshPublicKeys: [KEY] }), bidUsdPerHour: '0.40' });
    const [create] = fake.state.exchangesTo('POST', '/instances/create');
    expect(create!.body).toMatchObject({ rental_type: 'spot', tags: ['ins_spot1', 'cp-bid=0.40'] });
    expect(spot).toMatchObject({ label: 'ins_spot1', status: 'provisioning', priceUsdPerHour: '0.31' });
    fake.state.setSpotPrice('massedcompute', 'A6000', 'us-central-1', '0.41');
    expect((await provider.getMachine(spot.machineId))?.status).toBe('preempted');
    // an on-demand machine is never over a bid
    const onDemand = await provider.createMachine(machineRequest({ offerId: 'massedcompute:A6000@us-central-1', label: 'ins_spot2', sshPublicKeys: [KEY] }));
    expect(fake.state.exchangesTo('POST', '/instances/create')[1]!.body).not.toHaveProperty('rental_type');
    expect((await provider.getMachine(onDemand.machineId))?.status).toBe('provisioning');
    expect((await failureOf(provider.createSpotMachine({ ...machineRequest({ offerId: 'massedcompute:A6000@us-central-1', label: 'ins_spot3' }), bidUsdPerHour: '0.40' }))).kind).toBe('rejected');
    expect((await failureOf(provider.createSpotMachine({ ...machineRequest({ offerId: 'massedcompute:L40S@us-central-1', label: 'ins_spot4' }), bidUsdPerHour: '9' }))).message).toMatch(/no spot capacity/);
    expect(fake.state.exchangesTo('POST', '/instances/create')).toHaveLength(2);
  });

  it('offers a volume region once, on the cheapest of its clouds, leaves out the clouds reached directly, and makes the volume there', async () => {
    const provider = await open({}, ['lambda']);
    fake.state.volumeTypes.push({ cloud: 'hyperstack', region: 'us-central-1', price_per_gb_per_hour: '0.00005' }, { cloud: 'oblivus', region: 'us-central-1', price_per_gb_per_hour: '0.00009' });
    const offers = await provider.volumeOffers();
    expect(offers.map((o) => o.region).sort()).toEqual(['FIN-01', 'ewr', 'us-central-1']);
    expect(offers.find((o) => o.region === 'us-central-1')?.priceUsdPerGbMonth).toBe('0.0365');
    const volume = await provider.createVolume({ label: 'vol_cheap1', name: 'data', sizeGb: 50, region: 'us-central-1' });
    expect(fake.state.exchangesTo('POST', '/volumes/create')[0]!.body).toEqual({ cloud: 'hyperstack', region: 'us-central-1', size_in_gb: 50, name: 'vol_cheap1' });
    expect(volume).toMatchObject({ label: 'vol_cheap1', region: 'us-central-1', sizeGb: 50, status: 'available' });
    expect((await failureOf(provider.createVolume({ label: 'vol_direct1', name: 'data', sizeGb: 10, region: 'us-south-1' }))).kind).toBe('rejected');
  });

  it("mounts one volume, of the offer's own cloud and region, and refuses others before any create", async () => {
    const provider = await open();
    const here = await provider.createVolume({ label: 'vol_mount1', name: 'a', sizeGb: 10, region: 'us-central-1' });
    const second = await provider.createVolume({ label: 'vol_mount2', name: 'b', sizeGb: 10, region: 'us-central-1' });
    const elsewhere = await provider.createVolume({ label: 'vol_mount3', name: 'c', sizeGb: 10, region: 'ewr' });
    const refused = async (offerId: string, volumeIds: string[]) => (await failureOf(provider.createMachine(machineRequest({ offerId, label: 'ins_vol1', sshPublicKeys: [KEY], volumeIds })))).message;
    expect(await refused('massedcompute:A6000@us-central-1', [here.volumeId, second.volumeId])).toMatch(/one volume/);
    expect(await refused('massedcompute:A6000@us-central-1', [elsewhere.volumeId])).toMatch(/on vultr in ewr, the offer on massedcompute in us-central-1/);
    const machine = await provider.createMachine(machineRequest({ offerId: 'massedcompute:A6000@us-central-1', label: 'ins_vol2', sshPublicKeys: [KEY], volumeIds: [here.volumeId] }));
    expect(await refused('massedcompute:L40S@us-central-1', [here.volumeId])).toMatch(new RegExp(`mounted by instance ${machine.machineId}`));
    expect(fake.state.exchangesTo('POST', '/instances/create')).toHaveLength(1);
    expect(fake.state.instances.get(machine.machineId)!.volumeIds).toEqual([here.volumeId]);
  });

  it('reads a volume whose machine is still being deleted as not deletable yet (unavailable), one whose machine lives as refused', async () => {
    const provider = await open();
    fake.state.deleteMs = 60_000;
    const volume = await provider.createVolume({ label: 'vol_busy1', name: 'a', sizeGb: 10, region: 'us-central-1' });
    const machine = await provider.createMachine(machineRequest({ offerId: 'massedcompute:A6000@us-central-1', label: 'ins_busy1', sshPublicKeys: [KEY], volumeIds: [volume.volumeId] }));
    expect((await provider.getVolume(volume.volumeId))?.status).toBe('in_use');
    expect((await failureOf(provider.deleteVolume(volume.volumeId))).kind).toBe('rejected');
    await provider.terminateMachine(machine.machineId);
    expect((await failureOf(provider.deleteVolume(volume.volumeId))).kind).toBe('unavailable');
    fake.state.deleteMs = 0;
    await provider.deleteVolume(volume.volumeId);
    expect(fake.state.volumes.size).toBe(0);
  });

  it('leaves out the clouds enabled directly by default, or those SHADEFORM_CLOUDS_EXCLUDE names, so no machine is listed twice', async () => {
    const direct = await open({}, ['sandbox', 'lambda', 'verda', 'shadeform']);
    expect(new Set((await direct.listOffers()).map((o) => o.underlyingCloud))).toEqual(new Set(['massedcompute', 'vultr']));
    // a create on a cloud left out is refused before any call
    const before = fake.state.exchanges.length;
    expect((await failureOf(direct.createMachine(machineRequest({ offerId: 'lambdalabs:A6000@us-south-1', label: 'ins_twice', sshPublicKeys: [KEY] })))).kind).toBe('rejected');
    expect(fake.state.exchanges.length).toBe(before);
    await fake.close();
    const named = await open({ cloudsExclude: ['datacrunch', 'vultr'] }, ['lambda']);
    expect(new Set((await named.listOffers()).map((o) => o.underlyingCloud))).toEqual(new Set(['lambda', 'massedcompute']));
    await fake.close();
    const none = await open({ cloudsExclude: [] }, ['lambda', 'verda']);
    expect((await none.listOffers()).length).toBe(8);
  });

  it('creates asynchronously with our id as name and tag, the first key by id and the others in the launch script', async () => {
    const provider = await open();
    const second = "ecdsa-sha2-nistp256 AAAAE2Second bob's key";
    const machine = await provider.createMachine(machineRequest({ offerId: 'massedcompute:A6000@us-central-1', label: 'ins_wire01', sshPublicKeys: [KEY, second], startupScript: 'echo ready' }));
    const [create] = fake.state.exchangesTo('POST', '/instances/create');
    const body = create!.body as Record<string, any>;
    expect(body).toMatchObject({ cloud: 'massedcompute', region: 'us-central-1', shade_instance_type: 'A6000', shade_cloud: true, name: 'ins_wire01', tags: ['ins_wire01'], ssh_key_id: [...fake.state.sshKeys.keys()][0] });
    const script = launchScriptOf(body.launch_configuration);
    expect(extraKeysOf(script)).toEqual([second]);
    expect(script).toMatch(/echo ready\n$/);
    expect(machine).toMatchObject({ label: 'ins_wire01', status: 'provisioning', sshHost: null });
  });

  it("shows each machine's own SSH user and port once active", async () => {
    const provider = await open();
    fake.state.bootMs = 0;
    const massed = await provider.createMachine(machineRequest({ offerId: 'massedcompute:A6000@us-central-1', label: 'ins_user1', sshPublicKeys: [KEY] }));
    const lambda = await provider.createMachine(machineRequest({ offerId: 'lambdalabs:A6000@us-south-1', label: 'ins_user2', sshPublicKeys: [KEY] }));
    expect(await provider.getMachine(massed.machineId)).toMatchObject({ status: 'running', sshUser: 'shadeform', sshPort: 2222, sshHost: expect.stringMatching(/^198\.18\.0\./) });
    expect(await provider.getMachine(lambda.machineId)).toMatchObject({ status: 'running', sshUser: 'ubuntu', sshPort: 22 });
    expect(fake.state.sshKeys.size).toBe(1); // the key was reused
  });

  it('reads a machine shown as deleting with status_details "preempted" as preempted, and one we deleted as terminated', async () => {
    const provider = await open();
    fake.state.bootMs = 0;
    const taken = await provider.createMachine(machineRequest({ offerId: 'vultr:A100_80G@ewr', label: 'ins_pre1', sshPublicKeys: [KEY] }));
    fake.state.preempt(taken.machineId);
    expect((await provider.getMachine(taken.machineId))?.status).toBe('preempted');
    expect((await provider.listMachines()).find((m) => m.machineId === taken.machineId)?.status).toBe('preempted');
    const ended = await provider.createMachine(machineRequest({ offerId: 'vultr:A100_80G@ewr', label: 'ins_pre2', sshPublicKeys: [KEY] }));
    await provider.terminateMachine(ended.machineId);
    expect((await provider.getMachine(ended.machineId))?.status).toBe('terminated');
  });

  it('restarts an active machine and refuses one that is not up', async () => {
    const provider = await open();
    fake.state.bootMs = 0;
    const machine = await provider.createMachine(machineRequest({ offerId: 'vultr:A100_80G@ewr', label: 'ins_boot1', sshPublicKeys: [KEY] }));
    await provider.rebootMachine(machine.machineId);
    expect(fake.state.instances.get(machine.machineId)!.restarts).toBe(1);
    fake.state.instances.get(machine.machineId)!.status = 'pending';
    expect((await failureOf(provider.rebootMachine(machine.machineId))).kind).toBe('rejected');
  });

  it('reads a region without capacity as a rejection, a 500 or a lost answer on a create as ambiguous, never retried', async () => {
    const provider = await open({ timeoutMs: 300 });
    expect((await failureOf(provider.createMachine(machineRequest({ offerId: 'vultr:A100_80G@lax', label: 'ins_full', sshPublicKeys: [KEY] })))).kind).toBe('rejected');
    fake.state.failNext(1, 500, { path: '/instances/create' });
    expect((await failureOf(provider.createMachine(machineRequest({ offerId: 'vultr:A100_80G@ewr', label: 'ins_err', sshPublicKeys: [KEY] })))).kind).toBe('ambiguous');
    fake.state.hangNext(1, '/instances/create');
    expect((await failureOf(provider.createMachine(machineRequest({ offerId: 'vultr:A100_80G@ewr', label: 'ins_lost', sshPublicKeys: [KEY] })))).kind).toBe('ambiguous');
    // the lost one was made: the reconciler finds it by our id
    expect((await provider.listMachines()).map((m) => m.label)).toContain('ins_lost');
    expect(fake.state.exchangesTo('POST', '/instances/create')).toHaveLength(3);
  });
});

describe('shadeform module', () => {
  it('is enabled by SHADEFORM_API_KEY; SHADEFORM_CLOUDS_EXCLUDE names clouds, or none', () => {
    expect(shadeformModule.fromEnv({})).toBeNull();
    expect(shadeformModule.fromEnv({ SHADEFORM_API_KEY: 'k', SHADEFORM_BASE_URL: 'http://127.0.0.1:9/v1' })).toEqual({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9/v1' });
    expect(shadeformModule.fromEnv({ SHADEFORM_API_KEY: 'k', SHADEFORM_CLOUDS_EXCLUDE: 'lambdalabs, Vultr' })).toEqual({ apiKey: 'k', cloudsExclude: ['lambdalabs', 'vultr'] });
    expect(shadeformModule.fromEnv({ SHADEFORM_API_KEY: 'k', SHADEFORM_CLOUDS_EXCLUDE: 'none' })).toEqual({ apiKey: 'k', cloudsExclude: [] });
    expect(() => shadeformModule.fromEnv({ SHADEFORM_API_KEY: 'k', SHADEFORM_CLOUDS_EXCLUDE: 'a b' })).toThrow(/SHADEFORM_CLOUDS_EXCLUDE/);
  });
});
