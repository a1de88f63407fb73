import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { rentalWorld, type RentalWorld } from '../support/rentals.ts';
import { startApi } from '../support/api.ts';

let world: RentalWorld;
const clients: Client[] = [];
beforeAll(async () => {
  world = await rentalWorld();
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await world.close();
});

/** The SDK's own client over Streamable HTTP, with a bearer. */
async function connect(token: string): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${world.api.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  clients.push(client);
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult;
const text = (result: CallToolResult) => (result.content[0] as { text: string }).text;

async function childToken(root: string, body: Record<string, unknown>): Promise<string> {
  const res = await world.api.call('POST', '/v1/tokens', { token: root, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.token;
}

describe('POST /mcp', () => {
  it('lists the tools the token scopes allow, never the operator or sign-in ones', async () => {
    const { token } = await world.fundedTenant(10);
    const all = (await (await connect(token)).listTools()).tools.map((tool) => tool.name);
    for (const name of ['search_gpus', 'get_marketplace', 'rent_instance', 'list_instances', 'get_instance', 'terminate_instance', 'reboot_instance', 'schedule_removal',
      'cancel_scheduled_removal', 'get_account', 'get_balance', 'list_ledger', 'emergency_stop', 'create_token', 'list_tokens', 'get_token_self', 'revoke_token',
      'create_ssh_key', 'create_template', 'create_volume', 'create_reservation', 'ingest_usage', 'create_checkout', 'sync_checkout', 'update_auto_recharge', 'forget_card', 'resume_rentals',
      'get_budget', 'set_budget', 'clear_budget']) {
      expect(all).toContain(name);
    }
    expect(all.filter((name) => /operator|sign_in|sign_up|device|stripe|manual_checkout|tenant|credit|create_charge|confirm|reject/.test(name))).toEqual([]);

    const reader = await connect(await childToken(token, { scopes: ['read'] }));
    const readTools = (await reader.listTools()).tools;
    expect(readTools.map((tool) => tool.name)).toContain('search_gpus');
    expect(readTools.map((tool) => tool.name)).not.toContain('rent_instance');
    expect(readTools.map((tool) => tool.name)).not.toContain('get_balance');
    // tools any token may call are there too
    expect(readTools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['get_token_self', 'list_tokens', 'get_marketplace']));
    // a tool outside the scopes answers why, as the REST route would
    const refused = await call(reader, 'get_balance');
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/billing scope/);

    const tools = new Map(readTools.map((tool) => [tool.name, tool]));
    expect(tools.get('search_gpus')!.annotations).toMatchObject({ readOnlyHint: true });
    const rent = (await (await connect(token)).listTools()).tools.find((tool) => tool.name === 'rent_instance')!;
    expect(rent.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: true });
    expect(rent.description).toMatch(/charges the first hour/);
    expect(rent.inputSchema.required).toContain('idempotency_key');
    // a dry run's figures or the instance: either answer is the tool's output
    expect(rent.outputSchema).toMatchObject({ type: 'object', anyOf: [{ $ref: '#/$defs/RentalDryRunOut' }, { $ref: '#/$defs/InstanceOut' }] });
    expect((rent.outputSchema as any).$defs.InstanceOut).toMatchObject({ type: 'object', properties: { id: expect.anything(), rate_cents_per_hour: expect.anything() } });
    const createToken = (await (await connect(token)).listTools()).tools.find((tool) => tool.name === 'create_token')!;
    expect(Object.keys(createToken.inputSchema.properties!)).not.toContain('bootstrap_secret');
    expect(Object.keys(createToken.inputSchema.properties!)).not.toContain('tenant_id');
  });

  it('searches: the same nodes as GET /v1/gpus, typed filters read like query text', async () => {
    const { token } = await world.fundedTenant(10);
    const client = await connect(token);
    const result = await call(client, 'search_gpus', { gpu_count: 1, limit: 5, max_price_per_gpu_hour: 50 });
    expect(result.isError).toBeFalsy();
    const rest = await world.api.call('GET', '/v1/gpus?gpu_count=1&limit=5&max_price_per_gpu_hour=50', { token });
    expect(result.structuredContent).toEqual(rest.body);
    expect(JSON.parse(text(result))).toEqual(rest.body);
    expect((result.structuredContent as any).nodes.length).toBeGreaterThan(0);

    const bad = await call(client, 'search_gpus', { gpu_count: 0 });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/gpu_count/);
  });

  it('rents within a capped token; over the cap is an error with the 402 detail and nothing charged', async () => {
    const root = await world.fundedTenant(100);
    const [node] = await world.offers((o) => o.rate > 50 && o.rate < 2_000);
    const agent = await connect(await childToken(root.token, { scopes: ['read', 'rent'], spend_limit_usd: ((3 * node!.rate) / 100).toFixed(2) }));

    const over = await call(agent, 'rent_instance', { node_id: node!.id, termination_hours: 4, idempotency_key: 'over-1' });
    expect(over.isError).toBe(true);
    expect(text(over)).toMatch(/cap/i);
    expect((await world.balance(root.token)).balance_cents).toBe(10_000);

    const rented = await call(agent, 'rent_instance', { node_id: node!.id, termination_hours: 2, idempotency_key: 'ok-1' });
    expect(rented.isError, text(rented)).toBeFalsy();
    expect(rented.structuredContent).toMatchObject({ node_id: node!.id, status: 'provisioning', charged_cents: node!.rate });
    expect((await world.balance(root.token)).balance_cents).toBe(10_000 - node!.rate);

    // the same key again is the same machine
    const again = await call(agent, 'rent_instance', { node_id: node!.id, termination_hours: 2, idempotency_key: 'ok-1' });
    expect((again.structuredContent as any).id).toBe((rented.structuredContent as any).id);
    const listed = await call(agent, 'list_instances');
    expect((listed.structuredContent as any).items.map((i: any) => i.id)).toEqual([(rented.structuredContent as any).id]);
    expect((await world.balance(root.token)).balance_cents).toBe(10_000 - node!.rate);

    // without a key an agent is told to send one
    const keyless = await call(agent, 'rent_instance', { node_id: node!.id, termination_hours: 1 });
    expect(keyless.isError).toBe(true);
    expect(text(keyless)).toMatch(/idempotency_key/);

    const ended = await call(agent, 'terminate_instance', { instance_id: (rented.structuredContent as any).id });
    expect(ended.isError, text(ended)).toBeFalsy();
    expect((ended.structuredContent as any).status).toMatch(/terminat/);
  });

  it("another tenant's instance is not found; a 204 is {ok: true}; resources read as JSON", async () => {
    const mine = await world.fundedTenant(100);
    const theirs = await world.fundedTenant(100);
    const [node] = await world.offers((o) => o.rate > 50 && o.rate < 2_000);
    const their = await world.rent(theirs.token, { node_id: node!.id });
    expect(their.status).toBe(201);
    const client = await connect(mine.token);
    for (const tool of ['get_instance', 'terminate_instance']) {
      const result = await call(client, tool, { instance_id: their.body.id });
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(/not found|no such/i);
    }
    expect((await world.api.call('GET', `/v1/instances/${their.body.id}`, { token: theirs.token })).body.status).not.toMatch(/terminat/);

    const spare = await childToken(mine.token, { scopes: ['read'] });
    const spareId = (await world.api.call('GET', '/v1/tokens/self', { token: spare })).body.id;
    const revoked = await call(client, 'revoke_token', { token_id: spareId });
    expect(revoked.structuredContent).toEqual({ ok: true });

    const resources = (await client.listResources()).resources.map((r) => r.uri);
    expect(resources).toEqual(['account://balance', 'instances://']);
    const balance = await client.readResource({ uri: 'account://balance' });
    expect(balance.contents[0]).toMatchObject({ uri: 'account://balance', mimeType: 'application/json' });
    expect(JSON.parse((balance.contents[0] as { text: string }).text)).toEqual((await world.api.call('GET', '/v1/billing/balance', { token: mine.token })).body);
    const instances = await client.readResource({ uri: 'instances://' });
    expect(JSON.parse((instances.contents[0] as { text: string }).text)).toEqual([]);
  });

  it('no or a bad bearer is 401 with WWW-Authenticate and {detail}; GET and DELETE are 405', async () => {
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
    const headers = { accept: 'application/json, text/event-stream' };
    const none = await world.api.call('POST', '/mcp', { body: initialize, headers });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(none.body.detail).toMatch(/Authorization/);
    const bad = await world.api.call('POST', '/mcp', { body: initialize, headers, token: 'gcp_nope' });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(bad.body.detail).toEqual(expect.any(String));
    await expect(connect('gcp_nope')).rejects.toThrow();

    const { token } = await world.fundedTenant(1);
    for (const method of ['GET', 'DELETE']) {
      const res = await world.api.call(method, '/mcp', { token, headers });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(res.body.detail).toMatch(/stateless/);
    }
  });
});

