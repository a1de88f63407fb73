import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createVastProvider, type VastProviderConfig } from '../../../adapters/providers/vast/index.ts';
import type { VastProvider } from '../../../adapters/providers/vast/adapter.ts';
import { isRebootable, isVolumeHost, supportedOperations, type CreateMachineRequest } from '../../../core/ports/providers.ts';
import { startFakeVast, type FakeVast } from '../../fakes/vast/server.ts';
import { providerContract, failureOf, machineRequest } from '../provider-contract.ts';

const KEY = 'vast-test-key';
/** Fast settings for tests: no search pacing, millisecond backoff. */
const FAST: Partial<VastProviderConfig> = { searchIntervalMs: 0, backoffBaseMs: 1, backoffMaxMs: 20, timeoutMs: 2_000 };

/** The keys an onstart script appends to authorized_keys, in order. */
const keysIn = (onstart: string | null): string[] =>
  [...(onstart ?? '').matchAll(/echo '([^']*)' >> ~\/\.ssh\/authorized_keys/g)].map((match) => match[1]!);

providerContract('vast', async () => {
  const fake = await startFakeVast({ apiKey: KEY });
  return {
    provider: createVastProvider({ apiKey: KEY, baseUrl: fake.url, ...FAST }),
    close: () => fake.close(),
    echoed: async (machineId) => {
      const instance = fake.state.instances.get(Number(machineId))!;
      return {
        image: instance.image,
        registryUsername: /^-u (\S+) /.exec(instance.imageLogin ?? '')?.[1] ?? null,
        env: Object.fromEntries(instance.extraEnv),
        ports: instance.containerPorts,
        startupScript: instance.onstart,
        sshPublicKeys: keysIn(instance.onstart),
      };
    },
  };
});

const SEARCH = /^\/api\/v0\/bundles\/$/;
const ASKS = /^\/api\/v0\/asks\/\d+\/$/;
const INSTANCE = /^\/api\/v0\/instances\/\d+\/$/;

let fake: FakeVast;
const open = async (config: Partial<VastProviderConfig> = {}): Promise<VastProvider> => {
  fake = await startFakeVast({ apiKey: KEY });
  return createVastProvider({ apiKey: KEY, baseUrl: fake.url, ...FAST, ...config });
};
afterEach(async () => {
  await fake?.close();
});

const rent = (offerId: string, label = 'ins_test01', extra: Partial<CreateMachineRequest> = {}): CreateMachineRequest =>
  machineRequest({
    offerId,
    label,
    name: 'test machine',
    sshPublicKeys: ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIVastTestKey test@vast'],
    ...extra,
  });

