import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRunpodProvider, RUNPOD_DEFAULTS } from '../../../adapters/providers/runpod/index.ts';
import type { RunpodProvider } from '../../../adapters/providers/runpod/adapter.ts';
import { divideDecimalDown } from '../../../adapters/providers/shared/decimal.ts';
import { isSpotMarket, supportedOperations, type SpotMachineRequest } from '../../../core/ports/providers.ts';
import { startFakeRunpod, type FakeRunpod } from '../../fakes/runpod/server.ts';
import { failureOf, machineRequest } from '../provider-contract.ts';
import { spotMarketContract } from '../spot-market-contract.ts';

const providerFor = (fake: FakeRunpod): RunpodProvider =>
  createRunpodProvider({ apiKey: fake.apiKey, baseUrl: fake.url, timeoutMs: 2_000, retries: 2, backoffBaseMs: 5 });

spotMarketContract('runpod', async () => {
  const fake = await startFakeRunpod();
  return {
    provider: providerFor(fake),
    // RunPod prices spot per GPU: the whole machine's price is spread over its count
    setSpotPrice: async (offer, price) => {
      const perGpu = Number(divideDecimalDown(price, offer.gpuCount, 10));
      fake.knobs.setSpotPrice(String(offer.attributes.gpu_type_id), offer.attributes.cloud as 'SECURE' | 'COMMUNITY', perGpu);
    },
    offerWithoutSpot: (offers) => {
      const offer = offers.find((o) => o.attributes.gpu_type_id === 'NVIDIA L4')!;
      fake.state.catalog.find((g) => g.id === 'NVIDIA L4')!.spotPrice.secure = null;
      return offer;
    },
    close: () => fake.close(),
  };
});

const SSH_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIRunpodSpotTest spot@test';

