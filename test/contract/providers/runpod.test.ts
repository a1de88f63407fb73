import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRunpodProvider, RUNPOD_DEFAULTS, runpodModule, type RunpodProviderConfig } from '../../../adapters/providers/runpod/index.ts';
import { isRebootable, type Provider, type Rebootable } from '../../../core/ports/providers.ts';
import { startFakeRunpod, type FakeRunpod } from '../../fakes/runpod/server.ts';
import { providerContract, failureOf, machineRequest } from '../provider-contract.ts';
import { volumeHostContract } from '../volume-host-contract.ts';

const providerFor = (fake: FakeRunpod, overrides: Partial<RunpodProviderConfig> = {}): Provider & Rebootable =>
  createRunpodProvider({
    apiKey: fake.apiKey,
    baseUrl: fake.url,
    timeoutMs: 2_000,
    retries: 2,
    backoffBaseMs: 5,
    maxRetryAfterMs: 3_000,
    ...overrides,
  });

/** What the fake pod kept, in the request's terms: PUBLIC_KEY holds one key a line, ports read "P/tcp". */
const echoedBy = (fake: FakeRunpod) => async (machineId: string) => {
  const pod = fake.state.pods.get(machineId)!;
  return {
    image: pod.image,
    registryUsername: pod.registry ? fake.state.registries.get(pod.registry)!.username : null,
    command: pod.args,
    env: pod.env,
    ports: pod.ports.map((port) => Number(port.split('/')[0])),
    sshPublicKeys: pod.env.PUBLIC_KEY?.split('\n') ?? [],
    volumeIds: ((pod.mounts as { network?: { volumeId: string }[] }).network ?? []).map((mount) => mount.volumeId),
  };
};

providerContract('runpod', async () => {
  const fake = await startFakeRunpod();
  const provider = createRunpodProvider({ apiKey: fake.apiKey, baseUrl: fake.url, timeoutMs: 2_000, retries: 2, backoffBaseMs: 5 });
  return {
    provider,
    close: () => fake.close(),
    echoed: echoedBy(fake),
    // network volumes attach to Secure Cloud pods only
    offerForOptions: (offers) => offers.find((o) => o.attributes.cloud === 'SECURE')!,
    volumeFor: async (offer) => {
      const dataCenter = fake.state.catalog.find((g) => g.id === offer.attributes.gpu_type_id)!.dataCenterIds[0]!;
      return (await provider.createVolume({ label: 'vol_contract', name: 'contract', sizeGb: 10, region: dataCenter })).volumeId;
    },
  };
});

volumeHostContract('runpod', async () => {
  const fake = await startFakeRunpod();
  const provider = createRunpodProvider({ apiKey: fake.apiKey, baseUrl: fake.url, timeoutMs: 2_000, retries: 0, volumePriceUsdPerGbMonth: '0.0712' });
  return {
    provider,
    region: 'US-KS-2',
    priceUsdPerGbMonth: '0.0712',
    reportsInUse: false,
    attach: async (volumeId) =>
      (await provider.createMachine(machineRequest({ offerId: 'secure-1x-NVIDIA_GeForce_RTX_4090', label: 'ins_attach1', volumeIds: [volumeId] }))).machineId,
    upstreamLabelOf: async (volumeId) => fake.state.networkVolumes.get(volumeId)?.name ?? null,
    close: () => fake.close(),
  };
});

const SSH_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIRunpodWireTest wire@test';

