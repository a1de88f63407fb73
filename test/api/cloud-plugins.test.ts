import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHyperstackProvider } from '../../adapters/providers/hyperstack/index.ts';
import { providerNamed } from '../../adapters/providers/registry.ts';
import { createSandboxProvider } from '../../adapters/providers/sandbox/index.ts';
import { createShadeformProvider } from '../../adapters/providers/shadeform/index.ts';
import { createVerdaProvider } from '../../adapters/providers/verda/index.ts';
import { rateCentsPerHour } from '../../core/market/pricing.ts';
import type { Provider } from '../../core/ports/providers.ts';
import { fastHyperstackConfig } from '../fakes/hyperstack/adapter-config.ts';
import { HYPERSTACK_SERVED } from '../fakes/hyperstack/served-api.ts';
import { startFakeHyperstack } from '../fakes/hyperstack/server.ts';
import { fastShadeformConfig } from '../fakes/shadeform/adapter-config.ts';
import { SHADEFORM_SERVED } from '../fakes/shadeform/served-api.ts';
import { startFakeShadeform, type FakeShadeform } from '../fakes/shadeform/server.ts';
import { fastVerdaConfig } from '../fakes/verda/adapter-config.ts';
import { VERDA_SERVED } from '../fakes/verda/served-api.ts';
import { startFakeVerda } from '../fakes/verda/server.ts';
import { configFromEnv } from '../../hosts/composition/config.ts';
import { startFakeLambda } from '../fakes/lambda/server.ts';
import { startApi, type TestApi } from '../support/api.ts';
import { DescriptionChecker, loadProviderDescription, type RecordedExchange } from '../support/provider-description.ts';
import { OPERATOR } from '../support/rentals.ts';
import type { ServedDescription } from '../support/served-api.ts';
import { sshKeygen } from '../support/ssh-keys.ts';

/**
 * The clouds added as plugins, each behind its fake, through the whole API: a search lists its offers at its own
 * prices plus the markup; a rental makes exactly one machine there, with a request the cloud's own description
 * accepts; the instance states its SSH host, port and user; terminate removes the machine; a volume is made and
 * deleted there; and with the cloud unreachable, search answers from the others.
 */
interface Cloud {
  name: string;
  /** The login its module states (GET /v1/providers). */
  sshUser: string;
  /** The node rented (default the cheapest), and the login and port its instance then states. */
  pick?(nodes: { id: string; underlying_cloud: string | null }[]): { id: string };
  instanceSsh?: { user: string; port: number };
  /** The fake and the adapter over it. */
  start(): Promise<{ provider: Provider; close(): Promise<void>; machines(): number; volumes(): number; exchanges(): RecordedExchange[]; upstreamPrice(offerId: string): string }>;
  /** Its published description file and how to read it, and the project's own description of what its fake serves. */
  description: { file: string; options: ConstructorParameters<typeof DescriptionChecker>[1]; served: ServedDescription };
  /** The create request among the exchanges. */
  isCreate(exchange: RecordedExchange): boolean;
  /** null: not a volume host. */
  volumeRegion: string | null;
  /** The capabilities beyond terminate it states in GET /v1/providers. */
  operations: string[];
}

