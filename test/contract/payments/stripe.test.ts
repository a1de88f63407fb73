import { createHmac } from 'node:crypto';
import Stripe from 'stripe';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidWebhook, type CheckoutRequest, type Payments } from '../../../core/ports/payments.ts';
import { createStripePayments, type StripePaymentsConfig } from '../../../adapters/payments/stripe/index.ts';
import { startFakeStripe, type CardBehavior, type FakeStripe } from '../../fakes/stripe/server.ts';
import { paymentsContract } from '../payments-contract.ts';

/** The adapter pointed at the fake: plain http, no retries unless a test wants them. */
const configFor = (fake: FakeStripe, overrides: Partial<StripePaymentsConfig> = {}): StripePaymentsConfig => ({
  secretKey: fake.secretKey,
  webhookSecret: fake.webhookSecret,
  host: fake.host,
  port: fake.port,
  protocol: 'http',
  maxNetworkRetries: 0,
  timeoutMs: 5_000,
  ...overrides,
});

paymentsContract('stripe', async () => {
  const fake = await startFakeStripe();
  return {
    payments: createStripePayments(configFor(fake)),
    pay: async (sessionId, card) => {
      fake.completeSession(sessionId, card);
    },
    expire: async (sessionId) => {
      fake.expireSession(sessionId);
    },
    close: fake.close,
  };
});

