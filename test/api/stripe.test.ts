import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configFromEnv } from '../../hosts/composition/config.ts';
import { startFakeStripe, type FakeStripe } from '../fakes/stripe/server.ts';
import { OPERATOR_KEY, startApi, type TestApi } from '../support/api.ts';

const op = { 'x-service-operator-key': OPERATOR_KEY };
let stripe: FakeStripe;
let api: TestApi;

beforeAll(async () => {
  stripe = await startFakeStripe({ secretKey: 'sk_test_fake0123456789', webhookSecret: 'whsec_fake0123456789' });
  // exactly what an operator sets: the two secrets (and, here only, where the API lives)
  const env = configFromEnv({ STRIPE_SECRET_KEY: stripe.secretKey, STRIPE_WEBHOOK_SECRET: stripe.webhookSecret, STRIPE_API_BASE: stripe.url, PUBLIC_URL: 'https://gpus.example.com' });
  api = await startApi({ payments: env.payments!, publicUrl: env.publicUrl! });
});
afterAll(async () => {
  await api.close();
  await stripe.close();
});

const account = async (token: string) => (await api.call('GET', '/v1/billing/account', { token })).body;
const deliver = (event: { body: string; header: string }, header = event.header) =>
  api.call('POST', '/v1/webhooks/stripe', { rawBody: event.body, headers: { 'stripe-signature': header } });
const nowSeconds = () => Math.floor(api.clock.now().getTime() / 1000);

async function paidCheckout(usd: number, card = { brand: 'visa', last4: '4242' } as { brand: string; last4: string; behavior?: 'succeeds' | 'declines' | 'requires_authentication' }) {
  const tenant = await api.newTenant();
  const started = await api.call('POST', '/v1/billing/checkout', { token: tenant.token, body: { amount_usd: usd } });
  expect(started.status).toBe(201);
  const session = stripe.completeSession(started.body.session_id, card);
  return { ...tenant, started: started.body, session };
}

describe('Stripe checkout and webhooks', () => {
  it('opens a Checkout Session for the tenant and credits once when the completed event arrives', async () => {
    const { token, started, session } = await paidCheckout(30);
    expect(started.url).toMatch(/^https?:\/\//);
    const created = stripe.sessions.get(started.session_id)!;
    expect(created).toMatchObject({ mode: 'payment', amount_total: 3_000, client_reference_id: started.deposit_id });
    expect(String(created.success_url)).toContain('https://gpus.example.com/?checkout=success');
    expect((await account(token)).balance_cents).toBe(0);

    const event = stripe.signedEvent('checkout.session.completed', session, { timestamp: nowSeconds() });
    const res = await deliver(event);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: true, handled: 'checkout_completed' });
    expect(await account(token)).toMatchObject({ balance_cents: 3_000, card: { brand: 'visa', last4: '4242' }, payments: { card: true } });
  });

  it('five deliveries of one event and a sync, in parallel, credit once', async () => {
    const { token, started, session } = await paidCheckout(12);
    const event = stripe.signedEvent('checkout.session.completed', session, { timestamp: nowSeconds() });
    const answers = await Promise.all([
      ...Array.from({ length: 5 }, () => deliver(event)),
      api.call('POST', `/v1/billing/checkout/${started.session_id}/sync`, { token }),
    ]);
    expect(answers.every((r) => r.status === 200)).toBe(true);
    const deposits = (await api.call('GET', '/v1/billing/ledger', { token })).body.filter((e: any) => e.kind === 'deposit');
    expect(deposits).toHaveLength(1);
    expect((await account(token)).balance_cents).toBe(1_200);
  });

  it('answers 503 when Stripe cannot be asked about the session, and credits once on the next delivery', async () => {
    const { token, started, session } = await paidCheckout(7);
    const event = stripe.signedEvent('checkout.session.completed', session, { timestamp: nowSeconds() });
    stripe.failNext(2, 500, `/v1/checkout/sessions/${started.session_id}`); // the SDK retries once
    const refused = await deliver(event);
    expect(refused.status).toBe(503);
    expect(refused.body.detail).toMatch(/deliver the event again/);
    expect((await account(token)).balance_cents).toBe(0);
    expect((await deliver(event)).status).toBe(200);
    expect((await account(token)).balance_cents).toBe(700);
  });

  it('refuses a bad signature, a timestamp over 300 s off and a re-serialised body with 400, crediting nothing', async () => {
    const { token, session } = await paidCheckout(9);
    const good = stripe.signedEvent('checkout.session.completed', session, { timestamp: nowSeconds() });
    const cases = [
      { name: 'wrong secret', event: stripe.signedEvent('checkout.session.completed', session, { timestamp: nowSeconds(), secret: 'whsec_someone_else' }) },
      { name: 'too old', event: stripe.signedEvent('checkout.session.completed', session, { timestamp: nowSeconds() - 301 }) },
      { name: 'from the future', event: stripe.signedEvent('checkout.session.completed', session, { timestamp: nowSeconds() + 301 }) },
      { name: 're-serialised', event: { body: JSON.stringify(JSON.parse(good.body)), header: good.header } },
    ];
    for (const { name, event } of cases) {
      const res = await deliver(event);
      expect(res.status, name).toBe(400);
      expect(res.body.detail).toMatch(/webhook refused/);
    }
    expect((await deliver(good, '')).status).toBe(400);
    expect((await api.call('POST', '/v1/webhooks/stripe', { rawBody: good.body })).status).toBe(400);
    expect((await account(token)).balance_cents).toBe(0);
    expect((await deliver(good)).status).toBe(200);
    expect((await account(token)).balance_cents).toBe(900);
  });

  it('auto-recharge charges the saved card off session once; a declined card sets last_error and is not retried', async () => {
    const good = await paidCheckout(5);
    await api.call('POST', `/v1/billing/checkout/${good.started.session_id}/sync`, { token: good.token });
    await api.call('PUT', '/v1/billing/auto-recharge', { token: good.token, body: { enabled: true, threshold_usd: 10, amount_usd: 25 } });
    const before = stripe.charges.length;
    await Promise.all(Array.from({ length: 10 }, () => api.call('POST', '/v1/operator/sweep', { headers: op })));
    await api.call('POST', '/v1/operator/sweep', { headers: op });
    expect(stripe.charges.slice(before).filter((c) => c.status === 'succeeded')).toHaveLength(1);
    expect(await account(good.token)).toMatchObject({ balance_cents: 3_000, auto_recharge: { payments_last_24h: 1, last_error: null } });

    const bad = await paidCheckout(5, { brand: 'visa', last4: '0002', behavior: 'declines' });
    await api.call('POST', `/v1/billing/checkout/${bad.started.session_id}/sync`, { token: bad.token });
    await api.call('PUT', '/v1/billing/auto-recharge', { token: bad.token, body: { enabled: true, threshold_usd: 10, amount_usd: 25 } });
    const tried = stripe.charges.length;
    await api.call('POST', '/v1/operator/sweep', { headers: op });
    expect(await account(bad.token)).toMatchObject({ balance_cents: 500, auto_recharge: { last_error: expect.stringMatching(/card_declined/) } });
    const afterFirst = stripe.charges.length;
    expect(afterFirst).toBeGreaterThan(tried);
    await api.call('POST', '/v1/operator/sweep', { headers: op });
    expect(stripe.charges.length).toBe(afterFirst);

    const forgotten = await api.call('DELETE', '/v1/billing/card', { token: good.token });
    expect(forgotten.body).toMatchObject({ card: null, auto_recharge: { enabled: false } });
  });
});
