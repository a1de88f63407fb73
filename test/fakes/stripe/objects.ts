import { randomBytes } from 'node:crypto';

/**
 * The wire objects the fake answers with, in the shapes of Stripe's API reference (Customer, Checkout
 * Session, PaymentIntent, PaymentMethod, Event) and its error envelope. Fields the adapter never reads
 * are present with their usual empty values so a response looks like Stripe's, not like a summary.
 */

export type Wire = Record<string, unknown>;

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Stripe ids: a type prefix and base62 text (`cus_`, `cs_test_`, `pi_`, `pm_`, `ch_`, `evt_`, `req_`). */
export const stripeId = (prefix: string, length = 24): string =>
  prefix + [...randomBytes(length)].map((b) => ALPHABET[b % ALPHABET.length]).join('');

export const unixNow = (): number => Math.floor(Date.now() / 1000);

/** The API version the fake stamps on events: stripe-node 23.1.0's pinned version. */
export const FAKE_API_VERSION = '2026-10-28.endive';

export function customerWire(id: string, params: { email?: string; name?: string; description?: string; metadata: Record<string, string> }): Wire {
  return {
    id,
    object: 'customer',
    address: null,
    balance: 0,
    created: unixNow(),
    currency: null,
    default_source: null,
    delinquent: false,
    description: params.description ?? null,
    email: params.email ?? null,
    invoice_prefix: id.slice(4, 12).toUpperCase(),
    invoice_settings: { custom_fields: null, default_payment_method: null, footer: null, rendering_options: null },
    livemode: false,
    metadata: params.metadata,
    name: params.name ?? null,
    next_invoice_sequence: 1,
    phone: null,
    preferred_locales: [],
    shipping: null,
    tax_exempt: 'none',
    test_clock: null,
  };
}

export interface SessionInput {
  id: string;
  customer: string | null;
  currency: string;
  amountTotal: number;
  metadata: Record<string, string>;
  clientReferenceId: string | null;
  successUrl: string | null;
  cancelUrl: string | null;
}

export function sessionWire(input: SessionInput): Wire {
  const created = unixNow();
  return {
    id: input.id,
    object: 'checkout.session',
    adaptive_pricing: { enabled: false },
    after_expiration: null,
    allow_promotion_codes: null,
    amount_subtotal: input.amountTotal,
    amount_total: input.amountTotal,
    automatic_tax: { enabled: false, liability: null, provider: null, status: null },
    billing_address_collection: null,
    cancel_url: input.cancelUrl,
    client_reference_id: input.clientReferenceId,
    client_secret: null,
    collected_information: null,
    consent: null,
    consent_collection: null,
    created,
    currency: input.currency,
    currency_conversion: null,
    custom_fields: [],
    custom_text: { after_submit: null, shipping_address: null, submit: null, terms_of_service_acceptance: null },
    customer: input.customer,
    customer_account: null,
    customer_creation: input.customer ? null : 'if_required',
    customer_details: null,
    customer_email: null,
    discounts: [],
    expires_at: created + 24 * 3600,
    integration_identifier: null,
    invoice: null,
    invoice_creation: null,
    livemode: false,
    locale: null,
    managed_payments: null,
    metadata: input.metadata,
    mode: 'payment',
    origin_context: null,
    // created when the payer confirms (API versions since 2022-08-01), not with the session
    payment_intent: null,
    payment_link: null,
    payment_method_collection: 'if_required',
    payment_method_configuration_details: null,
    payment_method_options: { card: { request_three_d_secure: 'automatic' } },
    payment_method_types: ['card'],
    payment_status: 'unpaid',
    permissions: null,
    phone_number_collection: { enabled: false },
    recovered_from: null,
    saved_payment_method_options: null,
    setup_intent: null,
    shipping_address_collection: null,
    shipping_cost: null,
    shipping_options: [],
    status: 'open',
    submit_type: null,
    subscription: null,
    success_url: input.successUrl,
    total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 0 },
    ui_mode: 'hosted',
    url: `https://checkout.stripe.com/c/pay/${input.id}#fidkdWxOYHwnPyd1blpxYHZxWjA0`,
    wallet_options: null,
  };
}

export function paymentMethodWire(id: string, card: { brand: string; last4: string }, customer: string | null): Wire {
  const year = new Date().getUTCFullYear() + 3;
  return {
    id,
    object: 'payment_method',
    allow_redisplay: 'limited',
    billing_details: {
      address: { city: null, country: 'US', line1: null, line2: null, postal_code: '10001', state: null },
      email: null,
      name: null,
      phone: null,
      tax_id: null,
    },
    card: {
      brand: card.brand,
      checks: { address_line1_check: null, address_postal_code_check: 'pass', cvc_check: 'pass' },
      country: 'US',
      display_brand: card.brand,
      exp_month: 12,
      exp_year: year,
      fingerprint: stripeId('', 16),
      funding: 'credit',
      generated_from: null,
      last4: card.last4,
      networks: { available: [card.brand], preferred: null },
      regulated_status: 'unregulated',
      three_d_secure_usage: { supported: true },
      wallet: null,
    },
    created: unixNow(),
    customer,
    livemode: false,
    metadata: {},
    type: 'card',
  };
}

