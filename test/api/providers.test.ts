import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLambdaProvider } from '../../adapters/providers/lambda/index.ts';
import { PROVIDER_MODULES, sshUserOf } from '../../adapters/providers/registry.ts';
import { createSandboxProvider } from '../../adapters/providers/sandbox/index.ts';
import { startFakeLambda, type FakeLambda } from '../fakes/lambda/server.ts';
import { startApi, type TestApi } from '../support/api.ts';
import { OPERATOR } from '../support/rentals.ts';
import { renamedProvider } from '../support/renamed-provider.ts';
import { sshKeygen } from '../support/ssh-keys.ts';

/**
 * What the server says of its providers, from the registry and the adapters, so no client keeps a list of its own:
 * the user an instance's machine logs in as (`ssh_user`), and the enabled providers with what each supports
 * (GET /v1/providers). Three providers: the sandbox, a Lambda fake, and one the registry does not know.
 */
let lambda: FakeLambda;
let api: TestApi;
let token: string;

beforeAll(async () => {
  lambda = await startFakeLambda();
  lambda.state.bootMs = 0;
  const providers = [
    createSandboxProvider({ provisioningMs: 0 }),
    createLambdaProvider({ apiKey: lambda.state.apiKey, baseUrl: lambda.url, timeoutMs: 2_000, retries: 0, minIntervalMs: 0, launchIntervalMs: 0 }),
    renamedProvider(createSandboxProvider({ provisioningMs: 0 }), 'elsewhere'),
  ];
  api = await startApi({ payments: { kind: 'manual' }, market: { rentalsOpen: true } }, { providers });
  const { token: root, tenantId } = await api.newTenant();
  token = root;
  const credit = await api.call('POST', `/v1/operator/tenants/${tenantId}/credit`, { headers: OPERATOR, body: { amount_usd: '500.00', reason: 'test funds' } });
  expect(credit.status).toBe(201);
});
afterAll(async () => {
  await api?.close();
  await lambda?.close();
});

/** Rents the cheapest node of `provider` and answers the instance once the provider has given it an address. */
async function rentOn(provider: string): Promise<any> {
  const search = await api.call('GET', `/v1/gpus?provider=${provider}&limit=1`, { token });
  expect(search.status, JSON.stringify(search.body)).toBe(200);
  const body = { node_id: search.body.nodes[0].id, ssh_public_key: sshKeygen('ed25519').publicLine, termination_hours: 1 };
  const rented = await api.call('POST', '/v1/instances', { token, body });
  expect(rented.status, JSON.stringify(rented.body)).toBe(201);
  return (await api.call('GET', `/v1/instances/${rented.body.id}`, { token })).body;
}

describe('ssh_user of an instance', () => {
  it("is its provider's login user: root in the sandbox's containers, ubuntu on Lambda's virtual machines", async () => {
    const sandbox = await rentOn('sandbox');
    expect(sandbox).toMatchObject({ provider: 'sandbox', status: 'running', ssh_user: 'root', ssh_host: expect.any(String) });
    const vm = await rentOn('lambda');
    expect(vm).toMatchObject({ provider: 'lambda', status: 'running', ssh_user: 'ubuntu', ssh_host: expect.stringMatching(/^198\.51\.100\./) });
      // and in the list
    const listed = (await api.call('GET', '/v1/instances', { token })).body as { id: string; ssh_user: string }[];
    expect(Object.fromEntries(listed.map((i) => [i.id, i.ssh_user]))).toMatchObject({ [sandbox.id]: 'root', [vm.id]: 'ubuntu' });
  });

  it("is the registry's word for every provider it knows, and null for one it does not", async () => {
    expect(Object.fromEntries(PROVIDER_MODULES.map((m) => [m.name, sshUserOf(m.name)]))).toEqual({ sandbox: 'root', vast: 'root', runpod: 'root', lambda: 'ubuntu', verda: 'root', hyperstack: 'ubuntu', shadeform: 'shadeform' });
    const unknown = await rentOn('elsewhere');
    expect(unknown).toMatchObject({ provider: 'elsewhere', status: 'running', ssh_host: expect.any(String), ssh_user: null });
  });
});

describe('GET /v1/providers', () => {
  it('lists the enabled providers in configuration order, with their SSH user, volumes and what they support', async () => {
    const answer = await api.call('GET', '/v1/providers', { token });
    expect(answer.status).toBe(200);
    expect(answer.body.providers.map((p: { name: string }) => p.name)).toEqual(['sandbox', 'lambda', 'elsewhere']);
    const [sandbox, vm, unknown] = answer.body.providers;
    expect(sandbox).toMatchObject({ ssh_user: 'root', volumes: true, supported_operations: ['terminate', 'reboot', 'schedule_removal', 'spot', 'custom_image', 'registry_auth', 'command', 'env', 'ports', 'startup_script', 'ssh_keys', 'volumes'] });
    expect(sandbox.extra_filter_keys).toEqual(expect.arrayContaining(['reliability', 'cuda']));
    expect(vm).toEqual({ name: 'lambda', ssh_user: 'ubuntu', volumes: true, supported_operations: ['terminate', 'reboot', 'schedule_removal', 'ssh_keys', 'volumes'], extra_filter_keys: expect.any(Array) });
    // only the Provider port: no reboot, spot or volumes, and no login user the server knows
    expect(unknown).toMatchObject({ ssh_user: null, volumes: false, supported_operations: ['terminate', 'schedule_removal', 'custom_image', 'registry_auth', 'command', 'env', 'ports', 'startup_script', 'ssh_keys', 'volumes'] });
    // each node's supported_operations are its provider's
    const nodes = (await api.call('GET', '/v1/gpus?limit=1000', { token })).body.nodes as { provider: string; supported_operations: string[] }[];
    for (const provider of answer.body.providers) {
      const node = nodes.find((n) => n.provider === provider.name)!;
      expect(node.supported_operations, provider.name).toEqual(provider.supported_operations);
    }
  });

  it('needs a token', async () => {
    expect((await api.call('GET', '/v1/providers')).status).toBe(401);
  });
});
