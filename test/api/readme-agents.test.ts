import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GPUCTL, gpuctl } from '../cli/run-gpuctl.ts';
import { rentalWorld, type RentalWorld } from '../support/rentals.ts';

/**
 * The README's two MCP client configurations, exactly as a newcomer copies them: each block is JSON an MCP client
 * reads, and each works once the placeholders are filled (the server's address, the agent's token), made with the
 * very gpuctl commands the README names.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const readme = readFileSync(resolve(ROOT, 'README.md'), 'utf8');
const section = /\n## Agents \(MCP\)\n([\s\S]*?)\n## /.exec(readme)?.[1] ?? '';
const blocks = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => match[1]!);
/** The gpuctl commands the section shows, as written (placeholders included). */
const commands = [...section.matchAll(/`((?:[A-Z_]+=\S+ )?npx gpuctl [^`]+)`/g)].map((match) => match[1]!);

type Server = { type?: string; url?: string; headers?: Record<string, string>; command?: string; args?: string[] };
const serverOf = (block: string): Server => {
  const servers = (JSON.parse(block) as { mcpServers: Record<string, Server> }).mcpServers;
  expect(Object.keys(servers)).toHaveLength(1);
  return Object.values(servers)[0]!;
};

let world: RentalWorld;
const clients: Client[] = [];
beforeAll(async () => {
  world = await rentalWorld();
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await world?.close();
});

const tokenSelf = async (client: Client) => {
  const answer = (await client.callTool({ name: 'get_token_self', arguments: {} })) as CallToolResult;
  expect(answer.isError, JSON.stringify(answer.content)).toBeFalsy();
  return answer.structuredContent as { id: string; scopes: string[]; remaining_cents: number | null; effective_max_rental_hours: number | null };
};

describe('the README MCP configurations', () => {
  it('are two JSON blocks: POST /mcp with a bearer, and npx gpuctl mcp over stdio', () => {
    expect(blocks).toHaveLength(2);
    const [remote, local] = blocks.map(serverOf);
    expect(remote).toMatchObject({ type: 'http', headers: { Authorization: expect.stringMatching(/^Bearer gcp_/) } });
    expect(new URL(remote!.url!).pathname).toBe('/mcp');
    expect(local).toEqual({ command: 'npx', args: expect.arrayContaining(['gpuctl', 'mcp']) });
    // `npx gpuctl` is this package's bin
    expect(JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')).bin.gpuctl).toBe('bin/gpuctl.js');
  });

  it("work as written once the server's address and a token from the README's own commands are filled in", async () => {
    const { token: root } = await world.fundedTenant(50);
    const cli = gpuctl();
    const fill = (text: string, agent = '') => text.replaceAll('http://localhost:8080', world.api.baseUrl).replaceAll('gcp_…', agent);
    /** A command of the README run as written (`npx gpuctl` is the bin; a leading NAME=value is its environment). */
    const run = async (command: string, extra: string[] = [], agent = '') => {
      const [, env, args] = /^(?:([A-Z_]+=\S+) )?npx gpuctl (.*)$/.exec(fill(command, agent))!;
      const result = await cli.run([...args!.split(' '), ...extra], { env: env ? Object.fromEntries([env.split('=') as [string, string]]) : {} });
      expect(result.code, `${command}\n${result.stderr}`).toBe(0);
      return result.stdout;
    };
    expect((await cli.run(['login', '--url', world.api.baseUrl, '--token', root])).code).toBe(0);

    const create = commands.find((command) => command.startsWith('npx gpuctl tokens create'))!;
    const agent = JSON.parse(await run(create, ['--json'])).token as string;
    await run(commands.find((command) => / login /.test(command))!, [], agent);

    const remote = serverOf(fill(blocks[0]!, agent));
    const overHttp = new Client({ name: 'readme-remote', version: '1.0.0' });
    clients.push(overHttp);
    await overHttp.connect(new StreamableHTTPClientTransport(new URL(remote.url!), { requestInit: { headers: remote.headers! } }));
    const self = await tokenSelf(overHttp);
    // the capped token the README's command made: read and rent, $25, 8 hours
    expect(self).toMatchObject({ scopes: ['read', 'rent'], remaining_cents: 2_500, effective_max_rental_hours: 8 });

    const local = serverOf(blocks[1]!);
    const overStdio = new Client({ name: 'readme-local', version: '1.0.0' });
    clients.push(overStdio);
    const env = Object.fromEntries(Object.entries(process.env).filter(([key, value]) => !key.startsWith('GPUCTL_') && value !== undefined)) as Record<string, string>;
    // npx runs the package's bin: here, the same file on this Node
    await overStdio.connect(
      new StdioClientTransport({ command: process.execPath, args: [GPUCTL, ...local.args!.slice(1)], env: { ...env, XDG_CONFIG_HOME: cli.configHome }, stderr: 'pipe' }),
    );
    expect((await tokenSelf(overStdio)).id).toBe(self.id);
    expect((await overStdio.listTools()).tools.map((tool) => tool.name)).toContain('rent_instance');
  });
});
