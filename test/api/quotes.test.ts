import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { offerGroups, offerIdOf, usd } from '../support/offer-groups.ts';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';

/**
 * Quotes and dry runs (docs/decisions.md, "Rent by specification and quotes"), over HTTP on PostgreSQL with a
 * ManualClock: a quote holds a price 120 s and rents once at no more; a dry run answers the same figures and changes
 * nothing.
 */
let world: RentalWorld;
let takeGroup: ReturnType<typeof offerGroups>;
beforeAll(async () => {
  world = await rentalWorld({}, { sandbox: { offers: 600 } });
  takeGroup = offerGroups(world);
});
afterAll(() => world.close());

const call = (...args: Parameters<RentalWorld['api']['call']>) => world.api.call(...args);
const quote = (token: string, body: Record<string, unknown>) => call('POST', '/v1/quotes', { token, body });
const reprice = async (nodeId: string, perGpuCents: number) => {
  const res = await call('POST', `/v1/operator/sandbox/offers/${nodeId}/price`, { headers: OPERATOR, body: { price_per_gpu_hour_usd: usd(perGpuCents) } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
};
const committed = async (token: string): Promise<number> => (await call('GET', '/v1/tokens/self', { token })).body.committed_cents;
const instances = async (token: string) => (await call('GET', '/v1/instances', { token })).body as { id: string }[];
const machines = async () => (await world.sandbox.cloud.listMachines()).length;
/** What a test must find unchanged after something that changes nothing. */
const stateOf = async (token: string) => ({ ledger: await world.ledger(token), committed: await committed(token), instances: await instances(token), machines: await machines() });

describe('POST /v1/quotes', () => {
  it('answers the price, the charge and the commitment, valid 120 s; nothing is charged or committed', async () => {
    const { token } = await world.fundedTenant(100);
    const agent = (await call('POST', '/v1/tokens', { token, body: { scopes: ['read', 'rent'], spend_limit_usd: '50' } })).body.token;
    const { verified, search } = await takeGroup(1);
    const node = verified[0]!;
    const res = await quote(agent, { search, termination_hours: 3, name: 'quoted' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^quo_[a-z0-9]+$/),
      node_id: node.id,
      rate_cents_per_hour: node.rate,
      price_per_gpu_hour_cents: node.perGpu,
      charged_now_cents: node.rate,
      commitment_cents: 3 * node.rate,
      cap_remaining_after_cents: 5_000 - 3 * node.rate,
      termination_hours: 3,
      expires_at: new Date(world.clock.now().getTime() + 120_000).toISOString(),
    });
    expect(await committed(agent)).toBe(0);
    expect(await world.ledger(token)).toHaveLength(1);

    // rented with its id: its node, its hours, its name, at its price
    const rented = await world.rent(agent, { quote_id: res.body.id, idempotency_key: 'from-quote' });
    expect(rented.status, JSON.stringify(rented.body)).toBe(201);
    expect(rented.body).toMatchObject({ node_id: node.id, rate_cents_per_hour: node.rate, charged_cents: node.rate, name: 'quoted' });
    expect(rented.body.window_ends_at).toBe(new Date(world.clock.now().getTime() + 3 * 3_600_000).toISOString());
    expect(await committed(agent)).toBe(3 * node.rate);
  });

  it('is refused as the rental would be: 402 past the funds or the cap, 422 without hours on a capped token', async () => {
    const { verified } = await takeGroup(1);
    const node = verified[0]!;
    const poor = await world.fundedTenant(usd(node.rate - 1));
    expect((await quote(poor.token, { node_id: node.id })).status).toBe(402);
    const { token } = await world.fundedTenant(100);
    const agent = (await call('POST', '/v1/tokens', { token, body: { scopes: ['rent'], spend_limit_usd: usd(node.rate) } })).body.token;
    expect((await quote(agent, { node_id: node.id })).status).toBe(422);
    expect((await quote(agent, { node_id: node.id, termination_hours: 2 })).status).toBe(402);
    expect((await quote(token, {})).status).toBe(422);
    expect((await quote(token, { node_id: node.id, search: { gpu_type: 'H100' } })).status).toBe(422);
  });
});

describe('renting by a quote', () => {
  it('after a price drop the lower price is charged', async () => {
    const { token } = await world.fundedTenant(100);
    const { verified } = await takeGroup(1);
    const node = verified[0]!;
    const made = (await quote(token, { node_id: node.id, termination_hours: 2 })).body;
    await reprice(node.id, node.perGpu - 3);
    const lower = (node.perGpu - 3) * node.gpuCount;
    const rented = await world.rent(token, { quote_id: made.id, idempotency_key: 'drop' });
    expect(rented.status, JSON.stringify(rented.body)).toBe(201);
    expect(rented.body).toMatchObject({ node_id: node.id, rate_cents_per_hour: lower, charged_cents: lower });
    expect((await world.ledger(token)).filter((e) => e.kind === 'rental_hour').map((e) => e.amount_cents)).toEqual([-lower]);
    expect(await committed(token)).toBe(2 * lower);
  });

  it('after a price rise it is refused with PRICE_CHANGED and nothing is charged', async () => {
    const { token } = await world.fundedTenant(100);
    const { verified } = await takeGroup(1);
    const node = verified[0]!;
    const made = (await quote(token, { node_id: node.id, termination_hours: 2 })).body;
    await reprice(node.id, node.perGpu + 1);
    const before = await stateOf(token);
    const refused = await world.rent(token, { quote_id: made.id, idempotency_key: 'rise' });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ code: 'PRICE_CHANGED', detail: expect.stringMatching(/above the \d+ quoted.*nothing was charged/) });
    expect(await stateOf(token)).toEqual(before);
    // the key was not taken: a new quote at the new price rents with it
    const again = (await quote(token, { node_id: node.id, termination_hours: 2 })).body;
    const rented = await world.rent(token, { quote_id: again.id, idempotency_key: 'rise-2' });
    expect(rented.body.rate_cents_per_hour).toBe((node.perGpu + 1) * node.gpuCount);
  });

  it('rents once: the same key replays the rental, another key is 409; an expired quote is 409', async () => {
    const { token } = await world.fundedTenant(100);
    const { verified } = await takeGroup(2);
    const node = verified[0]!;
    const made = (await quote(token, { node_id: node.id })).body;
    const first = await world.rent(token, { quote_id: made.id, idempotency_key: 'once' });
    expect(first.status).toBe(201);
    const replayed = await world.rent(token, { quote_id: made.id, idempotency_key: 'once' });
    expect(replayed.status).toBe(201);
    expect(replayed.body.id).toBe(first.body.id);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    const second = await world.rent(token, { quote_id: made.id, idempotency_key: 'twice' });
    expect(second.status).toBe(409);
    expect(second.body.detail).toMatch(new RegExp(`used by instance ${first.body.id}`));

    const late = (await quote(token, { node_id: verified[1]!.id })).body;
    world.clock.advance(120_001);
    const expired = await world.rent(token, { quote_id: late.id, idempotency_key: 'late' });
    expect(expired.status).toBe(409);
    expect(expired.body.detail).toMatch(/expired/);
    expect((await world.ledger(token)).filter((e) => e.kind === 'rental_hour')).toHaveLength(1);
  });

  it("its node and hours are the quote's: 422 when the request names others; another tenant's quote is 404", async () => {
    const { token } = await world.fundedTenant(100);
    const { verified } = await takeGroup(2);
    const made = (await quote(token, { node_id: verified[0]!.id, termination_hours: 2 })).body;
    const otherNode = await world.rent(token, { quote_id: made.id, node_id: verified[1]!.id });
    expect(otherNode.status).toBe(422);
    const otherHours = await world.rent(token, { quote_id: made.id, termination_hours: 3 });
    expect(otherHours.status).toBe(422);
    expect(otherHours.body.detail).toMatch(/termination_hours/);
    expect((await world.rent(token, { quote_id: made.id, termination_hours: 2, name: 'same hours' })).status).toBe(201);

    const stranger = await world.fundedTenant(100);
    const theirs = (await quote(stranger.token, { node_id: verified[1]!.id })).body;
    expect((await world.rent(token, { quote_id: theirs.id })).status).toBe(404);
    expect((await world.rent(token, { quote_id: 'quo_nosuch' })).status).toBe(404);
  });
});

