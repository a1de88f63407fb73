import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Offer } from '../../core/market/offer.ts';
import type { Machine, Provider } from '../../core/ports/providers.ts';
import { OPERATOR_KEY, startApi, type TestApi } from '../support/api.ts';
import { freshPostgres, postgresReachable, type TestDatabase } from '../support/database.ts';
import { ManualClock } from '../../adapters/clock/manual-clock.ts';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';
import { parseSamples, valueOf } from '../support/prometheus.ts';

/**
 * The sweep and the rental path against clouds that are slow or never answer (a provider wrapped to be slow or to
 * hang), on PostgreSQL with a manual clock: the money steps never wait for a create, every cloud call ends at its
 * deadline in real time, a pass ends at its budget without making the next one skip, and starts are shared work.
 */
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const onPostgres = await postgresReachable();

type Step = { name: string; started_ms: number; duration_ms: number };
const stepOf = (report: { steps: Step[] }, name: string) => {
  const step = report.steps.find((s) => s.name === name);
  if (!step) throw new Error(`no step ${name} in ${JSON.stringify(report.steps)}`);
  return step;
};
const endOf = (step: Step) => step.started_ms + step.duration_ms;
const usd = (cents: number) => (cents / 100).toFixed(2);
const waitFor = async (what: string, check: () => Promise<boolean>, ms = 15_000) => {
  const until = performance.now() + ms;
  while (!(await check())) {
    if (performance.now() > until) throw new Error(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

describe.runIf(onPostgres)('a slow cloud (PostgreSQL)', () => {
  let world: RentalWorld;
  beforeAll(async () => {
    world = await rentalWorld({}, { faulty: true, sandbox: { spotPreemptionsPerHour: 0 } });
  });
  afterAll(() => world?.close());

  const sweep = async () => {
    const res = await world.api.call('POST', '/v1/operator/sweep', { headers: OPERATOR });
    expect(res.status).toBe(200);
    return res.body;
  };
  const used = new Set<string>();
  const freshNodes = async (count: number, filter: (o: Offer & { rate: number }) => boolean = () => true) => {
    const nodes = (await world.offers((o) => o.rate >= 40 && o.rate <= 300 && !used.has(o.id) && filter(o))).slice(0, count);
    if (nodes.length < count) throw new Error('not enough offers left');
    for (const node of nodes) used.add(node.id);
    return nodes;
  };

  /** Running machines, reservations due within the hour and pending spot claims, all in one funded account. */
  async function load(machines: number, reservations: number, claims: number) {
    const tenant = await world.fundedTenant(2_000);
    for (const node of await freshNodes(machines)) {
      const res = await world.rent(tenant.token, { node_id: node.id });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    for (const node of await freshNodes(reservations)) {
      const starts = new Date(world.clock.now().getTime() + 10 * MINUTE).toISOString();
      const res = await world.api.call('POST', '/v1/reservations', { token: tenant.token, body: { node_id: node.id, starts_at: starts, hours: 2, name: 'booked' } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    for (const node of await freshNodes(claims, (o) => o.spotPriceUsdPerHour !== null)) {
      const bid = usd(Math.ceil(node.rate / node.gpuCount) + 1);
      const res = await world.api.call('POST', '/v1/spot-claims', { token: tenant.token, body: { node_id: node.id, gpu_count: node.gpuCount, max_price_per_gpu_hour: bid, hours: 2, name: 'spot' } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    return tenant;
  }

  it('pays the hour blocks as soon into a pass with 3 s creates as with instant ones, and still makes the starts in that pass', async () => {
    const faults = world.faults!;
    const round = async (createMs: number) => {
      const start = world.clock.now().getTime();
      await load(20, 10, 5);
      world.clock.set(new Date(start + HOUR));
      faults.createLatencyMs = createMs;
      try {
        return await sweep();
      } finally {
        faults.createLatencyMs = 0;
      }
    };
    const instant = await round(0);
    const slow = await round(3_000);
    for (const report of [instant, slow]) {
      expect(report.blocks_paid).toBeGreaterThanOrEqual(20);
      expect([report.reservations_started, report.spot_claims_rented, report.errors]).toEqual([10, 5, []]);
    }
    const paidInstant = endOf(stepOf(instant, 'hour blocks'));
    const paidSlow = endOf(stepOf(slow, 'hour blocks'));
    expect(paidSlow, JSON.stringify({ instant: instant.steps, slow: slow.steps })).toBeLessThanOrEqual(paidInstant * 1.5 + 1_000);
    // every money step ran before the first start was taken; the starts waited on the cloud, not the money
    for (const name of ['removals', 'hour blocks', 'auto-recharge', 'usage', 'breakers', 'low balances']) {
      expect(endOf(stepOf(slow, name))).toBeLessThanOrEqual(stepOf(slow, 'reservations').started_ms);
    }
    expect(stepOf(slow, 'reservations').duration_ms).toBeGreaterThanOrEqual(3_000);
    expect(slow.duration_ms).toBeGreaterThanOrEqual(3_000);
    expect(slow.oldest_due_start_seconds).toBeNull();
  }, 60_000);

  it('removes due machines a few at a time per provider, not one by one', async () => {
    const faults = world.faults!;
    const tenant = await world.fundedTenant(500);
    const start = world.clock.now().getTime();
    for (const node of await freshNodes(12)) {
      const res = await world.rent(tenant.token, { node_id: node.id });
      expect(res.status).toBe(201);
      const at = new Date(start + 20 * MINUTE).toISOString();
      expect((await world.api.call('POST', `/v1/instances/${res.body.id}/schedule-removal`, { token: tenant.token, body: { removal_scheduled_at: at } })).status).toBe(200);
    }
    world.clock.advance(30 * MINUTE);
    faults.terminateLatencyMs = 300;
    faults.terminationsAtOnce = 0;
    try {
      const report = await sweep();
      // these twelve, and machines of the tests before whose windows ended meanwhile
      expect(report.removals).toBeGreaterThanOrEqual(12);
      expect(faults.terminationsAtOnce).toBe(4);
      // terminations of 300 ms, four at a time, where one by one took 300 ms each
      expect(stepOf(report, 'removals').duration_ms).toBeLessThan((report.removals * 300) / 2);
    } finally {
      faults.terminateLatencyMs = 0;
    }
  }, 30_000);

  it('an emergency stop of ten machines calls the cloud four at a time, not all at once', async () => {
    const faults = world.faults!;
    const tenant = await world.fundedTenant(500);
    const rented: string[] = [];
    for (const node of await freshNodes(10)) rented.push((await world.rent(tenant.token, { node_id: node.id })).body.id);
    faults.terminateLatencyMs = 100;
    faults.terminationsAtOnce = 0;
    try {
      const stop = await world.api.call('POST', '/v1/billing/stop', { token: tenant.token, body: { reason: 'runaway' } });
      expect(stop.status).toBe(200);
      expect([...stop.body.terminated].sort()).toEqual([...rented].sort());
      expect(faults.terminationsAtOnce).toBe(4);
    } finally {
      faults.terminateLatencyMs = 0;
    }
  }, 30_000);
});

describe.runIf(onPostgres)('a cloud that never answers (PostgreSQL)', () => {
  let world: RentalWorld;
  beforeAll(async () => {
    // short deadlines, in the order of the defaults: a pass's budget, then the HTTP answer, then the create itself
    world = await rentalWorld({ upstream: { createTimeoutMs: 6_000, rentTimeoutMs: 4_000 }, billing: { passBudgetMs: 2_500 } }, { faulty: true });
  });
  afterAll(() => world?.close());

  const sweep = async () => {
    const res = await world.api.call('POST', '/v1/operator/sweep', { headers: OPERATOR });
    expect(res.status).toBe(200);
    return res.body;
  };
  const launchOf = async (instanceId: string) =>
    (await world.api.plane.storage.execute<{ launch: string | null }[]>('select launch from instances where id = ?', [instanceId]))[0]?.launch ?? null;
  const cut = async () => {
    const res = await fetch(`${world.api.baseUrl}/metrics`, { headers: { 'x-service-operator-key': OPERATOR_KEY } });
    return valueOf(parseSamples(await res.text()), 'provider_calls_cut_total', { provider: 'sandbox', operation: 'createMachine' });
  };

  it('a hung create stalls nothing but itself: the other starts are made in the pass, which ends at its budget; the next pass runs', async () => {
    const tenant = await world.fundedTenant(200);
    const nodes = await world.offers((o) => o.rate >= 40 && o.rate <= 300);
    const made: string[] = [];
    for (const node of nodes.slice(0, 5)) {
      const starts = new Date(world.clock.now().getTime() + 10 * MINUTE).toISOString();
      const res = await world.api.call('POST', '/v1/reservations', { token: tenant.token, body: { node_id: node.id, starts_at: starts, hours: 2, name: 'booked' } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      made.push(res.body.id);
    }
    world.clock.advance(10 * MINUTE);
    const cutBefore = await cut();
    world.faults!.hangNextCreates(1);
    const began = performance.now();
    const first = await sweep();
    expect(performance.now() - began).toBeLessThan(4_000);
    expect(first).toMatchObject({ ran: true, reservations_started: 4, starts_left_running: 1 });
    // the next pass is not skipped because of the last one's hung start, and leaves that start alone
    const next = await sweep();
    expect(next).toMatchObject({ ran: true, reservations_started: 0, reservations_failed: 0 });
    // the start answers at the rental's deadline, the create is cut at its own: an ambiguous create
    let instanceId = '';
    await waitFor('every reservation active, one instance launched ambiguous', async () => {
      const views = await Promise.all(made.map(async (id) => (await world.api.call('GET', `/v1/reservations/${id}`, { token: tenant.token })).body));
      if (!views.every((view) => view.status === 'active')) return false;
      const launches = await Promise.all(views.map((view) => launchOf(view.instance_id)));
      const at = launches.indexOf('ambiguous');
      if (at < 0) return false;
      instanceId = views[at].instance_id;
      return true;
    });
    expect((await cut()) - cutBefore).toBe(1);
    expect((await world.api.call('GET', `/v1/instances/${instanceId}`, { token: tenant.token })).body.status).toBe('provisioning');
    // nothing was made: at the provisioning deadline the reconciler fails it, refunded in full
    world.clock.advance(16 * MINUTE);
    const settled = await sweep();
    expect(settled.failed_provisioning).toBeGreaterThanOrEqual(1);
    expect((await world.api.call('GET', `/v1/instances/${instanceId}`, { token: tenant.token })).body).toMatchObject({ status: 'failed', charged_cents: 0 });
  }, 60_000);

  it('POST /v1/instances whose create hangs answers 201 provisioning at its deadline; the sweep settles the create', async () => {
    const tenant = await world.fundedTenant(50);
    const [node] = await world.offers((o) => o.rate >= 40 && o.rate <= 300 && o.available > 1);
    world.faults!.hangNextCreates(1);
    const began = performance.now();
    const res = await world.rent(tenant.token, { node_id: node!.id });
    const took = performance.now() - began;
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ status: 'provisioning', charged_cents: node!.rate });
    expect(took).toBeGreaterThanOrEqual(3_900);
    expect(took).toBeLessThan(6_000);
    expect(await launchOf(res.body.id)).toBeNull(); // the create still goes on
    await waitFor('the create cut at its deadline', async () => (await launchOf(res.body.id)) === 'ambiguous');
    world.clock.advance(16 * MINUTE);
    await sweep();
    expect((await world.api.call('GET', `/v1/instances/${res.body.id}`, { token: tenant.token })).body).toMatchObject({ status: 'failed', charged_cents: 0 });
    expect((await world.balance(tenant.token)).balance_cents).toBe(5_000);
  }, 30_000);
});

describe.runIf(onPostgres)('starts shared by replicas (PostgreSQL)', () => {
  const COUNT = 1_000;
  const ACCOUNTS = 100;
  const T0 = new Date('2026-11-21T12:00:00.000Z');
  const DUE = new Date(T0.getTime() + HOUR);
  let database: TestDatabase;
  let a: TestApi;
  let b: TestApi;
  const made: Machine[] = [];
  const createsBy = { a: 0, b: 0 };

  /** One cloud seen by both replicas: every offer there, machines running at once after 20 ms. */
  const cloud = (who: 'a' | 'b'): Provider => ({
    name: 'bench',
    machineOptions: [],
    extraFilterKeys: [],
    listOffers: async () => [],
    isOfferId: () => true,
    getOffer: async (offerId): Promise<Offer> => ({
      id: `bench:${offerId}`, provider: 'bench', gpuType: 'H100', gpuModel: 'H100 SXM5 80GB', gpuCount: 1, vramGb: 80, priceUsdPerHour: '1.00',
      priceVerified: true, cpus: 16, ramGb: 128, diskGb: 500, downloadMbps: 1000, ports: 10, country: 'US', region: 'us-east',
      dockerInDocker: false, mig: false, baremetal: false, virtualized: true, available: 1, attributes: {},
    }),
    createMachine: async (request) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      createsBy[who]++;
      const machine: Machine = { machineId: `m${made.length}`, label: request.label, status: 'running', sshHost: '192.0.2.1', sshPort: 22, priceUsdPerHour: '1.00' };
      made.push(machine);
      return machine;
    },
    getMachine: async (id) => made[Number(id.slice(1))] ?? null,
    listMachines: async () => made,
    terminateMachine: async () => undefined,
  });

  beforeAll(async () => {
    database = await freshPostgres();
    const clock = new ManualClock(T0);
    a = await startApi({}, { clock, database, providers: [cloud('a')] });
    b = await startApi({}, { clock, database: { target: database.target, drop: async () => undefined }, providers: [cloud('b')] });
    const run = (sql: string, params: unknown[] = []) => a.plane.storage.execute(sql, params);
    await run(
      `insert into tenants (id, name, created_at, bootstrap_digest, bootstrap_expires_at, bootstrap_used_at)
       select 'ten_s' || n, 'shared', ?, 'x', ?, ? from generate_series(0, ? - 1) n`,
      [T0, T0, T0, ACCOUNTS],
    );
    await run(
      `insert into tokens (id, tenant_id, name, scopes, spend_limit_cents, committed_cents, max_rental_hours, expires_at, parent_id, ancestor_ids, created_at, revoked_at, secret_digest)
       select 'tok_s' || n, 'ten_s' || n, null, '{read,rent}', 1000000, ? * 200, null, null, null, '{}', ?, null, 'x' from generate_series(0, ? - 1) n`,
      [COUNT / ACCOUNTS, T0, ACCOUNTS],
    );
    await run(`insert into accounts (tenant_id, balance_cents, created_at) select 'ten_s' || n, 100000, ? from generate_series(0, ? - 1) n`, [T0, ACCOUNTS]);
    await run(
      `insert into reservations (id, tenant_id, token_id, name, status, starts_at, hours, ends_at, node_id, search, gpu_type, gpu_count,
                                 quoted_per_gpu_cents, max_price_per_gpu_cents, rate_cents_per_hour, commitment_cents, template_id, ssh_key_id,
                                 idempotency_key, request_digest, instance_id, failure, claimed_at, created_at)
       select 'res_s' || lpad(i::text, 5, '0'), 'ten_s' || (i % ?), 'tok_s' || (i % ?), 'shared', 'scheduled', ?, 2, ?, 'bench:' || i, null, 'H100', 1,
              100, null, 100, 200, null, null, null, 'x', null, null, null, ?
         from generate_series(0, ? - 1) i`,
      [ACCOUNTS, ACCOUNTS, DUE, new Date(DUE.getTime() + 2 * HOUR), T0, COUNT],
    );
    clock.set(DUE);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await database?.drop();
  });

  it('two replicas share 1,000 due reservations, each started once', async () => {
    const reports = await Promise.all([a, b].map(async (api) => (await api.call('POST', '/v1/operator/sweep', { headers: OPERATOR })).body));
    expect(reports.some((r) => r.ran)).toBe(true);
    expect(reports.flatMap((r) => r.errors)).toEqual([]);
    expect(reports[0].reservations_started + reports[1].reservations_started).toBe(COUNT);
    // both took a share: the queue is shared item by item, not batch by batch
    expect(Math.min(createsBy.a, createsBy.b), JSON.stringify(createsBy)).toBeGreaterThan(COUNT / 10);
    expect(createsBy.a + createsBy.b).toBe(COUNT);
    const admin = new pg.Client({ connectionString: (database.target as { url: string }).url });
    await admin.connect();
    try {
      const { rows } = await admin.query(
        `select (select count(*)::int from reservations where status = 'active') as active,
                (select count(*)::int from instances) as instances,
                (select count(distinct idempotency_key)::int from instances) as keys,
                (select count(*)::int from ledger_entries where kind = 'rental_hour') as hours,
                (select count(*)::int from reservations r join instances i on i.id = r.instance_id and i.idempotency_key = r.id) as matched`,
      );
      expect(rows[0]).toEqual({ active: COUNT, instances: COUNT, keys: COUNT, hours: COUNT, matched: COUNT });
    } finally {
      await admin.end();
    }
    expect(new Set(made.map((m) => m.label)).size).toBe(COUNT);
  }, 120_000);
});

describe.runIf(onPostgres)('two clouds, one of them slow (PostgreSQL)', () => {
  const T0 = new Date('2026-11-21T12:00:00.000Z');
  const DUE = new Date(T0.getTime() + HOUR);
  let database: TestDatabase;
  let api: TestApi;
  /** When each cloud's creates answered, in real time. */
  const answered: Record<string, number[]> = { slow: [], fast: [] };

  /** A cloud whose every offer is there and whose creates answer after `createMs`. */
  const cloud = (name: 'slow' | 'fast', createMs: number): Provider => {
    const made: Machine[] = [];
    return {
      name,
      machineOptions: [],
      extraFilterKeys: [],
      listOffers: async () => [],
      isOfferId: () => true,
      getOffer: async (offerId): Promise<Offer> => ({
        id: `${name}:${offerId}`, provider: name, gpuType: 'H100', gpuModel: 'H100 SXM5 80GB', gpuCount: 1, vramGb: 80, priceUsdPerHour: '1.00',
        priceVerified: true, cpus: 16, ramGb: 128, diskGb: 500, downloadMbps: 1000, ports: 10, country: 'US', region: 'us-east',
        dockerInDocker: false, mig: false, baremetal: false, virtualized: true, available: 1, attributes: {},
      }),
      createMachine: async (request) => {
        await new Promise((resolve) => setTimeout(resolve, createMs));
        answered[name]!.push(performance.now());
        const machine: Machine = { machineId: `m${made.length}`, label: request.label, status: 'running', sshHost: null, sshPort: null, priceUsdPerHour: '1.00' };
        made.push(machine);
        return machine;
      },
      getMachine: async (id) => made[Number(id.slice(1))] ?? null,
      listMachines: async () => made,
      terminateMachine: async () => undefined,
    };
  };

  beforeAll(async () => {
    database = await freshPostgres();
    const clock = new ManualClock(T0);
    api = await startApi({}, { clock, database, providers: [cloud('slow', 8_000), cloud('fast', 0)] });
    const run = (sql: string, params: unknown[] = []) => api.plane.storage.execute(sql, params);
    await run(`insert into tenants (id, name, created_at, bootstrap_digest, bootstrap_expires_at, bootstrap_used_at) values ('ten_two', 'two', ?, 'x', ?, ?)`, [T0, T0, T0]);
    await run(
      `insert into tokens (id, tenant_id, name, scopes, spend_limit_cents, committed_cents, max_rental_hours, expires_at, parent_id, ancestor_ids, created_at, revoked_at, secret_digest)
       values ('tok_two', 'ten_two', null, '{read,rent}', null, 3200, null, null, null, '{}', ?, null, 'x')`,
      [T0],
    );
    await run(`insert into accounts (tenant_id, balance_cents, created_at) values ('ten_two', 100000, ?)`, [T0]);
    // the slow cloud's reservations come first in the queue
    await run(
      `insert into reservations (id, tenant_id, token_id, name, status, starts_at, hours, ends_at, node_id, search, gpu_type, gpu_count,
                                 quoted_per_gpu_cents, max_price_per_gpu_cents, rate_cents_per_hour, commitment_cents, template_id, ssh_key_id,
                                 idempotency_key, request_digest, instance_id, failure, claimed_at, created_at)
       select 'res_' || (case when i < 8 then 'a' else 'b' end) || i, 'ten_two', 'tok_two', 'two', 'scheduled', ?, 2, ?,
              (case when i < 8 then 'slow:' else 'fast:' end) || i, null, 'H100', 1, 100, null, 100, 200, null, null, null, 'x', null, null, null, ?
         from generate_series(0, 15) i`,
      [DUE, new Date(DUE.getTime() + 2 * HOUR), T0],
    );
    clock.set(DUE);
  });
  afterAll(async () => {
    await api?.close();
    await database?.drop();
  });

  it("a slow cloud holds up only its own starts: the other cloud's are made while it is still creating", async () => {
    const report = (await api.call('POST', '/v1/operator/sweep', { headers: OPERATOR })).body;
    expect([report.reservations_started, report.errors]).toEqual([16, []]);
    expect([answered.slow!.length, answered.fast!.length]).toEqual([8, 8]);
    // one runner, 8 hands per cloud: the fast cloud's creates did not queue behind the slow cloud's 8 s
    expect(Math.max(...answered.fast!)).toBeLessThan(Math.min(...answered.slow!));
  }, 30_000);
});