describe('runpod spot pods against the fake', () => {
  let fake: FakeRunpod;
  let provider: RunpodProvider;

  beforeEach(async () => {
    fake = await startFakeRunpod();
    provider = providerFor(fake);
  });
  afterEach(async () => {
    await fake.close();
  });

  const graphqlCalls = () => fake.state.requests.filter((r) => r.surface === 'graphql');
  const mutations = () => graphqlCalls().filter((r) => (r.body as { query: string }).query.startsWith('mutation'));
  const bidOn = (offerId: string, bidUsdPerHour: string, label = 'ins_spot1', extra: Partial<SpotMachineRequest> = {}): SpotMachineRequest => ({
    ...machineRequest({ offerId, label, sshPublicKeys: [SSH_KEY] }),
    bidUsdPerHour,
    ...extra,
  });

  it('is a spot market with spot prices per GPU from GraphQL gpuTypes, times the count, exactly', async () => {
    expect(isSpotMarket(provider)).toBe(true);
    expect(supportedOperations(provider)).toContain('spot');
    const byId = new Map((await provider.listOffers()).map((o) => [o.id, o]));
    // RTX 4090: community spot 0.2, secure 0.41 per GPU
    expect(byId.get('runpod:community-2x-NVIDIA_GeForce_RTX_4090')?.spotPriceUsdPerHour).toBe('0.4');
    expect(byId.get('runpod:secure-7x-NVIDIA_GeForce_RTX_4090')?.spotPriceUsdPerHour).toBe('2.87');
    expect(String(0.41 * 7)).not.toBe('2.87');
    // one query still: the spot prices ride on the specs query
    expect(graphqlCalls()).toHaveLength(1);
    expect((graphqlCalls()[0]!.body as { query: string }).query).toContain('gpuTypes { id secureSpotPrice communitySpotPrice ');
    fake.state.catalog.find((g) => g.id === 'NVIDIA L4')!.spotPrice.secure = null;
    expect((await provider.getOffer('secure-2x-NVIDIA_L4'))?.spotPriceUsdPerHour).toBeNull();
    expect((await provider.getOffer('community-3x-NVIDIA_GeForce_RTX_4090'))?.spotPriceUsdPerHour).toBe('0.6');
  });

  it('creates a spot pod by GraphQL podRentInterruptable at the bid per GPU, rounded down, marked as spot in its env', async () => {
    const machine = await provider.createSpotMachine(bidOn('community-3x-NVIDIA_GeForce_RTX_4090', '1'));
    const [sent] = mutations();
    expect(sent!.headers.authorization).toBe(`Bearer ${fake.apiKey}`);
    expect((sent!.body as { query: string }).query).toContain('podRentInterruptable(input: $input)');
    expect((sent!.body as { variables: unknown }).variables).toEqual({
      input: {
        bidPerGpu: 0.33333333,
        cloudType: 'COMMUNITY',
        gpuTypeId: 'NVIDIA GeForce RTX 4090',
        gpuCount: 3,
        name: 'ins_spot1',
        imageName: RUNPOD_DEFAULTS.defaultImage,
        containerDiskInGb: 50,
        volumeInGb: 0,
        ports: '22/tcp',
        env: [
          { key: 'CP_INSTANCE_ID', value: 'ins_spot1' },
          { key: 'PUBLIC_KEY', value: SSH_KEY },
          { key: 'CP_SPOT_BID_PER_GPU', value: '0.33333333' },
        ],
        startSsh: true,
      },
    });
    expect(machine).toEqual({ machineId: expect.any(String), label: 'ins_spot1', status: 'provisioning', sshHost: null, sshPort: null, priceUsdPerHour: '0.99999999' });
    expect(fake.state.requests.filter((r) => r.path === '/v2/pods' && r.method === 'POST')).toHaveLength(0);
    // read back on v2 like any pod, found by its name
    fake.knobs.runPods();
    expect(await provider.getMachine(machine.machineId)).toMatchObject({ label: 'ins_spot1', status: 'running', priceUsdPerHour: '0.99999999' });
    expect((await provider.listMachines()).map((m) => m.label)).toEqual(['ins_spot1']);
  });

  it('carries the create options into the mutation: image, registry, command, env, ports, keys, network volume', async () => {
    const volume = await provider.createVolume({ label: 'vol_spot1', name: 'data', sizeGb: 50, region: 'EU-RO-1' });
    await provider.createSpotMachine(
      bidOn('secure-1x-NVIDIA_GeForce_RTX_4090', '0.5', 'ins_spot2', {
        image: 'ghcr.io/acme/trainer:2',
        registryAuth: { username: 'robot', password: 'tok en' },
        command: 'python train.py',
        env: { EPOCHS: '3' },
        ports: [8888],
        volumeIds: [volume.volumeId],
      }),
    );
    const [registry] = [...fake.state.registries.values()];
    const input = ((mutations()[0]!.body as { variables: { input: Record<string, unknown> } }).variables.input);
    expect(input).toMatchObject({
      imageName: 'ghcr.io/acme/trainer:2',
      containerRegistryAuthId: registry!.id,
      dockerArgs: 'python train.py',
      ports: '22/tcp,8888/tcp',
      networkVolumeId: volume.volumeId,
      dataCenterId: 'EU-RO-1',
      volumeMountPath: '/workspace',
      cloudType: 'SECURE',
    });
    expect(input.env).toContainEqual({ key: 'EPOCHS', value: '3' });
    const [pod] = [...fake.state.pods.values()];
    expect(pod).toMatchObject({ registry: registry!.id, args: 'python train.py', dataCenterId: 'EU-RO-1', mounts: { network: [{ volumeId: volume.volumeId, path: '/workspace' }] } });
  });

  it('reads a refusal in GraphQL errors (HTTP 200) as rejected, frees the registry credential, and makes nothing', async () => {
    const failure = await failureOf(
      provider.createSpotMachine(bidOn('community-1x-NVIDIA_GeForce_RTX_4090', '0.19', 'ins_spot3', { registryAuth: { username: 'u', password: 'p' } })),
    );
    expect(failure.kind).toBe('rejected');
    expect(failure.message).toMatch(/below the current minimum bid of \$0.2/);
    expect(fake.state.pods.size).toBe(0);
    expect(fake.state.registries.size).toBe(0);
    fake.state.catalog.find((g) => g.id === 'NVIDIA GeForce RTX 4090')!.freeCount.community = 0;
    expect((await failureOf(provider.createSpotMachine(bidOn('community-1x-NVIDIA_GeForce_RTX_4090', '5')))).message).toMatch(/no longer any instances/);
  });

  it('never re-sends the mutation after a 5xx: its outcome is unknown (ambiguous)', async () => {
    fake.knobs.failNext(1, 503, { surface: 'graphql' });
    const failure = await failureOf(provider.createSpotMachine(bidOn('community-1x-NVIDIA_GeForce_RTX_4090', '0.5')));
    expect(failure.kind).toBe('ambiguous');
    expect(mutations()).toHaveLength(1);
    fake.knobs.failNext(1, 429, { surface: 'graphql', retryAfter: '0' });
    await provider.createSpotMachine(bidOn('community-1x-NVIDIA_GeForce_RTX_4090', '0.5'));
    expect(mutations()).toHaveLength(3);
  });

  it('refuses a bid that is not a decimal without calling RunPod', async () => {
    for (const bid of ['-1', '1e2', 'cheap']) {
      expect((await failureOf(provider.createSpotMachine(bidOn('community-1x-NVIDIA_GeForce_RTX_4090', bid)))).kind).toBe('rejected');
    }
    expect(fake.state.requests).toHaveLength(0);
  });

  it('reads an interrupted spot pod as preempted, and a stopped on-demand pod as stopped', async () => {
    const cheap = await provider.createSpotMachine(bidOn('community-1x-NVIDIA_GeForce_RTX_4090', '0.25', 'ins_spot4'));
    const dear = await provider.createSpotMachine(bidOn('community-1x-NVIDIA_GeForce_RTX_4090', '0.4', 'ins_spot5'));
    const onDemand = await provider.createMachine(machineRequest({ offerId: 'community-1x-NVIDIA_GeForce_RTX_4090', label: 'ins_demand1' }));
    fake.knobs.runPods();
    fake.knobs.setSpotPrice('NVIDIA GeForce RTX 4090', 'COMMUNITY', 0.3);
    expect(fake.state.pods.get(cheap.machineId)).toMatchObject({ status: 'EXITED', cost: 0, runtime: null });
    expect((await provider.getMachine(cheap.machineId))?.status).toBe('preempted');
    expect((await provider.getMachine(dear.machineId))?.status).toBe('running');
    await fetch(`${fake.url}/v2/pods/${onDemand.machineId}/action`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fake.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'stop' }),
    });
    fake.knobs.interrupt(dear.machineId);
    const statuses = Object.fromEntries((await provider.listMachines()).map((m) => [m.label, m.status]));
    expect(statuses).toEqual({ ins_spot4: 'preempted', ins_spot5: 'preempted', ins_demand1: 'stopped' });
    await provider.terminateMachine(cheap.machineId);
    expect(await provider.getMachine(cheap.machineId)).toBeNull();
  });

  it('is what the fake refuses in the input object, as GraphQL validation does', async () => {
    const response = await fetch(`${fake.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fake.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        query: 'mutation Spot($input: PodRentInterruptableInput!) { podRentInterruptable(input: $input) { id } }',
        variables: { input: { gpuTypeId: 'NVIDIA GeForce RTX 4090', bidPerGpu: 1, interruptible: true } },
      }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: null, errors: [{ message: 'Field "interruptible" is not defined by type "PodRentInterruptableInput".' }] });
    expect(fake.state.pods.size).toBe(0);
  });
});
