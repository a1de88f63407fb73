import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../support/api.ts';
import { postgresReachable } from '../support/database.ts';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';

/**
 * Where renting used to lose customers' money or machines: each test here
 * failed before its fix. The sandbox runs behind a FaultyProvider, on the test's clock.
 */
let world: RentalWorld;
/** A second replica on the same database, when it is PostgreSQL. */
let replica: TestApi | null = null;
beforeAll(async () => {
  world = await rentalWorld({}, { faulty: true });
  if (await postgresReachable()) replica = await startApi({ providers: [{ name: 'sandbox', config: {} }] }, { clock: world.clock, database: { target: world.api.plane.storage.target, drop: async () => undefined } });
});
afterAll(async () => {
  await replica?.close();
  await world.close();
});

const HOUR = 3_600_000;
const MINUTE = 60_000;
const sweep = async () => {
  const res = await world.api.call('POST', '/v1/operator/sweep', { headers: OPERATOR });
  expect(res.status).toBe(200);
  return res.body;
};
const get = async (token: string, id: string) => (await world.api.call('GET', `/v1/instances/${id}`, { token })).body;
const terminate = async (token: string, id: string) => {
  const res = await world.api.call('POST', `/v1/instances/${id}/terminate`, { token });
  expect(res.status).toBe(200);
  return res.body;
};
const upstream = async (label: string) => (await world.sandbox.cloud.listMachines()).filter((m) => m.label === label);
const cost = (rate: number, minutes: number) => Math.ceil((rate * Math.max(60, minutes)) / 60);
let pick = 0;
/** A different cheap node for each rental, so capacity never runs out between tests. */
const nextNode = async () => (await world.offers((o) => o.rate >= 60 && o.rate <= 400))[pick++]!;

