import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rentalWorld, type RentalWorld } from '../support/rentals.ts';
import { sshKeygen } from '../support/ssh-keys.ts';

let world: RentalWorld;
beforeAll(async () => {
  world = await rentalWorld();
});
afterAll(() => world.close());

const sum = (entries: { amount_cents: number }[]) => entries.reduce((s, e) => s + e.amount_cents, 0);

describe('POST /v1/instances', () => {
  it('rents a node: the first hour is charged at once, the machine comes up, the account shows it', async () => {
    const { token, tenantId } = await world.fundedTenant(100);
    const [node] = await world.offers((o) => o.rate > 50);
    const res = await world.rent(token, { node_id: node!.id, name: 'trainer', ssh_public_key: sshKeygen('ed25519', { comment: 'me@laptop' }).publicLine });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      tenant_id: tenantId,
      node_id: node!.id,
      provider: 'sandbox',
      name: 'trainer',
      status: 'provisioning',
      gpu_type: node!.gpuType,
      gpu_count: node!.gpuCount,
      rate_cents_per_hour: node!.rate,
      charged_cents: node!.rate,
      created_at: '2026-11-21T12:00:00.000Z',
      paid_until: '2026-11-21T13:00:00.000Z',
      supported_operations: ['terminate', 'reboot', 'schedule_removal', 'spot', 'custom_image', 'registry_auth', 'command', 'env', 'ports', 'startup_script', 'ssh_keys', 'volumes'],
    });
    expect(res.body.id).toMatch(/^ins_/);
    expect(await world.balance(token)).toMatchObject({ balance_cents: 10_000 - node!.rate, owed_cents: 0 });
    const ledger = await world.ledger(token);
    expect(ledger[0]).toMatchObject({ kind: 'rental_hour', amount_cents: -node!.rate, reference: res.body.id });
    expect(sum(ledger)).toBe(10_000 - node!.rate);

    const account = (await world.api.call('GET', '/v1/billing/account', { token })).body;
    expect(account).toMatchObject({ burn_cents_per_hour: node!.rate, running_machines: 1, stops_at: expect.any(String) });

    // our instance id is the machine's label upstream
    expect((await world.sandbox.cloud.listMachines()).filter((m) => m.label === res.body.id)).toHaveLength(1);

    world.clock.advance(20_000);
    const up = await world.api.call('GET', `/v1/instances/${res.body.id}`, { token });
    expect(up.body).toMatchObject({ status: 'running', started_at: '2026-11-21T12:00:20.000Z', ssh_host: expect.any(String), ssh_port: expect.any(Number) });
    world.clock.advance(-20_000);
    const listed = await world.api.call('GET', '/v1/instances', { token });
    expect(listed.body.map((i: any) => i.id)).toEqual([res.body.id]);
  });

  it('answers 402 when the balance is short of the first hour, and charges nothing', async () => {
    const { token } = await world.fundedTenant('0.50');
    const [node] = await world.offers((o) => o.rate > 50);
    const res = await world.rent(token, { node_id: node!.id });
    expect(res.status).toBe(402);
    expect(res.body.detail).toMatch(/first hour costs/);
    expect((await world.balance(token)).balance_cents).toBe(50);
    expect((await world.api.call('GET', '/v1/instances', { token })).body).toEqual([]);
  });

  it('answers 409 for a node that is gone and 422 for a node id that cannot be one', async () => {
    const { token } = await world.fundedTenant(10);
    expect((await world.rent(token, { node_id: 'sandbox:999999999' })).status).toBe(409);
    // a malformed id of a known provider answers like one of an unknown provider: it cannot be a node
    const answers = [];
    for (const node_id of ['nimbus:1', 'nocolon', '', 'sandbox:nope', 'sandbox:007', 'sandbox:']) {
      const res = await world.rent(token, { node_id });
      expect(res.status, node_id).toBe(422);
      expect(res.body.detail).toContain('node_id');
      answers.push(res.body.errors.map((e: { loc: unknown }) => e.loc));
    }
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    for (const body of [{ node_id: 'sandbox:100001', termination_hours: 0 }, { node_id: 'sandbox:100001', termination_hours: 1.5 }, { node_id: 'sandbox:100001', ssh_public_key: 'not a key' }, { node_id: 'sandbox:100001', gpus: 2 }]) {
      expect((await world.rent(token, body)).status, JSON.stringify(body)).toBe(422);
    }
    expect((await world.balance(token)).balance_cents).toBe(1_000);
  });

  it('a definite upstream refusal fails the instance and refunds the charge', async () => {
    const { token } = await world.fundedTenant(50);
    const [node] = await world.offers();
    world.sandbox.cloud.failNextCreates(1, 'rejected');
    const res = await world.rent(token, { node_id: node!.id, idempotency_key: 'refused-once' });
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/refunded/);
    expect((await world.balance(token)).balance_cents).toBe(5_000);
    const [instance] = (await world.api.call('GET', '/v1/instances', { token })).body;
    expect(instance).toMatchObject({ status: 'failed', charged_cents: 0 });
    expect(sum(await world.ledger(token))).toBe(5_000);
  });

  it('needs the rent scope', async () => {
    const { token } = await world.fundedTenant(10);
    const reader = await world.api.call('POST', '/v1/tokens', { token, body: { scopes: ['read'] } });
    expect((await world.rent(reader.body.token, { node_id: 'sandbox:100001' })).status).toBe(403);
  });
});