describe('POST /mcp rate limit', () => {
  it('spends the same per-token budget as the REST routes: over it, 429 with Retry-After and {detail}', async () => {
    const api = await startApi({ rateLimits: { publicPerMinute: 100, perTokenPerMinute: 4 } });
    try {
      const { token } = await api.newTenant();
      const toolCall = () =>
        api.call('POST', '/mcp', {
          token,
          headers: { accept: 'application/json, text/event-stream' },
          body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_token_self', arguments: {} } },
        });
      expect((await api.call('GET', '/v1/tokens/self', { token })).status).toBe(200);
      expect((await api.call('GET', '/v1/tokens/self', { token })).status).toBe(200);
      const first = await toolCall();
      expect(first.status).toBe(200);
      expect(first.headers.get('ratelimit')).toMatch(/remaining=1/);
      expect((await toolCall()).status).toBe(200);
      const over = await toolCall();
      expect(over.status).toBe(429);
      expect(over.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(over.body.detail).toMatch(/too many requests/);
      expect((await api.call('GET', '/v1/tokens/self', { token })).status).toBe(429);
    } finally {
      await api.close();
    }
  });
});

describe('POST /mcp batches', () => {
  it('a JSON-RPC batch is refused with a JSON-RPC error naming why, nothing in it run, one unit of the budget spent, whatever it holds', async () => {
    const api = await startApi({ rateLimits: { publicPerMinute: 100, perTokenPerMinute: 10 } });
    try {
      const { token } = await api.newTenant();
      const headers = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
      const toolCall = (id: number, name = 'get_token_self', args: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
      const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
      const batches: unknown[][] = [
        Array.from({ length: 100 }, (_, i) => toolCall(i + 1)),
        [toolCall(1)],
        [],
        [{ jsonrpc: '2.0', method: 'notifications/initialized' }],
        [initialize],
        // a batch that would change something, had it been run
        [toolCall(1, 'create_ssh_key', { name: 'k', public_key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl x' })],
      ];
      for (const [n, batch] of batches.entries()) {
        const res = await api.call('POST', '/mcp', { token, headers, body: batch });
        expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(400);
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        expect(res.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringMatching(/batch/) } });
        expect(res.body.error.message).toMatch(/2025-06-18/);
        expect(res.headers.get('ratelimit')).toMatch(new RegExp(`remaining=${9 - n}\\b`));
      }
      expect((await api.call('GET', '/v1/ssh-keys', { token })).body).toEqual([]); // remaining=3
      // a single message is answered as before, and spends one unit
      const single = await api.call('POST', '/mcp', { token, headers, body: toolCall(7) });
      expect(single.status).toBe(200);
      expect(single.body).toMatchObject({ jsonrpc: '2.0', id: 7, result: { structuredContent: { tenant_id: expect.any(String) } } });
      expect(single.headers.get('ratelimit')).toMatch(/remaining=2\b/);
    } finally {
      await api.close();
    }
  });
});

// last: it moves the shared clock on by most of an hour
describe('the dead-man switch over MCP', () => {
  it('tells an agent its idle timeout and deadline; every tool call keeps it alive, and a silent one stops working', async () => {
    const { token } = await world.fundedTenant(1);
    const agent = await connect(await childToken(token, { scopes: ['read'], idle_timeout_minutes: 10 }));
    const tools = new Map((await agent.listTools()).tools.map((tool) => [tool.name, tool]));
    expect(tools.get('get_token_self')!.description).toMatch(/idle_deadline_at/);
    expect(tools.get('heartbeat_token')).toBeDefined();
    const start = world.clock.now().getTime();
    for (let minute = 8; minute <= 40; minute += 8) {
      world.clock.set(new Date(start + minute * 60_000));
      const answer = await call(agent, minute === 40 ? 'get_token_self' : 'search_gpus', minute === 40 ? {} : { limit: 1 });
      expect(answer.isError, text(answer)).toBeFalsy();
    }
    const self = (await call(agent, 'get_token_self')).structuredContent as { idle_timeout_minutes: number; idle_deadline_at: string };
    expect(self).toMatchObject({ idle_timeout_minutes: 10, idle_deadline_at: new Date(start + 50 * 60_000).toISOString() });
    expect((await call(agent, 'heartbeat_token')).structuredContent).toEqual({ idle_timeout_minutes: 10, idle_deadline_at: self.idle_deadline_at });
    world.clock.set(new Date(start + 50 * 60_000));
    await expect(call(agent, 'get_token_self')).rejects.toThrow(/401|timed out idle/);
  });
});
