import { afterEach, describe, expect, it } from 'vitest';
import { isRebootable, type CreateMachineRequest, type Provider } from '../../../core/ports/providers.ts';
import { createLambdaProvider, lambdaModule, type LambdaProviderConfig } from '../../../adapters/providers/lambda/index.ts';
import { volumeHostContract } from '../volume-host-contract.ts';
import { startFakeLambda, type FakeInstance, type FakeLambda } from '../../fakes/lambda/server.ts';
import { providerContract, failureOf, machineRequest } from '../provider-contract.ts';

const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOurTestKeyMaterial0000000000000000000 alice@laptop';

/** Fast settings: no pacing, tiny backoff; each test overrides what it exercises. */
const fastConfig = (fake: FakeLambda, overrides: Partial<LambdaProviderConfig> = {}): LambdaProviderConfig => ({
  apiKey: fake.state.apiKey,
  baseUrl: fake.url,
  timeoutMs: 2_000,
  retries: 3,
  retryBaseMs: 1,
  retryMaxMs: 5,
  minIntervalMs: 0,
  launchIntervalMs: 0,
  ...overrides,
});

/** The keys a launch installs: the named launch key, then those cloud-init adds (one JSON string a line). */
const keysOf = (fake: FakeLambda, instance: FakeInstance): string[] => [
  ...instance.sshKeyNames.map((name) => [...fake.state.sshKeys.values()].find((k) => k.name === name)!.public_key),
  ...[...(instance.userData ?? '').matchAll(/^ {2}- (".*")$/gm)].map((match) => JSON.parse(match[1]!) as string),
];

providerContract('lambda', async () => {
  const fake = await startFakeLambda();
  const provider = createLambdaProvider(fastConfig(fake));
  return {
    provider,
    close: fake.close,
    echoed: async (machineId) => {
      const instance = fake.state.instances.get(machineId)!;
      const byName = new Map([...fake.state.fileSystems.values()].map((fs) => [fs.name, fs.id]));
      return { sshPublicKeys: keysOf(fake, instance), volumeIds: instance.fileSystemNames.map((name) => byName.get(name)!) };
    },
    volumeFor: async (offer) =>
      (await provider.createVolume({ label: 'vol_contract', name: 'contract', sizeGb: 10, region: offer.region! })).volumeId,
  };
});

volumeHostContract('lambda', async () => {
  const fake = await startFakeLambda();
  const provider = createLambdaProvider(fastConfig(fake, { volumePriceUsdPerGbMonth: '0.2' }));
  return {
    provider,
    region: 'us-east-1',
    priceUsdPerGbMonth: '0.2',
    reportsInUse: true,
    attach: async (volumeId) =>
      (await provider.createMachine(machineRequest({ offerId: 'gpu_1x_a10@us-east-1', label: 'ins_attach1', sshPublicKeys: [KEY], volumeIds: [volumeId] })))
        .machineId,
    // the filesystem's name is all Lambda keeps: our label with its underscore as a hyphen, and the size
    upstreamLabelOf: async (volumeId) => {
      const name = fake.state.fileSystems.get(volumeId)?.name;
      return name ? name.replace('-', '_') : null;
    },
    close: fake.close,
  };
});

