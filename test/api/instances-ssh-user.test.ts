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
 * An instance states the user its provider's machines log in as (`ssh_user`), from the provider's module in the
 * registry: a client builds the ssh command from the instance alone, whichever cloud it runs on.
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
    expect(Object.fromEntries(PROVIDER_MODULES.map((m) => [m.name, sshUserOf(m.name)]))).toEqual({ sandbox: 'root', vast: 'root', runpod: 'root', lambda: 'ubuntu' });
    const unknown = await rentOn('elsewhere');
    expect(unknown).toMatchObject({ provider: 'elsewhere', status: 'running', ssh_host: expect.any(String), ssh_user: null });
  });
});