describe('a quote used at once', () => {
  it('by parallel requests with different keys rents one machine, charged once; the others are 409', async () => {
    const { token } = await world.fundedTenant(200);
    // room on the node for all of them: only the quote stands between them and ten machines
    const { verified } = await takeGroup(1, { minAvailable: 10 });
    const node = verified[0]!;
    const made = (await quote(token, { node_id: node.id, termination_hours: 2 })).body;
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => world.rent(token, { quote_id: made.id, idempotency_key: `parallel-${i}` })));
    expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
    const refused = answers.filter((r) => r.status === 409);
    expect(refused).toHaveLength(9);
    for (const r of refused) expect(r.body.detail).toMatch(/used by instance/);
    expect((await world.ledger(token)).filter((e) => e.kind === 'rental_hour')).toHaveLength(1);
    expect(await committed(token)).toBe(2 * node.rate);
    expect(await instances(token)).toHaveLength(1);
  });

  it('by parallel requests with one key answers one rental to all', async () => {
    const { token } = await world.fundedTenant(200);
    const { verified } = await takeGroup(1);
    const made = (await quote(token, { node_id: verified[0]!.id })).body;
    const answers = await Promise.all(Array.from({ length: 10 }, () => world.rent(token, { quote_id: made.id, idempotency_key: 'one-key' })));
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(new Set(answers.map((r) => r.body.id)).size).toBe(1);
    expect((await world.ledger(token)).filter((e) => e.kind === 'rental_hour')).toHaveLength(1);
  });
});