describe('stripe payments adapter', () => {
  let fake: FakeStripe;
  let payments: Payments;
  let deposits = 0;

  beforeEach(async () => {
    fake = await startFakeStripe();
    payments = createStripePayments(configFor(fake));
  });
  afterEach(async () => {
    await fake.close();
  });

  const request = (overrides: Partial<CheckoutRequest> = {}): CheckoutRequest => ({
    depositId: `dep_${++deposits}`,
    tenantId: 'ten_1',
    amountCents: 2_500,
    customerId: null,
    successUrl: 'https://cp.example/billing/done?session={CHECKOUT_SESSION_ID}',
    cancelUrl: 'https://cp.example/billing/cancelled',
    ...overrides,
  });

  /** A checkout paid with a card of the given behaviour: the saved card, as the control plane keeps it. */
  const savedCard = async (behavior: CardBehavior = 'succeeds') => {
    const created = await payments.createCheckout(request());
    fake.completeSession(created.sessionId, { brand: 'visa', last4: '4242', behavior });
    const state = await payments.getCheckout(created.sessionId);
    return { customerId: state!.customerId!, paymentMethodId: state!.card!.paymentMethodId };
  };

  const succeeded = () => fake.charges.filter((pi) => pi.status === 'succeeded');

  describe('checkout', () => {
    it('creates a customer for a first checkout, then a payment-mode session for the deposit that saves the card', async () => {
      const created = await payments.createCheckout(request({ depositId: 'dep_wire', amountCents: 1_999 }));
      const [customer] = fake.requestsTo('POST', '/v1/customers');
      expect(customer).toMatchObject({ params: { metadata: { tenant_id: 'ten_1' } }, idempotencyKey: 'customer:ten_1', status: 200 });
      expect(created.customerId).toMatch(/^cus_/);
      expect(fake.customers.get(created.customerId!)?.metadata).toEqual({ tenant_id: 'ten_1' });

      const [session] = fake.requestsTo('POST', '/v1/checkout/sessions');
      const metadata = { deposit_id: 'dep_wire', tenant_id: 'ten_1' };
      expect(session!.params).toEqual({
        mode: 'payment',
        customer: created.customerId,
        client_reference_id: 'dep_wire',
        line_items: [{ quantity: '1', price_data: { currency: 'usd', unit_amount: '1999', product_data: { name: 'Account credit' } } }],
        payment_intent_data: { setup_future_usage: 'off_session', metadata },
        metadata,
        success_url: 'https://cp.example/billing/done?session={CHECKOUT_SESSION_ID}',
        cancel_url: 'https://cp.example/billing/cancelled',
      });
      expect(session!.idempotencyKey).toBe('checkout:dep_wire');
      expect(created.sessionId).toMatch(/^cs_test_/);
      expect(created.url).toMatch(/^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_/);
    });

    it('opens the checkout on the customer it is given, creating none', async () => {
      const first = await payments.createCheckout(request());
      const second = await payments.createCheckout(request({ customerId: first.customerId }));
      expect(second.customerId).toBe(first.customerId);
      expect(fake.requestsTo('POST', '/v1/customers')).toHaveLength(1);
    });

    it("gives a tenant's two racing first checkouts one customer (same idempotency key)", async () => {
      const [a, b] = await Promise.all([payments.createCheckout(request()), payments.createCheckout(request())]);
      expect(a.customerId).toBe(b.customerId);
      expect(fake.customers.size).toBe(1);
      expect(fake.requestsTo('POST', '/v1/customers').map((r) => r.replayed).sort()).toEqual([false, true]);
    });

    it('reads the paid card from the expanded payment method; the payment carries the deposit id', async () => {
      const created = await payments.createCheckout(request({ depositId: 'dep_card' }));
      fake.completeSession(created.sessionId, { brand: 'mastercard', last4: '4444' });
      const state = await payments.getCheckout(created.sessionId);
      expect(state).toMatchObject({ status: 'paid', amountCents: 2_500, depositId: 'dep_card', customerId: created.customerId });
      expect(state!.card).toMatchObject({ brand: 'mastercard', last4: '4444' });
      expect(state!.card!.paymentMethodId).toMatch(/^pm_/);

      expect(fake.requestsTo('GET', `/v1/checkout/sessions/${created.sessionId}`).at(-1)!.params).toEqual({ expand: ['payment_intent.payment_method'] });
      const intent = fake.paymentIntents.get(fake.sessions.get(created.sessionId)!.payment_intent as string)!;
      expect(intent).toMatchObject({ metadata: { deposit_id: 'dep_card', tenant_id: 'ten_1' }, setup_future_usage: 'off_session', status: 'succeeded' });
      expect(fake.paymentMethods.get(state!.card!.paymentMethodId)!.customer).toBe(created.customerId);
    });

    it('throws, never answers null, when Stripe refuses the key or cannot be reached', async () => {
      const wrongKey = createStripePayments(configFor(fake, { secretKey: 'sk_test_wrong0000000000' }));
      await expect(wrongKey.createCheckout(request())).rejects.toThrow(/stripe: open a checkout: HTTP 401/);
      await expect(wrongKey.getCheckout('cs_test_x')).rejects.toThrow(/HTTP 401/);
      await fake.close();
      await expect(payments.getCheckout('cs_test_x')).rejects.toThrow(/stripe: read checkout cs_test_x/);
      fake = await startFakeStripe(); // for afterEach
    });

    it('throws on a 5xx, and with retries on, a passing 503 is absorbed', async () => {
      const created = await payments.createCheckout(request());
      fake.failNext(1, 500, '/v1/checkout/sessions/');
      await expect(payments.getCheckout(created.sessionId)).rejects.toThrow(/HTTP 500 api_error/);

      const retrying = createStripePayments(configFor(fake, { maxNetworkRetries: 1 }));
      fake.failNext(1, 503, '/v1/checkout/sessions/');
      expect((await retrying.getCheckout(created.sessionId))?.status).toBe('open');
      expect(fake.requestsTo('GET', `/v1/checkout/sessions/${created.sessionId}`).map((r) => r.status)).toEqual([500, 503, 200]);
    });
  });

  describe('off-session charges', () => {
    it('creates and confirms a PaymentIntent off session under our idempotency key', async () => {
      const card = await savedCard();
      const outcome = await payments.chargeOffSession({ ...card, amountCents: 5_000, idempotencyKey: 'auto-recharge:arp_1' });
      expect(outcome).toEqual({ ok: true, paymentId: expect.stringMatching(/^pi_/) });
      const [sent] = fake.requestsTo('POST', '/v1/payment_intents');
      expect(sent!.params).toEqual({
        amount: '5000',
        currency: 'usd',
        customer: card.customerId,
        payment_method: card.paymentMethodId,
        off_session: 'true',
        confirm: 'true',
        metadata: { idempotency_key: 'auto-recharge:arp_1' },
      });
      expect(sent!.idempotencyKey).toBe('auto-recharge:arp_1');
      expect(succeeded().map((pi) => [pi.id, pi.amount, pi.amount_received])).toEqual([[outcome.ok && outcome.paymentId, 5_000, 5_000]]);
    });

    it('the same key asked again is a replay at Stripe: one PaymentIntent, one payment', async () => {
      const card = await savedCard();
      const charge = { ...card, amountCents: 5_000, idempotencyKey: 'auto-recharge:arp_2' };
      const first = await payments.chargeOffSession(charge);
      expect(await payments.chargeOffSession(charge)).toEqual(first);
      expect(fake.charges).toHaveLength(1);
      expect(fake.requestsTo('POST', '/v1/payment_intents').map((r) => r.replayed)).toEqual([false, true]);
    });

    it('reports a declined card as a refusal with its code, and nothing is charged', async () => {
      const card = await savedCard('declines');
      const charge = { ...card, amountCents: 5_000, idempotencyKey: 'auto-recharge:arp_3' };
      const outcome = await payments.chargeOffSession(charge);
      expect(outcome).toEqual({ ok: false, reason: 'card_declined (generic_decline): Your card was declined.' });
      expect(fake.requestsTo('POST', '/v1/payment_intents')[0]!.status).toBe(402);
      expect(succeeded()).toHaveLength(0);
      expect(fake.charges.map((pi) => [pi.status, pi.amount_received])).toEqual([['requires_payment_method', 0]]);
      // the refusal is saved under the key too: asking again does not try the card again
      expect(await payments.chargeOffSession(charge)).toEqual(outcome);
      expect(fake.charges).toHaveLength(1);
    });

    it('reports a card that needs authentication as a refusal, and nothing is charged', async () => {
      const card = await savedCard('requires_authentication');
      const outcome = await payments.chargeOffSession({ ...card, amountCents: 5_000, idempotencyKey: 'auto-recharge:arp_4' });
      expect(outcome).toEqual({ ok: false, reason: 'authentication_required: Your card was declined. This transaction requires authentication.' });
      expect(succeeded()).toHaveLength(0);
    });

    it('refuses a detached card without creating a payment', async () => {
      const card = await savedCard();
      await payments.detachCard(card.paymentMethodId);
      const outcome = await payments.chargeOffSession({ ...card, amountCents: 5_000, idempotencyKey: 'auto-recharge:arp_5' });
      expect(outcome.ok).toBe(false);
      if (!outcome.ok) expect(outcome.reason).toMatch(/^invalid_request: .*detached from a Customer/);
      expect(fake.charges).toHaveLength(0);
    });

    it('throws (not a refusal) when a key is reused with another amount: its first request may have charged', async () => {
      const card = await savedCard();
      await payments.chargeOffSession({ ...card, amountCents: 5_000, idempotencyKey: 'auto-recharge:arp_6' });
      await expect(payments.chargeOffSession({ ...card, amountCents: 6_000, idempotencyKey: 'auto-recharge:arp_6' })).rejects.toThrow(
        /HTTP 400 idempotency_error/,
      );
      expect(succeeded()).toHaveLength(1);
    });

    it('throws on a 5xx or no answer; the retry under the same key pays once', async () => {
      const card = await savedCard();
      const charge = { ...card, amountCents: 5_000, idempotencyKey: 'auto-recharge:arp_7' };
      fake.failNext(1, 502, '/v1/payment_intents');
      await expect(payments.chargeOffSession(charge)).rejects.toThrow(/stripe: charge the saved card: HTTP 502/);
      expect((await payments.chargeOffSession(charge)).ok).toBe(true);
      expect(await payments.chargeOffSession(charge)).toMatchObject({ ok: true });
      expect(succeeded()).toHaveLength(1);
    });
  });

  describe('detach', () => {
    it('treats an unknown card as gone, and a second detach checks the card rather than the message', async () => {
      await payments.detachCard('pm_1NeverExisted');
      const card = await savedCard();
      await payments.detachCard(card.paymentMethodId);
      await payments.detachCard(card.paymentMethodId);
      expect(fake.requestsTo('POST', `/v1/payment_methods/${card.paymentMethodId}/detach`).map((r) => r.status)).toEqual([200, 400]);
      expect(fake.requestsTo('GET', `/v1/payment_methods/${card.paymentMethodId}`).map((r) => r.status)).toEqual([200]);
      expect(fake.paymentMethods.get(card.paymentMethodId)!.customer).toBeNull();
    });

    it('throws when Stripe fails', async () => {
      const card = await savedCard();
      fake.failNext(1, 500, '/v1/payment_methods/');
      await expect(payments.detachCard(card.paymentMethodId)).rejects.toThrow(/stripe: detach card/);
    });
  });

  describe('webhooks', () => {
    const NOW = new Date('2026-11-21T12:00:00.750Z');
    const T = Math.floor(NOW.getTime() / 1000);
    const session = { id: 'cs_test_webhook1', object: 'checkout.session' };
    const parse = (delivery: { body: string; header: string | undefined }, now = NOW) =>
      payments.parseWebhook(Buffer.from(delivery.body), delivery.header, now);
    const refused = (delivery: { body: string; header: string | undefined }, now = NOW): InvalidWebhook => {
      try {
        parse(delivery, now);
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidWebhook);
        return error as InvalidWebhook;
      }
      throw new Error('expected InvalidWebhook');
    };

    it('reads checkout completed, async payment succeeded and expired events', () => {
      const event = (type: string) => parse(fake.signedEvent(type, session, { timestamp: T }));
      expect(event('checkout.session.completed')).toEqual({ kind: 'checkout_completed', sessionId: 'cs_test_webhook1' });
      expect(event('checkout.session.async_payment_succeeded')).toEqual({ kind: 'checkout_completed', sessionId: 'cs_test_webhook1' });
      expect(event('checkout.session.expired')).toEqual({ kind: 'checkout_expired', sessionId: 'cs_test_webhook1' });
    });

    it('ignores other event types', () => {
      expect(parse(fake.signedEvent('payment_intent.succeeded', { id: 'pi_1', object: 'payment_intent' }, { timestamp: T }))).toEqual({
        kind: 'ignored',
        type: 'payment_intent.succeeded',
      });
    });

    it('signs as Stripe does: the SDK test helper produces the same header', () => {
      const delivery = fake.signedEvent('checkout.session.completed', session, { timestamp: T });
      expect(Stripe.webhooks.generateTestHeaderString({ payload: delivery.body, secret: fake.webhookSecret, timestamp: T })).toBe(delivery.header);
    });

    it('accepts a timestamp up to 300 s either side of now (the fake clock, not the wall clock)', () => {
      expect(parse(fake.signedEvent('checkout.session.completed', session, { timestamp: T - 300 })).kind).toBe('checkout_completed');
      expect(parse(fake.signedEvent('checkout.session.completed', session, { timestamp: T + 300 })).kind).toBe('checkout_completed');
    });

    it('refuses a timestamp 301 s off, in either direction', () => {
      expect(refused(fake.signedEvent('checkout.session.completed', session, { timestamp: T - 301 })).message).toMatch(/timestamp out of tolerance: signed 301 s ago/);
      expect(refused(fake.signedEvent('checkout.session.completed', session, { timestamp: T + 301 })).message).toMatch(/301 s ahead/);
    });

    it('refuses a signature made with another secret', () => {
      const forged = fake.signedEvent('checkout.session.completed', session, { timestamp: T, secret: 'whsec_someone_else' });
      expect(refused(forged).message).toMatch(/^bad signature/);
    });

    it('refuses a body that was parsed and serialised again (the signature covers the raw bytes)', () => {
      const delivery = fake.signedEvent('checkout.session.completed', session, { timestamp: T });
      const reserialised = JSON.stringify(JSON.parse(delivery.body));
      expect(reserialised).not.toBe(delivery.body);
      expect(refused({ body: reserialised, header: delivery.header }).message).toMatch(/^bad signature/);
    });

    it('refuses a missing, empty or malformed header', () => {
      const { body, header } = fake.signedEvent('checkout.session.completed', session, { timestamp: T });
      expect(refused({ body, header: undefined }).message).toMatch(/missing Stripe-Signature/);
      expect(refused({ body, header: '' }).message).toMatch(/missing Stripe-Signature/);
      expect(refused({ body, header: header.replace(/^t=\d+,/, '') }).message).toMatch(/malformed/);
      expect(refused({ body, header: `t=${T}` }).message).toMatch(/^bad signature: No signatures found with expected scheme/);
    });

    it('refuses a correctly signed body that is not JSON', () => {
      const body = 'not json at all';
      const signature = createHmac('sha256', fake.webhookSecret).update(`${T}.${body}`).digest('hex');
      expect(refused({ body, header: `t=${T},v1=${signature}` }).message).toBe('body is not JSON');
    });

    it('from a real session: the completed event names it, and the session read back is paid', async () => {
      const created = await payments.createCheckout(request());
      const paidSession = fake.completeSession(created.sessionId);
      const event = parse(fake.signedEvent('checkout.session.completed', paidSession, { timestamp: T }));
      expect(event).toEqual({ kind: 'checkout_completed', sessionId: created.sessionId });
      expect((await payments.getCheckout(created.sessionId))?.status).toBe('paid');
    });
  });
});

