import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManualPayments } from '../../adapters/payments/manual/adapter.ts';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';

/** Unsettled metered usage is owed at once: the rental's funds check and auto-recharge count it. */
let world: RentalWorld;
beforeAll(async () => {
  world = await rentalWorld({ metering: { prices: { gpu_seconds: { unit: 'second', usd_per_unit: '0.01' } } } });
});
afterAll(() => world.close());

const report = (token: string, seconds: number) => world.api.call('POST', '/v1/metering/usage', { token, body: { resource_kind: 'gpu_seconds', quantity: seconds } });

describe('usage not yet settled', () => {
  it('leaves less to rent with: a first hour beyond what is available is 402', async () => {
    const { token } = await world.fundedTenant(5);
    const [node] = await world.offers((o) => o.rate >= 100 && o.rate <= 300);
    expect((await report(token, 450)).status).toBe(201); // 4.50 USD owed, the balance untouched
    expect(await world.balance(token)).toMatchObject({ balance_cents: 500, owed_cents: 450, available_cents: 50 });
    const refused = await world.rent(token, { node_id: node!.id });
    expect(refused.status).toBe(402);
    expect(refused.body.detail).toMatch(/50 are available/);
  });

  it('triggers auto-recharge when it leaves available funds under the threshold', async () => {
    const { token } = await world.api.newTenant();
    const started = (await world.api.call('POST', '/v1/billing/checkout', { token, body: { amount_usd: 5 } })).body;
    const manual = world.api.plane.processor as ManualPayments;
    await manual.pay(started.session_id);
    await world.api.plane.services.payments.settleSession(started.session_id);
    expect((await world.api.call('PUT', '/v1/billing/auto-recharge', { token, body: { enabled: true, threshold_usd: 3, amount_usd: 10 } })).status).toBe(200);
    expect((await report(token, 300)).status).toBe(201); // available 2.00 < 3.00, though the balance is 5.00
    const sweep = (await world.api.call('POST', '/v1/operator/sweep', { headers: OPERATOR })).body;
    expect(sweep.auto_recharge).toMatchObject({ attempted: 1, succeeded: 1 });
    expect(await world.balance(token)).toMatchObject({ balance_cents: 500 + 1_000 - 300, owed_cents: 0 });
  });
});
