import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLambdaProvider } from '../../adapters/providers/lambda/index.ts';
import { createSandboxProvider } from '../../adapters/providers/sandbox/index.ts';
import { startFakeLambda, type FakeLambda } from '../fakes/lambda/server.ts';
import { startApi, type TestApi } from '../support/api.ts';
import { OPERATOR } from '../support/rentals.ts';
import { renamedProvider } from '../support/renamed-provider.ts';
import { sshKeygen } from '../support/ssh-keys.ts';
import { gpuctl, type Gpuctl } from './run-gpuctl.ts';

/**
 * What gpuctl knows of providers comes from the server: the ssh command's user from the instance (`ssh_user`), so a
 * machine on a cloud whose login is not root gets the right command, and `gpuctl providers` from GET /v1/providers.
 * The real gpuctl process against a server with the sandbox, a Lambda fake and a provider the registry does not know.
 */
vi.setConfig({ testTimeout: 120_000 });

let lambda: FakeLambda;
let api: TestApi;
let cli: Gpuctl;
let token: string;
let keyFile: string;

beforeAll(async () => {
  lambda = await startFakeLambda();
  lambda.state.bootMs = 0;
  const providers = [
    createSandboxProvider({ provisioningMs: 0 }),
    createLambdaProvider({ apiKey: lambda.state.apiKey, baseUrl: lambda.url, timeoutMs: 2_000, retries: 0, minIntervalMs: 0, launchIntervalMs: 0 }),
    renamedProvider(createSandboxProvider({ provisioningMs: 0 }), 'elsewhere'),
  ];
  api = await startApi({ payments: { kind: 'manual' }, market: { rentalsOpen: true } }, { providers });
  const tenant = await api.newTenant();
  token = tenant.token;
  expect((await api.call('POST', `/v1/operator/tenants/${tenant.tenantId}/credit`, { headers: OPERATOR, body: { amount_usd: '500.00', reason: 'test funds' } })).status).toBe(201);
  cli = gpuctl({ GPUCTL_URL: api.baseUrl, GPUCTL_TOKEN: token });
  keyFile = join(cli.configHome, 'id_ed25519.pub');
  writeFileSync(keyFile, `${sshKeygen('ed25519').publicLine}\n`);
});
afterAll(async () => {
  await api?.close();
  await lambda?.close();
});

const cheapestOf = async (provider: string): Promise<string> => (await api.call('GET', `/v1/gpus?provider=${provider}&limit=1`, { token })).body.nodes[0].id;

describe('the ssh command gpuctl prints', () => {
  it('rent --wait, show and ls log in as the user the instance states: ubuntu on Lambda, root in the sandbox', async () => {
    const onLambda = await cli.run(['rent', await cheapestOf('lambda'), '--hours', '1', '--ssh-key', keyFile, '--wait']);
    expect(onLambda.code, onLambda.stderr).toBe(0);
    const lambdaId = /^(ins_[a-z0-9]+) is running\./m.exec(onLambda.stdout)![1]!;
    const vm = (await api.call('GET', `/v1/instances/${lambdaId}`, { token })).body;
    expect(vm.ssh_user).toBe('ubuntu');
    // Lambda's machines listen on port 22: no -p
    expect(onLambda.stdout).toContain(`\nssh ubuntu@${vm.ssh_host}`);

    const inSandbox = await cli.run(['rent', await cheapestOf('sandbox'), '--hours', '1', '--ssh-key', keyFile, '--wait']);
    expect(inSandbox.code, inSandbox.stderr).toBe(0);
    const sandboxId = /^(ins_[a-z0-9]+) is running\./m.exec(inSandbox.stdout)![1]!;
    const container = (await api.call('GET', `/v1/instances/${sandboxId}`, { token })).body;
    expect(inSandbox.stdout).toContain(`ssh -p ${container.ssh_port} root@${container.ssh_host}`);

    const show = await cli.run(['show', lambdaId]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(new RegExp(`^ssh:\\s+ssh ubuntu@${vm.ssh_host.replace(/\./g, '\\.')}$`, 'm'));
    const ls = await cli.run(['ls']);
    expect(ls.stdout).toContain(`ssh ubuntu@${vm.ssh_host}`);
    expect(ls.stdout).toContain(`ssh -p ${container.ssh_port} root@${container.ssh_host}`);
  });

  it('without an ssh_user (a provider the server does not know) it names no user: ssh picks its own default', async () => {
    const run = await cli.run(['rent', await cheapestOf('elsewhere'), '--hours', '1', '--ssh-key', keyFile, '--wait']);
    expect(run.code, run.stderr).toBe(0);
    const id = /^(ins_[a-z0-9]+) is running\./m.exec(run.stdout)![1]!;
    const machine = (await api.call('GET', `/v1/instances/${id}`, { token })).body;
    expect(machine.ssh_user).toBeNull();
    expect(run.stdout).toContain(`\nssh -p ${machine.ssh_port} ${machine.ssh_host}\n`);
    expect((await cli.run(['show', id])).stdout).toMatch(new RegExp(`^ssh:\\s+ssh -p ${machine.ssh_port} ${machine.ssh_host.replace(/\./g, '\\.')}$`, 'm'));
  });
});

describe('gpuctl providers', () => {
  it("lists the server's providers with their SSH user, volumes and operations; --json is the API's answer", async () => {
    const run = await cli.run(['providers']);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^PROVIDER\s+SSH USER\s+VOLUMES\s+SUPPORTS$/);
    expect(lines[1]).toMatch(/^sandbox\s+root\s+yes\s+terminate, reboot, schedule_removal, spot, /);
    expect(lines[2]).toMatch(/^lambda\s+ubuntu\s+yes\s+terminate, reboot, schedule_removal, ssh_keys, volumes$/);
    expect(lines[3]).toMatch(/^elsewhere\s+-\s+no\s+terminate, schedule_removal, /);
    const asJson = await cli.run(['providers', '--json']);
    expect(JSON.parse(asJson.stdout)).toEqual((await api.call('GET', '/v1/providers', { token })).body);
  });
});