describe('spend caps', () => {
  it('a capped token must give a shutdown window within its max hours, and cannot commit beyond its cap', async () => {
    const { token } = await world.fundedTenant(1_000);
    const [node] = await world.offers((o) => o.rate >= 100 && o.rate <= 300);
    const cap = node!.rate * 3; // three hours of this node
    const agent = await world.api.call('POST', '/v1/tokens', {
      token,
      body: { scopes: ['read', 'rent'], spend_limit_usd: (cap / 100).toFixed(2), max_rental_hours: 4 },
    });
    const rent = (body: Record<string, unknown>) => world.rent(agent.body.token, { node_id: node!.id, ...body });

    const missing = await rent({});
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toMatch(/termination_hours.*spend cap/);
    expect((await rent({ termination_hours: 5 })).status).toBe(422);
    const over = await rent({ termination_hours: 4 });
    expect(over.status).toBe(402);
    expect(over.body.detail).toMatch(/cap/);

    const ok = await rent({ termination_hours: 3 });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect(ok.body.window_ends_at).toBe('2026-11-21T15:00:00.000Z');
    const self = await world.api.call('GET', '/v1/tokens/self', { token: agent.body.token });
    expect(self.body).toMatchObject({ committed_cents: cap, remaining_cents: 0 });

    // the commitment counts against the issuer as well, so minting children cannot escape a cap
    const rootSelf = await world.api.call('GET', '/v1/tokens/self', { token });
    expect(rootSelf.body.committed_cents).toBe(cap);
  });
});

