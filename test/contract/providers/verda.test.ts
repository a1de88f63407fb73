import { afterEach, describe, expect, it } from 'vitest';
import { createVerdaProvider, verdaModule, type VerdaProviderConfig } from '../../../adapters/providers/verda/index.ts';
import type { Provider, SpotMarket, VolumeHost } from '../../../core/ports/providers.ts';
import { fastVerdaConfig } from '../../fakes/verda/adapter-config.ts';
import { startFakeVerda, type FakeVerda } from '../../fakes/verda/server.ts';
import { failureOf, machineRequest, providerContract } from '../provider-contract.ts';
import { spotMarketContract } from '../spot-market-contract.ts';
import { volumeHostContract } from '../volume-host-contract.ts';

const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOurVerdaKey alice@laptop';

providerContract('verda', async () => {
  const fake = await startFakeVerda();
  const provider = createVerdaProvider(fastVerdaConfig(fake));
  return {
    provider,
    close: fake.close,
    echoed: async (machineId) => {
      const instance = fake.state.instances.get(machineId)!;
      return {
        sshPublicKeys: instance.sshKeyIds.map((id) => fake.state.sshKeys.get(id)!.key),
        startupScript: instance.startupScriptId ? fake.state.scripts.get(instance.startupScriptId)!.script : null,
        volumeIds: instance.volumeIds,
      };
    },
    volumeFor: async (offer) => (await (provider as VolumeHost).createVolume({ label: 'vol_contract', name: 'contract', sizeGb: 10, region: offer.region! })).volumeId,
  };
});

volumeHostContract('verda', async () => {
  const fake = await startFakeVerda();
  const provider = createVerdaProvider(fastVerdaConfig(fake));
  return {
    provider,
    region: 'FIN-01',
    priceUsdPerGbMonth: '0.2',
    reportsInUse: true,
    attach: async (volumeId) =>
      (await provider.createMachine(machineRequest({ offerId: '1H100.80S.30V@FIN-01', label: 'ins_attach1', sshPublicKeys: [KEY], volumeIds: [volumeId] }))).machineId,
    upstreamLabelOf: async (volumeId) => {
      const volume = fake.state.volumes.get(volumeId);
      return volume ? `${volume.name} ${volume.tags.map((t) => `${t.key}=${t.value}`).join(' ')}` : null;
    },
    close: fake.close,
  };
});

spotMarketContract('verda', async () => {
  const fake = await startFakeVerda();
  const provider = createVerdaProvider(fastVerdaConfig(fake));
  return {
    provider,
    setSpotPrice: async (offer, price) => fake.state.setSpotPrice(String(offer.attributes.instance_type), price),
    // 8H100 has a spot price but no spot capacity anywhere
    offerWithoutSpot: (offers) => offers.find((o) => o.attributes.instance_type === '8H100.80S.176V'),
    close: fake.close,
  };
});

