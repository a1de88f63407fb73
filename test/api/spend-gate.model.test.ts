import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { toolCatalog } from '../../hosts/mcp/tool-catalog.ts';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';

/**
 * The one spend gate, driven as an attacker would (docs/decisions.md, "One spend gate"): every route the route table
 * marks as committing money (`x-commits-money` in /openapi.json), over REST and over MCP, from random trees of capped
 * tokens, one at a time and in parallel bursts, between sweeps and clock moves. After every step:
 * - no capped token has committed more than its cap, and what everything made under it was charged is within what it
 *   committed (so charged + still committed never passes the cap);
 * - a tenant without funds has nothing that bills: no machine, no volume, no charge;
 * - what the live machines and volumes made under a token with a burn ceiling cost an hour never passes it, and is
 *   what the token shows as its burn (docs/decisions.md, "Burn ceilings").
 */
const MINUTE = 60_000;
let world: RentalWorld;
let nodes: { id: string; rate: number; gpuType: string; gpuCount: number }[];
let spotTypes: { gpuType: string; gpuCount: number; bidUsd: string }[];
let volumeRegion: string;
let operations: Map<string, string>;

beforeAll(async () => {
  world = await rentalWorld({}, { sandbox: { offers: 1_500, spotPreemptionsPerHour: 2 } });
  const offers = await world.offers((o) => o.rate >= 20 && o.rate <= 300);
  nodes = offers.map((o) => ({ id: o.id, rate: o.rate, gpuType: o.gpuType, gpuCount: o.gpuCount }));
  spotTypes = offers
    .filter((o) => o.spotPriceUsdPerHour !== null)
    .slice(0, 6)
    .map((o) => ({ gpuType: o.gpuType, gpuCount: o.gpuCount, bidUsd: (Math.ceil((o.rate * 0.8) / o.gpuCount) / 100).toFixed(2) }));
  volumeRegion = (await world.sandbox.volumeOffers())[0]!.region;
  const doc = (await world.api.call('GET', '/openapi.json')).body;
  const marked = Object.values(doc.paths as Record<string, Record<string, any>>).flatMap((methods) => Object.values(methods).filter((op) => op['x-commits-money']));
  const tools = new Map(toolCatalog(doc).map((tool) => [tool.operationId, tool.name]));
  operations = new Map(marked.map((op) => [op.operationId as string, tools.get(op.operationId)!]));
});
afterAll(() => world.close());

type Kind = 'rentInstance' | 'createReservation' | 'createSpotClaim' | 'createVolume';
const KINDS: Kind[] = ['rentInstance', 'createReservation', 'createSpotClaim', 'createVolume'];
const PATHS: Record<Kind, string> = { rentInstance: '/v1/instances', createReservation: '/v1/reservations', createSpotClaim: '/v1/spot-claims', createVolume: '/v1/volumes' };

interface Tenant {
  tenantId: string;
  root: string;
  /** Every token of the tree: its secret, its id, its parent's index (-1: the root). */
  tokens: { secret: string; id: string; parent: number }[];
  /** What each request made, by the index of the token that made it. */
  made: { kind: Kind; id: string; token: number }[];
}

interface Real {
  funded: Tenant;
  broke: Tenant;
  clients: Map<string, Client>;
  keys: number;
}

async function tree(tenantId: string, root: string, rootId: string, shape: { cap: number | null; hours: number | null; burn: number | null; parent: number }[]): Promise<Tenant> {
  const tenant: Tenant = { tenantId, root, tokens: [{ secret: root, id: rootId, parent: -1 }], made: [] };
  for (const link of shape) {
    const parent = tenant.tokens[Math.min(link.parent, tenant.tokens.length - 1)]!;
    const res = await world.api.call('POST', '/v1/tokens', {
      token: parent.secret,
      body: {
        scopes: ['read', 'rent', 'manage', 'billing'],
        ...(link.cap !== null && { spend_limit_usd: (link.cap / 100).toFixed(2) }),
        ...(link.hours !== null && { max_rental_hours: link.hours }),
        ...(link.burn !== null && { max_burn_usd_per_hour: (link.burn / 100).toFixed(2) }),
      },
    });
    // a child asking for more than its parent has left is refused (422): the tree is what could be made
    if (res.status === 201) tenant.tokens.push({ secret: res.body.token, id: res.body.id, parent: tenant.tokens.indexOf(parent) });
    else expect(res.status, JSON.stringify(res.body)).toBe(422);
  }
  return tenant;
}

