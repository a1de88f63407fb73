import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualPayments } from '../../adapters/payments/manual/adapter.ts';
import type { OffSessionCharge, OffSessionOutcome } from '../../core/ports/payments.ts';
import { OPERATOR_KEY, startApi, type TestApi } from '../support/api.ts';

const op = { 'x-service-operator-key': OPERATOR_KEY };

/** The embedded processor, with a switch to make off-session charges decline as a bank would. */
class DecliningManual extends ManualPayments {
  declining = false;
  calls = 0;
  override async chargeOffSession(charge: OffSessionCharge): Promise<OffSessionOutcome> {
    this.calls++;
    if (this.declining) return { ok: false, reason: 'card_declined: Your card was declined.' };
    return super.chargeOffSession(charge);
  }
}

let api: TestApi;
let processor: DecliningManual;
beforeAll(async () => {
  processor = new DecliningManual('http://127.0.0.1:1');
  api = await startApi({}, { payments: processor });
});
afterAll(() => api.close());

const account = async (token: string) => (await api.call('GET', '/v1/billing/account', { token })).body;
const checkout = (token: string, amount: unknown) => api.call('POST', '/v1/billing/checkout', { token, body: { amount_usd: amount } });
const pagePath = (url: string) => new URL(url).pathname;
/** The page's buttons answer 303 to the return address, which is not served here: do not follow it. */
const press = (path: string) => fetch(`${api.baseUrl}${path}`, { method: 'POST', redirect: 'manual' });

async function tenantWithCard(usd: number) {
  const tenant = await api.newTenant();
  const started = await checkout(tenant.token, usd);
  expect((await press(`${pagePath(started.body.url)}/pay`)).status).toBe(303);
  return { ...tenant, sessionId: started.body.session_id as string };
}

describe('card checkout (embedded processor)', () => {
  it('credits once when paid and saves the card', async () => {
    const { token } = await api.newTenant();
    const started = await checkout(token, '25.00');
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ session_id: expect.stringMatching(/^mcs_/), amount_cents: 2_500, status: 'pending', deposit_id: expect.stringMatching(/^dep_/) });
    expect((await account(token)).balance_cents).toBe(0);

    const page = await api.call('GET', pagePath(started.body.url));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.body).toContain('$25.00');

    const paid = await press(`${pagePath(started.body.url)}/pay`);
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toContain(`session_id=${started.body.session_id}`);
    expect(await account(token)).toMatchObject({ balance_cents: 2_500, card: { brand: 'manual', last4: '4242' }, payments: { card: true, bank_transfer: true } });

    const synced = await api.call('POST', `/v1/billing/checkout/${started.body.session_id}/sync`, { token });
    expect(synced.body).toMatchObject({ id: started.body.deposit_id, kind: 'checkout', status: 'confirmed', amount_cents: 2_500 });
    expect((await account(token)).balance_cents).toBe(2_500);
  });

  it('a sync before payment changes nothing; parallel syncs after it credit once', async () => {
    const { token } = await api.newTenant();
    const started = await checkout(token, 40);
    expect((await api.call('POST', `/v1/billing/checkout/${started.body.session_id}/sync`, { token })).body.status).toBe('pending');
    await processor.pay(started.body.session_id); // paid at the processor; nobody told us yet
    const answers = await Promise.all([
      ...Array.from({ length: 6 }, () => api.call('POST', `/v1/billing/checkout/${started.body.session_id}/sync`, { token })),
      api.plane.services.payments.settleSession(started.body.session_id),
    ]);
    expect(answers.slice(0, 6).every((r: any) => r.status === 200 && r.body.status === 'confirmed')).toBe(true);
    const ledger = (await api.call('GET', '/v1/billing/ledger', { token })).body;
    expect(ledger.filter((e: any) => e.kind === 'deposit')).toHaveLength(1);
    expect((await account(token)).balance_cents).toBe(4_000);
  });

  it('a cancelled checkout expires and credits nothing; a paid one nobody synced is caught by the sweep', async () => {
    const { token } = await api.newTenant();
    const cancelled = await checkout(token, 10);
    expect((await press(`${pagePath(cancelled.body.url)}/cancel`)).status).toBe(303);
    expect((await api.call('POST', `/v1/billing/checkout/${cancelled.body.session_id}/sync`, { token })).body.status).toBe('expired');

    const missed = await checkout(token, 15);
    await processor.pay(missed.body.session_id);
    const sweep = await api.call('POST', '/v1/operator/sweep', { headers: op });
    expect(sweep.body.checkouts_settled).toBeGreaterThanOrEqual(1);
    expect((await account(token)).balance_cents).toBe(1_500);
  });

  it("another tenant's session answers 404; bad amounts 422; the Stripe webhook is not served without Stripe", async () => {
    const { token } = await api.newTenant();
    const other = await api.newTenant();
    const started = await checkout(token, 10);
    expect((await api.call('POST', `/v1/billing/checkout/${started.body.session_id}/sync`, { token: other.token })).status).toBe(404);
    expect((await api.call('POST', '/v1/billing/checkout/mcs_nosuch/sync', { token })).status).toBe(404);
    for (const amount of [0, -1, '0.001', '100000.01', 'lots']) expect((await checkout(token, amount)).status).toBe(422);
    expect((await api.call('POST', '/v1/webhooks/stripe', { body: {} })).status).toBe(404);
  });
});

