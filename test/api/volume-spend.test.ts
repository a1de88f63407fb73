import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';

/**
 * A volume is money like a machine: it passes the spend gate (funds for its first day, the token chain's cap and
 * hours, its storage for its window committed on the chain), the sweep ends its window, and operators bound what a
 * tenant holds upstream.
 */
let world: RentalWorld;
let region: string;
const HOUR = 3_600_000;
/** The sandbox's storage price: 0.000096 USD per GB-hour, so 10,000 GB cost 96 cents an hour. */
const centsPerHour = (gb: number) => Math.ceil((gb * 96) / 10_000);

beforeAll(async () => {
  world = await rentalWorld({ volumes: { maxGbPerTenant: 20_000 } }, { sandbox: { offers: 300 }, faulty: true });
  region = (await world.sandbox.volumeOffers())[0]!.region;
});
afterAll(() => world.close());

const make = (token: string, body: Record<string, unknown>) => world.api.call('POST', '/v1/volumes', { token, body: { name: 'data', provider: 'sandbox', region, ...body } });
const volumesOf = async (token: string) => (await world.api.call('GET', '/v1/volumes', { token })).body as any[];
const self = async (token: string) => (await world.api.call('GET', '/v1/tokens/self', { token })).body;
const sweep = () => world.api.call('POST', '/v1/operator/sweep', { headers: OPERATOR });
async function child(root: string, body: Record<string, unknown>): Promise<string> {
  const res = await world.api.call('POST', '/v1/tokens', { token: root, body: { scopes: ['read', 'rent', 'billing'], ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.token;
}
const storageRecords = async (token: string, volumeId: string) =>
  ((await world.api.call('GET', '/v1/metering/usage?resource_kind=volume_storage&limit=1000', { token })).body as any[]).filter((r) => r.reference === volumeId);

describe('volumes and the spend cap', () => {
  it('need hours from a capped token, and commit their storage for those hours on its chain', async () => {
    const { token: root } = await world.fundedTenant(100);
    const agent = await child(root, { spend_limit_usd: '0.20' });

    const noHours = await make(agent, { size_gb: 100 });
    expect(noHours.status).toBe(422);
    expect(noHours.body.errors[0].loc).toEqual(['body', 'hours']);

    // ten thousand GB cost 96 cents an hour: one hour is already past a 20-cent cap
    const huge = await make(agent, { size_gb: 10_000, hours: 1 });
    expect(huge.status, JSON.stringify(huge.body)).toBe(402);
    expect(huge.body.detail).toMatch(/commits 96 cents.*leaves 20/);
    expect((await self(agent)).committed_cents).toBe(0);
    expect(await volumesOf(root)).toEqual([]);

    // 1,000 GB: 10 cents an hour, two hours fit
    const fits = await make(agent, { size_gb: 1_000, hours: 2 });
    expect(fits.status, JSON.stringify(fits.body)).toBe(201);
    expect(fits.body.ends_at).toBe(new Date(world.clock.now().getTime() + 2 * HOUR).toISOString());
    expect((await self(agent)).committed_cents).toBe(2 * centsPerHour(1_000));
    expect((await make(agent, { size_gb: 1_000, hours: 1 })).status).toBe(402);
    expect((await self(root)).committed_cents).toBe(20);
  });

  it('are refused over MCP exactly as over REST', async () => {
    const { token: root } = await world.fundedTenant(100);
    const agent = await child(root, { spend_limit_usd: '0.20' });
    const client = new Client({ name: 'volume-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${world.api.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${agent}` } } }));
    try {
      const over = (await client.callTool({ name: 'create_volume', arguments: { name: 'x', size_gb: 10_000, provider: 'sandbox', region, hours: 3 } })) as CallToolResult;
      expect(over.isError).toBe(true);
      expect((over.content[0] as { text: string }).text).toMatch(/token's cap leaves 20/);
      const noHours = (await client.callTool({ name: 'create_volume', arguments: { name: 'x', size_gb: 10, provider: 'sandbox', region } })) as CallToolResult;
      expect(noHours.isError).toBe(true);
      expect((noHours.content[0] as { text: string }).text).toMatch(/hours/);
    } finally {
      await client.close();
    }
    expect(await volumesOf(root)).toEqual([]);
    expect((await self(agent)).committed_cents).toBe(0);
  });

  it('stay within the cap when many are asked for at once', async () => {
    const { token: root } = await world.fundedTenant(100);
    // 1,000 GB for 2 hours commit 20 cents: a 65-cent cap fits three
    const agent = await child(root, { spend_limit_usd: '0.65' });
    const answers = await Promise.all(Array.from({ length: 10 }, () => make(agent, { size_gb: 1_000, hours: 2 })));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(3);
    expect(answers.filter((a) => a.status === 402)).toHaveLength(7);
    expect((await self(agent)).committed_cents).toBe(60);
    expect(await volumesOf(root)).toHaveLength(3);
  });

  it('are deleted by the sweep when their hours end, billed those hours and no more, and release the rest of the commitment', async () => {
    const { token: root } = await world.fundedTenant(100);
    const agent = await child(root, { spend_limit_usd: '5', max_rental_hours: 3 });
    expect((await make(agent, { size_gb: 1_000, hours: 4 })).status).toBe(422);
    const made = await make(agent, { size_gb: 1_000, hours: 3 });
    expect(made.status).toBe(201);
    const rate = centsPerHour(1_000);
    expect((await self(agent)).committed_cents).toBe(3 * rate);

    world.clock.advance(3 * HOUR + 5 * 60_000);
    const report = (await sweep()).body;
    expect(report.volumes_expired).toBeGreaterThanOrEqual(1);
    expect(await volumesOf(root)).toEqual([]);
    // no upstream volume of ours is left at the provider
    expect((await world.sandbox.listVolumes()).filter((v) => v.label === made.body.id)).toEqual([]);
    world.clock.advance(5 * HOUR);
    await sweep();
    const records = await storageRecords(root, made.body.id);
    expect(records).toHaveLength(3);
    const billed = records.reduce((sum, r) => sum + r.amount_cents, 0);
    expect(billed).toBeLessThanOrEqual(3 * rate);
    expect((await self(agent)).committed_cents).toBe(billed);
  });

  it('deleted early keep on the chain only what their started hours can cost', async () => {
    const { token: root } = await world.fundedTenant(100);
    const agent = await child(root, { spend_limit_usd: '5' });
    const made = await make(agent, { size_gb: 1_000, hours: 10 });
    const rate = centsPerHour(1_000);
    expect((await self(agent)).committed_cents).toBe(10 * rate);
    world.clock.advance(90 * 60_000);
    expect((await world.api.call('DELETE', `/v1/volumes/${made.body.id}`, { token: agent })).status).toBe(204);
    const billed = (await storageRecords(root, made.body.id)).reduce((sum, r) => sum + r.amount_cents, 0);
    expect(billed).toBeLessThanOrEqual(2 * rate);
    expect((await self(agent)).committed_cents).toBe(billed);
    await sweep();
    expect((await self(agent)).committed_cents).toBe(billed);
  });

  it('deleted early keep on the chain what their storage was charged, recorded at the delete, and release the rest', async () => {
    const { token: root } = await world.fundedTenant(100);
    const agent = await child(root, { spend_limit_usd: '5' });
    // 1,000 GB cost 9.6 cents an hour (committed at 10), 250 GB 2.4 (committed at 3)
    const big = await make(agent, { size_gb: 1_000, hours: 2 });
    const small = await make(agent, { size_gb: 250, hours: 2 });
    expect([big.status, small.status]).toEqual([201, 201]);
    expect((await self(agent)).committed_cents).toBe(2 * 10 + 2 * 3);
    world.clock.advance(10 * 60_000);
    expect((await world.api.call('DELETE', `/v1/volumes/${big.body.id}`, { token: agent })).status).toBe(204);
    expect((await world.api.call('DELETE', `/v1/volumes/${small.body.id}`, { token: agent })).status).toBe(204);

    // each started hour is recorded at the delete: the tenant's metered total is 12.0 cents, charged 10 then 2
    const charged = [...(await storageRecords(root, big.body.id)), ...(await storageRecords(root, small.body.id))].map((r) => r.amount_cents);
    expect(charged.sort((a, b) => a - b)).toEqual([2, 10]);
    // what stays committed is what was charged, not the 3 cents an hour of storage could have cost
    expect((await self(agent)).committed_cents).toBe(12);
    expect((await self(root)).committed_cents).toBe(12);
    world.clock.advance(3 * HOUR);
    await sweep();
    expect((await self(agent)).committed_cents).toBe(12);
    expect((await storageRecords(root, big.body.id)).length + (await storageRecords(root, small.body.id)).length).toBe(2);
  });

  it('a create the provider refuses, or that is never found there, releases its whole commitment', async () => {
    const { token: root } = await world.fundedTenant(100);
    const agent = await child(root, { spend_limit_usd: '5' });
    world.faults!.failNextVolumeCreates(1, 'rejected');
    const refused = await make(agent, { size_gb: 1_000, hours: 5 });
    expect(refused.status).toBe(409);
    expect((await self(agent)).committed_cents).toBe(0);

    world.faults!.failNextVolumeCreates(1, 'lost');
    const unanswered = await make(agent, { size_gb: 1_000, hours: 5 });
    expect(unanswered.status).toBe(202);
    expect((await self(agent)).committed_cents).toBe(5 * centsPerHour(1_000));
    world.clock.advance(16 * 60_000);
    expect((await sweep()).body.volumes_failed).toBeGreaterThanOrEqual(1);
    expect((await self(agent)).committed_cents).toBe(0);
  });
});

describe('volumes and the account', () => {
  it('are refused to a tenant without funds: nothing is made, nothing is owed', async () => {
    const tenant = await world.api.newTenant();
    const huge = await make(tenant.token, { size_gb: 10_000 });
    expect(huge.status, JSON.stringify(huge.body)).toBe(402);
    expect(huge.body.detail).toMatch(/24 hours of its storage cost 2304 cents and 0 are available/);
    expect((await make(tenant.token, { size_gb: 1 })).status).toBe(402);
    expect(await volumesOf(tenant.token)).toEqual([]);
    expect((await world.balance(tenant.token)).available_cents).toBe(0);
  });

  it('need available funds for their first 24 hours of storage (or their whole window, when shorter)', async () => {
    const { token, tenantId } = await world.fundedTenant('23.03');
    expect((await make(token, { size_gb: 10_000 })).status).toBe(402);
    // a 2-hour volume needs its 2 hours
    expect((await make(token, { size_gb: 10_000, hours: 2 })).status).toBe(201);
    await world.api.call('POST', `/v1/operator/tenants/${tenantId}/credit`, { headers: OPERATOR, body: { amount_usd: '0.01', reason: 'one more cent' } });
    expect((await make(token, { size_gb: 10_000 })).status).toBe(201);
  });

  it('are refused while renting is paused', async () => {
    const { token } = await world.fundedTenant(100);
    await world.api.call('POST', '/v1/billing/stop', { token });
    const paused = await make(token, { size_gb: 10 });
    expect(paused.status).toBe(409);
    expect(paused.body.detail).toMatch(/paused/);
    expect(await volumesOf(token)).toEqual([]);
  });
});

describe('VOLUME_MAX_GB_PER_TENANT', () => {
  it('bounds what one tenant holds at the providers: past it 409 naming the limit, and a deletion makes room', async () => {
    const { token } = await world.fundedTenant(1_000);
    const first = await make(token, { size_gb: 10_000 });
    const second = await make(token, { size_gb: 9_000 });
    expect([first.status, second.status]).toEqual([201, 201]);
    const over = await make(token, { size_gb: 1_001 });
    expect(over.status).toBe(409);
    expect(over.body.detail).toMatch(/VOLUME_MAX_GB_PER_TENANT/);
    expect(over.body.detail).toMatch(/19000 GB/);
    expect((await make(token, { size_gb: 1_000 })).status).toBe(201);
    expect((await world.api.call('DELETE', `/v1/volumes/${second.body.id}`, { token })).status).toBe(204);
    expect((await make(token, { size_gb: 9_000 })).status).toBe(201);
  });

  it('holds against parallel creates', async () => {
    const { token } = await world.fundedTenant(1_000);
    const answers = await Promise.all(Array.from({ length: 8 }, () => make(token, { size_gb: 5_000 })));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(4);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(4);
  });
});