describe('fake stripe wire details', () => {
  let fake: FakeStripe;
  beforeEach(async () => {
    fake = await startFakeStripe();
  });
  afterEach(async () => {
    await fake.close();
  });

  const call = async (method: string, path: string, options: { body?: string; key?: string | null; idempotencyKey?: string } = {}) => {
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    const key = options.key === undefined ? fake.secretKey : options.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    const response = await fetch(`${fake.url}${path}`, { method, headers, ...(options.body !== undefined && { body: options.body }) });
    return { status: response.status, headers: response.headers, body: (await response.json()) as { error?: Record<string, unknown> } & Record<string, unknown> };
  };

  it("answers 401 with Stripe's error envelope without a key or with a wrong one", async () => {
    const none = await call('GET', '/v1/checkout/sessions/cs_test_x', { key: null });
    expect(none.status).toBe(401);
    expect(none.body.error).toMatchObject({ type: 'invalid_request_error', message: expect.stringMatching(/^You did not provide an API key/) });
    const wrong = await call('GET', '/v1/checkout/sessions/cs_test_x', { key: 'sk_test_wrongwrongwrong1234' });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error!.message).toMatch(/^Invalid API Key provided: sk_test_\*+1234$/);
  });

  it('decodes bracketed form keys and expand[] as well as expand[0]', async () => {
    const customer = await call('POST', '/v1/customers', { body: 'metadata[tenant_id]=ten_9&email=a%40b.example' });
    expect(customer.body).toMatchObject({ object: 'customer', email: 'a@b.example', metadata: { tenant_id: 'ten_9' } });
    const body =
      `customer=${customer.body.id as string}&mode=payment&line_items[0][quantity]=2&line_items[0][price_data][currency]=usd` +
      '&line_items[0][price_data][unit_amount]=300&line_items[0][price_data][product_data][name]=Credit&payment_intent_data[setup_future_usage]=off_session';
    const created = await call('POST', '/v1/checkout/sessions', { body });
    expect(created.body).toMatchObject({ amount_total: 600, currency: 'usd', status: 'open', payment_status: 'unpaid', payment_intent: null });
    const id = created.body.id as string;
    fake.completeSession(id, { brand: 'amex', last4: '0005' });
    const read = await call('GET', `/v1/checkout/sessions/${id}?expand[]=payment_intent.payment_method&expand[]=customer`);
    expect(read.body).toMatchObject({ status: 'complete', payment_status: 'paid', customer: { object: 'customer' }, payment_intent: { object: 'payment_intent', payment_method: { card: { brand: 'amex', last4: '0005' } } } });
    const plain = await call('GET', `/v1/checkout/sessions/${id}`);
    expect(plain.body.payment_intent).toMatch(/^pi_/);
    expect((await call('GET', `/v1/checkout/sessions/${id}?expand[0]=mode`)).body.error).toMatchObject({ message: 'This property cannot be expanded (mode).' });
  });

  it('refuses unknown parameters, missing ones, and unknown URLs as Stripe does', async () => {
    expect((await call('POST', '/v1/customers', { body: 'colour=blue' })).body.error).toMatchObject({ code: 'parameter_unknown', param: 'colour' });
    expect((await call('POST', '/v1/payment_intents', { body: 'currency=usd' })).body.error).toMatchObject({ code: 'parameter_missing', param: 'amount' });
    expect((await call('POST', '/v1/payment_intents', { body: 'currency=usd&amount=49' })).body.error).toMatchObject({ code: 'amount_too_small' });
    const missing = await call('GET', '/v1/checkout/sessions/cs_test_nothing');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_missing', message: "No such checkout.session: 'cs_test_nothing'" });
    expect((await call('GET', '/v1/charges')).body.error!.message).toMatch(/^Unrecognized request URL \(GET: \/v1\/charges\)/);
  });

  it('replays an idempotent request with its saved answer and refuses the key with other parameters', async () => {
    const first = await call('POST', '/v1/customers', { body: 'name=Ada', idempotencyKey: 'k1' });
    const again = await call('POST', '/v1/customers', { body: 'name=Ada', idempotencyKey: 'k1' });
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const other = await call('POST', '/v1/customers', { body: 'name=Grace', idempotencyKey: 'k1' });
    expect(other.status).toBe(400);
    expect(other.body.error).toMatchObject({ type: 'idempotency_error', message: expect.stringMatching(/same parameters they were first used with/) });
    expect(fake.customers.size).toBe(1);
  });
});
