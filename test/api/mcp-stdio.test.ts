import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { rentalWorld, type RentalWorld } from '../support/rentals.ts';

let world: RentalWorld;
const clients: Client[] = [];
beforeAll(async () => {
  world = await rentalWorld();
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await world.close();
});

/** `npm run mcp` as a desktop agent starts it: the SDK's stdio client, GPUCTL_URL and GPUCTL_TOKEN in its environment. */
async function connect(token: string): Promise<Client> {
  const client = new Client({ name: 'mcp-stdio-test', version: '1.0.0' });
  const transport = new StdioClientTransport({
    command: 'npm',
    args: ['run', 'mcp'],
    cwd: process.cwd(),
    env: { ...(process.env as Record<string, string>), GPUCTL_URL: world.api.baseUrl, GPUCTL_TOKEN: token },
    stderr: 'pipe',
  });
  clients.push(client);
  await client.connect(transport);
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult;
const text = (result: CallToolResult) => (result.content[0] as { text: string }).text;

async function childToken(root: string, body: Record<string, unknown>): Promise<string> {
  const res = await world.api.call('POST', '/v1/tokens', { token: root, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.token;
}

describe('npm run mcp (stdio, against a remote server)', () => {
  it('offers the same tools as POST /mcp for the same token, and searches like GET /v1/gpus', async () => {
    const { token } = await world.fundedTenant(10);
    const reader = await childToken(token, { scopes: ['read'] });
    const stdio = await connect(reader);
    const stdioTools = (await stdio.listTools()).tools;
    const res = await world.api.call('POST', '/mcp', {
      token: reader,
      headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
    });
    expect(res.status).toBe(200);
    expect(stdioTools).toEqual(res.body.result.tools);
    expect(stdioTools.map((tool) => tool.name)).toContain('search_gpus');
    expect(stdioTools.map((tool) => tool.name)).not.toContain('rent_instance');

    const found = await call(stdio, 'search_gpus', { gpu_count: 1, limit: 3 });
    expect(found.isError, text(found)).toBeFalsy();
    expect(found.structuredContent).toEqual((await world.api.call('GET', '/v1/gpus?gpu_count=1&limit=3', { token: reader })).body);
    const refused = await call(stdio, 'rent_instance', { node_id: 'sandbox:1', idempotency_key: 'k' });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/rent scope/);
  });

  it("rents within a capped token, refuses over it with the 402 detail, once per key; another tenant's machine is not found", async () => {
    const root = await world.fundedTenant(100);
    const other = await world.fundedTenant(100);
    const [node, another] = await world.offers((o) => o.rate > 50 && o.rate < 2_000);
    const agent = await connect(await childToken(root.token, { scopes: ['read', 'rent'], spend_limit_usd: ((3 * node!.rate) / 100).toFixed(2) }));

    const over = await call(agent, 'rent_instance', { node_id: node!.id, termination_hours: 4, idempotency_key: 'over' });
    expect(over.isError).toBe(true);
    const rest402 = await world.api.call('POST', '/v1/instances', {
      token: await childToken(root.token, { scopes: ['read', 'rent'], spend_limit_usd: ((3 * node!.rate) / 100).toFixed(2) }),
      body: { node_id: node!.id, termination_hours: 4, idempotency_key: 'over' },
    });
    expect(rest402.status).toBe(402);
    expect(text(over)).toBe(rest402.body.detail);
    expect((await world.balance(root.token)).balance_cents).toBe(10_000);

    const first = await call(agent, 'rent_instance', { node_id: node!.id, termination_hours: 2, idempotency_key: 'once' });
    expect(first.isError, text(first)).toBeFalsy();
    const again = await call(agent, 'rent_instance', { node_id: node!.id, termination_hours: 2, idempotency_key: 'once' });
    expect((again.structuredContent as any).id).toBe((first.structuredContent as any).id);
    expect(((await call(agent, 'list_instances')).structuredContent as any).items).toHaveLength(1);
    expect((await world.balance(root.token)).balance_cents).toBe(10_000 - node!.rate);

    const keyless = await call(agent, 'rent_instance', { node_id: node!.id });
    expect(keyless.isError).toBe(true);
    expect(text(keyless)).toMatch(/idempotency_key/);

    const theirs = await world.rent(other.token, { node_id: another!.id });
    expect(theirs.status, JSON.stringify(theirs.body)).toBe(201);
    const notMine = await call(agent, 'get_instance', { instance_id: theirs.body.id });
    expect(notMine.isError).toBe(true);
    expect(text(notMine)).toMatch(/not found|no such/i);

    const instances = await agent.readResource({ uri: 'instances://' });
    expect(JSON.parse((instances.contents[0] as { text: string }).text).map((i: any) => i.id)).toEqual([(first.structuredContent as any).id]);
  });

  it('a bad token is refused with the reason, naming GPUCTL_TOKEN', async () => {
    const client = await connect('gcp_not_a_token');
    await expect(client.listTools()).rejects.toThrow(/GPUCTL_TOKEN/);
  });
});

describe('gpuctl mcp (stdio, signed in as gpuctl is)', () => {
  it('serves the tools of the profile gpuctl login saved, with no GPUCTL_URL or GPUCTL_TOKEN', async () => {
    const { token } = await world.fundedTenant(10);
    const reader = await childToken(token, { scopes: ['read'] });
    const config = mkdtempSync(join(tmpdir(), 'gpuctl-mcp-'));
    try {
      // the environment an MCP client gives `npx gpuctl mcp`: the user's, where gpuctl keeps its profiles
      const env: Record<string, string> = { ...(process.env as Record<string, string>), XDG_CONFIG_HOME: config };
      delete env.GPUCTL_URL;
      delete env.GPUCTL_TOKEN;
      const gpuctl = join(process.cwd(), 'bin/gpuctl.js');
      // not spawnSync: the server answering the login runs in this process
      await promisify(execFile)(process.execPath, [gpuctl, 'login', '--url', world.api.baseUrl, '--token', reader], { env });

      const client = new Client({ name: 'gpuctl-mcp-test', version: '1.0.0' });
      clients.push(client);
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [gpuctl, 'mcp'], env, stderr: 'pipe' }));
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toContain('search_gpus');
      expect(names).not.toContain('rent_instance');
      const self = await call(client, 'get_token_self');
      expect(self.isError, text(self)).toBeFalsy();
      expect((self.structuredContent as { scopes: string[] }).scopes).toEqual(['read']);
    } finally {
      rmSync(config, { recursive: true, force: true });
    }
  });

  it('without a profile, says how to sign in (exit 3)', () => {
    const config = mkdtempSync(join(tmpdir(), 'gpuctl-mcp-'));
    try {
      const env: Record<string, string> = { ...(process.env as Record<string, string>), XDG_CONFIG_HOME: config };
      delete env.GPUCTL_URL;
      delete env.GPUCTL_TOKEN;
      const run = spawnSync(process.execPath, [join(process.cwd(), 'bin/gpuctl.js'), 'mcp'], { env, encoding: 'utf8', input: '' });
      expect(run.status).toBe(3);
      expect(run.stderr).toMatch(/gpuctl login/);
      expect(run.stdout).toBe('');
    } finally {
      rmSync(config, { recursive: true, force: true });
    }
  });
});
