import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualPayments } from '../../adapters/payments/manual/adapter.ts';
import type { OffSessionCharge, OffSessionOutcome, Payments } from '../../core/ports/payments.ts';
import { freshPostgres, postgresReachable, type TestDatabase } from '../support/database.ts';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';

/**
 * The sweep against what runs beside it. Holding a row lock from a second
 * session is how a test stands in the middle of a pass, and only PostgreSQL has second sessions: these
 * run on PostgreSQL, which CI requires (REQUIRE_POSTGRES=1).
 */
const HOUR = 3_600_000;
const MINUTE = 60_000;

/** The embedded processor whose off-session charges wait at a gate, then decline. */
class GatedManual extends ManualPayments {
  gate: { reached: () => void; open: Promise<void> } | null = null;
  override async chargeOffSession(_charge: OffSessionCharge): Promise<OffSessionOutcome> {
    const gate = this.gate;
    this.gate = null;
    if (gate) {
      gate.reached();
      await gate.open;
    }
    return { ok: false, reason: 'card_declined: test' };
  }
  hold(): { reached: Promise<void>; open: () => void } {
    let reached!: () => void;
    let open!: () => void;
    const reachedPromise = new Promise<void>((resolve) => (reached = resolve));
    this.gate = { reached, open: new Promise<void>((resolve) => (open = resolve)) };
    return { reached: reachedPromise, open };
  }
}

const onPostgres = await postgresReachable();