const CLOUDS: Cloud[] = [
  {
    name: 'verda',
    sshUser: 'root',
    start: async () => {
      const fake = await startFakeVerda();
      fake.state.bootMs = 0;
      return {
        provider: createVerdaProvider(fastVerdaConfig(fake, { retries: 0 })),
        close: fake.close,
        machines: () => fake.state.instances.size,
        volumes: () => fake.state.volumes.size,
        exchanges: () => fake.state.exchanges,
        upstreamPrice: (offerId) => fake.state.types.get(offerId.split('@')[0]!)!.price_per_hour,
      };
    },
    description: { file: 'verda-openapi.json', options: { headersAddedOnTheWay: ['cf-connecting-ip'], errorSchema: 'PublicApiErrorResponseDto' }, served: VERDA_SERVED },
    isCreate: (e) => e.method === 'POST' && e.path === '/v1/instances',
    volumeRegion: 'FIN-01',
    operations: ['spot'],
  },
  {
    name: 'hyperstack',
    sshUser: 'ubuntu',
    start: async () => {
      const fake = await startFakeHyperstack();
      fake.state.bootMs = 0;
      return {
        provider: createHyperstackProvider(fastHyperstackConfig(fake, { retries: 0 })),
        close: fake.close,
        machines: () => fake.state.vms.size,
        volumes: () => fake.state.volumes.size,
        exchanges: () => fake.state.exchanges,
        // the pricebook is per GPU
        upstreamPrice: (offerId) => {
          const [flavor, region] = offerId.split('@');
          const entry = fake.state.flavors.find((f) => f.name === flavor && f.region_name === region)!;
          return String(Number((fake.state.pricebook.get(entry.gpu)! * entry.gpu_count).toFixed(6)));
        },
      };
    },
    description: { file: 'hyperstack-openapi.json', options: {}, served: HYPERSTACK_SERVED },
    isCreate: (e) => e.method === 'POST' && e.path === '/v1/core/virtual-machines',
    volumeRegion: 'CANADA-1',
    operations: ['reboot'],
  },
  {
    name: 'shadeform',
    sshUser: 'shadeform',
    // a machine of a cloud whose login is not Shadeform's usual one: the instance states the machine's own
    pick: (nodes) => nodes.find((n) => n.underlying_cloud === 'lambda')!,
    instanceSsh: { user: 'ubuntu', port: 22 },
    start: async () => {
      const fake = await startFakeShadeform();
      fake.state.bootMs = 0;
      shadeformFake = fake;
      return {
        // the clouds this server reaches directly are left out of Shadeform's offers
        provider: createShadeformProvider(fastShadeformConfig(fake, { retries: 0 }), { enabledProviders: ['sandbox', 'verda', 'hyperstack', 'shadeform'], providerNamed }),
        close: fake.close,
        machines: () => [...fake.state.instances.values()].filter((i) => i.deletedAt === null).length,
        volumes: () => fake.state.volumes.size,
        exchanges: () => fake.state.exchanges,
        upstreamPrice: (offerId) => {
          const [, cloud, type] = /^([a-z0-9]+):(.+)@/.exec(offerId)!;
          return (fake.state.types.find((t) => t.cloud === cloud && t.shade_instance_type === type)!.hourly_price / 100).toFixed(2);
        },
      };
    },
    description: { file: 'shadeform-openapi.json', options: {}, served: SHADEFORM_SERVED },
    isCreate: (e) => e.method === 'POST' && e.path === '/v1/instances/create',
    volumeRegion: 'us-central-1',
    operations: ['reboot', 'spot'],
  },
];

const MARKUP_BPS = 1_000;
/** The Shadeform fake behind the API, for its spot market. */
let shadeformFake: FakeShadeform;

let api: TestApi;
let token: string;
const running = new Map<string, Awaited<ReturnType<Cloud['start']>>>();

beforeAll(async () => {
  for (const cloud of CLOUDS) running.set(cloud.name, await cloud.start());
  const providers = [createSandboxProvider({ provisioningMs: 0 }), ...CLOUDS.map((cloud) => running.get(cloud.name)!.provider)];
  api = await startApi({ payments: { kind: 'manual' }, market: { rentalsOpen: true, markupBps: MARKUP_BPS } }, { providers });
  const root = await api.newTenant();
  token = root.token;
  const credit = await api.call('POST', `/v1/operator/tenants/${root.tenantId}/credit`, { headers: OPERATOR, body: { amount_usd: '5000.00', reason: 'test funds' } });
  expect(credit.status).toBe(201);
});
afterAll(async () => {
  await api?.close();
  for (const fake of running.values()) await fake.close();
});