describe('idempotency', () => {
  it('fifty parallel requests with one key make one machine and one charge, with identical answers', async () => {
    const { token } = await world.fundedTenant(100);
    const [node] = await world.offers((o) => o.rate > 20);
    const body = { node_id: node!.id, name: 'once', idempotency_key: 'key-parallel-50' };
    const answers = await Promise.all(Array.from({ length: 50 }, () => world.rent(token, body)));
    expect(answers.every((r) => r.status === 201)).toBe(true);
    const ids = new Set(answers.map((r) => r.body.id));
    expect(ids.size).toBe(1);
    expect(answers.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(49);
    const [id] = [...ids];
    expect((await world.sandbox.cloud.listMachines()).filter((m) => m.label === id)).toHaveLength(1);
    const charges = (await world.ledger(token)).filter((e) => e.kind === 'rental_hour');
    expect(charges).toHaveLength(1);
    expect((await world.balance(token)).balance_cents).toBe(10_000 - node!.rate);

    const other = await world.rent(token, { ...body, name: 'something else' });
    expect(other.status).toBe(409);
    expect(other.body.detail).toMatch(/idempotency_key/);
  });
});

describe('concurrency against one balance', () => {
  it('parallel rentals that together exceed the balance: the excess is refused, the balance never negative', async () => {
    const nodes = (await world.offers((o) => o.rate >= 100 && o.rate <= 200)).slice(0, 12);
    const affordable = nodes.slice(0, 12).map((n) => n.rate);
    const funds = affordable[0]! + affordable[1]! + affordable[2]!; // exactly enough for the three cheapest
    const { token } = await world.fundedTenant((funds / 100).toFixed(2));
    const answers = await Promise.all(nodes.map((node) => world.rent(token, { node_id: node.id })));
    const rented = answers.filter((r) => r.status === 201);
    expect(rented.length).toBeGreaterThanOrEqual(1);
    expect(rented.length).toBeLessThanOrEqual(3);
    expect(answers.filter((r) => r.status !== 201).every((r) => r.status === 402)).toBe(true);
    const balance = await world.balance(token);
    expect(balance.balance_cents).toBeGreaterThanOrEqual(0);
    expect(balance.balance_cents).toBe(funds - rented.reduce((s, r) => s + r.body.rate_cents_per_hour, 0));
    expect(sum(await world.ledger(token))).toBe(balance.balance_cents);
  });

  it('parallel rentals through one capped token never commit beyond the cap', async () => {
    const { token } = await world.fundedTenant(1_000);
    const nodes = (await world.offers((o) => o.rate >= 100 && o.rate <= 200)).slice(12, 24);
    const cap = nodes.reduce((max, n) => Math.max(max, n.rate), 0) * 2 * 3; // room for about three 2-hour rentals
    const agent = await world.api.call('POST', '/v1/tokens', { token, body: { scopes: ['rent'], spend_limit_usd: (cap / 100).toFixed(2) } });
    const answers = await Promise.all(nodes.map((node) => world.rent(agent.body.token, { node_id: node.id, termination_hours: 2 })));
    const committed = answers.filter((r) => r.status === 201).reduce((s, r) => s + r.body.rate_cents_per_hour * 2, 0);
    expect(committed).toBeLessThanOrEqual(cap);
    expect(answers.filter((r) => r.status === 402).length).toBeGreaterThan(0);
    const self = await world.api.call('GET', '/v1/tokens/self', { token: agent.body.token });
    expect(self.body.committed_cents).toBe(committed);
  });
});

describe('acting on an instance', () => {
  it('terminates: within the first hour nothing is refunded; the machine is gone upstream', async () => {
    const { token } = await world.fundedTenant(100);
    const [node] = await world.offers((o) => o.rate > 30);
    const rented = (await world.rent(token, { node_id: node!.id })).body;
    world.clock.advance(10 * 60_000);
    const done = await world.api.call('POST', `/v1/instances/${rented.id}/terminate`, { token });
    world.clock.advance(-10 * 60_000);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: 'terminated', charged_cents: node!.rate, terminated_at: '2026-11-21T12:10:00.000Z' });
    expect((await world.sandbox.cloud.listMachines()).some((m) => m.label === rented.id)).toBe(false);
    expect((await world.balance(token)).balance_cents).toBe(10_000 - node!.rate);
    const again = await world.api.call('POST', `/v1/instances/${rented.id}/terminate`, { token });
    expect(again.body).toMatchObject({ status: 'terminated', charged_cents: node!.rate });
    expect((await world.api.call('GET', '/v1/billing/account', { token })).body).toMatchObject({ burn_cents_per_hour: 0, running_machines: 0, stops_at: null });
  });

  it('terminated after 90 minutes unpaid: the usage beyond the hour is charged by the started minute', async () => {
    const { token } = await world.fundedTenant(100);
    const [node] = await world.offers((o) => o.rate > 30);
    const rented = (await world.rent(token, { node_id: node!.id })).body;
    world.clock.advance(89 * 60_000 + 1_000);
    const owed = await world.balance(token);
    expect(owed.owed_cents).toBe(Math.ceil((node!.rate * 90) / 60) - node!.rate);
    const done = await world.api.call('POST', `/v1/instances/${rented.id}/terminate`, { token });
    world.clock.advance(-(89 * 60_000 + 1_000));
    expect(done.body.charged_cents).toBe(Math.ceil((node!.rate * 90) / 60));
    expect(await world.balance(token)).toMatchObject({ balance_cents: 10_000 - done.body.charged_cents, owed_cents: 0 });
  });

  it('reboots, schedules and cancels removal, and refuses what its state does not allow', async () => {
    const { token } = await world.fundedTenant(100);
    const [node] = await world.offers();
    const rented = (await world.rent(token, { node_id: node!.id })).body;
    expect((await world.api.call('POST', `/v1/instances/${rented.id}/reboot`, { token })).status).toBe(409); // still provisioning
    world.clock.advance(30_000);
    await world.api.call('GET', `/v1/instances/${rented.id}`, { token });
    const rebooting = await world.api.call('POST', `/v1/instances/${rented.id}/reboot`, { token });
    expect(rebooting.body.status).toBe('rebooting');

    const when = '2026-11-21T15:30:00.000Z';
    const scheduled = await world.api.call('POST', `/v1/instances/${rented.id}/schedule-removal`, { token, body: { removal_scheduled_at: when } });
    expect(scheduled.body.removal_scheduled_at).toBe(when);
    expect((await world.api.call('POST', `/v1/instances/${rented.id}/schedule-removal`, { token, body: { removal_scheduled_at: '2026-11-21T11:00:00Z' } })).status).toBe(422);
    expect((await world.api.call('POST', `/v1/instances/${rented.id}/schedule-removal`, { token, body: { removal_scheduled_at: 'soon' } })).status).toBe(422);
    const cancelled = await world.api.call('DELETE', `/v1/instances/${rented.id}/schedule-removal`, { token });
    expect(cancelled.body.removal_scheduled_at).toBeNull();

    await world.api.call('POST', `/v1/instances/${rented.id}/terminate`, { token });
    world.clock.advance(-30_000);
    expect((await world.api.call('POST', `/v1/instances/${rented.id}/schedule-removal`, { token, body: { removal_scheduled_at: when } })).status).toBe(409);
    expect((await world.api.call('POST', `/v1/instances/${rented.id}/reboot`, { token })).status).toBe(409);
  });

  it("another tenant's instance ids answer 404 on every route", async () => {
    const owner = await world.fundedTenant(100);
    const stranger = await world.fundedTenant(100);
    const [node] = await world.offers();
    const rented = (await world.rent(owner.token, { node_id: node!.id })).body;
    const calls: [string, string, unknown?][] = [
      ['GET', `/v1/instances/${rented.id}`],
      ['POST', `/v1/instances/${rented.id}/terminate`],
      ['POST', `/v1/instances/${rented.id}/reboot`],
      ['POST', `/v1/instances/${rented.id}/schedule-removal`, { removal_scheduled_at: '2026-11-22T00:00:00Z' }],
      ['DELETE', `/v1/instances/${rented.id}/schedule-removal`],
    ];
    for (const [method, path, body] of calls) {
      const res = await world.api.call(method, path, { token: stranger.token, ...(body !== undefined && { body }) });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect((await world.api.call('GET', `/v1/instances/${rented.id}`, { token: owner.token })).body.status).toBe('provisioning');
  });
});