describe('auto-recharge', () => {
  it('needs a saved card, and bounds its amounts', async () => {
    const { token } = await api.newTenant();
    const refused = await api.call('PUT', '/v1/billing/auto-recharge', { token, body: { enabled: true, threshold_usd: 10, amount_usd: 20 } });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/card/);
    const carded = await tenantWithCard(5);
    for (const body of [
      { enabled: true, threshold_usd: 0, amount_usd: 20 },
      { enabled: true, threshold_usd: 10, amount_usd: '100000.01' },
      { enabled: true, threshold_usd: '1.001', amount_usd: 20 },
      { threshold_usd: 10, amount_usd: 20 },
      { enabled: true },
      { enabled: 'yes', threshold_usd: 10, amount_usd: 20 },
    ]) {
      const res = await api.call('PUT', '/v1/billing/auto-recharge', { token: carded.token, body });
      expect(res.status, JSON.stringify(body)).toBe(422);
    }
    const on = await api.call('PUT', '/v1/billing/auto-recharge', { token: carded.token, body: { enabled: true, threshold_usd: '10', amount_usd: 20.5 } });
    expect(on.status).toBe(200);
    expect(on.body.auto_recharge).toEqual({ enabled: true, threshold_cents: 1_000, amount_cents: 2_050, last_error: null, payments_last_24h: 0, max_payments_per_24h: 3 });
  });

  it('ten overlapping runs under the threshold make one payment; the fourth in 24 hours is refused', async () => {
    const { token, tenantId } = await tenantWithCard(5); // balance 5 USD
    await api.call('PUT', '/v1/billing/auto-recharge', { token, body: { enabled: true, threshold_usd: 10, amount_usd: 20 } });
    await Promise.all(Array.from({ length: 10 }, () => api.plane.services.payments.runAutoRecharge()));
    let ledger = (await api.call('GET', '/v1/billing/ledger', { token })).body;
    expect(ledger.filter((e: any) => e.kind === 'auto_recharge')).toHaveLength(1);
    expect((await account(token)).balance_cents).toBe(2_500);

    const drain = () => api.call('POST', '/v1/billing/charges', { headers: op, body: { tenant_id: tenantId, amount_usd: 20, reason: 'usage' } });
    for (let i = 0; i < 2; i++) {
      await drain();
      await api.call('POST', '/v1/operator/sweep', { headers: op });
    }
    expect((await account(token)).auto_recharge).toMatchObject({ payments_last_24h: 3, last_error: null });
    await drain(); // 5 USD again: the fourth payment would break the 24 h limit
    await api.call('POST', '/v1/operator/sweep', { headers: op });
    const capped = await account(token);
    expect(capped.balance_cents).toBe(500);
    expect(capped.auto_recharge.last_error).toMatch(/limit of 3/);
    ledger = (await api.call('GET', '/v1/billing/ledger', { token })).body;
    expect(ledger.filter((e: any) => e.kind === 'auto_recharge')).toHaveLength(3);

    api.clock.advance(24 * 3_600_000 + 1_000);
    await api.call('POST', '/v1/operator/sweep', { headers: op });
    expect((await account(token)).balance_cents).toBe(2_500);
  });

  it('a declined card records last_error, credits nothing, and is not retried until the tenant acts', async () => {
    const { token } = await tenantWithCard(5);
    await api.call('PUT', '/v1/billing/auto-recharge', { token, body: { enabled: true, threshold_usd: 10, amount_usd: 20 } });
    processor.declining = true;
    try {
      const before = processor.calls;
      const first = (await api.call('POST', '/v1/operator/sweep', { headers: op })).body;
      expect(first.auto_recharge.failed).toBeGreaterThanOrEqual(1);
      expect(await account(token)).toMatchObject({ balance_cents: 500, auto_recharge: { enabled: true, last_error: expect.stringMatching(/card_declined/) } });
      const calls = processor.calls;
      expect(calls).toBeGreaterThan(before);
      await api.call('POST', '/v1/operator/sweep', { headers: op });
      await api.call('POST', '/v1/operator/sweep', { headers: op });
      expect(processor.calls).toBe(calls); // not retried in a loop
    } finally {
      processor.declining = false;
    }
    await api.call('PUT', '/v1/billing/auto-recharge', { token, body: { enabled: true } }); // the tenant acts
    await api.call('POST', '/v1/operator/sweep', { headers: op });
    expect((await account(token)).balance_cents).toBe(2_500);
  });

  it('forgetting the card turns auto-recharge off', async () => {
    const { token } = await tenantWithCard(50);
    await api.call('PUT', '/v1/billing/auto-recharge', { token, body: { enabled: true, threshold_usd: 10, amount_usd: 20 } });
    const forgotten = await api.call('DELETE', '/v1/billing/card', { token });
    expect(forgotten.status).toBe(200);
    expect(forgotten.body).toMatchObject({ card: null, auto_recharge: { enabled: false } });
  });
});

describe('an auto-recharge attempt without an answer', () => {
  it('is asked again with the same key, and closed (not resent) after 23 hours', async () => {
    const { token } = await tenantWithCard(5);
    await api.call('PUT', '/v1/billing/auto-recharge', { token, body: { enabled: true, threshold_usd: 10, amount_usd: 20 } });
    const original = processor.chargeOffSession.bind(processor);
    const keys: string[] = [];
    processor.chargeOffSession = async (charge) => {
      keys.push(charge.idempotencyKey);
      throw new Error('connection reset');
    };
    try {
      await api.plane.services.payments.runAutoRecharge();
      await api.plane.services.payments.runAutoRecharge();
      expect(keys).toHaveLength(2);
      expect(keys[1]).toBe(keys[0]); // the same attempt, never a second payment
      api.clock.advance(23 * 3_600_000 + 60_000);
      await api.plane.services.payments.runAutoRecharge();
      expect(keys).toHaveLength(2);
    } finally {
      processor.chargeOffSession = original;
      api.clock.advance(-(23 * 3_600_000 + 60_000));
    }
    const after = await account(token);
    expect(after).toMatchObject({ balance_cents: 500, auto_recharge: { last_error: expect.stringMatching(/no answer .* within 23 hours/) } });
  });
});
