import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualPayments } from '../../adapters/payments/manual/adapter.ts';
import type { CheckoutState } from '../../core/ports/payments.ts';
import { OPERATOR_KEY, startApi, type TestApi } from '../support/api.ts';

const op = { 'x-service-operator-key': OPERATOR_KEY };

/** The embedded processor, made to report some sessions paid with another amount than was asked. */
class MisreportingManual extends ManualPayments {
  readonly misreport = new Map<string, number>();
  override async getCheckout(sessionId: string): Promise<CheckoutState | null> {
    const state = await super.getCheckout(sessionId);
    const amount = this.misreport.get(sessionId);
    return state && amount !== undefined ? { ...state, status: 'paid', amountCents: amount } : state;
  }
}

let api: TestApi;
let processor: MisreportingManual;
beforeAll(async () => {
  processor = new MisreportingManual('http://127.0.0.1:1');
  api = await startApi({}, { payments: processor });
});
afterAll(() => api.close());

const checkout = async (token: string, usd: number) => (await api.call('POST', '/v1/billing/checkout', { token, body: { amount_usd: usd } })).body;
const balance = async (token: string) => (await api.call('GET', '/v1/billing/balance', { token })).body.balance_cents;
const sweep = () => api.call('POST', '/v1/operator/sweep', { headers: op });

describe('operators decide bank transfers, never card checkouts', () => {
  it('confirming or rejecting a checkout answers 409 and changes nothing; the queue lists bank transfers', async () => {
    const { token, tenantId } = await api.newTenant();
    const started = await checkout(token, 30);
    const transfer = (await api.call('POST', '/v1/billing/deposits', { token, body: { amount_usd: 12, reference: 'wire 7' } })).body;

    for (const action of ['confirm', 'reject']) {
      const res = await api.call('POST', `/v1/billing/deposits/${started.deposit_id}/${action}`, { headers: op });
      expect(res.status).toBe(409);
      expect(res.body.detail).toMatch(/bank transfers only/);
    }
    expect(await balance(token)).toBe(0);

    const queue = (await api.call('GET', '/v1/operator/deposits', { headers: op })).body as { id: string; kind: string }[];
    expect(queue.some((d) => d.id === transfer.id)).toBe(true);
    expect(queue.some((d) => d.id === started.deposit_id)).toBe(false);
    expect(queue.every((d) => d.kind === 'bank_transfer' || d.kind === 'checkout')).toBe(true);

    // what waits for the operator is the bank transfer alone
    const accounts = (await api.call('GET', '/v1/operator/accounts', { headers: op })).body as { tenant_id: string; pending_deposits: number }[];
    expect(accounts.find((a) => a.tenant_id === tenantId)?.pending_deposits).toBe(1);

    // the checkout is still the processor's to settle: paid later, it credits once
    await processor.pay(started.session_id);
    await sweep();
    expect(await balance(token)).toBe(3_000);
  });
});

describe('a checkout paid with another amount', () => {
  it('is a recorded conflict for an operator: the sweep carries on with every other step and account', async () => {
    const odd = await api.newTenant();
    const fine = await api.newTenant();
    const wrong = await checkout(odd.token, 20);
    const right = await checkout(fine.token, 15);
    processor.misreport.set(wrong.session_id, 2_500);
    await processor.pay(right.session_id);

    const first = await sweep();
    expect(first.status).toBe(200);
    expect(first.body.conflicts).toEqual([expect.stringContaining('paid 2500 cents for a deposit of 2000')]);
    expect(first.body.errors).toEqual([]);
    expect(first.body.checkouts_settled).toBeGreaterThanOrEqual(1);
    expect(await balance(fine.token)).toBe(1_500);
    expect(await balance(odd.token)).toBe(0);

    // the tenant's own sync is no 500 either
    const synced = await api.call('POST', `/v1/billing/checkout/${wrong.session_id}/sync`, { token: odd.token });
    expect(synced.status).toBe(200);
    expect(synced.body).toMatchObject({ status: 'pending', conflict: expect.stringContaining('2500') });

    // recorded once: the next pass does not ask again; the operator finds it in the queue and decides
    expect((await sweep()).body.conflicts).toEqual([]);
    const queue = (await api.call('GET', '/v1/operator/deposits', { headers: op })).body as { id: string; conflict: string | null }[];
    expect(queue.find((d) => d.id === wrong.deposit_id)?.conflict).toMatch(/2500/);
    const confirmed = await api.call('POST', `/v1/billing/deposits/${wrong.deposit_id}/confirm`, { headers: op });
    expect(confirmed.status).toBe(200);
    expect(await balance(odd.token)).toBe(2_000);
    expect((await api.call('POST', `/v1/billing/deposits/${wrong.deposit_id}/confirm`, { headers: op })).status).toBe(409);
  });
});