describe('runpod adapter against the fake', () => {
  let fake: FakeRunpod;
  let provider: Provider & Rebootable;

  beforeEach(async () => {
    fake = await startFakeRunpod();
    provider = providerFor(fake);
  });
  afterEach(async () => {
    await fake.close();
  });

  const requestsTo = (method: string, path: string) => fake.state.requests.filter((r) => r.method === method && r.path === path);
  const create = (offerId: string, label: string, extra: { image?: string | null; sshPublicKey?: string | null } = {}) =>
    provider.createMachine(machineRequest({ offerId, label, sshPublicKeys: extra.sshPublicKey ? [extra.sshPublicKey] : [], image: extra.image ?? null }));

  describe('offers', () => {
    it('prices the whole machine as the per-GPU price times the count, in exact decimal', async () => {
      const byId = new Map((await provider.listOffers()).map((o) => [o.id, o]));
      expect(byId.get('runpod:secure-1x-NVIDIA_GeForce_RTX_4090')?.priceUsdPerHour).toBe('0.69');
      // In floating point 0.69 * 5 is 3.4499999999999997 and 0.34 * 5 is 1.7000000000000002;
      // the adapter multiplies the digits instead.
      expect(String(0.69 * 5)).not.toBe('3.45');
      expect(byId.get('runpod:secure-5x-NVIDIA_GeForce_RTX_4090')?.priceUsdPerHour).toBe('3.45');
      expect(byId.get('runpod:community-5x-NVIDIA_GeForce_RTX_4090')?.priceUsdPerHour).toBe('1.7');
      expect(byId.get('runpod:secure-3x-NVIDIA_GeForce_RTX_3090')?.priceUsdPerHour).toBe('1.38');
      expect(byId.get('runpod:secure-8x-NVIDIA_H100_80GB_HBM3')?.priceUsdPerHour).toBe('21.52');
      expect(byId.get('runpod:community-3x-NVIDIA_H100_80GB_HBM3')?.priceUsdPerHour).toBe('7.0399999998');
      expect(byId.get('runpod:community-3x-Tesla_V100-SXM2-32GB')?.priceUsdPerHour).toBe('1.0399999998');
    });

    it('reports VRAM per GPU in GB, whatever the count', async () => {
      const offers = await provider.listOffers();
      const h200 = offers.find((o) => o.id === 'runpod:secure-8x-NVIDIA_H200')!;
      expect(h200).toMatchObject({ gpuCount: 8, vramGb: 141, gpuType: 'H200', gpuModel: 'H200 SXM' });
      expect(offers.find((o) => o.id === 'runpod:secure-2x-AMD_Instinct_MI300X_OAM')).toMatchObject({ vramGb: 192, gpuType: 'MI300X' });
      expect(offers.find((o) => o.id === 'runpod:secure-1x-NVIDIA_RTX_6000_Ada_Generation')?.gpuType).toBe('RTX6000ADA');
    });

    it('offers every GPU type x count x cloud up to the largest machine of that cloud, and no more', async () => {
      const offers = await provider.listOffers();
      const expected = fake.state.catalog.reduce(
        (sum, g) => sum + (g.clouds.secure ? g.maxCount.secure : 0) + (g.clouds.community ? g.maxCount.community : 0),
        0,
      );
      expect(offers).toHaveLength(expected);
      const rtx5090 = offers.filter((o) => o.attributes.gpu_type_id === 'NVIDIA GeForce RTX 5090').map((o) => o.id);
      expect(rtx5090.sort()).toEqual(
        ['community-1x', 'community-2x', 'secure-1x', 'secure-2x', 'secure-3x', 'secure-4x'].map((p) => `runpod:${p}-NVIDIA_GeForce_RTX_5090`),
      );
      // RunPod quotes a community price for the A40, but the type is not on community cloud.
      expect(offers.some((o) => o.id.startsWith('runpod:community-') && o.attributes.gpu_type_id === 'NVIDIA A40')).toBe(false);
    });

    it('takes machine size and stock per count from GraphQL, and reports none for a configuration out of stock', async () => {
      fake.state.catalog.find((g) => g.id === 'NVIDIA GeForce RTX 4090')!.freeCount.secure = 2;
      const byId = new Map((await provider.listOffers()).map((o) => [o.id, o]));
      expect(byId.get('runpod:secure-4x-NVIDIA_A100_80GB_PCIe')).toMatchObject({
        cpus: 32,
        ramGb: 468,
        available: 1,
        attributes: { cloud: 'SECURE', gpu_type_id: 'NVIDIA A100 80GB PCIe', manufacturer: 'NVIDIA', stock: 'MEDIUM' },
      });
      expect(byId.get('runpod:secure-1x-NVIDIA_B200')).toMatchObject({ available: 0, cpus: 0, ramGb: 0, attributes: { stock: 'NONE' } });
      expect(byId.get('runpod:secure-2x-NVIDIA_GeForce_RTX_4090')?.available).toBe(1);
      expect(byId.get('runpod:secure-3x-NVIDIA_GeForce_RTX_4090')).toMatchObject({ available: 0, cpus: 0 });
      expect(byId.get('runpod:community-1x-AMD_Instinct_MI300X_OAM')).toBeUndefined();
    });

    it('declares the extra filter keys its offers carry', async () => {
      expect(provider.extraFilterKeys).toEqual(['cloud', 'gpu_type_id', 'manufacturer', 'stock']);
      for (const offer of await provider.listOffers()) {
        expect(Object.keys(offer.attributes).sort()).toEqual([...provider.extraFilterKeys].sort());
      }
    });

    it('reads the v2 catalog once and asks GraphQL for every count in one aliased query', async () => {
      await provider.listOffers();
      expect(requestsTo('GET', '/v2/catalog/gpus')).toHaveLength(1);
      const graphql = requestsTo('POST', '/graphql');
      expect(graphql).toHaveLength(1);
      expect(graphql[0]!.headers.authorization).toBe(`Bearer ${fake.apiKey}`);
      const query = (graphql[0]!.body as { query: string }).query;
      expect(query).toContain('s8: lowestPrice(input: {gpuCount: 8, secureCloud: true}) { minVcpu minMemory stockStatus }');
      expect(query).toContain('c1: lowestPrice(input: {gpuCount: 1, secureCloud: false})');
      expect(query).not.toContain('s9:');
      expect(fake.state.requests.every((r) => r.headers.authorization === `Bearer ${fake.apiKey}`)).toBe(true);
    });

    it('keeps offer ids stable across refreshes', async () => {
      const first = (await provider.listOffers()).map((o) => o.id);
      fake.state.catalog[0]!.price.secure = 0.99;
      const second = (await provider.listOffers()).map((o) => o.id);
      expect(second).toEqual(first);
      expect(first).toContain('runpod:secure-2x-NVIDIA_A100-SXM4-80GB');
    });

    it('checks one offer live on the v2 catalog and GraphQL, with the current price', async () => {
      fake.state.catalog.find((g) => g.id === 'NVIDIA GeForce RTX 4090')!.price.secure = 0.79;
      const offer = await provider.getOffer('secure-2x-NVIDIA_GeForce_RTX_4090');
      expect(offer).toMatchObject({ id: 'runpod:secure-2x-NVIDIA_GeForce_RTX_4090', priceUsdPerHour: '1.58', cpus: 12, ramGb: 82, available: 1 });
      expect(requestsTo('GET', '/v2/catalog/gpus/NVIDIA%20GeForce%20RTX%204090')).toHaveLength(1);
      const graphql = requestsTo('POST', '/graphql')[0]!.body as { variables: unknown };
      expect(graphql.variables).toEqual({ id: 'NVIDIA GeForce RTX 4090', lowest: { gpuCount: 2, secureCloud: true } });
    });

    it('answers null for an unknown type, a count above the largest machine, a cloud not offered, or a foreign id', async () => {
      expect(await provider.getOffer('secure-1x-NVIDIA_Imaginary_X1')).toBeNull();
      expect(await provider.getOffer('secure-9x-NVIDIA_GeForce_RTX_4090')).toBeNull();
      expect(await provider.getOffer('community-1x-NVIDIA_A40')).toBeNull();
      const before = fake.state.requests.length;
      expect(await provider.getOffer('123456')).toBeNull();
      expect(await provider.getOffer('secure-0x-NVIDIA_A40')).toBeNull();
      expect(fake.state.requests.length).toBe(before);
    });
  });

  describe('GraphQL answers HTTP 200 with errors', () => {
    it('fails the offer refresh as unavailable, with the GraphQL message, without retrying', async () => {
      fake.knobs.graphqlErrorsNext(1, 'Something went wrong. Please try again later.');
      const failure = await failureOf(provider.listOffers());
      expect(failure.kind).toBe('unavailable');
      expect(failure.message).toContain('Something went wrong');
      expect(requestsTo('POST', '/graphql')).toHaveLength(1);
      expect((await provider.listOffers()).length).toBeGreaterThan(0);
    });

    it('is what the fake does for a query it cannot answer', async () => {
      const response = await fetch(`${fake.url}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fake.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ gpuTypes { id bogusField } }' }),
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ data: null, errors: [{ message: 'Cannot query field "bogusField" on type "GpuType".' }] });
    });
  });

  describe('create', () => {
    it('sends our label as the pod name and in an env var, with the offer decoded into gpu, count and cloud', async () => {
      const machine = await create('community-2x-NVIDIA_GeForce_RTX_3090', 'ins_wire1', { sshPublicKey: SSH_KEY });
      const [sent] = requestsTo('POST', '/v2/pods');
      expect(sent!.headers.authorization).toBe(`Bearer ${fake.apiKey}`);
      expect(sent!.headers['content-type']).toBe('application/json');
      expect(sent!.body).toEqual({
        name: 'ins_wire1',
        image: RUNPOD_DEFAULTS.defaultImage,
        gpu: { id: 'NVIDIA GeForce RTX 3090', count: 2 },
        cloud: 'COMMUNITY',
        disk: 50,
        ports: ['22/tcp'],
        env: { CP_INSTANCE_ID: 'ins_wire1', PUBLIC_KEY: SSH_KEY },
        startSsh: true,
      });
      expect(machine).toEqual({
        machineId: expect.any(String),
        label: 'ins_wire1',
        status: 'provisioning',
        sshHost: null,
        sshPort: null,
        priceUsdPerHour: '0.44',
      });
    });

    it('uses the requested image and leaves SSH out when no key is given', async () => {
      await create('secure-1x-NVIDIA_L4', 'ins_wire2', { image: 'ghcr.io/acme/trainer:1' });
      const body = requestsTo('POST', '/v2/pods')[0]!.body as Record<string, unknown>;
      expect(body).toMatchObject({ image: 'ghcr.io/acme/trainer:1', cloud: 'SECURE', gpu: { id: 'NVIDIA L4', count: 1 }, startSsh: false });
      expect(body.env).toEqual({ CP_INSTANCE_ID: 'ins_wire2' });
    });

    it('refuses an offer id it cannot read without calling RunPod', async () => {
      const failure = await failureOf(create('999999999', 'ins_x'));
      expect(failure.kind).toBe('rejected');
      expect(fake.state.requests).toHaveLength(0);
    });

    it('reports no capacity (400), insufficient balance (402) and an unknown GPU type as rejections', async () => {
      const noStock = await failureOf(create('secure-1x-NVIDIA_B200', 'ins_nostock'));
      expect(noStock).toMatchObject({ kind: 'rejected', status: 400 });
      expect(noStock.message).toContain('no longer any instances available');

      const unknown = await failureOf(create('secure-1x-NVIDIA_Imaginary_X1', 'ins_unknown'));
      expect(unknown).toMatchObject({ kind: 'rejected', status: 400 });

      fake.knobs.insufficientBalance = true;
      expect(await failureOf(create('secure-1x-NVIDIA_L4', 'ins_broke'))).toMatchObject({ kind: 'rejected', status: 402 });
      expect(fake.state.pods.size).toBe(0);
    });

    it('does not retry a create that got a 5xx, and calls it ambiguous: the pod may exist', async () => {
      fake.knobs.failNext(1, 503, { surface: 'rest', afterCommit: true });
      const failure = await failureOf(create('secure-1x-NVIDIA_L4', 'ins_lost503'));
      expect(failure).toMatchObject({ kind: 'ambiguous', status: 503 });
      expect(requestsTo('POST', '/v2/pods')).toHaveLength(1);
      // The reconciler's way out: the orphan carries our label.
      expect((await provider.listMachines()).map((m) => m.label)).toEqual(['ins_lost503']);
    });

    it('treats a gateway 502 with an HTML body as ambiguous too', async () => {
      fake.knobs.failNext(1, 502, { surface: 'rest' });
      const failure = await failureOf(create('secure-1x-NVIDIA_L4', 'ins_lost502'));
      expect(failure).toMatchObject({ kind: 'ambiguous', status: 502 });
      expect(failure.message).toContain('502 Bad Gateway');
      expect(requestsTo('POST', '/v2/pods')).toHaveLength(1);
    });

    it('calls a create that timed out ambiguous, and the pod it made is found by its label', async () => {
      provider = providerFor(fake, { timeoutMs: 300 });
      fake.knobs.createTimeout = true;
      const failure = await failureOf(create('secure-2x-NVIDIA_L40S', 'ins_timedout'));
      expect(failure.kind).toBe('ambiguous');
      expect(failure.message).toContain('no answer within 300 ms');
      expect(requestsTo('POST', '/v2/pods')).toHaveLength(1);
      const orphan = (await provider.listMachines()).find((m) => m.label === 'ins_timedout');
      expect(orphan?.status).toBe('provisioning');
    });

    it('waits out a 429 on create (the rate limiter ran nothing) and sends it once more', async () => {
      fake.knobs.failNext(1, 429, { surface: 'rest', retryAfter: '1' });
      const started = Date.now();
      const machine = await create('secure-1x-NVIDIA_L4', 'ins_after429');
      expect(Date.now() - started).toBeGreaterThanOrEqual(950);
      expect(machine.label).toBe('ins_after429');
      expect(requestsTo('POST', '/v2/pods')).toHaveLength(2);
      expect(fake.state.pods.size).toBe(1);
    });

    it('gives up at once on a 429 asking for longer than the cap, as a rejection', async () => {
      fake.knobs.failNext(1, 429, { surface: 'rest', retryAfter: '120' });
      const failure = await failureOf(create('secure-1x-NVIDIA_L4', 'ins_slow429'));
      expect(failure).toMatchObject({ kind: 'rejected', status: 429 });
      expect(requestsTo('POST', '/v2/pods')).toHaveLength(1);
      expect(fake.state.pods.size).toBe(0);
    });

    it('reports a wrong API key clearly, as a rejection', async () => {
      const failure = await failureOf(providerFor(fake, { apiKey: 'rpa_wrong' }).createMachine(machineRequest({
        offerId: 'secure-1x-NVIDIA_L4', label: 'ins_badkey', name: 'x',
      })));
      expect(failure).toMatchObject({ kind: 'rejected', status: 401 });
      expect(failure.message).toMatch(/did not accept the API key/);
    });
  });

  describe('machines', () => {
    it('maps a running pod: direct SSH, the whole-pod cost as an exact string, then stopped at cost 0', async () => {
      const created = await create('community-3x-Tesla_V100-SXM2-32GB', 'ins_run', { sshPublicKey: SSH_KEY });
      fake.knobs.runPods();
      const running = await provider.getMachine(created.machineId);
      const pod = fake.state.pods.get(created.machineId)!;
      expect(running).toEqual({
        machineId: created.machineId,
        label: 'ins_run',
        status: 'running',
        sshHost: pod.ssh.direct!.host,
        sshPort: pod.ssh.direct!.port,
        priceUsdPerHour: '1.0399999998',
      });
      expect(running!.sshHost).toMatch(/^203\.0\.113\.\d+$/);

      pod.status = 'EXITED';
      pod.cost = 0;
      pod.ssh.direct = null;
      pod.runtime = null;
      expect(await provider.getMachine(created.machineId)).toMatchObject({ status: 'stopped', priceUsdPerHour: '0', sshHost: null });
      pod.status = 'ERROR';
      expect((await provider.getMachine(created.machineId))?.status).toBe('failed');
    });

    it('lists only pods carrying one of our labels, reading the label from the name or the env', async () => {
      fake.state.seedPod({ name: 'my pod' });
      fake.state.seedPod({ name: 'ins_seeded' });
      fake.state.seedPod({ name: 'renamed by a person', env: { CP_INSTANCE_ID: 'ins_renamed' } });
      fake.state.seedPod({ name: 'ins_in_cluster', cluster: true });
      const labels = (await provider.listMachines()).map((m) => m.label).sort();
      expect(labels).toEqual(['ins_renamed', 'ins_seeded']);
      expect(requestsTo('GET', '/v2/pods')[0]!.query).toEqual({});
    });

    it('retries a read after 5xx answers, with backoff', async () => {
      fake.state.seedPod({ name: 'ins_retry' });
      fake.knobs.failNext(2, 503, { surface: 'rest' });
      expect((await provider.listMachines()).map((m) => m.label)).toEqual(['ins_retry']);
      expect(requestsTo('GET', '/v2/pods')).toHaveLength(3);
    });

    it('honours Retry-After on a 429 for a read', async () => {
      fake.knobs.failNext(1, 429, { surface: 'rest', retryAfter: '1' });
      const started = Date.now();
      await provider.listMachines();
      expect(Date.now() - started).toBeGreaterThanOrEqual(950);
      expect(requestsTo('GET', '/v2/pods')).toHaveLength(2);
    });

    it('fails fast when the real rate limit window asks for a longer wait than the cap', async () => {
      fake.knobs.minuteQuota = 1;
      await provider.listMachines();
      const failure = await failureOf(provider.listMachines());
      expect(failure).toMatchObject({ kind: 'unavailable', status: 429 });
      expect(requestsTo('GET', '/v2/pods')).toHaveLength(2);
    });

    it('gives up after the configured retries as unavailable', async () => {
      fake.knobs.failNext(5, 500, { surface: 'rest' });
      const failure = await failureOf(provider.listMachines());
      expect(failure).toMatchObject({ kind: 'unavailable', status: 500 });
      expect(requestsTo('GET', '/v2/pods')).toHaveLength(3);
    });

    it('reports a read that times out as unavailable, without retrying it', async () => {
      provider = providerFor(fake, { timeoutMs: 150 });
      fake.knobs.latencyMs = 400;
      const failure = await failureOf(provider.getMachine('abc123'));
      expect(failure.kind).toBe('unavailable');
      expect(failure.message).toContain('no answer within 150 ms');
      expect(fake.state.requests).toHaveLength(1);
    });

    it('reports a wrong API key on reads as unavailable with status 401', async () => {
      const failure = await failureOf(providerFor(fake, { apiKey: 'rpa_wrong' }).listOffers());
      expect(failure).toMatchObject({ kind: 'unavailable', status: 401 });
      expect(failure.message).toMatch(/did not accept the API key.*invalid or expired API key/);
    });

    it('reports an unreachable RunPod as unavailable', async () => {
      const closed = await startFakeRunpod();
      await closed.close();
      const failure = await failureOf(providerFor(closed, { retries: 1 }).listMachines());
      expect(failure).toMatchObject({ kind: 'unavailable', status: null });
    });
  });

  describe('terminate and restart', () => {
    it('terminates with DELETE, and counts an already-gone pod (404) as terminated', async () => {
      const created = await create('secure-1x-NVIDIA_L4', 'ins_term');
      await provider.terminateMachine(created.machineId);
      await provider.terminateMachine(created.machineId);
      await provider.terminateMachine('neverexisted');
      const deletes = fake.state.requests.filter((r) => r.method === 'DELETE');
      expect(deletes.map((r) => r.path)).toEqual([`/v2/pods/${created.machineId}`, `/v2/pods/${created.machineId}`, '/v2/pods/neverexisted']);
      expect(await provider.getMachine(created.machineId)).toBeNull();
    });

    it('retries a terminate after a 5xx (DELETE is idempotent)', async () => {
      const created = await create('secure-1x-NVIDIA_L4', 'ins_term5xx');
      fake.knobs.failNext(1, 503, { surface: 'rest', method: 'DELETE' });
      await provider.terminateMachine(created.machineId);
      expect(fake.state.pods.has(created.machineId)).toBe(false);
      expect(requestsTo('DELETE', `/v2/pods/${created.machineId}`)).toHaveLength(2);
    });

    it('reports a terminate RunPod refuses (a cluster member, 409) as rejected', async () => {
      const member = fake.state.seedPod({ name: 'ins_member', cluster: true });
      expect(await failureOf(provider.terminateMachine(member.id))).toMatchObject({ kind: 'rejected', status: 409 });
    });

    it('restarts a running pod through the v2 action endpoint', async () => {
      expect(isRebootable(provider)).toBe(true);
      const created = await create('secure-1x-NVIDIA_L4', 'ins_reboot');
      fake.knobs.runPods();
      await provider.rebootMachine(created.machineId);
      const [sent] = requestsTo('POST', `/v2/pods/${created.machineId}/action`);
      expect(sent!.body).toEqual({ action: 'restart' });
    });

    it('reports a restart of a pod that is not running (409) as rejected, and does not retry a restart on 5xx', async () => {
      const created = await create('secure-1x-NVIDIA_L4', 'ins_reboot409');
      expect(await failureOf(provider.rebootMachine(created.machineId))).toMatchObject({ kind: 'rejected', status: 409 });
      fake.knobs.runPods();
      fake.knobs.failNext(1, 503, { surface: 'rest' });
      expect(await failureOf(provider.rebootMachine(created.machineId))).toMatchObject({ kind: 'unavailable', status: 503 });
      expect(requestsTo('POST', `/v2/pods/${created.machineId}/action`)).toHaveLength(2);
    });
  });

  describe('create options and network volumes', () => {
    const runpod = () => provider as ReturnType<typeof createRunpodProvider>;
    const keys = ['ssh-ed25519 AAAAfirst a@b', 'ssh-rsa AAAAsecond c@d'];

    it('carries out image, registry auth, command, env, ports, several keys and one network volume', async () => {
      expect(provider.machineOptions).toEqual(['custom_image', 'registry_auth', 'command', 'env', 'ports', 'ssh_keys', 'volumes']);
      const volume = await runpod().createVolume({ label: 'vol_opts1', name: 'data', sizeGb: 50, region: 'EU-RO-1' });
      const machine = await provider.createMachine(
        machineRequest({
          offerId: 'secure-1x-NVIDIA_GeForce_RTX_4090',
          label: 'ins_opts1',
          image: 'ghcr.io/acme/trainer:2',
          registryAuth: { username: 'robot', password: 'tok en' },
          command: 'python train.py --epochs 3',
          env: { EPOCHS: '3', CP_INSTANCE_ID: 'ins_someone_else' },
          ports: [8888, 22],
          sshPublicKeys: keys,
          volumeIds: [volume.volumeId],
        }),
      );
      // the credential first (RunPod pulls a private image only with a stored one), named after our id
      const [registry] = [...fake.state.registries.values()];
      expect(registry).toMatchObject({ name: 'cp-ins_opts1', username: 'robot', password: 'tok en' });
      expect(requestsTo('GET', `/v2/network-volumes/${volume.volumeId}`)).toHaveLength(1);
      expect(requestsTo('POST', '/v2/pods')[0]!.body).toEqual({
        name: 'ins_opts1',
        image: 'ghcr.io/acme/trainer:2',
        gpu: { id: 'NVIDIA GeForce RTX 4090', count: 1 },
        cloud: 'SECURE',
        disk: 50,
        ports: ['22/tcp', '8888/tcp'],
        env: { EPOCHS: '3', CP_INSTANCE_ID: 'ins_opts1', PUBLIC_KEY: 'ssh-ed25519 AAAAfirst a@b\nssh-rsa AAAAsecond c@d' },
        startSsh: true,
        args: 'python train.py --epochs 3',
        registry: registry!.id,
        dataCenterIds: ['EU-RO-1'],
        mounts: { network: [{ volumeId: volume.volumeId, path: '/workspace' }] },
      });
      expect(fake.state.pods.get(machine.machineId)).toMatchObject({ dataCenterId: 'EU-RO-1', registry: registry!.id });

      // the pod's credential goes with the pod; the volume stays
      await provider.terminateMachine(machine.machineId);
      expect(fake.state.registries.size).toBe(0);
      expect(fake.state.networkVolumes.has(volume.volumeId)).toBe(true);
    });

    it('removes the credential again when RunPod refuses the pod, and keeps it after a lost answer', async () => {
      const request = (label: string) =>
        machineRequest({ offerId: 'secure-1x-NVIDIA_B200', label, image: 'ghcr.io/acme/x:1', registryAuth: { username: 'u', password: 'p' } });
      expect(await failureOf(provider.createMachine(request('ins_nostock')))).toMatchObject({ kind: 'rejected', status: 400 });
      expect(fake.state.registries.size).toBe(0);

      fake.knobs.failNext(1, 503, { surface: 'rest', afterCommit: true, method: 'POST', path: '/v2/pods' });
      const lost = await failureOf(
        provider.createMachine(machineRequest({ offerId: 'secure-1x-NVIDIA_L4', label: 'ins_lost', image: 'ghcr.io/acme/x:1', registryAuth: { username: 'u', password: 'p' } })),
      );
      expect(lost.kind).toBe('ambiguous');
      expect(fake.state.registries.size).toBe(1);
    });

    it('refuses what RunPod cannot do before making anything: a startup script, two volumes, a volume on Community Cloud', async () => {
      const volume = await runpod().createVolume({ label: 'vol_refuse', name: 'x', sizeGb: 10, region: 'EU-SE-1' });
      const cases: [string, Partial<Parameters<typeof machineRequest>[0]>, RegExp][] = [
        ['secure-1x-NVIDIA_L4', { startupScript: 'echo hi' }, /RunPod cannot carry out startup_script/],
        ['secure-1x-NVIDIA_L4', { volumeIds: [volume.volumeId, volume.volumeId + 'x'] }, /one network volume per pod/],
        ['community-1x-Tesla_V100-SXM2-32GB', { volumeIds: [volume.volumeId] }, /Secure Cloud pods only/],
        ['secure-1x-NVIDIA_L4', { env: { 'A-B': '1' } }, /not an environment variable name/],
      ];
      for (const [offerId, fields, reason] of cases) {
        const failure = await failureOf(provider.createMachine(machineRequest({ offerId, label: 'ins_no', ...fields })));
        expect(failure.kind).toBe('rejected');
        expect(failure.message).toMatch(reason);
      }
      expect(requestsTo('POST', '/v2/pods')).toHaveLength(0);
    });

    it('refuses a volume RunPod does not know, and a pod whose GPU is not in the volume\'s data center', async () => {
      const unknown = await failureOf(provider.createMachine(machineRequest({ offerId: 'secure-1x-NVIDIA_L4', label: 'ins_nov', volumeIds: ['nosuchvol'] })));
      expect(unknown).toMatchObject({ kind: 'rejected' });
      expect(unknown.message).toMatch(/no network volume nosuchvol/);
      expect(requestsTo('POST', '/v2/pods')).toHaveLength(0);

      // L4 is only in US-CA-2: pinned to the volume's EU-SE-1, there is no such machine
      const volume = await runpod().createVolume({ label: 'vol_far', name: 'far', sizeGb: 10, region: 'EU-SE-1' });
      const far = await failureOf(provider.createMachine(machineRequest({ offerId: 'secure-1x-NVIDIA_L4', label: 'ins_far', volumeIds: [volume.volumeId] })));
      expect(far).toMatchObject({ kind: 'rejected', status: 400 });
      expect(fake.state.pods.size).toBe(0);
    });

    it('makes network volumes with our label as the name, within RunPod\'s 10 to 4096 GB', async () => {
      const volume = await runpod().createVolume({ label: 'vol_size1', name: 'my data', sizeGb: 4096, region: 'US-TX-3' });
      expect(volume).toEqual({ volumeId: volume.volumeId, label: 'vol_size1', region: 'US-TX-3', sizeGb: 4096, status: 'available' });
      expect(requestsTo('POST', '/v2/network-volumes')[0]!.body).toEqual({ name: 'vol_size1', size: 4096, dataCenter: 'US-TX-3' });
      for (const sizeGb of [9, 4097]) {
        expect(await failureOf(runpod().createVolume({ label: 'vol_size2', name: 'x', sizeGb, region: 'US-TX-3' }))).toMatchObject({ kind: 'rejected', status: 422 });
      }
      expect(await failureOf(runpod().createVolume({ label: 'vol_size3', name: 'x', sizeGb: 10, region: 'OC-AU-1' }))).toMatchObject({ kind: 'rejected', status: 400 });
    });

    it('offers volumes in every listed data center at the configured price, and reports a lost create as ambiguous', async () => {
      const offers = await runpod().volumeOffers();
      expect(offers.map((o) => o.region)).toEqual(['US-KS-2', 'US-CA-2', 'US-TX-3', 'CA-MTL-1', 'EU-RO-1', 'EU-SE-1', 'EU-NL-1', 'EUR-IS-1', 'AP-JP-1']);
      expect(new Set(offers.map((o) => o.priceUsdPerGbMonth))).toEqual(new Set(['0.07']));

      fake.knobs.failNext(1, 503, { surface: 'rest', method: 'POST' });
      expect(await failureOf(runpod().createVolume({ label: 'vol_lost', name: 'x', sizeGb: 10, region: 'US-TX-3' }))).toMatchObject({ kind: 'ambiguous' });
      fake.knobs.failNext(5, 503, { surface: 'rest', method: 'DELETE' });
      expect(await failureOf(runpod().deleteVolume('anything'))).toMatchObject({ kind: 'unavailable' });
    });

    it('takes its volume price from RUNPOD_VOLUME_USD_PER_GB_MONTH', () => {
      expect(runpodModule.fromEnv({ RUNPOD_API_KEY: 'k' })).toEqual({ apiKey: 'k' }); // the adapter's default, 0.07
      expect(runpodModule.fromEnv({ RUNPOD_API_KEY: 'k', RUNPOD_VOLUME_USD_PER_GB_MONTH: '0.05' })).toMatchObject({ volumePriceUsdPerGbMonth: '0.05' });
      expect(() => runpodModule.fromEnv({ RUNPOD_API_KEY: 'k', RUNPOD_VOLUME_USD_PER_GB_MONTH: '$0.07' })).toThrow(/^RUNPOD_VOLUME_USD_PER_GB_MONTH: /);
      expect(() => createRunpodProvider({ apiKey: 'k', volumePriceUsdPerGbMonth: 'cheap' })).toThrow(/volumePriceUsdPerGbMonth/);
    });
  });
});