describe('vast offers: our units', () => {
  it('turns MB per GPU into GB, keeps the whole-offer price, and reads geolocation', async () => {
    const provider = await open();
    const offers = await provider.listOffers();
    const byId = new Map(offers.map((offer) => [offer.id, offer]));

    const rtx4090 = byId.get('vast:31415926')!;
    expect(rtx4090).toMatchObject({
      provider: 'vast',
      gpuType: 'RTX4090',
      gpuModel: 'RTX 4090',
      gpuCount: 1,
      vramGb: 24,
      cpus: 8,
      ramGb: 32,
      diskGb: 32,
      downloadMbps: 900,
      ports: 100,
      country: 'US',
      region: 'Oregon',
      priceVerified: true,
      available: 1,
    });
    // dph_total for 32 GB allocated, as the wire number's own shortest text
    expect(rtx4090.priceUsdPerHour).toBe(String(0.35 + (0.1 * 32) / 30 / 24));

    expect(byId.get('vast:16180339')).toMatchObject({ gpuType: 'H100', gpuCount: 8, vramGb: 80, cpus: 224 });
    expect(byId.get('vast:36055512')).toMatchObject({ gpuType: 'H200', vramGb: 141 });
    expect(byId.get('vast:28284271')).toMatchObject({ gpuType: 'L40S', vramGb: 48 });
    expect(byId.get('vast:22360679')).toMatchObject({ gpuType: 'A100', vramGb: 40, priceVerified: false });
    expect(byId.get('vast:42426406')).toMatchObject({ gpuType: 'T4', vramGb: 16, country: 'GB', region: 'London' });
    expect(byId.get('vast:30000000')).toMatchObject({ gpuType: 'V100', priceVerified: false });
    // no ISO code in the geolocation; no cpu_cores, so no RAM share
    expect(byId.get('vast:37416573')).toMatchObject({ country: null, region: 'Brazil', ramGb: 0 });
    // rented, external and too-small-disk asks are not offered
    expect(byId.has('vast:38729833')).toBe(false);
    expect(byId.has('vast:40000000')).toBe(false);
    expect(byId.has('vast:41231056')).toBe(false);
    expect(offers).toHaveLength(14);
  });

  it('prices the whole offer exactly: no per-GPU multiply or divide, no float noise added', async () => {
    const provider = await open();
    fake.state.offers.get(16180339)!.storage_cost = 0;
    fake.state.offers.get(14142135)!.storage_cost = 0;
    fake.state.offers.get(30000000)!.storage_cost = 0;
    fake.state.offers.get(30000000)!.dph_base = 1e-7;
    const offers = new Map((await provider.listOffers()).map((offer) => [offer.id, offer]));
    expect(offers.get('vast:16180339')!.priceUsdPerHour).toBe('17.52'); // 8 GPUs, whole machine
    expect(offers.get('vast:14142135')!.priceUsdPerHour).toBe('1.9666666666');
    expect(offers.get('vast:30000000')!.priceUsdPerHour).toBe('0.0000001');
  });

  it('puts raw Vast fields into attributes under declared extra-filter keys', async () => {
    const provider = await open();
    const offers = await provider.listOffers();
    const h100 = offers.find((offer) => offer.id === 'vast:16180339')!;
    expect(h100.attributes).toMatchObject({
      reliability: 0.995,
      verified: true,
      verification: 'verified',
      cuda_max_good: 12.8,
      compute_cap: 900,
      datacenter: true,
      hosting_type: 1,
      inet_up: 9500.2,
      inet_down: 9800.5,
      static_ip: true,
      geolocation: 'Texas, US',
    });
    const unverified = offers.find((offer) => offer.id === 'vast:31415927')!;
    expect(unverified.attributes).toMatchObject({ verified: false, verification: 'unverified', reliability: 0.91, datacenter: false });
    for (const offer of offers) {
      for (const key of Object.keys(offer.attributes)) expect(provider.extraFilterKeys).toContain(key);
    }
  });
});