describe('dry_run', () => {
  it("answers a quote's figures and changes nothing: ledger, commitments, machines, quotes, nor its idempotency key", async () => {
    const { token } = await world.fundedTenant(100);
    const agent = (await call('POST', '/v1/tokens', { token, body: { scopes: ['read', 'rent'], spend_limit_usd: '40' } })).body.token;
    const { verified, search } = await takeGroup(2);
    const node = verified[0]!;
    const before = await stateOf(agent);
    const body = { search, termination_hours: 2, idempotency_key: 'dry' };
    const dry = await world.rent(agent, { ...body, dry_run: true });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    expect(dry.body).toEqual({
      node_id: node.id,
      rate_cents_per_hour: node.rate,
      price_per_gpu_hour_cents: node.perGpu,
      charged_now_cents: node.rate,
      commitment_cents: 2 * node.rate,
      cap_remaining_after_cents: 4_000 - 2 * node.rate,
    });
    expect(await stateOf(agent)).toEqual(before);
    expect(await committed(token)).toBe(0);

    // the key is free: the rental itself is made with it, not replayed
    const real = await world.rent(agent, body);
    expect(real.status).toBe(201);
    expect(real.headers.get('idempotent-replayed')).toBeNull();
    expect(real.body).toMatchObject({ node_id: node.id, rate_cents_per_hour: node.rate });

    // a dry run by a quote leaves it unused
    const next = verified[1]!;
    const made = (await quote(agent, { node_id: next.id, termination_hours: 1 })).body;
    expect((await world.rent(agent, { quote_id: made.id, dry_run: true })).body).toMatchObject({ node_id: next.id, commitment_cents: next.rate });
    expect((await world.rent(agent, { quote_id: made.id, idempotency_key: 'after-dry' })).status).toBe(201);
  });

  it("answers the gate's refusals: 402 funds and cap, 422 hours, 409 paused", async () => {
    const { verified } = await takeGroup(1);
    const node = verified[0]!;
    const poor = await world.fundedTenant(usd(node.rate - 1));
    expect((await world.rent(poor.token, { node_id: node.id, dry_run: true })).status).toBe(402);
    const { token } = await world.fundedTenant(100);
    const agent = (await call('POST', '/v1/tokens', { token, body: { scopes: ['rent'], spend_limit_usd: usd(node.rate), max_rental_hours: 4 } })).body.token;
    expect((await world.rent(agent, { node_id: node.id, dry_run: true })).status).toBe(422);
    expect((await world.rent(agent, { node_id: node.id, termination_hours: 5, dry_run: true })).status).toBe(422);
    expect((await world.rent(agent, { node_id: node.id, termination_hours: 2, dry_run: true })).status).toBe(402);
    expect((await world.rent(agent, { node_id: node.id, termination_hours: 1, dry_run: true })).status).toBe(200);
    expect((await call('POST', '/v1/billing/stop', { token })).status).toBe(200);
    const paused = await world.rent(token, { node_id: node.id, dry_run: true });
    expect(paused.status).toBe(409);
    expect(paused.body.detail).toMatch(/paused/);
  });
});