export interface IntentInput {
  id: string;
  amount: number;
  currency: string;
  customer: string | null;
  paymentMethod: string | null;
  metadata: Record<string, string>;
  description: string | null;
  setupFutureUsage: string | null;
  status: string;
  latestCharge: string | null;
  lastPaymentError: Wire | null;
}

export function paymentIntentWire(input: IntentInput): Wire {
  return {
    id: input.id,
    object: 'payment_intent',
    amount: input.amount,
    amount_capturable: 0,
    amount_details: { tip: {} },
    amount_received: input.status === 'succeeded' ? input.amount : 0,
    application: null,
    application_fee_amount: null,
    automatic_payment_methods: null,
    canceled_at: null,
    cancellation_reason: null,
    capture_method: 'automatic_async',
    client_secret: `${input.id}_secret_${stripeId('', 25)}`,
    confirmation_method: 'automatic',
    created: unixNow(),
    currency: input.currency,
    customer: input.customer,
    description: input.description,
    last_payment_error: input.lastPaymentError,
    latest_charge: input.latestCharge,
    livemode: false,
    metadata: input.metadata,
    next_action: null,
    on_behalf_of: null,
    payment_method: input.paymentMethod,
    payment_method_configuration_details: null,
    payment_method_options: { card: { installments: null, mandate_options: null, network: null, request_three_d_secure: 'automatic' } },
    payment_method_types: ['card'],
    processing: null,
    receipt_email: null,
    review: null,
    setup_future_usage: input.setupFutureUsage,
    shipping: null,
    source: null,
    statement_descriptor: null,
    statement_descriptor_suffix: null,
    status: input.status,
    transfer_data: null,
    transfer_group: null,
  };
}

export function eventWire(type: string, object: Wire, created: number): Wire {
  return {
    id: stripeId('evt_'),
    object: 'event',
    api_version: FAKE_API_VERSION,
    created,
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  };
}

// ---- errors --------------------------------------------------------------------------------------

/** An answer: status, body, and whether Stripe's idempotency layer would save it (validation failures are not). */
export class Answer {
  readonly status: number;
  readonly body: Wire;
  readonly saved: boolean;

  constructor(status: number, body: Wire, saved = status === 200 || status === 402 || status >= 500) {
    this.status = status;
    this.body = body;
    this.saved = saved;
  }
}

const docUrl = (code: string) => `https://stripe.com/docs/error-codes/${code.replace(/_/g, '-')}`;

export const ok = (body: Wire) => new Answer(200, body);

export const invalidRequest = (message: string, extra: { code?: string; param?: string; status?: number } = {}) =>
  new Answer(extra.status ?? 400, {
    error: {
      ...(extra.code ? { code: extra.code, doc_url: docUrl(extra.code) } : {}),
      message,
      ...(extra.param ? { param: extra.param } : {}),
      request_log_url: 'https://dashboard.stripe.com/test/logs',
      type: 'invalid_request_error',
    },
  });

export const missingParam = (param: string) => invalidRequest(`Missing required param: ${param}.`, { code: 'parameter_missing', param });
export const unknownParameter = (param: string) =>
  invalidRequest(`Received unknown parameter: ${param} (or the fake does not support it)`, { code: 'parameter_unknown', param });

/** `No such customer: 'cus_x'`: 404 for the object in the path, 400 for an object named by a parameter. */
export const noSuch = (what: string, id: string, param: string, inPath: boolean) =>
  invalidRequest(`No such ${what}: '${id}'`, { code: 'resource_missing', param, status: inPath ? 404 : 400 });

export interface CardDecline {
  code: string;
  declineCode: string;
  message: string;
}

export const DECLINES = {
  declines: { code: 'card_declined', declineCode: 'generic_decline', message: 'Your card was declined.' },
  requires_authentication: {
    code: 'authentication_required',
    declineCode: 'authentication_required',
    message: 'Your card was declined. This transaction requires authentication.',
  },
} satisfies Record<string, CardDecline>;

/** The `last_payment_error` of a declined PaymentIntent, and (with `payment_intent`) the 402 error body. */
export const cardError = (decline: CardDecline, charge: string, paymentMethod: Wire): Wire => ({
  charge,
  code: decline.code,
  decline_code: decline.declineCode,
  doc_url: docUrl(decline.code),
  message: decline.message,
  payment_method: paymentMethod,
  type: 'card_error',
});