describe('vast offer search on the wire', () => {
  it('sends one broad authenticated search per listOffers', async () => {
    const provider = await open({ searchLimit: 500, diskGb: 40 });
    await provider.listOffers();
    const searches = fake.requestsTo('POST', SEARCH);
    expect(searches).toHaveLength(1);
    expect(searches[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(searches[0]!.body).toEqual({
      rentable: { eq: true },
      rented: { eq: false },
      external: { eq: false },
      disk_space: { gte: 40 },
      type: 'on-demand',
      allocated_storage: 40,
      order: [['dph_total', 'asc']],
      limit: 500,
    });
  });

  it('lists verified hosts only when configured to', async () => {
    const provider = await open({ verifiedOnly: true });
    const offers = await provider.listOffers();
    expect((fake.requestsTo('POST', SEARCH)[0]!.body as Record<string, unknown>).verified).toEqual({ eq: true });
    expect(offers.length).toBeGreaterThan(0);
    expect(offers.every((offer) => offer.priceVerified)).toBe(true);
  });

  it('checks one offer with an id filter, and spends no search on an id Vast never issued', async () => {
    const provider = await open();
    const live = await provider.getOffer('27182818');
    expect(live).toMatchObject({ id: 'vast:27182818', gpuType: 'RTX3090' });
    const searches = fake.requestsTo('POST', SEARCH);
    expect(searches).toHaveLength(1);
    expect(searches[0]!.body).toMatchObject({ id: { eq: 27182818 }, limit: 1, allocated_storage: 32, rented: { eq: false } });

    expect(await provider.getOffer('not-a-vast-id')).toBeNull();
    expect(await provider.getOffer('')).toBeNull();
    expect(fake.requestsTo('POST', SEARCH)).toHaveLength(1);
  });

  it('answers null for an offer rented since the listing', async () => {
    const provider = await open();
    await provider.createMachine(rent('27182818'));
    expect(await provider.getOffer('27182818')).toBeNull();
  });

  it('shares one search among concurrent identical callers', async () => {
    const provider = await open();
    fake.state.latencyMs = 50;
    const [a, b, c] = await Promise.all([provider.listOffers(), provider.listOffers(), provider.listOffers()]);
    expect(fake.requestsTo('POST', SEARCH)).toHaveLength(1);
    expect(b).toEqual(a);
    expect(c).toEqual(a);
  });

  it('spaces searches to stay under Vast’s per-endpoint interval instead of collecting 429s', async () => {
    const provider = await open({ searchIntervalMs: 120 });
    fake.state.searchMinIntervalMs = 100;
    await Promise.all([provider.getOffer('31415926'), provider.getOffer('27182818'), provider.listOffers()]);
    const searches = fake.requestsTo('POST', SEARCH);
    expect(searches).toHaveLength(3);
    for (let i = 1; i < searches.length; i++) expect(searches[i]!.at - searches[i - 1]!.at).toBeGreaterThanOrEqual(100);
  });

  it('lets a caller stop waiting on a search', async () => {
    const provider = await open();
    fake.state.latencyMs = 500;
    const failure = await failureOf(provider.listOffers(AbortSignal.timeout(50)));
    expect(failure.kind).toBe('unavailable');
    expect(failure.message).toMatch(/aborted/);
  });
});

describe('vast retries, timeouts and auth', () => {
  it('retries a search on 5xx and on 429 (plain text and JSON) with backoff', async () => {
    const provider = await open({ retries: 4 });
    fake.failNext(2, { status: 503, path: SEARCH });
    fake.rateLimitNext(1, { style: 'text', path: SEARCH });
    fake.rateLimitNext(1, { style: 'json', path: SEARCH });
    expect((await provider.listOffers()).length).toBe(14);
    expect(fake.requestsTo('POST', SEARCH)).toHaveLength(5);
  });

  it('backs off exponentially when Vast gives no Retry-After, then gives up as unavailable', async () => {
    const provider = await open({ retries: 3, backoffBaseMs: 40, backoffMaxMs: 1_000 });
    fake.rateLimitNext(10, { path: INSTANCE });
    const failure = await failureOf(provider.getMachine('7000001'));
    expect(failure).toMatchObject({ kind: 'unavailable', status: 429 });
    expect(failure.message).toMatch(/rate limited/);
    const attempts = fake.requestsTo('GET', INSTANCE).map((r) => r.at);
    expect(attempts).toHaveLength(4);
    const gaps = attempts.slice(1).map((at, i) => at - attempts[i]!);
    // full jitter within [ceiling/2, ceiling]: 20-40, 40-80, 80-160 ms
    expect(gaps[0]).toBeGreaterThanOrEqual(18);
    expect(gaps[2]).toBeGreaterThan(gaps[0]!);
    expect(gaps[2]).toBeGreaterThanOrEqual(78);
  });

  it('does not wait out a Retry-After far beyond its backoff ceiling (daily search quota)', async () => {
    const provider = await open();
    fake.failNext(5, {
      status: 429,
      path: SEARCH,
      headers: { 'retry-after': '7200' },
      body: { success: false, error: 'search_quota_exceeded', msg: 'daily search row quota exceeded' },
    });
    const failure = await failureOf(provider.listOffers());
    expect(failure).toMatchObject({ kind: 'unavailable', status: 429 });
    expect(failure.message).toMatch(/search_quota_exceeded/);
    expect(fake.requestsTo('POST', SEARCH)).toHaveLength(1);
  });

  it('retries instance reads and list pages on 5xx / 429', async () => {
    const provider = await open();
    const created = await provider.createMachine(rent('31415926', 'ins_retry01'));
    fake.failNext(1, { status: 502, path: INSTANCE, method: 'GET' });
    fake.rateLimitNext(1, { path: INSTANCE, method: 'GET' });
    expect((await provider.getMachine(created.machineId))?.label).toBe('ins_retry01');
    fake.failNext(2, { status: 504, path: /^\/api\/v1\/instances\/$/ });
    expect((await provider.listMachines()).map((m) => m.label)).toEqual(['ins_retry01']);
  });

  it('reports a read timeout as unavailable', async () => {
    const provider = await open({ timeoutMs: 100, retries: 1 });
    fake.state.latencyMs = 400;
    const failure = await failureOf(provider.getMachine('7000001'));
    expect(failure.kind).toBe('unavailable');
    expect(failure.message).toMatch(/timed out after 100 ms/);
    expect(fake.requestsTo('GET', INSTANCE)).toHaveLength(2);
  });

  it('says clearly that the API key was rejected, and does not retry a 401', async () => {
    fake = await startFakeVast({ apiKey: KEY });
    const provider = createVastProvider({ apiKey: 'wrong-key', baseUrl: fake.url, ...FAST });
    const read = await failureOf(provider.listOffers());
    expect(read).toMatchObject({ kind: 'unavailable', status: 401 });
    expect(read.message).toMatch(/API key rejected/);
    expect(fake.requestsTo('POST', SEARCH)).toHaveLength(1);

    const create = await failureOf(provider.createMachine(rent('31415926')));
    expect(create).toMatchObject({ kind: 'rejected', status: 401 });
    expect(create.message).toMatch(/API key rejected/);
    expect(fake.state.instances.size).toBe(0);

    expect(await failureOf(provider.getMachine('7000001'))).toMatchObject({ kind: 'unavailable', status: 401 });
  });
});

describe('vast create', () => {
  it('puts our id in the label and the env, and sends the documented ask body', async () => {
    const provider = await open();
    const created = await provider.createMachine(rent('31415926', 'ins_wire01'));
    expect(created).toMatchObject({ label: 'ins_wire01', status: 'provisioning' });

    const [put] = fake.requestsTo('PUT', ASKS);
    expect(put!.path).toBe('/api/v0/asks/31415926/');
    expect(put!.headers.authorization).toBe(`Bearer ${KEY}`);
    const body = put!.body as Record<string, unknown>;
    expect(body).toMatchObject({
      client_id: 'me',
      label: 'ins_wire01',
      env: { '-p 22:22': '1', CP_INSTANCE_ID: 'ins_wire01' },
      image: 'nvidia/cuda:12.4.1-runtime-ubuntu22.04',
      disk: 32,
      runtype: 'ssh',
      target_state: 'running',
      cancel_unavail: true,
    });
    expect(body).not.toHaveProperty('price'); // a price would make it an interruptible bid
    expect(body.onstart).toContain("'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIVastTestKey test@vast' >> ~/.ssh/authorized_keys");

    const upstream = fake.state.instances.get(Number(created.machineId))!;
    expect(upstream.label).toBe('ins_wire01');
    expect(upstream.extraEnv).toContainEqual(['CP_INSTANCE_ID', 'ins_wire01']);

    const machine = await provider.getMachine(created.machineId);
    expect(machine).toEqual({
      machineId: created.machineId,
      label: 'ins_wire01',
      status: 'running',
      sshHost: '203.0.113.10', // public_ipaddr arrives with a trailing newline
      sshPort: 41000 + (Number(created.machineId) % 1000),
      priceUsdPerHour: String(0.35 + (0.1 * 32) / 30 / 24),
    });
  });

  it('uses the image asked for and omits onstart without a key', async () => {
    const provider = await open();
    await provider.createMachine(rent('27182818', 'ins_image01', { image: 'pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime', sshPublicKeys: [] }));
    const body = fake.requestsTo('PUT', ASKS)[0]!.body as Record<string, unknown>;
    expect(body.image).toBe('pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime');
    expect(body).not.toHaveProperty('onstart');
  });

  it('carries out image, registry login, env, ports, startup script and several keys, the Vast way', async () => {
    const provider = await open();
    expect(provider.machineOptions).toEqual(['custom_image', 'registry_auth', 'env', 'ports', 'startup_script', 'ssh_keys']);
    // Vast's volumes live on one host, not on the network: it hosts none of ours
    expect(isVolumeHost(provider)).toBe(false);
    const keys = ['ssh-ed25519 AAAAfirst one@a', "ssh-rsa AAAAsec'ond two@b"];
    const created = await provider.createMachine(
      rent('31415926', 'ins_opts01', {
        image: 'ghcr.io/acme/trainer:2',
        registryAuth: { username: 'robot', password: 'tok3n' },
        env: { EPOCHS: '3', CP_INSTANCE_ID: 'ins_someone_else' },
        ports: [8888, 22],
        startupScript: 'cd /workspace\npython train.py &',
        sshPublicKeys: keys,
      }),
    );
    const body = fake.requestsTo('PUT', ASKS)[0]!.body as Record<string, unknown>;
    expect(body.image).toBe('ghcr.io/acme/trainer:2');
    expect(body.image_login).toBe('-u robot -p tok3n ghcr.io');
    // our id wins over a caller variable of the same name: the reconciler finds machines by it
    expect(body.env).toEqual({ EPOCHS: '3', CP_INSTANCE_ID: 'ins_opts01', '-p 22:22': '1', '-p 8888:8888': '1' });
    expect(body.onstart).toBe(
      "mkdir -p ~/.ssh && chmod 700 ~/.ssh && echo 'ssh-ed25519 AAAAfirst one@a' >> ~/.ssh/authorized_keys" +
        " && echo 'ssh-rsa AAAAsec'\\''ond two@b' >> ~/.ssh/authorized_keys && chmod 600 ~/.ssh/authorized_keys" +
        '\ncd /workspace\npython train.py &',
    );
    const upstream = fake.state.instances.get(Number(created.machineId))!;
    expect(upstream.imageLogin).toBe('-u robot -p tok3n ghcr.io');
    expect(upstream.containerPorts.sort()).toEqual([22, 8888]);
    const wire = await request(`${fake.url}/api/v0/instances/${created.machineId}/`, { headers: { authorization: `Bearer ${KEY}` } });
    const { instances } = (await wire.body.json()) as { instances: { ports: Record<string, unknown> } };
    expect(Object.keys(instances.ports).sort()).toEqual(['22/tcp', '8888/tcp']);
  });

  it('logs in to Docker Hub for an image without a registry host, and sends only the script without keys', async () => {
    const provider = await open();
    await provider.createMachine(
      rent('31415926', 'ins_hub01', { image: 'acme/private:1', registryAuth: { username: 'me', password: 'pw' }, sshPublicKeys: [], startupScript: 'nvidia-smi' }),
    );
    const body = fake.requestsTo('PUT', ASKS)[0]!.body as Record<string, unknown>;
    expect(body.image_login).toBe('-u me -p pw docker.io');
    expect(body.onstart).toBe('nvidia-smi');
  });

  it('refuses what it cannot carry out before calling Vast: a command, volumes, spaced credentials, bad names and ports', async () => {
    const provider = await open();
    const cases: [Partial<CreateMachineRequest>, RegExp][] = [
      [{ command: 'python serve.py' }, /Vast cannot carry out command/],
      [{ volumeIds: ['V.123'] }, /Vast cannot carry out volumes/],
      [{ image: 'x/y:1', registryAuth: { username: 'a b', password: 'c' } }, /without spaces/],
      [{ env: { '1BAD': 'x' } }, /not an environment variable name/],
      [{ ports: [65_536] }, /port 65536/],
    ];
    for (const [fields, reason] of cases) {
      const failure = await failureOf(provider.createMachine(rent('31415926', 'ins_no01', fields)));
      expect(failure).toMatchObject({ kind: 'rejected' });
      expect(failure.message).toMatch(reason);
    }
    expect(fake.requestsTo('PUT', ASKS)).toHaveLength(0);
  });

  it('the fake refuses a malformed image_login as Vast would', async () => {
    await open();
    const put = await request(`${fake.url}/api/v0/asks/31415926/`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ image: 'x/y:1', image_login: 'robot:secret' }),
    });
    expect(put.statusCode).toBe(400);
    expect(await put.body.json()).toMatchObject({ error: 'invalid_args' });
  });

  it('never retries a create: a 5xx is ambiguous, a 429 a definite rejection', async () => {
    const provider = await open();
    fake.failNext(1, { status: 503, path: ASKS });
    expect(await failureOf(provider.createMachine(rent('31415926')))).toMatchObject({ kind: 'ambiguous', status: 503 });
    expect(fake.requestsTo('PUT', ASKS)).toHaveLength(1);

    fake.rateLimitNext(1, { path: ASKS });
    expect(await failureOf(provider.createMachine(rent('31415926')))).toMatchObject({ kind: 'rejected', status: 429 });
    expect(fake.requestsTo('PUT', ASKS)).toHaveLength(2);
  });

  it('reports a timed-out create as ambiguous, and the machine is then found by its label', async () => {
    const provider = await open({ timeoutMs: 200 });
    fake.hangNextCreate();
    const failure = await failureOf(provider.createMachine(rent('31415926', 'ins_lost01')));
    expect(failure.kind).toBe('ambiguous');
    expect(failure.message).toMatch(/timed out/);
    expect(fake.requestsTo('PUT', ASKS)).toHaveLength(1);
    const ours = await provider.listMachines();
    expect(ours.map((m) => m.label)).toEqual(['ins_lost01']);
  });

  it('rejects an ask that is gone (410) or unknown (404 no_such_ask), and a bad key before sending', async () => {
    const provider = await open();
    expect(await failureOf(provider.createMachine(rent('38729833')))).toMatchObject({ kind: 'rejected', status: 410 });
    const unknown = await failureOf(provider.createMachine(rent('12345')));
    expect(unknown).toMatchObject({ kind: 'rejected', status: 404 });
    expect(unknown.message).toMatch(/no_such_ask/);
    const before = fake.requestsTo('PUT', ASKS).length;
    expect(await failureOf(provider.createMachine(rent('31415926', 'ins_x', { sshPublicKeys: ['ssh-ed25519 AAAA\nrm -rf /'] })))).toMatchObject({
      kind: 'rejected',
    });
    expect(fake.requestsTo('PUT', ASKS)).toHaveLength(before);
  });

  it('destroys an instance Vast created despite answering an error, and reports a rejection', async () => {
    const provider = await open();
    fake.errorWithContractOnNextCreate();
    const failure = await failureOf(provider.createMachine(rent('31415926', 'ins_half01')));
    expect(failure).toMatchObject({ kind: 'rejected', status: 400 });
    expect(failure.message).toMatch(/7000001.*destroyed/);
    expect(fake.requestsTo('DELETE', INSTANCE).map((r) => r.path)).toEqual(['/api/v0/instances/7000001/']);
    expect(fake.state.instances.size).toBe(0);
  });

  it('reports such a create as ambiguous when the clean-up destroy fails too', async () => {
    const provider = await open({ retries: 2 });
    fake.errorWithContractOnNextCreate(1, 200);
    fake.failNext(10, { status: 500, method: 'DELETE', path: INSTANCE });
    const failure = await failureOf(provider.createMachine(rent('31415926', 'ins_half02')));
    expect(failure.kind).toBe('ambiguous');
    expect(failure.message).toMatch(/7000001/);
    expect(fake.requestsTo('DELETE', INSTANCE)).toHaveLength(3);
    expect((await provider.listMachines()).map((m) => m.label)).toEqual(['ins_half02']);
  });
});