describe('over MCP', () => {
  it('quote_rental, then rent_instance with its quote_id or a search; a rise is PRICE_CHANGED', async () => {
    const { token } = await world.fundedTenant(100);
    const { verified, search } = await takeGroup(3);
    const client = new Client({ name: 'quotes-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${world.api.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    try {
      const tools = new Map((await client.listTools()).tools.map((tool) => [tool.name, tool]));
      expect(tools.get('rent_instance')!.description).toMatch(/Quote first: quote_rental/);
      expect(Object.keys(tools.get('rent_instance')!.inputSchema.properties!)).toEqual(expect.arrayContaining(['node_id', 'search', 'quote_id', 'dry_run']));
      // the SDK checks each answer against the tool's output schema: a quote, a dry run and an instance all pass it
      const tool = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
      const quoted = await tool('quote_rental', { search, termination_hours: 1 });
      expect(quoted.structuredContent).toMatchObject({ node_id: verified[0]!.id, rate_cents_per_hour: verified[0]!.rate });
      const dry = await tool('rent_instance', { search, dry_run: true, idempotency_key: 'mcp-dry' });
      expect(dry.structuredContent).toMatchObject({ node_id: verified[0]!.id, charged_now_cents: verified[0]!.rate });
      const rented = await tool('rent_instance', { quote_id: quoted.structuredContent!.id, idempotency_key: 'mcp-quote' });
      expect(rented.isError).toBeFalsy();
      expect(rented.structuredContent).toMatchObject({ node_id: verified[0]!.id, status: expect.any(String) });

      const next = (await tool('quote_rental', { node_id: verified[1]!.id })).structuredContent!;
      await reprice(verified[1]!.id, verified[1]!.perGpu + 1);
      const refused = await tool('rent_instance', { quote_id: next.id, idempotency_key: 'mcp-rise' });
      expect(refused.isError).toBe(true);
      expect((refused.content[0] as { text: string }).text).toMatch(/^PRICE_CHANGED: /);
      // a search takes the price as it is now: the first node gone, the second at its new price
      await world.sandbox.cloud.withdrawOffer(offerIdOf(verified[0]!.id));
      const bySearch = await tool('rent_instance', { search: { ...search, max_price_per_gpu_hour: usd(verified[2]!.perGpu) }, idempotency_key: 'mcp-search' });
      expect(bySearch.structuredContent).toMatchObject({ node_id: verified[1]!.id, rate_cents_per_hour: (verified[1]!.perGpu + 1) * verified[1]!.gpuCount });
    } finally {
      await client.close();
    }
  });
});

describe('quotes left unused', () => {
  it('are deleted by the sweep a day after they expire, whoever made them, whether or not they quote again', async () => {
    const { verified } = await takeGroup(2);
    const first = await world.fundedTenant(100);
    const second = await world.fundedTenant(100);
    const old = (await quote(first.token, { node_id: verified[0]!.id })).body;
    const used = (await quote(second.token, { node_id: verified[1]!.id })).body;
    expect((await world.rent(second.token, { quote_id: used.id, idempotency_key: 'kept' })).status).toBe(201);

    // expired, but not a day past it: kept, so a late use is told it expired
    world.clock.advance(120_001 + 23 * 3_600_000);
    const early = (await call('POST', '/v1/operator/sweep', { headers: OPERATOR })).body;
    expect(early.quotes_pruned).toBe(0);
    expect((await world.rent(first.token, { quote_id: old.id })).body.detail).toMatch(/expired/);

    world.clock.advance(3_600_000);
    const pass = (await call('POST', '/v1/operator/sweep', { headers: OPERATOR })).body;
    expect(pass.quotes_pruned).toBeGreaterThanOrEqual(1);
    expect(pass.steps.map((step: { name: string }) => step.name)).toContain('expired quotes');
    expect((await world.rent(first.token, { quote_id: old.id })).status).toBe(404);
    // a used quote is the rental's record: kept
    expect((await world.rent(second.token, { quote_id: used.id, idempotency_key: 'again' })).body.detail).toMatch(/used by instance/);
  });
});