describe.each(CLOUDS)('$name through the API', (cloud) => {
  const fake = () => running.get(cloud.name)!;

  it('is listed by GET /v1/providers with its SSH user and what it supports', async () => {
    const answer = await api.call('GET', '/v1/providers', { token });
    const listed = answer.body.providers.find((p: { name: string }) => p.name === cloud.name);
    expect(listed).toMatchObject({
      name: cloud.name,
      ssh_user: cloud.sshUser,
      volumes: cloud.volumeRegion !== null,
      supported_operations: expect.arrayContaining(['terminate', ...cloud.operations, ...fake().provider.machineOptions]),
    });
    for (const operation of ['reboot', 'spot']) expect(listed.supported_operations.includes(operation)).toBe(cloud.operations.includes(operation));
  });

  it('lists its offers in a search at its own price plus the markup, rents one machine there with a request its description accepts, shows SSH host, port and user, and terminates it', async () => {
    const search = await api.call('GET', `/v1/gpus?provider=${cloud.name}&limit=1000`, { token });
    expect(search.status).toBe(200);
    const nodes = search.body.nodes as { id: string; provider: string; underlying_cloud: string | null; price_per_hour_cents: number }[];
    expect(nodes.length).toBeGreaterThan(0);
    for (const node of nodes) {
      expect(node.provider).toBe(cloud.name);
      expect(node.price_per_hour_cents).toBe(rateCentsPerHour(fake().upstreamPrice(node.id.slice(cloud.name.length + 1)), MARKUP_BPS));
    }

    const before = fake().machines();
    const node = cloud.pick?.(nodes) ?? nodes[0]!;
    const rented = await api.call('POST', '/v1/instances', { token, body: { node_id: node.id, ssh_public_key: sshKeygen('ed25519').publicLine, termination_hours: 1 } });
    expect(rented.status, JSON.stringify(rented.body)).toBe(201);
    expect(fake().machines()).toBe(before + 1);
    const creates = fake().exchanges().filter(cloud.isCreate);
    expect(creates).toHaveLength(1);
    const { served } = cloud.description;
    expect(new DescriptionChecker(served.doc, served.options).check(creates)).toEqual([]);
    const description = loadProviderDescription(cloud.description.file);
    for (const doc of description.doc ? [description.doc] : []) expect(new DescriptionChecker(doc, cloud.description.options).check(creates)).toEqual([]);

    const instance = (await api.call('GET', `/v1/instances/${rented.body.id}`, { token })).body;
    expect(instance).toMatchObject({
      provider: cloud.name,
      status: 'running',
      ssh_host: expect.any(String),
      ssh_port: cloud.instanceSsh?.port ?? expect.any(Number),
      ssh_user: cloud.instanceSsh?.user ?? cloud.sshUser,
    });
    // and as the list states it, after a read back from the database
    const listed = (await api.call('GET', '/v1/instances', { token })).body.find((i: { id: string }) => i.id === rented.body.id);
    expect(listed.ssh_user).toBe(cloud.instanceSsh?.user ?? cloud.sshUser);

    const done = await api.call('POST', `/v1/instances/${rented.body.id}/terminate`, { token });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(fake().machines()).toBe(before);
  });

});