describe('vast instances: quirks, lifecycle', () => {
  it('reads our id from a string-form env when the label is missing, and lists only our machines', async () => {
    const provider = await open();
    const put = async (offerId: number, body: Record<string, unknown>) => {
      const response = await request(`${fake.url}/api/v0/asks/${offerId}/`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ client_id: 'me', image: 'ubuntu:22.04', disk: 10, ...body }),
      });
      return ((await response.body.json()) as { new_contract: number }).new_contract;
    };
    const fromString = await put(27182818, { env: '-e CP_INSTANCE_ID=ins_fromenv -p 22:22' });
    await put(31415926, { label: 'someone-elses-box', env: { FOO: 'bar' } });
    await put(16180339, {});

    expect((await provider.getMachine(String(fromString)))?.label).toBe('ins_fromenv');
    const ours = await provider.listMachines();
    expect(ours.map((m) => [m.machineId, m.label])).toEqual([[String(fromString), 'ins_fromenv']]);
  });

  /** `count` machines made on the account outside the adapter; every tenth carries no label. */
  const seedInstances = (count: number) => {
    const offer = fake.state.offers.get(31415926)!;
    for (let i = 0; i < count; i++) {
      fake.state.instances.set(8_000_000 + i, {
        id: 8_000_000 + i,
        offerId: offer.id,
        label: i % 10 === 9 ? null : `ins_page${String(i).padStart(2, '0')}`,
        image: 'ubuntu:22.04',
        disk: 32,
        runtype: 'ssh',
        env: {},
        extraEnv: [],
        containerPorts: [22],
        imageLogin: null,
        onstart: null,
        intended: 'running',
        bootStartedAt: Date.now(),
        rebootCount: 0,
        isBid: false,
        bid: null,
        overrides: {},
      });
    }
  };

  it('follows the v1 list cursor across pages of 25', async () => {
    const provider = await open();
    seedInstances(30);
    const ours = await provider.listMachines();
    expect(ours).toHaveLength(27);
    expect(new Set(ours.map((m) => m.machineId)).size).toBe(27);
    const pages = fake.requestsTo('GET', /^\/api\/v1\/instances\/$/);
    expect(pages).toHaveLength(2);
    expect(pages[0]!.query.limit).toBe('25');
    expect(pages[0]!.query.after_token).toBeUndefined();
    expect(pages[1]!.query.after_token).toBeDefined();
  });

  it('lists more than 25 machines over three pages, sending each next_token back exactly as it came', async () => {
    const provider = await open();
    seedInstances(70);
    const ours = await provider.listMachines();
    expect(ours.map((m) => m.label).sort()).toEqual(
      Array.from({ length: 70 }, (_, i) => i).filter((i) => i % 10 !== 9).map((i) => `ins_page${String(i).padStart(2, '0')}`),
    );
    const pages = fake.requestsTo('GET', /^\/api\/v1\/instances\/$/);
    expect(pages).toHaveLength(3);
    // the cursor is opaque text: never JSON-quoted, which Vast answers with a 400
    for (const page of pages.slice(1)) expect(page.query.after_token).toMatch(/^eyJ[A-Za-z0-9_-]+$/);
    const tokens = await Promise.all(
      pages.slice(0, 2).map(async (page) => {
        const again = await request(`${fake.url}/api/v1/instances/?${new URLSearchParams(page.query)}`, { headers: { authorization: `Bearer ${KEY}` } });
        return ((await again.body.json()) as { next_token: string }).next_token;
      }),
    );
    expect(pages.slice(1).map((page) => page.query.after_token)).toEqual(tokens);
  });

  it('the fake answers 400 to a quoted or made-up cursor, as Vast does', async () => {
    await open();
    seedInstances(30);
    const list = async (afterToken: string) =>
      (await request(`${fake.url}/api/v1/instances/?${new URLSearchParams({ limit: '25', after_token: afterToken })}`, { headers: { authorization: `Bearer ${KEY}` } })).statusCode;
    const first = await request(`${fake.url}/api/v1/instances/?limit=25`, { headers: { authorization: `Bearer ${KEY}` } });
    const next = ((await first.body.json()) as { next_token: string }).next_token;
    expect(await list(next)).toBe(200);
    expect(await list(JSON.stringify(next))).toBe(400);
    expect(await list('8000024')).toBe(400);
    expect(await list('not a token')).toBe(400);
  });

  it('maps Vast states to ours', async () => {
    const provider = await open();
    const { machineId } = await provider.createMachine(rent('31415926', 'ins_state01'));
    const instance = fake.state.instances.get(Number(machineId))!;
    const statusWith = async (overrides: Record<string, unknown>) => {
      instance.overrides = overrides;
      return (await provider.getMachine(machineId))!;
    };
    expect((await statusWith({ actual_status: null, ports: {}, public_ipaddr: null })).status).toBe('provisioning');
    expect(await statusWith({ actual_status: null, ports: {}, public_ipaddr: null })).toMatchObject({
      sshHost: `ssh${(Number(machineId) % 9) + 1}.vast.ai`, // the SSH proxy until the direct port is mapped
      sshPort: 20000 + (Number(machineId) % 10000),
    });
    expect((await statusWith({ actual_status: 'loading' })).status).toBe('provisioning');
    expect((await statusWith({ actual_status: 'created', status_msg: 'Error: OCI runtime create failed: ...' })).status).toBe('failed');
    expect((await statusWith({ actual_status: 'exited', intended_status: 'stopped', cur_state: 'stopped', next_state: 'stopped' })).status).toBe('stopped');
    expect((await statusWith({ actual_status: 'offline' })).status).toBe('unknown');
    expect((await statusWith({})).status).toBe('running');
  });

  it('treats both "already gone" answers of destroy as success', async () => {
    const provider = await open();
    await provider.terminateMachine('7999999'); // 404 not_found, per the spec
    fake.state.goneAnswer = { status: 200, error: 'no_such_instance' }; // what dstack has seen
    await provider.terminateMachine('7999999');
    fake.state.goneAnswer = { status: 400, error: 'no_such_instance' };
    await provider.terminateMachine('7999999');
    await provider.terminateMachine('not-a-vast-id');
    expect(fake.requestsTo('DELETE', INSTANCE)).toHaveLength(3);
  });

  it('retries a destroy that hit a 5xx, and reports one that keeps failing as unavailable', async () => {
    const provider = await open({ retries: 2 });
    const { machineId } = await provider.createMachine(rent('31415926', 'ins_del01'));
    fake.failNext(1, { status: 502, method: 'DELETE' });
    await provider.terminateMachine(machineId);
    expect(fake.state.instances.has(Number(machineId))).toBe(false);

    const second = await provider.createMachine(rent('31415926', 'ins_del02'));
    fake.failNext(10, { status: 500, method: 'DELETE' });
    expect(await failureOf(provider.terminateMachine(second.machineId))).toMatchObject({ kind: 'unavailable', status: 500 });
    expect(fake.state.instances.has(Number(second.machineId))).toBe(true);
  });

  it('reboots through the documented endpoint, and rejects a reboot of a gone machine', async () => {
    const provider = await open();
    expect(isRebootable(provider)).toBe(true);
    expect(supportedOperations(provider)).toContain('reboot');
    const { machineId } = await provider.createMachine(rent('31415926', 'ins_boot01'));
    await provider.rebootMachine(machineId);
    expect(fake.requestsTo('PUT', /^\/api\/v0\/instances\/reboot\/\d+\/$/).map((r) => r.path)).toEqual([
      `/api/v0/instances/reboot/${machineId}/`,
    ]);
    expect(fake.state.instances.get(Number(machineId))!.rebootCount).toBe(1);
    expect(await failureOf(provider.rebootMachine('7999999'))).toMatchObject({ kind: 'rejected', status: 404 });
  });
});