async function rented(usd: number, body: Record<string, unknown> = {}, token?: string) {
  const tenant = token ? null : await world.fundedTenant(usd);
  const node = await nextNode();
  const res = await world.rent(token ?? tenant!.token, { node_id: node.id, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { token: token ?? tenant!.token, tenantId: tenant?.tenantId ?? '', node, instance: res.body, start: world.clock.now().getTime() };
}

/** Lets the sandbox machine come up and the sweep see it running. */
async function upAndSeen(token: string, id: string) {
  world.clock.advance(30_000);
  expect((await get(token, id)).status).toBe('running');
}

describe('the reconciler and rentals made while it runs (item 1)', () => {
  /** A sweep whose machine listing is held (before or after it reads the cloud) while a rental is made. */
  async function rentDuringListing(where: 'before-read' | 'after-read', meanwhile: () => void = () => undefined) {
    const { token } = await world.fundedTenant(50);
    const node = await nextNode();
    const hold = world.faults!.holdNextListing(where);
    const pass = sweep();
    await hold.reached;
    const res = await world.rent(token, { node_id: node.id });
    expect(res.status).toBe(201);
    meanwhile();
    hold.open();
    return { token, res, report: await pass };
  }

  it('a machine rented while the provider is being listed is not terminated as an orphan', async () => {
    const { token, res, report } = await rentDuringListing('before-read');
    expect(report.orphans_terminated).toBe(0);
    expect((await upstream(res.body.id)).filter((m) => m.status !== 'terminated')).toHaveLength(1);
    await upAndSeen(token, res.body.id);
    expect((await sweep()).orphans_terminated).toBe(0);
    expect((await get(token, res.body.id)).status).toBe('running');
  });

  it('a machine rented after the listing was read is not closed as gone upstream', async () => {
    const { token, res, report } = await rentDuringListing('after-read');
    expect(report).toMatchObject({ gone_upstream: 0, orphans_terminated: 0, failed_provisioning: 0 });
    expect((await get(token, res.body.id)).status).toBe('provisioning');
  });

  it('a machine the provider could not be asked about is retried next pass, never taken for gone', async () => {
    const { token, res, report } = await rentDuringListing('after-read', () => world.faults!.failNextMachineReads(1));
    expect(report.gone_upstream).toBe(0);
    expect(report.errors.join(' ')).toMatch(/502 from upstream/);
    expect((await get(token, res.body.id)).status).toBe('provisioning');
    world.clock.advance(30_000);
    expect((await sweep()).gone_upstream).toBe(0);
    expect((await get(token, res.body.id)).status).toBe('running');
  });

  it('an orphan is a labelled machine whose rental is over: it goes, and costs the tenant nothing more', async () => {
    const { token, instance } = await rented(50);
    await upAndSeen(token, instance.id);
    world.faults!.failNextTerminations(1, 'lies');
    const done = await terminate(token, instance.id);
    expect(done.status).toBe('terminated');
    expect((await upstream(instance.id)).filter((m) => m.status !== 'terminated')).toHaveLength(1);
    const report = await sweep();
    expect(report.orphans_terminated).toBe(1);
    expect((await upstream(instance.id)).filter((m) => m.status !== 'terminated')).toHaveLength(0);
    expect((await get(token, instance.id)).charged_cents).toBe(done.charged_cents);
  });
});

describe('machines that never start (item 2)', () => {
  it('one stuck provisioning is failed at the deadline, refunded in full and removed upstream', async () => {
    const { token, instance } = await (async () => {
      await world.sandbox.cloud.mishapNextProvisions(1, 'stuck');
      return rented(50);
    })();
    world.clock.advance(10 * MINUTE);
    expect((await sweep()).failed_provisioning).toBe(0);
    expect((await get(token, instance.id)).status).toBe('provisioning');
    world.clock.advance(6 * MINUTE);
    expect((await sweep()).failed_provisioning).toBe(1);
    expect(await get(token, instance.id)).toMatchObject({ status: 'failed', charged_cents: 0, started_at: null });
    expect((await world.balance(token)).balance_cents).toBe(5_000);
    expect((await upstream(instance.id)).filter((m) => m.status !== 'terminated')).toHaveLength(0);
  });

  it('is never billed hour after hour, however late the sweep comes', async () => {
    await world.sandbox.cloud.mishapNextProvisions(1, 'stuck');
    const { token, instance } = await rented(50);
    world.clock.advance(5 * HOUR);
    await sweep();
    expect(await get(token, instance.id)).toMatchObject({ status: 'failed', charged_cents: 0 });
    expect((await world.ledger(token)).filter((e) => e.kind === 'rental_hour' && e.reference === instance.id)).toHaveLength(1);
    expect((await world.balance(token)).balance_cents).toBe(5_000);
  });

  it('one that fails while provisioning costs nothing, and is not counted as gone', async () => {
    await world.sandbox.cloud.mishapNextProvisions(1, 'failed');
    const { token, instance } = await rented(50);
    world.clock.advance(MINUTE);
    const report = await sweep();
    expect(report).toMatchObject({ failed_provisioning: 1, gone_upstream: 0 });
    expect(await get(token, instance.id)).toMatchObject({ status: 'failed', charged_cents: 0 });
    expect((await world.balance(token)).balance_cents).toBe(5_000);
  });
});

describe('what ending a rental costs (item 3)', () => {
  it('terminating a rental whose create never happened costs nothing, and nothing is left upstream', async () => {
    world.faults!.failNextCreates(1, 'lost');
    const { token, instance } = await rented(50);
    expect(instance).toMatchObject({ status: 'provisioning' });
    const done = await terminate(token, instance.id);
    expect(done.charged_cents).toBe(0);
    expect((await world.balance(token)).balance_cents).toBe(5_000);
    world.clock.advance(20 * MINUTE);
    await sweep();
    expect(await get(token, instance.id)).toMatchObject({ status: 'terminated', charged_cents: 0 });
    expect(await upstream(instance.id)).toHaveLength(0);
  });

  it('the same through an emergency stop and an operator hold', async () => {
    for (const end of ['stop', 'hold'] as const) {
      world.faults!.failNextCreates(1, 'lost');
      const { token, tenantId, instance } = await rented(50);
      const res =
        end === 'stop'
          ? await world.api.call('POST', '/v1/billing/stop', { token })
          : await world.api.call('POST', `/v1/operator/tenants/${tenantId}/hold`, { headers: OPERATOR });
      expect(res.status).toBe(200);
      expect((await get(token, instance.id)).charged_cents).toBe(0);
      expect((await world.balance(token)).balance_cents).toBe(5_000);
    }
  });

  it('a machine terminated while still provisioning never ran, so it costs nothing', async () => {
    const { token, instance } = await rented(50);
    world.clock.advance(10_000);
    const done = await terminate(token, instance.id);
    expect(done).toMatchObject({ status: 'terminated', started_at: null, charged_cents: 0 });
    expect((await world.balance(token)).balance_cents).toBe(5_000);
  });

  it('a terminate that lands after the window end is billed to the window end, never past a cap', async () => {
    const root = await world.fundedTenant(100);
    const node = await nextNode();
    const cap = 2 * node.rate + 1; // enough for two hours, not for a minute more
    const agent = await world.api.call('POST', '/v1/tokens', { token: root.token, body: { scopes: ['read', 'rent'], spend_limit_usd: (cap / 100).toFixed(2), max_rental_hours: 2 } });
    expect(agent.status).toBe(201);
    const res = await world.rent(agent.body.token, { node_id: node.id, termination_hours: 2 });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const start = world.clock.now().getTime();
    await upAndSeen(root.token, res.body.id);
    world.clock.set(new Date(start + 2 * HOUR + 30 * MINUTE)); // the sweep has not run since
    const done = await terminate(root.token, res.body.id);
    expect(done).toMatchObject({ charged_cents: 2 * node.rate, terminated_at: new Date(start + 2 * HOUR).toISOString() });
    const self = (await world.api.call('GET', '/v1/tokens/self', { token: agent.body.token })).body;
    expect(self.committed_cents).toBeLessThanOrEqual(cap);
    expect(self.committed_cents).toBe(2 * node.rate);
  });

  it('a terminate that lands after a scheduled removal is billed to the removal time', async () => {
    const { token, node, instance, start } = await rented(100);
    await upAndSeen(token, instance.id);
    const removal = new Date(start + 70 * MINUTE);
    await world.api.call('POST', `/v1/instances/${instance.id}/schedule-removal`, { token, body: { removal_scheduled_at: removal.toISOString() } });
    world.clock.set(new Date(start + 3 * HOUR));
    const done = await terminate(token, instance.id);
    expect(done).toMatchObject({ charged_cents: cost(node.rate, 70), terminated_at: removal.toISOString() });
  });
});

describe('max_rental_hours alone (item 4)', () => {
  it('requires a shutdown window within it, even without a spend cap', async () => {
    const root = await world.fundedTenant(100);
    const limited = await world.api.call('POST', '/v1/tokens', { token: root.token, body: { scopes: ['read', 'rent'], max_rental_hours: 1 } });
    expect(limited.body.spend_limit_cents).toBeNull();
    const node = await nextNode();
    const none = await world.rent(limited.body.token, { node_id: node.id });
    expect(none.status).toBe(422);
    expect(none.body.errors[0].loc).toEqual(['body', 'termination_hours']);
    expect((await world.rent(limited.body.token, { node_id: node.id, termination_hours: 2 })).status).toBe(422);
    const ok = await world.rent(limited.body.token, { node_id: node.id, termination_hours: 1 });
    expect(ok.status).toBe(201);
    expect(ok.body.window_ends_at).toBe(new Date(world.clock.now().getTime() + HOUR).toISOString());
  });
});

describe('one request, one answer (item 10)', () => {
  for (const outcome of ['refused', 'created'] as const) {
    it(`retries sent while the first request waits for the provider get its answer (${outcome})`, async () => {
      const { token } = await world.fundedTenant(50);
      const node = await nextNode();
      const body = { node_id: node.id, idempotency_key: `slow-${outcome}` };
      const hold = world.faults!.holdNextCreate();
      if (outcome === 'refused') world.faults!.failNextCreates(1, 'rejected');
      const first = world.rent(token, body);
      await hold.reached;
      const retries = [world.rent(token, body), world.rent(token, body), ...(replica ? [replica.call('POST', '/v1/instances', { token, body })] : [])];
      await new Promise((resolve) => setTimeout(resolve, 150)); // the retries are waiting, on this replica and the other
      hold.open();
      const answers = await Promise.all([first, ...retries]);
      const expected = outcome === 'refused' ? 409 : 201;
      for (const answer of answers) expect({ status: answer.status, body: answer.body }).toEqual({ status: expected, body: answers[0]!.body });
      expect((await world.api.call('GET', '/v1/instances', { token })).body).toHaveLength(1);
    });
  }

  it('a provider refusal answers 409, and so does every retry with its idempotency key', async () => {
    const { token } = await world.fundedTenant(50);
    const node = await nextNode();
    world.faults!.failNextCreates(1, 'rejected');
    const body = { node_id: node.id, idempotency_key: 'refused-once' };
    const first = await world.rent(token, body);
    expect(first.status).toBe(409);
    const retries = await Promise.all([world.rent(token, body), world.rent(token, body)]);
    for (const retry of retries) expect({ status: retry.status, body: retry.body }).toEqual({ status: 409, body: first.body });
    expect((await world.balance(token)).balance_cents).toBe(5_000);
    const instances = (await world.api.call('GET', '/v1/instances', { token })).body;
    expect(instances).toHaveLength(1);
    expect(instances[0]).toMatchObject({ status: 'failed', charged_cents: 0, failure: first.body.detail });
  });
});