describe('verda adapter', () => {
  let fake: FakeVerda;
  let now = 1_800_000_000_000;
  const open = async (overrides: Partial<VerdaProviderConfig> = {}): Promise<Provider & SpotMarket & VolumeHost> => {
    fake = await startFakeVerda({ now: () => now });
    return createVerdaProvider(fastVerdaConfig(fake, { now: () => now, ...overrides }));
  };
  afterEach(async () => {
    await fake?.close();
  });

  it('lists a type in each location where it is available, at its whole-instance price, per-GPU memory, and spot price where spot is free', async () => {
    const provider = await open();
    const offers = await provider.listOffers();
    expect(offers.map((o) => o.id).sort()).toEqual(
      ['1A100.80S.22V@FIN-01', '1A100.80S.22V@ICE-01', '1H100.80S.30V@FIN-01', '1H100.80S.30V@ICE-01', '1L40S.20V@FIN-02', '1RTX6000ADA.10V@FIN-02', '4A100.40S.88V@FIN-02', '8H100.80S.176V@FIN-01'].map((id) => `verda:${id}`),
    );
    const h100 = offers.find((o) => o.id === 'verda:8H100.80S.176V@FIN-01')!;
    expect(h100).toMatchObject({ gpuType: 'H100', gpuModel: '8x H100 SXM5 80GB', gpuCount: 8, vramGb: 80, priceUsdPerHour: '18.32', spotPriceUsdPerHour: null, cpus: 176, ramGb: 1480, country: 'FI', region: 'FIN-01', available: 1 });
    expect(offers.find((o) => o.id === 'verda:1H100.80S.30V@FIN-01')).toMatchObject({ priceUsdPerHour: '2.29', spotPriceUsdPerHour: '0.92' });
    expect(offers.find((o) => o.id === 'verda:1H100.80S.30V@ICE-01')).toMatchObject({ spotPriceUsdPerHour: null, country: 'IS' });
    expect(offers.find((o) => o.id === 'verda:4A100.40S.88V@FIN-02')).toMatchObject({ gpuCount: 4, vramGb: 40 });
  });

  it('takes a bearer with the client credentials, and renews it before the expires_in its answer gave runs out', async () => {
    const provider = await open();
    fake.state.tokenLifeSeconds = 600;
    await provider.listOffers();
    expect(fake.state.exchangesTo('POST', '/oauth2/token').map((e) => (e.body as { grant_type: string }).grant_type)).toEqual(['client_credentials']);
    now += 500_000; // within its life, short of the last tenth
    await provider.listOffers();
    expect(fake.state.exchangesTo('POST', '/oauth2/token')).toHaveLength(1);
    now += 50_000; // within the last tenth (60 s of 600): renewed before it runs out, never an hour assumed
    await provider.listOffers();
    const grants = fake.state.exchangesTo('POST', '/oauth2/token');
    expect(grants.map((e) => (e.body as { grant_type: string }).grant_type)).toEqual(['client_credentials', 'refresh_token']);
    // no call was refused on the way
    expect(fake.state.exchanges.filter((e) => e.status === 401)).toHaveLength(0);
  });

  it('takes a new bearer when one is refused early, and with the credentials when the refresh token is refused', async () => {
    const provider = await open();
    await provider.listOffers();
    fake.state.tokens.clear(); // revoked upstream
    fake.state.refreshTokens.clear();
    expect((await provider.listOffers()).length).toBeGreaterThan(0);
    expect(fake.state.exchangesTo('POST', '/oauth2/token').map((e) => (e.body as { grant_type: string }).grant_type)).toEqual(['client_credentials', 'client_credentials']);
  });

  it('reports wrong credentials as unavailable for a read and rejected for a create', async () => {
    const provider = await open({ clientSecret: 'wrong' });
    expect((await failureOf(provider.listOffers())).kind).toBe('unavailable');
    const failure = await failureOf(provider.createMachine(machineRequest({ offerId: '1H100.80S.30V@FIN-01', label: 'ins_badcreds', sshPublicKeys: [KEY] })));
    expect(failure.kind).toBe('rejected');
    expect(failure.message).toMatch(/VERDA_CLIENT_ID/);
  });

  it('registers keys and the startup script as resources, deploys with their ids and our id in hostname, description and a tag', async () => {
    const provider = await open();
    const machine = await provider.createMachine(
      machineRequest({ offerId: '1H100.80S.30V@FIN-01', label: 'ins_wire01', name: 'my box', sshPublicKeys: [KEY], startupScript: 'echo hi' }),
    );
    const [deploy] = fake.state.exchangesTo('POST', '/instances');
    const keyId = [...fake.state.sshKeys.values()][0]!.id;
    const scriptId = [...fake.state.scripts.values()][0]!.id;
    expect(deploy!.body).toEqual({
      instance_type: '1H100.80S.30V',
      image: 'ubuntu-24.04-cuda-12.8-open-docker',
      location_code: 'FIN-01',
      hostname: 'ins-wire01',
      description: 'ins_wire01 my box',
      tags: [{ key: 'cp-id', value: 'ins_wire01' }],
      ssh_key_ids: [keyId],
      startup_script_id: scriptId,
      is_spot: false,
      contract: 'PAY_AS_YOU_GO',
    });
    expect(machine).toMatchObject({ label: 'ins_wire01', status: 'provisioning', priceUsdPerHour: '2.29' });
    // a second machine with the same key reuses it
    await provider.createMachine(machineRequest({ offerId: '1H100.80S.30V@FIN-01', label: 'ins_wire02', sshPublicKeys: [KEY.replace('alice@laptop', 'other')] }));
    expect(fake.state.sshKeys.size).toBe(1);
    // the script made for the first goes with it
    await provider.terminateMachine(machine.machineId);
    expect(fake.state.scripts.size).toBe(0);
  });

  it('shows the SSH host and port once running, reads the label back, and terminates idempotently', async () => {
    const provider = await open();
    fake.state.bootMs = 0;
    const machine = await provider.createMachine(machineRequest({ offerId: '1A100.80S.22V@ICE-01', label: 'ins_ssh1', sshPublicKeys: [KEY] }));
    const got = await provider.getMachine(machine.machineId);
    expect(got).toMatchObject({ status: 'running', sshHost: expect.stringMatching(/^203\.0\.113\./), sshPort: 22, label: 'ins_ssh1' });
    await provider.terminateMachine(machine.machineId);
    await provider.terminateMachine(machine.machineId);
    expect(await provider.getMachine(machine.machineId)).toBeNull();
  });

  it('reads no capacity (503 service_unavailable) as a rejection and removes the script it registered; a 500 on a deploy is ambiguous', async () => {
    const provider = await open();
    fake.state.availability.get('FIN-01')!.delete('1H100.80S.30V');
    const failure = await failureOf(provider.createMachine(machineRequest({ offerId: '1H100.80S.30V@FIN-01', label: 'ins_full1', sshPublicKeys: [KEY], startupScript: 'x' })));
    expect(failure).toMatchObject({ kind: 'rejected', status: 503 });
    expect(fake.state.scripts.size).toBe(0);
    fake.state.failNext(1, 500, { path: '/instances', code: 'server_error' });
    const lost = await failureOf(provider.createMachine(machineRequest({ offerId: '1A100.80S.22V@FIN-01', label: 'ins_lost1', sshPublicKeys: [KEY] })));
    expect(lost.kind).toBe('ambiguous');
    expect(fake.state.exchangesTo('POST', '/instances')).toHaveLength(2); // never retried
  });

  it('reads a delete refused while the machine is provisioning as unavailable (try again later), not a refusal', async () => {
    const provider = await open();
    fake.state.bootMs = 60_000;
    fake.state.refuseProvisioningDeletes = true;
    const machine = await provider.createMachine(machineRequest({ offerId: '1H100.80S.30V@FIN-01', label: 'ins_early1', sshPublicKeys: [KEY] }));
    expect(await failureOf(provider.terminateMachine(machine.machineId))).toMatchObject({ kind: 'unavailable', status: 400 });
    expect(fake.state.instances.has(machine.machineId)).toBe(true);
    fake.state.bootMs = 0;
    await provider.terminateMachine(machine.machineId);
    expect(fake.state.instances.has(machine.machineId)).toBe(false);
  });

  it('reads a spot machine whose capacity Verda took back as preempted', async () => {
    const provider = await open();
    const machine = await provider.createSpotMachine({ ...machineRequest({ offerId: '1L40S.20V@FIN-02', label: 'ins_spot1', sshPublicKeys: [KEY] }), bidUsdPerHour: '0.45' });
    fake.state.reclaimSpot(machine.machineId);
    expect((await provider.getMachine(machine.machineId))?.status).toBe('preempted');
  });

  it('refuses a create with options Verda cannot carry out, before anything is made', async () => {
    const provider = await open();
    const failure = await failureOf(provider.createMachine(machineRequest({ offerId: '1H100.80S.30V@FIN-01', label: 'ins_img', sshPublicKeys: [KEY], image: 'nvidia/cuda:12' })));
    expect(failure.message).toMatch(/cannot carry out custom_image/);
    expect(fake.state.exchanges).toHaveLength(0);
  });
});

describe('verda module', () => {
  it('is enabled by the client id and secret together, and moves with VERDA_BASE_URL', () => {
    expect(verdaModule.fromEnv({})).toBeNull();
    expect(verdaModule.fromEnv({ VERDA_CLIENT_ID: 'id', VERDA_CLIENT_SECRET: 'secret', VERDA_BASE_URL: 'http://127.0.0.1:9/v1' })).toEqual({ clientId: 'id', clientSecret: 'secret', baseUrl: 'http://127.0.0.1:9/v1' });
    expect(() => verdaModule.fromEnv({ VERDA_CLIENT_ID: 'id' })).toThrow(/VERDA_CLIENT_SECRET/);
    expect(() => verdaModule.fromEnv({ VERDA_BASE_URL: 'http://x/v1' })).toThrow(/VERDA_CLIENT_ID/);
  });
});
