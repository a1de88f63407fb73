import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';

let world: RentalWorld;
beforeAll(async () => {
  world = await rentalWorld();
});
afterAll(() => world.close());

const HOUR = 3_600_000;
const sweep = () => world.api.call('POST', '/v1/operator/sweep', { headers: OPERATOR });
const get = (token: string, id: string) => world.api.call('GET', `/v1/instances/${id}`, { token }).then((r) => r.body);
const sum = (entries: { amount_cents: number }[]) => entries.reduce((s, e) => s + e.amount_cents, 0);
const cost = (rate: number, minutes: number) => Math.ceil((rate * Math.max(60, minutes)) / 60);

/** Each test moves the shared clock forward only; starting points are taken from it. */
async function rentOne(usd: number | string, body: Record<string, unknown> = {}, pick = 0) {
  const tenant = await world.fundedTenant(usd);
  const nodes = await world.offers((o) => o.rate >= 60 && o.rate <= 400);
  const node = nodes[pick]!;
  const res = await world.rent(tenant.token, { node_id: node.id, ...body });
  if (res.status !== 201) throw new Error(`rent failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { ...tenant, node, instance: res.body, start: world.clock.now().getTime() };
}

describe('the billing sweep', () => {
  it('pays each due hour from the balance, once, however often it runs', async () => {
    const { token, node, instance, start } = await rentOne(100);
    world.clock.set(new Date(start + HOUR));
    const [a, b] = await Promise.all([sweep(), sweep()]);
    expect(a.status).toBe(200);
    expect(a.body.blocks_paid + b.body.blocks_paid).toBeGreaterThanOrEqual(1);
    await sweep();
    const after = await get(token, instance.id);
    expect(after.paid_until).toBe(new Date(start + 2 * HOUR).toISOString());
    expect(after.charged_cents).toBe(2 * node.rate);
    const ledger = await world.ledger(token);
    expect(ledger.filter((e) => e.kind === 'rental_hour' && e.reference === instance.id)).toHaveLength(2);
    expect((await world.balance(token)).balance_cents).toBe(10_000 - 2 * node.rate);
    expect(sum(ledger)).toBe(10_000 - 2 * node.rate);
  });

  it('catches up on every block after a long gap', async () => {
    const { token, node, instance, start } = await rentOne(200, {}, 1);
    world.clock.set(new Date(start + 5 * HOUR + 1_000));
    await sweep();
    const after = await get(token, instance.id);
    expect(after.paid_until).toBe(new Date(start + 6 * HOUR).toISOString());
    expect(after.charged_cents).toBe(6 * node.rate);
  });

  it('removes a machine at its scheduled time and charges the last block pro rata by the started minute', async () => {
    const { token, node, instance, start } = await rentOne(100, {}, 2);
    const removal = new Date(start + 90 * 60_000 + 20_000); // 90 min 20 s: 91 started minutes
    await world.api.call('POST', `/v1/instances/${instance.id}/schedule-removal`, { token, body: { removal_scheduled_at: removal.toISOString() } });
    world.clock.set(new Date(start + HOUR));
    await sweep();
    expect((await get(token, instance.id)).paid_until).toBe(removal.toISOString());
    world.clock.set(new Date(start + 2 * HOUR));
    await sweep();
    const done = await get(token, instance.id);
    expect(done).toMatchObject({ status: 'terminated', terminated_at: removal.toISOString(), charged_cents: cost(node.rate, 91) });
    expect((await world.sandbox.cloud.listMachines()).some((m) => m.label === instance.id)).toBe(false);
    expect((await world.balance(token)).balance_cents).toBe(10_000 - cost(node.rate, 91));
  });

  it('honours termination_hours: the machine is removed at the end of its window', async () => {
    const { token, node, instance, start } = await rentOne(100, { termination_hours: 2 }, 3);
    world.clock.set(new Date(start + 2 * HOUR + 5 * 60_000));
    await sweep();
    const done = await get(token, instance.id);
    expect(done).toMatchObject({ status: 'terminated', terminated_at: new Date(start + 2 * HOUR).toISOString(), charged_cents: 2 * node.rate });
  });

  it('when funds run out the breaker trips: machines stop, renting pauses, usage is charged', async () => {
    const nodes = await world.offers((o) => o.rate >= 100 && o.rate <= 400 && o.rate % 2 === 0);
    const node = nodes[0]!;
    const tenant = await world.fundedTenant(((node.rate * 1.5) / 100).toFixed(2));
    const instance = (await world.rent(tenant.token, { node_id: node.id })).body;
    const start = world.clock.now().getTime();

    world.clock.set(new Date(start + HOUR));
    await sweep(); // cannot pay the second hour: it runs on credit
    let account = (await world.api.call('GET', '/v1/billing/account', { token: tenant.token })).body;
    expect(account.rentals).toBe('open');
    expect((await get(tenant.token, instance.id)).status).not.toBe('terminated');

    world.clock.set(new Date(start + 90 * 60_000));
    const report = await sweep();
    expect(report.body.breakers_tripped).toBeGreaterThanOrEqual(1);
    account = (await world.api.call('GET', '/v1/billing/account', { token: tenant.token })).body;
    expect(account).toMatchObject({ rentals: 'paused', running_machines: 0, pause: { kind: 'breaker', tenant_can_resume: true } });
    const done = await get(tenant.token, instance.id);
    expect(done.status).toBe('terminated');
    expect(done.charged_cents).toBe(cost(node.rate, 90));
    expect((await world.balance(tenant.token)).balance_cents).toBe(Math.round(node.rate * 1.5) - cost(node.rate, 90));

    const [other] = await world.offers();
    expect((await world.rent(tenant.token, { node_id: other!.id })).status).toBe(409);
    expect((await world.api.call('POST', '/v1/billing/resume', { token: tenant.token })).status).toBe(409); // no funds yet
    await world.api.call('POST', `/v1/operator/tenants/${tenant.tenantId}/credit`, { headers: OPERATOR, body: { amount_usd: 20, reason: 'top up' } });
    const resumed = await world.api.call('POST', '/v1/billing/resume', { token: tenant.token });
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ rentals: 'open', pause: null });
  });

  it('reconciles: adopts a machine whose create had no answer, closes one gone upstream, removes orphans', async () => {
    const tenant = await world.fundedTenant(100);
    const [first, second, third] = await world.offers((o) => o.rate >= 60 && o.rate <= 400 && o.available > 0);
    world.sandbox.cloud.failNextCreates(1, 'ambiguous');
    const unsure = (await world.rent(tenant.token, { node_id: first!.id })).body;
    expect(unsure.status).toBe('provisioning');
    const gone = (await world.rent(tenant.token, { node_id: second!.id })).body;
    world.clock.advance(30_000);
    await world.api.call('GET', `/v1/instances/${gone.id}`, { token: tenant.token });
    const orphan = await world.sandbox.cloud.create({ offerId: third!.id.split(':')[1]!, label: 'ins_orphan0000001', name: 'orphan', image: 'x' });
    expect(orphan.kind).toBe('created');

    let report = (await sweep()).body;
    expect(report.adopted).toBeGreaterThanOrEqual(1);
    expect(report.orphans_terminated).toBeGreaterThanOrEqual(1);
    expect((await get(tenant.token, unsure.id)).status).toBe('running');
    expect((await world.sandbox.cloud.listMachines()).some((m) => m.label === 'ins_orphan0000001')).toBe(false);

    const upstream = (await world.sandbox.cloud.listMachines()).find((m) => m.label === gone.id)!;
    const seen = (await get(tenant.token, gone.id)).started_at;
    await world.sandbox.cloud.terminate(upstream.machineId);
    world.clock.advance(10 * 60_000);
    report = (await sweep()).body;
    expect(report.gone_upstream).toBeGreaterThanOrEqual(1);
    const closed = await get(tenant.token, gone.id);
    expect(closed.status).toBe('terminated');
    expect(new Date(closed.terminated_at).getTime()).toBeLessThanOrEqual(world.clock.now().getTime() - 10 * 60_000 + 1);
    expect(seen).not.toBeNull();
  });

  it('a crash between charging and calling the provider: after the deadline the sweep fails the rental and refunds it', async () => {
    const tenant = await world.fundedTenant(100);
    const [node] = await world.offers((o) => o.rate >= 60 && o.rate <= 400);
    const original = world.sandbox.createMachine.bind(world.sandbox);
    world.sandbox.createMachine = async () => {
      throw new Error('the process died before the provider was called');
    };
    let rented;
    try {
      rented = (await world.rent(tenant.token, { node_id: node!.id })).body;
    } finally {
      world.sandbox.createMachine = original;
    }
    expect(rented).toMatchObject({ status: 'provisioning', charged_cents: node!.rate });
    expect((await world.sandbox.cloud.listMachines()).some((m) => m.label === rented.id)).toBe(false);
    world.clock.advance(5 * 60_000);
    await sweep();
    expect((await get(tenant.token, rented.id)).status).toBe('provisioning'); // still within the deadline
    world.clock.advance(11 * 60_000);
    await sweep();
    expect(await get(tenant.token, rented.id)).toMatchObject({ status: 'failed', charged_cents: 0 });
    expect((await world.balance(tenant.token)).balance_cents).toBe(10_000);
    await sweep();
    expect((await world.balance(tenant.token)).balance_cents).toBe(10_000);
  });

  it('an emergency stop halts everything at once; resume reopens renting', async () => {
    const tenant = await world.fundedTenant(100);
    const nodes = await world.offers((o) => o.rate >= 60 && o.rate <= 400);
    const a = (await world.rent(tenant.token, { node_id: nodes[5]!.id })).body;
    const b = (await world.rent(tenant.token, { node_id: nodes[6]!.id })).body;
    const stop = await world.api.call('POST', '/v1/billing/stop', { token: tenant.token, body: { reason: 'runaway script' } });
    expect(stop.status).toBe(200);
    expect(stop.body).toMatchObject({ rentals: 'paused', pause: { kind: 'emergency_stop', reason: 'runaway script' } });
    expect(stop.body.terminated.sort()).toEqual([a.id, b.id].sort());
    for (const id of [a.id, b.id]) expect((await get(tenant.token, id)).status).toBe('terminated');
    const paused = await world.rent(tenant.token, { node_id: nodes[7]!.id });
    expect(paused.status).toBe(409);
    expect(paused.body.detail).toMatch(/resume/);
    expect((await world.api.call('POST', '/v1/billing/stop', { token: tenant.token })).status).toBe(200); // no body: still fine
    expect((await world.api.call('POST', '/v1/billing/resume', { token: tenant.token })).body.rentals).toBe('open');
    expect((await world.rent(tenant.token, { node_id: nodes[7]!.id })).status).toBe(201);
  });

  it('an operator hold stops everything and only an operator lifts it', async () => {
    const tenant = await world.fundedTenant(100);
    const [node] = await world.offers((o) => o.rate >= 60);
    const rented = (await world.rent(tenant.token, { node_id: node!.id })).body;
    const hold = await world.api.call('POST', `/v1/operator/tenants/${tenant.tenantId}/hold`, { headers: OPERATOR, body: { reason: 'chargeback' } });
    expect(hold.status).toBe(200);
    expect(hold.body).toMatchObject({ rentals: 'paused', breaker: { kind: 'hold', reason: 'chargeback', tenant_can_resume: false }, running_machines: 0 });
    expect((await get(tenant.token, rented.id)).status).toBe('terminated');
    const refused = await world.api.call('POST', '/v1/billing/resume', { token: tenant.token });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/operator/);
    const lifted = await world.api.call('POST', `/v1/operator/tenants/${tenant.tenantId}/resume`, { headers: OPERATOR });
    expect(lifted.body).toMatchObject({ rentals: 'open', breaker: null });
    expect((await world.api.call('POST', `/v1/operator/tenants/ten_nosuch/hold`, { headers: OPERATOR })).status).toBe(404);
    expect((await world.api.call('POST', '/v1/operator/sweep', { token: tenant.token })).status).toBe(401);
  });
});

describe('runaway protection and settling what is owed', () => {
  it('trips the breaker when the machines burn more per hour than the maximum', async () => {
    const capped = await rentalWorld({ billing: { defaultMaxBurnCentsPerHour: 300 } });
    try {
      const tenant = await capped.fundedTenant(100);
      const [a, b] = await capped.offers((o) => o.rate >= 160 && o.rate <= 290);
      await capped.rent(tenant.token, { node_id: a!.id });
      let report = (await capped.api.call('POST', '/v1/operator/sweep', { headers: OPERATOR })).body;
      expect(report.breakers_tripped).toBe(0); // one machine is within the maximum
      await capped.rent(tenant.token, { node_id: b!.id });
      report = (await capped.api.call('POST', '/v1/operator/sweep', { headers: OPERATOR })).body;
      expect(report.breakers_tripped).toBe(1);
      const account = (await capped.api.call('GET', '/v1/billing/account', { token: tenant.token })).body;
      expect(account).toMatchObject({ rentals: 'paused', running_machines: 0, pause: { kind: 'breaker', reason: expect.stringMatching(/burn/) } });
    } finally {
      await capped.close();
    }
  });

  it('a machine running on credit is paid up by the next sweep once funds arrive', async () => {
    const nodes = await world.offers((o) => o.rate >= 100 && o.rate <= 400);
    const node = nodes[9]!;
    const tenant = await world.fundedTenant(((node.rate * 1.5) / 100).toFixed(2));
    const instance = (await world.rent(tenant.token, { node_id: node.id })).body;
    const start = world.clock.now().getTime();
    world.clock.set(new Date(start + HOUR + 10 * 60_000));
    await sweep();
    const onCredit = await world.balance(tenant.token);
    expect(onCredit.owed_cents).toBe(cost(node.rate, 70) - node.rate);
    await world.api.call('POST', `/v1/operator/tenants/${tenant.tenantId}/credit`, { headers: OPERATOR, body: { amount_usd: 50, reason: 'top up' } });
    await sweep();
    expect(await world.balance(tenant.token)).toMatchObject({ owed_cents: 0, balance_cents: Math.round(node.rate * 1.5) + 5_000 - 2 * node.rate });
    expect((await get(tenant.token, instance.id)).paid_until).toBe(new Date(start + 2 * HOUR).toISOString());
  });
});