describe.each(CLOUDS.filter((cloud) => cloud.volumeRegion !== null))('$name volumes through the API', (cloud) => {
  it('makes a volume there and deletes it', async () => {
    const fake = running.get(cloud.name)!;
    const made = await api.call('POST', '/v1/volumes', { token, body: { name: 'data', size_gb: 10, provider: cloud.name, region: cloud.volumeRegion } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(fake.volumes()).toBe(1);
    expect((await api.call('DELETE', `/v1/volumes/${made.body.id}`, { token })).status).toBe(204);
    expect(fake.volumes()).toBe(0);
  });
});

describe('Shadeform spot through the API', () => {
  const sweep = async () => {
    const pass = await api.call('POST', '/v1/operator/sweep', { headers: OPERATOR });
    expect(pass.status).toBe(200);
    expect(pass.body.errors, JSON.stringify(pass.body.errors)).toEqual([]);
    return pass.body;
  };

  it('a spot claim rents a Shadeform spot machine at its spot price; one its cloud took back reads preempted and the next pass rents another', async () => {
    const search = (await api.call('GET', '/v1/gpus?provider=shadeform&limit=1000', { token })).body.nodes as { id: string; supported_operations: string[]; spot_price_per_gpu_hour_cents: number | null }[];
    const node = search.find((n) => n.id === 'shadeform:massedcompute:A6000@us-central-1')!;
    expect(node.supported_operations).toContain('spot');
    expect(node.spot_price_per_gpu_hour_cents).toBe(rateCentsPerHour('0.31', MARKUP_BPS));
    const claim = await api.call('POST', '/v1/spot-claims', { token, body: { node_id: node.id, max_price_per_gpu_hour: '0.50', gpu_count: 1, hours: 2, name: 'spot' } });
    expect(claim.status, JSON.stringify(claim.body)).toBe(201);

    expect((await sweep()).spot_claims_rented).toBe(1);
    const active = (await api.call('GET', `/v1/spot-claims/${claim.body.id}`, { token })).body;
    expect(active).toMatchObject({ status: 'active', instance_id: expect.stringMatching(/^ins_/) });
    const first = [...shadeformFake.state.instances.values()].find((i) => i.name === active.instance_id)!;
    expect(first.rentalType).toBe('spot');
    const instance = (await api.call('GET', `/v1/instances/${active.instance_id}`, { token })).body;
    expect(instance).toMatchObject({ provider: 'shadeform', node_id: node.id, rate_cents_per_hour: node.spot_price_per_gpu_hour_cents });

    shadeformFake.state.preempt(first.id);
    const pass = await sweep();
    expect(pass.preempted).toBe(1);
    expect((await api.call('GET', `/v1/instances/${active.instance_id}`, { token })).body.status).toBe('terminated');
    const again = (await api.call('GET', `/v1/spot-claims/${claim.body.id}`, { token })).body;
    expect(again).toMatchObject({ status: 'active', preemptions: 1 });
    expect(again.instance_id).not.toBe(active.instance_id);
    expect((await api.call('DELETE', `/v1/spot-claims/${claim.body.id}`, { token })).status).toBe(200);
  });
});

describe('a reseller beside the clouds it resells', () => {
  it('states the cloud behind each of its nodes, and lists none of a cloud this server reaches directly, so no machine appears twice', async () => {
    const nodes = (await api.call('GET', '/v1/gpus?limit=1000', { token })).body.nodes as { provider: string; underlying_cloud: string | null }[];
    const resold = nodes.filter((n) => n.provider === 'shadeform');
    expect(resold.length).toBeGreaterThan(0);
    expect(new Set(resold.map((n) => n.underlying_cloud))).toEqual(new Set(['lambda', 'massedcompute', 'vultr']));
    expect(nodes.filter((n) => n.provider !== 'shadeform').every((n) => n.underlying_cloud === null)).toBe(true);
  });
});

describe('a reseller enabled from the environment', () => {
  it('leaves out by default the clouds the environment enables directly, and SHADEFORM_CLOUDS_EXCLUDE=none keeps them', async () => {
    const lambda = await startFakeLambda();
    const shadeform = await startFakeShadeform();
    const opened: TestApi[] = [];
    try {
      const resold = async (extra: Record<string, string>) => {
        const env = configFromEnv({
          SANDBOX_ENABLED: 'false',
          LAMBDA_API_KEY: lambda.state.apiKey,
          LAMBDA_BASE_URL: lambda.url,
          SHADEFORM_API_KEY: shadeform.state.apiKey,
          SHADEFORM_BASE_URL: shadeform.url,
          PAYMENTS: 'manual',
          ...extra,
        });
        const server = await startApi({ providers: env.providers!, market: env.market!, payments: env.payments! });
        opened.push(server);
        const { token: own } = await server.newTenant();
        const nodes = (await server.call('GET', '/v1/gpus?provider=shadeform&limit=1000', { token: own })).body.nodes as { underlying_cloud: string }[];
        return new Set(nodes.map((n) => n.underlying_cloud));
      };
      expect(await resold({})).toEqual(new Set(['verda', 'massedcompute', 'vultr']));
      expect(await resold({ SHADEFORM_CLOUDS_EXCLUDE: 'none' })).toEqual(new Set(['lambda', 'verda', 'massedcompute', 'vultr']));
      expect(await resold({ SHADEFORM_CLOUDS_EXCLUDE: 'datacrunch,vultr' })).toEqual(new Set(['lambda', 'massedcompute']));
    } finally {
      for (const server of opened) await server.close();
      await lambda.close();
      await shadeform.close();
    }
  });
});

describe('with every added cloud unreachable', () => {
  it('search answers from the others, naming each unreachable cloud as an error', async () => {
    const down: Provider[] = [];
    for (const cloud of CLOUDS) {
      const fake = await cloud.start();
      await fake.close();
      down.push(fake.provider);
    }
    const alone = await startApi({ payments: { kind: 'manual' }, market: { rentalsOpen: true } }, { providers: [createSandboxProvider({ provisioningMs: 0 }), ...down] });
    try {
      const { token: other } = await alone.newTenant();
      const search = await alone.call('GET', '/v1/gpus?limit=1000', { token: other });
      expect(search.status).toBe(200);
      expect(search.body.total).toBeGreaterThan(0);
      expect(new Set(search.body.nodes.map((n: { provider: string }) => n.provider))).toEqual(new Set(['sandbox']));
      for (const cloud of CLOUDS) expect(search.body.providers.find((p: { provider: string }) => p.provider === cloud.name)).toMatchObject({ status: 'error', count: 0 });
    } finally {
      await alone.close();
    }
  });
});