describe('renting closed', () => {
  it('answers 503 and charges nothing', async () => {
    const closed = await rentalWorld({ market: { rentalsOpen: false } });
    try {
      const { token } = await closed.fundedTenant(100);
      const [node] = await closed.offers();
      const res = await closed.rent(token, { node_id: node!.id, idempotency_key: 'k' });
      expect(res.status).toBe(503);
      expect(res.body.detail).toMatch(/not open/);
      expect(await closed.ledger(token)).toHaveLength(1); // the credit only
      expect((await closed.balance(token)).balance_cents).toBe(10_000);
    } finally {
      await closed.close();
    }
  });
});

describe('the marketplace lists the tenant\'s recent instances', () => {
  it('newest first, at most recent_limit, only the caller\'s', async () => {
    const { token } = await world.fundedTenant(100);
    const other = await world.fundedTenant(100);
    const nodes = await world.offers((o) => o.rate < 500);
    const ids: string[] = [];
    for (const node of nodes.slice(40, 43)) {
      ids.push((await world.rent(token, { node_id: node.id })).body.id);
      world.clock.advance(1_000);
    }
    await world.rent(other.token, { node_id: nodes[44]!.id });
    const res = await world.api.call('GET', '/v1/marketplace?recent_limit=2', { token });
    expect(res.body.recent_instances.map((i: any) => i.id)).toEqual([ids[2], ids[1]]);
    expect(res.body.recent_instances[0]).toMatchObject({ provider: 'sandbox', status: 'provisioning', rate_cents_per_hour: expect.any(Number) });
  });
});