/** A request body for one of the routes that commit money, from a few random numbers. */
function bodyFor(kind: Kind, pick: number, hours: number | null, key: string | null): Record<string, unknown> {
  const node = nodes[pick % nodes.length]!;
  const withHours = (field: string) => (hours === null ? {} : { [field]: hours });
  switch (kind) {
    case 'rentInstance':
      return { node_id: node.id, ...withHours('termination_hours'), idempotency_key: key ?? `k${pick}-${Math.random()}` };
    case 'createReservation':
      return { node_id: node.id, name: 'model', starts_at: new Date(world.clock.now().getTime() + (10 + (pick % 50)) * MINUTE).toISOString(), hours: hours ?? 1 + (pick % 3) };
    case 'createSpotClaim': {
      const spot = spotTypes[pick % spotTypes.length]!;
      return { search: { gpu_type: spot.gpuType }, gpu_count: spot.gpuCount, max_price_per_gpu_hour: spot.bidUsd, name: 'model', ...withHours('hours') };
    }
    case 'createVolume':
      return { name: 'model', size_gb: [10, 500, 2_000, 10_000][pick % 4], provider: 'sandbox', region: volumeRegion, ...withHours('hours') };
  }
}

async function mcpFor(real: Real, secret: string): Promise<Client> {
  let client = real.clients.get(secret);
  if (!client) {
    client = new Client({ name: 'spend-model', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${world.api.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${secret}` } } }));
    real.clients.set(secret, client);
  }
  return client;
}

/** Sends one spend over REST or MCP; answers the id of what was made, or null when it was refused. */
async function spend(real: Real, tenant: Tenant, spec: SpendSpec): Promise<string | null> {
  const index = spec.token % tenant.tokens.length;
  const token = tenant.tokens[index]!;
  const key = spec.key === null ? null : `key-${spec.key}`;
  const body = bodyFor(spec.kind, spec.pick, spec.hours, key);
  let made: { id: string } | null;
  if (spec.mcp) {
    const result = (await (await mcpFor(real, token.secret)).callTool({ name: operations.get(spec.kind)!, arguments: body })) as CallToolResult;
    made = result.isError ? null : (result.structuredContent as { id: string });
  } else {
    const res = await world.api.call('POST', PATHS[spec.kind], { token: token.secret, body });
    // refusals are the API's own: a cap, funds, hours, a gone node, a reused key; never a 5xx
    expect([200, 201, 202, 402, 409, 422], JSON.stringify(res.body)).toContain(res.status);
    made = res.status < 300 ? res.body : null;
  }
  if (made && !tenant.made.some((m) => m.id === made.id)) tenant.made.push({ kind: spec.kind, id: made.id, token: index });
  return made?.id ?? null;
}

async function check(real: Real): Promise<void> {
  const { api } = world;
  for (const tenant of [real.funded, real.broke]) {
    const tokens = new Map(((await api.call('GET', '/v1/tokens', { token: tenant.root })).body as any[]).map((t) => [t.id, t]));
    const instances = new Map(((await api.call('GET', '/v1/instances', { token: tenant.root })).body as any[]).map((i) => [i.id, i]));
    const reservations = new Map(((await api.call('GET', '/v1/reservations', { token: tenant.root })).body as any[]).map((r) => [r.id, r]));
    const claims = new Map(((await api.call('GET', '/v1/spot-claims', { token: tenant.root })).body as any[]).map((c) => [c.id, c]));
    const usage = (await api.call('GET', '/v1/metering/usage?resource_kind=volume_storage&limit=1000', { token: tenant.root })).body as any[];
    const charged = (made: Tenant['made'][number]): number => {
      if (made.kind === 'rentInstance') return instances.get(made.id)!.charged_cents;
      if (made.kind === 'createReservation') {
        const started = reservations.get(made.id)!.instance_id;
        return started ? instances.get(started)!.charged_cents : 0;
      }
      if (made.kind === 'createSpotClaim') return claims.get(made.id)!.charged_cents;
      return usage.filter((r) => r.reference === made.id).reduce((sum, r) => sum + r.amount_cents, 0);
    };
    const inSubtree = (index: number, of: number): boolean => index === of || (index >= 0 && inSubtree(tenant.tokens[index]!.parent, of));
    const volumes = new Map(((await api.call('GET', '/v1/volumes', { token: tenant.root })).body as any[]).map((v) => [v.id, v]));
    // what a made thing burns an hour now: a machine whose billing has not ended, a volume not deleted or failed
    const burns = (made: Tenant['made'][number]): number => {
      const machineId = made.kind === 'rentInstance' ? made.id : made.kind === 'createReservation' ? reservations.get(made.id)!.instance_id : made.kind === 'createSpotClaim' ? claims.get(made.id)!.instance_id : null;
      if (machineId) {
        const machine = instances.get(machineId)!;
        return ['provisioning', 'running', 'rebooting'].includes(machine.status) ? machine.rate_cents_per_hour : 0;
      }
      const volume = made.kind === 'createVolume' ? volumes.get(made.id) : undefined;
      if (!volume || !['creating', 'available', 'attached'].includes(volume.status)) return 0;
      // size x the exact GB-hour price, in cents rounded up once
      const [whole, fraction = ''] = (volume.price_per_gb_hour_usd as string).split('.');
      const micros = BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
      return Number((BigInt(volume.size_gb) * micros + 9_999n) / 10_000n);
    };
    // read again after: nothing was asked for meanwhile, so what burns can only have fallen since the first read
    const tokensAfter = new Map(((await api.call('GET', '/v1/tokens', { token: tenant.root })).body as any[]).map((t) => [t.id, t]));
    tenant.tokens.forEach((token, index) => {
      const row = tokens.get(token.id);
      if (!row) return;
      const burning = tenant.made.filter((m) => inSubtree(m.token, index)).reduce((sum, m) => sum + burns(m), 0);
      expect(burning, `token ${index} shows a burn unlike what runs under it`).toBeLessThanOrEqual(row.burn_cents_per_hour);
      expect(burning, `token ${index} shows a burn unlike what runs under it`).toBeGreaterThanOrEqual(tokensAfter.get(token.id).burn_cents_per_hour);
      if (row.max_burn_cents_per_hour !== null) expect(row.burn_cents_per_hour, `token ${index} burns past its ceiling`).toBeLessThanOrEqual(row.max_burn_cents_per_hour);
      if (row.spend_limit_cents === null) return;
      expect(row.committed_cents, `token ${index} committed beyond its cap`).toBeLessThanOrEqual(row.spend_limit_cents);
      const spent = tenant.made.filter((m) => inSubtree(m.token, index)).reduce((sum, m) => sum + charged(m), 0);
      expect(spent, `what was made under token ${index} was charged beyond what it committed`).toBeLessThanOrEqual(row.committed_cents);
    });
  }
  // nothing that bills, ever, for a tenant without funds
  const broke = real.broke.root;
  expect((await api.call('GET', '/v1/billing/ledger', { token: broke })).body).toEqual([]);
  expect((await api.call('GET', '/v1/instances', { token: broke })).body).toEqual([]);
  expect((await api.call('GET', '/v1/volumes', { token: broke })).body).toEqual([]);
  expect((await api.call('GET', '/v1/spot-claims', { token: broke })).body.every((c: any) => c.charged_cents === 0 && c.instance_id === null)).toBe(true);
}

interface SpendSpec {
  kind: Kind;
  mcp: boolean;
  token: number;
  pick: number;
  hours: number | null;
  /** An idempotency key shared by requests of one run (rentals), or none. */
  key: number | null;
  /** The tenant without funds instead of the funded one. */
  broke: boolean;
}

type Cmd = fc.AsyncCommand<object, Real>;
const command = (name: string, run: (r: Real) => Promise<void>): Cmd => ({
  check: () => true,
  async run(_m, r) {
    await run(r);
    await check(r);
  },
  toString: () => name,
});

const spendSpec: fc.Arbitrary<SpendSpec> = fc.record({
  kind: fc.constantFrom(...KINDS),
  mcp: fc.boolean(),
  token: fc.nat(),
  pick: fc.nat({ max: 10_000 }),
  hours: fc.option(fc.integer({ min: 1, max: 8 }), { nil: null, freq: 3 }),
  key: fc.option(fc.nat({ max: 3 }), { nil: null }),
  broke: fc.boolean(),
});
const show = (s: SpendSpec) => `${s.kind}${s.mcp ? '/mcp' : ''}(t${s.token}, p${s.pick}, h${s.hours}, k${s.key}${s.broke ? ', broke' : ''})`;

const commands = [
  spendSpec.map((s) => command(show(s), async (r) => void (await spend(r, s.broke ? r.broke : r.funded, s)))),
  fc.array(spendSpec, { minLength: 2, maxLength: 8 }).map((specs) =>
    command(`burst[${specs.map(show).join(', ')}]`, async (r) => void (await Promise.all(specs.map((s) => spend(r, s.broke ? r.broke : r.funded, s))))),
  ),
  fc.integer({ min: 1, max: 150 }).map((minutes) =>
    command(`sweep after ${minutes}m`, async () => {
      world.clock.advance(minutes * MINUTE);
      expect((await world.api.call('POST', '/v1/operator/sweep', { headers: OPERATOR })).status).toBe(200);
    }),
  ),
  fc.nat().map((pick) =>
    command(`end(${pick})`, async (r) => {
      const made = r.funded.made[pick % Math.max(1, r.funded.made.length)];
      if (!made) return;
      const token = r.funded.root;
      const res =
        made.kind === 'rentInstance'
          ? await world.api.call('POST', `/v1/instances/${made.id}/terminate`, { token })
          : made.kind === 'createVolume'
            ? await world.api.call('DELETE', `/v1/volumes/${made.id}`, { token })
            : await world.api.call('DELETE', `${PATHS[made.kind]}/${made.id}`, { token });
      // ended already (a volume deleted before is gone: 404) or not endable now (409)
      expect([200, 204, 404, 409], JSON.stringify(res.body)).toContain(res.status);
    }),
  ),
];

const treeShape = fc.array(
  fc.record({
    cap: fc.option(fc.integer({ min: 5, max: 3_000 }), { nil: null, freq: 4 }),
    hours: fc.option(fc.integer({ min: 1, max: 6 }), { nil: null }),
    burn: fc.option(fc.integer({ min: 20, max: 500 }), { nil: null, freq: 2 }),
    parent: fc.nat({ max: 6 }),
  }),
  { minLength: 1, maxLength: 6 },
);

describe('the spend gate under random capped token trees, parallel requests and sweeps', () => {
  it('covers every route the route table marks as committing money', () => {
    expect([...operations.keys()].sort()).toEqual([...KINDS].sort());
    expect([...operations.values()].every(Boolean)).toBe(true);
  });

  it('never lets a token commit or be charged past its cap, nor burn past its ceiling, and gives a tenant without funds nothing that bills', async () => {
    await fc.assert(
      fc.asyncProperty(treeShape, treeShape, fc.integer({ min: 0, max: 4_000 }), fc.commands(commands, { maxCommands: 14 }), async (fundedShape, brokeShape, credit, cmds) => {
        const funded = credit > 0 ? await world.fundedTenant((credit / 100).toFixed(2)) : await world.api.newTenant();
        const broke = await world.api.newTenant();
        const real: Real = {
          funded: await tree(funded.tenantId, funded.token, funded.tokenId, fundedShape),
          broke: await tree(broke.tenantId, broke.token, broke.tokenId, brokeShape),
          clients: new Map(),
          keys: 0,
        };
        try {
          await fc.asyncModelRun(() => ({ model: {}, real }), cmds);
        } finally {
          await Promise.all([...real.clients.values()].map((client) => client.close()));
        }
      }),
      { numRuns: 25 },
    );
  }, 600_000);
});