describe.runIf(onPostgres)('the sweep beside other work (PostgreSQL)', () => {
  let database: TestDatabase;
  let world: RentalWorld;
  let processor: GatedManual;
  let admin: pg.Client;
  beforeAll(async () => {
    database = await freshPostgres();
    // a session TimeZone far from UTC: nothing the sweep keys may depend on it
    const url = (database.target as { url: string }).url;
    const setup = new pg.Client({ connectionString: url });
    await setup.connect();
    await setup.query(`alter database "${new URL(url).pathname.slice(1)}" set timezone to 'Asia/Kolkata'`);
    await setup.end();
    processor = new GatedManual('http://127.0.0.1:1');
    world = await rentalWorld({}, { faulty: true, database, payments: processor as Payments });
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await world?.close();
    await database?.drop();
  });

  const sweep = async () => (await world.api.call('POST', '/v1/operator/sweep', { headers: OPERATOR })).body;
  const get = async (token: string, id: string) => (await world.api.call('GET', `/v1/instances/${id}`, { token })).body;
  let pick = 0;
  const nextNode = async (filter: (rate: number) => boolean = (rate) => rate >= 60 && rate <= 400) =>
    (await world.offers((o) => filter(o.rate)))[pick++]!;
  /** Another session holds the account's row lock until `release`; `waiting` resolves once someone waits for it. */
  async function holdAccount(tenantId: string) {
    const client = new pg.Client({ connectionString: (database.target as { url: string }).url });
    await client.connect();
    await client.query('begin');
    await client.query('select tenant_id from accounts where tenant_id = $1 for update', [tenantId]);
    const waiting = (async () => {
      for (let i = 0; i < 500; i++) {
        const { rows } = await admin.query(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`);
        if (rows[0].n > 0) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error('nobody waited for the account lock');
    })();
    return {
      client,
      waiting,
      release: async () => {
        await client.query('commit');
        await client.end();
      },
    };
  }

  it('a pass whose lock session dies stops before its next step, and the process lives on', async () => {
    const { token } = await world.fundedTenant(10);
    const started = (await world.api.call('POST', '/v1/billing/checkout', { token, body: { amount_usd: 25 } })).body;
    await processor.pay(started.session_id); // paid at the processor; the next pass's checkout step would credit it
    const hold = world.faults!.holdNextListing('before-read');
    const pass = sweep();
    await hold.reached;
    const killed = await admin.query(
      `select pg_terminate_backend(pid) as done from pg_stat_activity where datname = current_database() and application_name = 'gpu-control-plane billing-sweep'`,
    );
    expect(killed.rows).toEqual([{ done: true }]);
    hold.open();
    const report = await pass;
    expect(report).toMatchObject({ ran: true, lock_lost: true, checkouts_settled: 0 });
    expect(report.errors.join(' ')).toMatch(/lost its lock; stopped before reconcile volumes sandbox/);
    expect((await world.balance(token)).balance_cents).toBe(1_000);
    // the next runner takes the lock and carries on
    const next = await sweep();
    expect(next).toMatchObject({ ran: true, lock_lost: false, checkouts_settled: 1 });
    expect((await world.balance(token)).balance_cents).toBe(3_500);
  });

  it('a removal moved while the sweep waits for the account is carried out at the locked time, or not at all', async () => {
    const { token, tenantId } = await world.fundedTenant(50);
    const node = await nextNode();
    const { body: instance } = await world.rent(token, { node_id: node.id });
    world.clock.advance(30_000);
    expect((await get(token, instance.id)).status).toBe('running');
    const start = Date.parse(instance.created_at);
    await world.api.call('POST', `/v1/instances/${instance.id}/schedule-removal`, { token, body: { removal_scheduled_at: new Date(start + 10 * MINUTE).toISOString() } });
    world.clock.set(new Date(start + 15 * MINUTE));
    const lock = await holdAccount(tenantId);
    const pass = sweep();
    await lock.waiting;
    const later = new Date(start + 2 * HOUR).toISOString();
    expect((await world.api.call('POST', `/v1/instances/${instance.id}/schedule-removal`, { token, body: { removal_scheduled_at: later } })).status).toBe(200);
    await lock.release();
    expect((await pass).removals).toBe(0);
    expect(await get(token, instance.id)).toMatchObject({ status: 'running', removal_scheduled_at: later });
  });

  it('the breaker decides under the account lock: a deposit landing meanwhile saves the machines', async () => {
    // another tenant's auto-recharge holds the pass after its block payments, so the lock is taken there
    const other = await world.api.newTenant();
    const checkout = (await world.api.call('POST', '/v1/billing/checkout', { token: other.token, body: { amount_usd: 5 } })).body;
    await processor.pay(checkout.session_id);
    await world.api.plane.services.payments.settleSession(checkout.session_id);
    const enabled = await world.api.call('PUT', '/v1/billing/auto-recharge', { token: other.token, body: { enabled: true, threshold_usd: 10, amount_usd: 20 } });
    expect(enabled.status).toBe(200);

    const node = await nextNode();
    const { token, tenantId } = await world.fundedTenant((node.rate / 100).toFixed(2));
    const { body: instance } = await world.rent(token, { node_id: node.id });
    expect(instance.status).toBe('provisioning');
    world.clock.advance(30_000);
    await get(token, instance.id);
    world.clock.advance(90 * MINUTE); // the second hour unpaid: funds exhausted
    const gate = processor.hold();
    const pass = sweep();
    await gate.reached;
    const lock = await holdAccount(tenantId);
    gate.open();
    await lock.waiting;
    const { rows } = await lock.client.query('update accounts set balance_cents = balance_cents + 10000 where tenant_id = $1 returning balance_cents', [tenantId]);
    await lock.client.query(
      `insert into ledger_entries (id, tenant_id, kind, amount_cents, balance_after_cents, reference, description, unique_key, created_at)
       values ($1, $2, 'credit', 10000, $3, null, 'landed during the sweep', $1, now())`,
      [`led_race${pick}`, tenantId, rows[0].balance_cents],
    );
    await lock.release();
    const report = await pass;
    expect(report.breakers_tripped).toBe(0);
    expect((await world.api.call('GET', '/v1/billing/account', { token })).body).toMatchObject({ rentals: 'open', running_machines: 1 });
    expect((await get(token, instance.id)).status).toBe('running');
  });

  it('hour blocks are keyed in UTC whatever the session TimeZone', async () => {
    const { token } = await world.fundedTenant(50);
    const node = await nextNode();
    const { body: instance } = await world.rent(token, { node_id: node.id });
    world.clock.advance(30_000);
    await get(token, instance.id);
    world.clock.set(new Date(Date.parse(instance.created_at) + HOUR));
    expect((await sweep()).blocks_paid).toBeGreaterThanOrEqual(1);
    const keys = await world.api.plane.storage.execute<{ unique_key: string }[]>(`select unique_key from ledger_entries where reference = ? and unique_key like 'block:%'`, [instance.id]);
    expect(keys.map((k) => k.unique_key)).toEqual([`block:${instance.id}:${instance.paid_until}`]);
  });

  it('revoking a token and renting through its child lock token rows in one order: no deadlock', async () => {
    const { token: rootSecret } = await world.fundedTenant(10);
    const self = (await world.api.call('GET', '/v1/tokens/self', { token: rootSecret })).body;
    // a token issued by the root, whose id sorts before the root's (ids are random: try until one does)
    let issuer = '';
    let child = '';
    for (let i = 0; i < 40 && !child; i++) {
      const parent = (await world.api.call('POST', '/v1/tokens', { token: rootSecret, body: { scopes: ['read', 'rent', 'manage'] } })).body;
      const grandchild = (await world.api.call('POST', '/v1/tokens', { token: parent.token, body: { scopes: ['read'] } })).body;
      if (grandchild.id < parent.id) [issuer, child] = [parent.id, grandchild.id];
    }
    expect(child).not.toBe('');
    // a rental through the child holds the chain in id order: the child first, then its issuer
    const rental = new pg.Client({ connectionString: (database.target as { url: string }).url });
    await rental.connect();
    await rental.query('begin');
    await rental.query('select id from tokens where id = $1 for update', [child]);
    const revoke = world.api.call('DELETE', `/v1/tokens/${issuer}`, { token: rootSecret });
    // the revoke has taken what it could and waits for a row this session holds
    for (let polls = 0; ; polls++) {
      const { rows } = await admin.query(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`);
      if (rows[0].n > 0) break;
      if (polls > 3_000) throw new Error('the revoke never waited for a token row');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const second = await rental.query('select id from tokens where id = $1 for update', [issuer]).then(
      () => 'locked',
      (error: Error) => error.message,
    );
    await rental.query('commit').catch(() => undefined);
    await rental.end();
    expect(second).toBe('locked');
    expect((await revoke).status).toBe(204);
    expect(self.id).toMatch(/^tok_/);
  });
  it('usage settlement settles only the accounts it locked: an account whose first record came while it waited is left to its own lock', async () => {
    const metering = world.api.plane.services.metering;
    const u = await world.fundedTenant(10);
    const t = await world.fundedTenant(10);
    const record = (tenantId: string, key: string) =>
      metering.record(null, { tenantId, kind: 'volume_storage', quantity: '1000', unitPriceUsd: '0.004', reference: null, uniqueKey: key, startedAt: world.clock.now(), endedAt: null });
    await record(u.tenantId, 'settle-race-u');
    const holdU = await holdAccount(u.tenantId);
    const settling = metering.settleAll();
    await holdU.waiting; // the settlement has chosen its accounts and waits for U's
    await record(t.tenantId, 'settle-race-t');
    const holdT = await holdAccount(t.tenantId); // say a rental of T, holding T's account while it decides
    holdT.waiting.catch(() => undefined); // nobody is expected to wait for it
    await holdU.release();
    // before: the settlement posted T's record without T's lock, then waited on T's row to debit it,
    // with T's balance read before the other transaction's change
    const settled = await Promise.race([settling, new Promise((resolve) => setTimeout(() => resolve('waited for T'), 3_000))]);
    await holdT.release();
    expect(settled).toEqual({ settled: 1, amountCents: 400 });
    const unsettled = async (token: string) =>
      ((await world.api.call('GET', '/v1/metering/usage?limit=10', { token })).body as { settled_at: string | null }[]).filter((r) => r.settled_at === null).length;
    expect([await unsettled(u.token), await unsettled(t.token)]).toEqual([0, 1]);
    await metering.settle(t.tenantId);
    expect([(await world.balance(u.token)).balance_cents, (await world.balance(t.token)).balance_cents, await unsettled(t.token)]).toEqual([600, 600, 0]);
  });
});

describe('auto-recharge before the breaker (item 7)', () => {
  let world: RentalWorld;
  beforeAll(async () => {
    world = await rentalWorld();
  });
  afterAll(() => world?.close());

  it('pays when an hour block falls due that the balance cannot pay, though the balance is above the threshold', async () => {
    const { token } = await world.api.newTenant();
    const started = (await world.api.call('POST', '/v1/billing/checkout', { token, body: { amount_usd: 5 } })).body;
    const manual = world.api.plane.processor as ManualPayments;
    await manual.pay(started.session_id);
    await world.api.plane.services.payments.settleSession(started.session_id);
    expect((await world.api.call('PUT', '/v1/billing/auto-recharge', { token, body: { enabled: true, threshold_usd: 1, amount_usd: 20 } })).status).toBe(200);
    const [node] = await world.offers((o) => o.rate > 250 && o.rate <= 400);
    const { body: instance } = await world.rent(token, { node_id: node!.id });
    world.clock.advance(30_000);
    await world.api.call('GET', `/v1/instances/${instance.id}`, { token });
    expect((await world.balance(token)).balance_cents).toBe(500 - node!.rate); // above the 100-cent threshold
    world.clock.set(new Date(Date.parse(instance.created_at) + HOUR));
    const report = (await world.api.call('POST', '/v1/operator/sweep', { headers: OPERATOR })).body;
    expect(report.auto_recharge).toMatchObject({ attempted: 1, succeeded: 1 });
    expect(report.breakers_tripped).toBe(0);
    const after = (await world.api.call('GET', `/v1/instances/${instance.id}`, { token })).body;
    expect(after.paid_until).toBe(new Date(Date.parse(instance.created_at) + 2 * HOUR).toISOString());
    expect(await world.balance(token)).toMatchObject({ balance_cents: 500 - 2 * node!.rate + 2_000, owed_cents: 0 });
  });
});