describe('lambda adapter', () => {
  let fake: FakeLambda;
  const open = async (overrides: Partial<LambdaProviderConfig> = {}): Promise<Provider> => {
    fake = await startFakeLambda();
    return createLambdaProvider(fastConfig(fake, overrides));
  };
  afterEach(async () => {
    await fake?.close();
  });

  const create = (provider: Provider, label: string, offerId = 'gpu_1x_a10@us-east-1', sshPublicKey: string | null = KEY) =>
    provider.createMachine(machineRequest({ offerId, label, name: 'my training box', sshPublicKeys: sshPublicKey ? [sshPublicKey] : [] }));

  describe('offers', () => {
    it('reads the map keyed by type name into one offer per type and region with capacity', async () => {
      const provider = await open();
      const offers = await provider.listOffers();
      // 14 types; two without capacity; the others in 1-3 regions each
      expect(offers).toHaveLength(19);
      expect(offers.some((o) => o.attributes.instance_type === 'gpu_4x_a6000')).toBe(false);
      expect(offers.filter((o) => o.attributes.instance_type === 'gpu_1x_a10').map((o) => o.region).sort()).toEqual([
        'europe-central-1',
        'us-east-1',
        'us-west-1',
      ]);
    });

    it('normalises units: integer cents for the whole machine, VRAM parsed from the description', async () => {
      const provider = await open();
      const offers = await provider.listOffers();
      const h100 = offers.find((o) => o.id === 'lambda:gpu_8x_h100_sxm5@europe-central-1')!;
      expect(h100).toMatchObject({
        provider: 'lambda',
        gpuType: 'H100',
        gpuModel: 'H100 (80 GB SXM5)',
        gpuCount: 8,
        vramGb: 80,
        priceUsdPerHour: '23.92', // 2392 cents for all 8 GPUs, not per GPU
        priceVerified: true,
        cpus: 208,
        ramGb: 1800,
        diskGb: 22528,
        country: 'DE',
        region: 'europe-central-1',
        available: 1,
        attributes: { instance_type: 'gpu_8x_h100_sxm5', region: 'europe-central-1', gpu_description: 'H100 (80 GB SXM5)' },
      });
      const byId = (id: string) => offers.find((o) => o.id === `lambda:${id}`)!;
      expect(byId('gpu_1x_rtx6000@asia-south-1')).toMatchObject({ priceUsdPerHour: '0.50', vramGb: 24, country: 'IN' });
      expect(byId('gpu_1x_a100_sxm4@us-east-1')).toMatchObject({ priceUsdPerHour: '1.29', vramGb: 40, gpuType: 'A100' });
      expect(byId('gpu_8x_v100@us-east-1')).toMatchObject({ gpuType: 'V100', vramGb: 16, gpuCount: 8, priceUsdPerHour: '4.40' });
      expect(byId('gpu_8x_b200_sxm6@us-west-2')).toMatchObject({ gpuType: 'B200', vramGb: 180, priceUsdPerHour: '47.92' });
      expect(byId('gpu_1x_gh200@us-west-1')).toMatchObject({ gpuType: 'GH200', vramGb: 96, country: 'US' });
      expect(byId('gpu_2x_a6000@me-west-1')).toMatchObject({ gpuType: 'A6000', gpuCount: 2, country: 'IL', priceUsdPerHour: '1.60' });
      expect(provider.extraFilterKeys).toEqual(['instance_type', 'region', 'gpu_description']);
    });

    it('skips a type whose description names no memory, without failing the whole list', async () => {
      const provider = await open();
      fake.state.catalog.set('cpu_4x_general', {
        type: {
          name: 'cpu_4x_general',
          description: '4x vCPU general purpose',
          gpu_description: 'none',
          price_cents_per_hour: 20,
          specs: { vcpus: 4, memory_gib: 16, storage_gib: 100, gpus: 0 },
        },
        capacity: ['us-east-1'],
      });
      const offers = await provider.listOffers();
      expect(offers).toHaveLength(19);
      expect(offers.some((o) => String(o.attributes.instance_type).startsWith('cpu_'))).toBe(false);
    });

    it('checks one offer live: null once its region loses capacity, and no request for a malformed id', async () => {
      const provider = await open();
      expect((await provider.getOffer('gpu_1x_h100_pcie@us-south-1'))?.priceUsdPerHour).toBe('2.49');
      fake.state.setCapacity('gpu_1x_h100_pcie', ['us-west-1']);
      expect(await provider.getOffer('gpu_1x_h100_pcie@us-south-1')).toBeNull();
      expect(await provider.getOffer('gpu_1x_h100_pcie@us-west-1')).not.toBeNull();
      const before = fake.state.requests.length;
      expect(await provider.getOffer('not an offer')).toBeNull();
      expect(fake.state.requests.length).toBe(before);
    });
  });

  describe('create', () => {
    it('registers the caller key under our id, then launches with our id as name and cp-id tag', async () => {
      const provider = await open();
      const machine = await create(provider, 'ins_wire01');

      const [keyPost] = fake.state.requestsTo('POST', '/ssh-keys');
      expect(keyPost!.body).toEqual({ name: 'cp-ins_wire01', public_key: KEY });

      const launches = fake.state.requestsTo('POST', '/instance-operations/launch');
      expect(launches).toHaveLength(1);
      const launch = launches[0]!;
      expect(launch.headers.authorization).toBe(`Bearer ${fake.state.apiKey}`);
      expect(launch.headers['content-type']).toBe('application/json');
      expect(launch.body).toEqual({
        region_name: 'us-east-1',
        instance_type_name: 'gpu_1x_a10',
        ssh_key_names: ['cp-ins_wire01'],
        name: 'ins_wire01',
        tags: [
          { key: 'cp-id', value: 'ins_wire01' },
          { key: 'cp-name', value: 'my training box' },
        ],
      });

      const stored = fake.state.instances.get(machine.machineId)!;
      expect(stored.name).toBe('ins_wire01');
      expect(stored.tags).toContainEqual({ key: 'cp-id', value: 'ins_wire01' });
      expect(machine).toMatchObject({ label: 'ins_wire01', status: 'provisioning', sshHost: null, priceUsdPerHour: '0.75' });
    });

    it('carries out SSH keys and filesystems only, refusing the rest before anything is made', async () => {
      const provider = await open();
      expect(provider.machineOptions).toEqual(['ssh_keys', 'volumes']);
      const cases: [Partial<CreateMachineRequest>, RegExp][] = [
        [{ image: 'nvidia/cuda:12.8.1-runtime-ubuntu24.04' }, /Lambda cannot carry out custom_image/],
        [{ env: { A: '1' }, ports: [8888] }, /Lambda cannot carry out env, ports/],
        [{ command: 'serve', startupScript: 'echo', registryAuth: { username: 'u', password: 'p' } }, /registry_auth, command, startup_script/],
      ];
      for (const [fields, reason] of cases) {
        const failure = await failureOf(provider.createMachine(machineRequest({ offerId: 'gpu_1x_a10@us-east-1', label: 'ins_no1', sshPublicKeys: [KEY], ...fields })));
        expect(failure.kind).toBe('rejected');
        expect(failure.message).toMatch(reason);
      }
      expect(fake.state.requests).toHaveLength(0);
    });

    it('launches with the first key by name and adds the others through cloud-init (Lambda takes exactly one key name)', async () => {
      const provider = await open();
      const second = 'ecdsa-sha2-nistp256 AAAAE2VjZHNhSecond bob "quoted" #x';
      const third = 'ssh-rsa AAAAB3NzaThird carol@desk';
      const machine = await provider.createMachine(
        machineRequest({ offerId: 'gpu_1x_a10@us-east-1', label: 'ins_keys1', name: '', sshPublicKeys: [KEY, second, ` ${third}\n`] }),
      );
      const body = fake.state.requestsTo('POST', '/instance-operations/launch')[0]!.body as Record<string, unknown>;
      expect(body.ssh_key_names).toEqual(['cp-ins_keys1']);
      expect(body.user_data).toBe(`#cloud-config\nssh_authorized_keys:\n  - ${JSON.stringify(second)}\n  - ${JSON.stringify(third)}\n`);
      // an empty human name adds no cp-name tag, and no image is ever sent
      expect(body.tags).toEqual([{ key: 'cp-id', value: 'ins_keys1' }]);
      expect(body).not.toHaveProperty('image');
      expect(fake.state.instances.get(machine.machineId)!.userData).toBe(body.user_data);
      expect([...fake.state.sshKeys.values()].map((k) => k.public_key)).toEqual([KEY]);

      // one key: no user data at all
      await create(provider, 'ins_keys2');
      expect(fake.state.requestsTo('POST', '/instance-operations/launch')[1]!.body).not.toHaveProperty('user_data');
    });

    it('reuses a key with the same material (whatever its comment) and never deletes it', async () => {
      const provider = await open();
      fake.state.sshKeys.set('k1', { id: 'k1', name: 'alice', public_key: KEY.replace('alice@laptop', 'other comment') });
      const machine = await create(provider, 'ins_reuse1');
      expect(fake.state.requestsTo('POST', '/ssh-keys')).toHaveLength(0);
      expect(fake.state.instances.get(machine.machineId)!.sshKeyNames).toEqual(['alice']);
      await provider.terminateMachine(machine.machineId);
      expect(fake.state.sshKeys.has('k1')).toBe(true);
      expect(fake.state.requestsTo('DELETE', '/ssh-keys/k1')).toHaveLength(0);
    });

    it('deletes the key it registered once the last instance using it is terminated', async () => {
      const provider = await open();
      const first = await create(provider, 'ins_share1');
      const second = await create(provider, 'ins_share2'); // same key: reuses cp-ins_share1
      expect(fake.state.instances.get(second.machineId)!.sshKeyNames).toEqual(['cp-ins_share1']);
      expect(fake.state.sshKeys.size).toBe(1);

      await provider.terminateMachine(first.machineId);
      expect(fake.state.sshKeys.size).toBe(1); // still used by the second machine
      await provider.terminateMachine(second.machineId);
      expect(fake.state.sshKeys.size).toBe(0);
    });

    it('launches with the configured account key when the caller gives none, and refuses without one', async () => {
      const provider = await open({ sshKeyName: 'ops-key' });
      fake.state.sshKeys.set('k9', { id: 'k9', name: 'ops-key', public_key: KEY });
      await create(provider, 'ins_opskey', 'gpu_1x_a10@us-east-1', null);
      expect((fake.state.requestsTo('POST', '/instance-operations/launch')[0]!.body as { ssh_key_names: string[] }).ssh_key_names).toEqual(['ops-key']);
      await fake.close();

      const bare = await open();
      const failure = await failureOf(create(bare, 'ins_nokey', 'gpu_1x_a10@us-east-1', null));
      expect(failure.kind).toBe('rejected');
      expect(failure.message).toMatch(/SSH key/);
      expect(fake.state.requestsTo('POST', '/instance-operations/launch')).toHaveLength(0);
    });

    it('reports no capacity as a rejection carrying the typed code, and removes the key it registered', async () => {
      const provider = await open();
      fake.state.setCapacity('gpu_1x_a10', []);
      const failure = await failureOf(create(provider, 'ins_nocap'));
      expect(failure).toMatchObject({ kind: 'rejected', status: 400 });
      expect(failure.message).toContain('instance-operations/launch/insufficient-capacity');
      expect(fake.state.sshKeys.size).toBe(0);
      const deletes = fake.state.requests.filter((r) => r.method === 'DELETE' && r.path.startsWith('/ssh-keys/'));
      expect(deletes.map((r) => r.status)).toEqual([200]);
    });

    it('rejects an unknown instance type (404 global/object-does-not-exist from launch)', async () => {
      const provider = await open();
      const failure = await failureOf(create(provider, 'ins_notype', 'gpu_9x_nothing@us-east-1'));
      expect(failure).toMatchObject({ kind: 'rejected', status: 404 });
      expect(failure.message).toContain('global/object-does-not-exist');
    });

    it('never retries a launch: a 5xx is ambiguous and a 429 is a rejection, one request each', async () => {
      const provider = await open();
      fake.state.failNext(1, 503, { path: '/instance-operations/launch' });
      expect((await failureOf(create(provider, 'ins_5xx'))).kind).toBe('ambiguous');
      expect(fake.state.requestsTo('POST', '/instance-operations/launch')).toHaveLength(1);
      // after an ambiguous launch the key stays: an instance may be using it
      expect(fake.state.sshKeys.size).toBe(1);

      fake.state.failNext(1, 429, { path: '/instance-operations/launch' });
      const limited = await failureOf(create(provider, 'ins_429'));
      expect(limited).toMatchObject({ kind: 'rejected', status: 429 });
      expect(fake.state.requestsTo('POST', '/instance-operations/launch')).toHaveLength(2);
    });

    it('turns a launch whose answer is lost into an ambiguous failure that a list can reconcile', async () => {
      const provider = await open({ timeoutMs: 300 });
      fake.state.hangNext(1, '/instance-operations/launch');
      const failure = await failureOf(create(provider, 'ins_lost01'));
      expect(failure.kind).toBe('ambiguous');
      expect(fake.state.requestsTo('POST', '/instance-operations/launch')).toHaveLength(1);
      const ours = await provider.listMachines();
      expect(ours.map((m) => m.label)).toEqual(['ins_lost01']);
    });

    it('still returns the machine when the read-back after a successful launch fails', async () => {
      const provider = await open({ retries: 0 });
      fake.state.failNext(1, 500, { path: '/instances/' });
      const machine = await create(provider, 'ins_readback');
      expect(machine).toMatchObject({ label: 'ins_readback', status: 'provisioning' });
      expect(fake.state.instances.has(machine.machineId)).toBe(true);
    });
  });

  describe('machines', () => {
    it('maps statuses and SSH details, and lists only machines carrying our label', async () => {
      const provider = await open();
      const machine = await create(provider, 'ins_status1');
      fake.state.instances.set('f'.repeat(32), {
        ...fake.state.instances.get(machine.machineId)!,
        id: 'f'.repeat(32),
        name: 'someone-elses-box',
        tags: [],
      });
      const stored = fake.state.instances.get(machine.machineId)!;

      stored.status = 'booting';
      expect(await provider.getMachine(machine.machineId)).toMatchObject({ status: 'provisioning', sshHost: null, sshPort: null });
      stored.status = 'active';
      expect(await provider.getMachine(machine.machineId)).toMatchObject({
        status: 'running',
        sshHost: stored.ip,
        sshPort: 22,
        priceUsdPerHour: '0.75',
        label: 'ins_status1',
      });
      stored.status = 'unhealthy';
      expect((await provider.getMachine(machine.machineId))?.status).toBe('unknown');
      stored.status = 'preempted';
      expect((await provider.getMachine(machine.machineId))?.status).toBe('terminated');

      expect(await provider.getMachine('f'.repeat(32))).toMatchObject({ label: null });
      const ours = await provider.listMachines();
      expect(ours.map((m) => m.machineId)).toEqual([machine.machineId]);
    });

    it('reads the label from the cp-id tag even after the instance was renamed', async () => {
      const provider = await open();
      const machine = await create(provider, 'ins_renamed');
      fake.state.instances.get(machine.machineId)!.name = 'renamed in the console';
      expect((await provider.getMachine(machine.machineId))?.label).toBe('ins_renamed');
      expect((await provider.listMachines()).map((m) => m.label)).toEqual(['ins_renamed']);
    });

    it('treats 404 global/object-does-not-exist on terminate as already gone', async () => {
      const provider = await open();
      await provider.terminateMachine('0'.repeat(32));
      const [attempt] = fake.state.requestsTo('POST', '/instance-operations/terminate');
      expect(attempt).toMatchObject({ status: 404, body: { instance_ids: ['0'.repeat(32)] } });
    });

    it('retries terminate on 5xx (it is idempotent) and reports persistent failure as unavailable', async () => {
      const provider = await open({ retries: 2 });
      const machine = await create(provider, 'ins_term5xx');
      fake.state.failNext(2, 502, { path: '/instance-operations/terminate' });
      await provider.terminateMachine(machine.machineId);
      expect(fake.state.instances.has(machine.machineId)).toBe(false);
      expect(fake.state.requestsTo('POST', '/instance-operations/terminate').map((r) => r.status)).toEqual([502, 502, 200]);

      fake.state.failNext(5, 500, { path: '/instance-operations/terminate' });
      expect((await failureOf(provider.terminateMachine('1'.repeat(32)))).kind).toBe('unavailable');
    });

    it('restarts a running machine, and refuses one that is booting or gone', async () => {
      const provider = await open();
      expect(isRebootable(provider)).toBe(true);
      if (!isRebootable(provider)) return;
      const machine = await create(provider, 'ins_reboot');
      const stored = fake.state.instances.get(machine.machineId)!;
      stored.status = 'booting';
      const conflict = await failureOf(provider.rebootMachine(machine.machineId));
      expect(conflict).toMatchObject({ kind: 'rejected', status: 409 });
      expect(conflict.message).toContain('global/conflict');
      stored.status = 'active';
      await provider.rebootMachine(machine.machineId);
      expect(stored.restarts).toBe(1);
      expect(fake.state.requestsTo('POST', '/instance-operations/restart').at(-1)!.body).toEqual({ instance_ids: [machine.machineId] });
      expect(await failureOf(provider.rebootMachine('2'.repeat(32)))).toMatchObject({ kind: 'rejected', status: 404 });
    });
  });

  describe('transport', () => {
    it('retries reads on 429 and 5xx with backoff', async () => {
      const provider = await open();
      fake.state.failNext(1, 429, { path: '/instance-types' });
      fake.state.failNext(2, 503, { path: '/instance-types' });
      expect(await provider.listOffers()).toHaveLength(19);
      expect(fake.state.requestsTo('GET', '/instance-types').map((r) => r.status)).toEqual([429, 503, 503, 200]);
    });

    it('retries a provider/ upstream error code, and gives up after the configured retries', async () => {
      const provider = await open({ retries: 2 });
      fake.state.failNext(1, 503, { path: '/instances', code: 'provider/internal-unavailable' });
      expect(await provider.listMachines()).toEqual([]);
      fake.state.failNext(10, 500, { path: '/instances' });
      const failure = await failureOf(provider.listMachines());
      expect(failure).toMatchObject({ kind: 'unavailable', status: 500 });
      expect(fake.state.requestsTo('GET', '/instances')).toHaveLength(2 + 3);
    });

    it('turns a read timeout into unavailable', async () => {
      const provider = await open({ timeoutMs: 150, retries: 1 });
      fake.state.hangNext(2, '/instances/');
      const failure = await failureOf(provider.getMachine('3'.repeat(32)));
      expect(failure.kind).toBe('unavailable');
      expect(failure.message).toMatch(/no answer within 150 ms/);
      expect(fake.state.requestsTo('GET', `/instances/${'3'.repeat(32)}`)).toHaveLength(2);
    });

    it('reports a wrong API key clearly: unavailable for reads, rejected for a create', async () => {
      const provider = await open({ apiKey: 'wrong' });
      const read = await failureOf(provider.listOffers());
      expect(read).toMatchObject({ kind: 'unavailable', status: 401 });
      expect(read.message).toMatch(/API key rejected \(global\/invalid-api-key\)/);
      expect(fake.state.requests[0]!.status).toBe(401);
      const write = await failureOf(create(provider, 'ins_badkey'));
      expect(write).toMatchObject({ kind: 'rejected', status: 401 });
      expect(fake.state.requestsTo('POST', '/instance-operations/launch')).toHaveLength(0);
    });

    it('accepts HTTP Basic "<key>:" like Lambda (fake auth check)', async () => {
      await open();
      const basic = Buffer.from(`${fake.state.apiKey}:`).toString('base64');
      const response = await fetch(`${fake.url}/instance-types`, { headers: { authorization: `Basic ${basic}` } });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { data: Record<string, unknown> };
      expect(Array.isArray(body.data)).toBe(false);
      expect(Object.keys(body.data)).toContain('gpu_8x_h100_sxm5');
      const denied = await fetch(`${fake.url}/instances`, { headers: { authorization: 'Bearer nope' } });
      expect(denied.status).toBe(401);
      expect(await denied.json()).toEqual({
        error: {
          code: 'global/invalid-api-key',
          message: 'API key was invalid, expired, or deleted.',
          suggestion: 'Check your API key or create a new one, then try again.',
        },
      });
    });
  });

  describe('pacing', () => {
    it('spaces concurrent calls so a 1-per-interval limit never answers 429', async () => {
      // 30 ms of margin between our spacing and the fake's limit: a request's way to the fake varies by a few ms
      // (a new connection, a busy machine), and the pacer spaces departures, not arrivals
      const provider = await open({ minIntervalMs: 80, retries: 0 });
      fake.state.rateLimitMs = 50;
      await Promise.all([provider.listOffers(), provider.listMachines(), provider.getMachine('4'.repeat(32)), provider.listOffers()]);
      const times = fake.state.requests.map((r) => r.at);
      expect(fake.state.requests.map((r) => r.status)).not.toContain(429);
      for (let i = 1; i < times.length; i += 1) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(50);
    });

    it('without pacing the same limit answers 429, which reads absorb by retrying', async () => {
      const provider = await open({ minIntervalMs: 0, retries: 4, retryBaseMs: 60, retryMaxMs: 200 });
      fake.state.rateLimitMs = 50;
      await Promise.all([provider.listOffers(), provider.listMachines()]);
      expect(fake.state.requests.map((r) => r.status)).toContain(429);
    });

    it('spaces launches by the launch interval', async () => {
      const provider = await open({ launchIntervalMs: 250 });
      fake.state.launchRateLimitMs = 240;
      await create(provider, 'ins_pace1');
      await create(provider, 'ins_pace2');
      const launches = fake.state.requestsTo('POST', '/instance-operations/launch');
      expect(launches.map((r) => r.status)).toEqual([200, 200]);
      expect(launches[1]!.at - launches[0]!.at).toBeGreaterThanOrEqual(240);
    });
  });

  describe('filesystems', () => {
    const lambda = () => open() as Promise<ReturnType<typeof createLambdaProvider>>;

    it('makes a filesystem named after our label and the size, and reads both back', async () => {
      const provider = await lambda();
      const volume = await provider.createVolume({ label: 'vol_abc123', name: 'my data', sizeGb: 250, region: 'us-west-1' });
      expect(fake.state.requestsTo('POST', '/filesystems')[0]!.body).toEqual({ name: 'vol-abc123-250gb', region: 'us-west-1' });
      expect(volume).toEqual({ volumeId: volume.volumeId, label: 'vol_abc123', region: 'us-west-1', sizeGb: 250, status: 'available' });
      expect(await provider.getVolume(volume.volumeId)).toEqual(volume);
      expect(await failureOf(provider.createVolume({ label: 'vol_abc123', name: 'again', sizeGb: 250, region: 'us-west-1' }))).toMatchObject({
        kind: 'rejected',
        status: 400,
      });
      expect((await failureOf(provider.createVolume({ label: '9_lives', name: 'x', sizeGb: 1, region: 'us-west-1' }))).message).toMatch(/filesystem name/);
    });

    it('counts a filesystem made elsewhere by what it holds', async () => {
      const provider = await lambda();
      fake.state.fileSystems.set('f1', { id: 'f1', name: 'team-scratch', region: 'us-east-1', created: new Date().toISOString(), bytesUsed: 3 * 1024 ** 3 + 1 });
      expect(await provider.getVolume('f1')).toEqual({ volumeId: 'f1', label: null, region: 'us-east-1', sizeGb: 4, status: 'available' });
    });

    it('mounts filesystems by name at launch, and refuses one that is missing or in another region before launching', async () => {
      const provider = await lambda();
      const here = await provider.createVolume({ label: 'vol_here', name: 'x', sizeGb: 10, region: 'us-east-1' });
      const far = await provider.createVolume({ label: 'vol_far', name: 'x', sizeGb: 10, region: 'europe-central-1' });
      const machine = await provider.createMachine(
        machineRequest({ offerId: 'gpu_1x_a10@us-east-1', label: 'ins_fs1', sshPublicKeys: [KEY], volumeIds: [here.volumeId] }),
      );
      expect((fake.state.requestsTo('POST', '/instance-operations/launch')[0]!.body as Record<string, unknown>).file_system_names).toEqual(['vol-here-10gb']);
      expect(fake.state.instances.get(machine.machineId)!.fileSystemNames).toEqual(['vol-here-10gb']);
      expect((await provider.getVolume(here.volumeId))?.status).toBe('in_use');

      for (const [volumeId, reason] of [['nosuch', /no filesystem nosuch/], [far.volumeId, /is in europe-central-1, the offer in us-east-1/]] as const) {
        const failure = await failureOf(
          provider.createMachine(machineRequest({ offerId: 'gpu_1x_a10@us-east-1', label: 'ins_fs2', sshPublicKeys: [KEY], volumeIds: [volumeId] })),
        );
        expect(failure.kind).toBe('rejected');
        expect(failure.message).toMatch(reason);
      }
      expect(fake.state.requestsTo('POST', '/instance-operations/launch')).toHaveLength(1);
    });

    it('the fake refuses a filesystem in another region at launch, as Lambda does', async () => {
      await open();
      const response = await fetch(`${fake.url}/filesystems`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fake.state.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'elsewhere', region: 'us-west-1' }),
      });
      expect(response.status).toBe(200);
      fake.state.sshKeys.set('k1', { id: 'k1', name: 'mine', public_key: KEY });
      const launch = await fetch(`${fake.url}/instance-operations/launch`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fake.state.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ region_name: 'us-east-1', instance_type_name: 'gpu_1x_a10', ssh_key_names: ['mine'], file_system_names: ['elsewhere'] }),
      });
      expect(launch.status).toBe(400);
      expect(await launch.json()).toMatchObject({ error: { code: 'instance-operations/launch/file-system-in-wrong-region' } });
    });

    it('offers filesystems in every region at the configured price (LAMBDA_VOLUME_USD_PER_GB_MONTH, default 0.20)', async () => {
      const provider = await lambda();
      const offers = await provider.volumeOffers();
      expect(offers).toHaveLength(9);
      expect(new Set(offers.map((o) => o.priceUsdPerGbMonth))).toEqual(new Set(['0.20']));
      expect(lambdaModule.fromEnv({ LAMBDA_API_KEY: 'k', LAMBDA_VOLUME_USD_PER_GB_MONTH: '0.25' })).toMatchObject({ volumePriceUsdPerGbMonth: '0.25' });
      expect(() => lambdaModule.fromEnv({ LAMBDA_API_KEY: 'k', LAMBDA_VOLUME_USD_PER_GB_MONTH: '0,2' })).toThrow(/^LAMBDA_VOLUME_USD_PER_GB_MONTH: /);
    });
  });
});
