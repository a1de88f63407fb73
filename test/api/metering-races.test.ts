import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { microsOf } from '../../core/metering/decimal.ts';
import { chargedCents } from '../../core/metering/rounding.ts';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';

/** Metering under concurrency, on PostgreSQL: one rounding whatever the order, each record settled once. */
let world: RentalWorld;
beforeAll(async () => {
  world = await rentalWorld({ metering: { prices: { gpu_seconds: { unit: 'second', usd_per_unit: '0.0004' }, tokens: { unit: 'token', usd_per_unit: '0.000003' } } } });
});
afterAll(() => world.close());

const call = (...args: Parameters<RentalWorld['api']['call']>) => world.api.call(...args);
const records = async (token: string): Promise<any[]> => (await call('GET', '/v1/metering/usage?limit=1000', { token })).body;
const ledger = async (token: string): Promise<any[]> => (await call('GET', '/v1/billing/ledger?limit=1000', { token })).body;

/** ceil(exact sum of quantity x price) per kind, from the records' own decimal text. */
function expectOneRounding(list: { resource_kind: string; quantity: string; unit_price_usd: string; amount_cents: number }[]): void {
  const kinds = new Map<string, { exact: bigint; charged: number }>();
  for (const r of list) {
    expect(r.amount_cents).toBeGreaterThanOrEqual(0);
    const k = kinds.get(r.resource_kind) ?? { exact: 0n, charged: 0 };
    k.exact += microsOf(r.quantity) * microsOf(r.unit_price_usd);
    k.charged += r.amount_cents;
    kinds.set(r.resource_kind, k);
  }
  for (const [kind, k] of kinds) expect(BigInt(k.charged), kind).toBe(chargedCents(k.exact));
}

/** Every settled record has exactly one usage entry of its amount; no unsettled one has any; the ledger sums to the balance. */
async function expectSettledOnce(token: string): Promise<void> {
  const entries = await ledger(token);
  const usage = entries.filter((e) => e.kind === 'usage' && e.reference?.startsWith('usg_'));
  const byRecord = new Map<string, any[]>();
  for (const e of usage) byRecord.set(e.reference, [...(byRecord.get(e.reference) ?? []), e]);
  for (const r of await records(token)) {
    const posted = byRecord.get(r.id) ?? [];
    if (r.settled_at === null) expect(posted).toHaveLength(0);
    else expect(posted.map((e) => e.amount_cents + r.amount_cents)).toEqual([0]); // one entry, of minus its amount
    byRecord.delete(r.id);
  }
  expect([...byRecord.keys()]).toEqual([]); // no entry for a record that does not exist
  const balance = (await call('GET', '/v1/billing/balance', { token })).body.balance_cents;
  expect(entries.reduce((s, e) => s + e.amount_cents, 0)).toBe(balance);
}

describe('one rounding, in the database', () => {
  it('for any sequence of records at any prices, sent one by one or all at once, the amounts add up to ceil(exact total) per kind', async () => {
    const metering = world.api.plane.services.metering;
    const micros = (max: bigint) => fc.bigInt({ min: 1n, max }).map((m) => `${m / 1_000_000n}.${(m % 1_000_000n).toString().padStart(6, '0')}`);
    const record = fc.record({ kind: fc.constantFrom('volume_storage', 'gpu_seconds'), quantity: micros(1_000_000_000_000n), price: micros(2_000_000n) });
    await fc.assert(
      fc.asyncProperty(fc.array(record, { minLength: 1, maxLength: 25 }), fc.boolean(), async (list, parallel) => {
        const { tenantId, token } = await world.api.newTenant();
        const at = world.clock.now();
        const send = (r: (typeof list)[number], k: number) =>
          metering.record(null, { tenantId, kind: r.kind, quantity: r.quantity, unitPriceUsd: r.price, reference: null, uniqueKey: `p:${k}`, startedAt: at, endedAt: null });
        if (parallel) await Promise.all(list.map(send));
        else for (const [k, r] of list.entries()) await send(r, k);
        const stored = await records(token);
        expect(stored).toHaveLength(list.length);
        expectOneRounding(stored);
      }),
      { numRuns: 30 },
    );
  }, 120_000);
});

describe('settlement races', () => {
  it('settle calls racing each other and the sweep post each record exactly once', async () => {
    const tenants = await Promise.all(Array.from({ length: 4 }, () => world.fundedTenant('2.00')));
    for (const t of tenants) {
      await Promise.all(Array.from({ length: 40 }, (_, k) => call('POST', '/v1/metering/usage', { token: t.token, body: { resource_kind: 'gpu_seconds', quantity: 10 + k } })));
    }
    const settles = tenants.flatMap((t) => Array.from({ length: 3 }, () => call('POST', '/v1/metering/settle', { token: t.token })));
    const sweeps = Array.from({ length: 3 }, () => call('POST', '/v1/operator/sweep', { headers: OPERATOR }));
    const answers = await Promise.all([...settles, ...sweeps]);
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const settledBySettle = answers.slice(0, settles.length).reduce((s, a) => s + a.body.settled, 0);
    const settledBySweep = answers.slice(settles.length).reduce((s, a) => s + a.body.usage_settled, 0);
    let settledRecords = 0;
    for (const t of tenants) {
      await expectSettledOnce(t.token);
      expectOneRounding(await records(t.token));
      settledRecords += (await records(t.token)).filter((r) => r.settled_at !== null).length;
    }
    // the counts reported add up to the records settled: nobody claims a record another posted
    expect(settledBySettle + settledBySweep).toBe(settledRecords);
    // 40 records: 10 .. 49 seconds, 1180 s x 0.0004 = 47.2 -> 48 cents, within each balance of 200
    expect(settledRecords).toBe(160);
  });

  it('ingestion racing settlement: records that land meanwhile are settled by the next pass, never twice', async () => {
    const { token } = await world.fundedTenant('1.00');
    const work: Promise<unknown>[] = [];
    for (let k = 0; k < 30; k++) {
      work.push(call('POST', '/v1/metering/usage', { token, body: { resource_kind: 'tokens', quantity: 1_000 + k, idempotency_key: `k${k % 20}` } }));
      if (k % 5 === 0) work.push(call('POST', '/v1/metering/settle', { token }), call('POST', '/v1/operator/sweep', { headers: OPERATOR }));
    }
    const answers = (await Promise.all(work)) as { status: number; body: any }[];
    // keys 0..9 were sent twice with different bodies: one of each pair is a conflict
    expect(answers.filter((a) => a.status === 409)).toHaveLength(10);
    expect(answers.every((a) => a.status === 200 || a.status === 201 || a.status === 409)).toBe(true);
    await call('POST', '/v1/metering/settle', { token });
    await expectSettledOnce(token);
    const list = await records(token);
    expect(list).toHaveLength(20);
    expect(list.every((r) => r.settled_at !== null)).toBe(true);
    expectOneRounding(list);
  });
});
