import type Stripe from 'stripe';
import { InvalidWebhook, type CheckoutRequest, type CheckoutState, type PaymentEvent, type SavedCard } from '../../../core/ports/payments.ts';

/** Stripe's documented (and its SDK's default) webhook tolerance, in seconds, either side of now. */
export const WEBHOOK_TOLERANCE_S = 300;

/**
 * One hosted Checkout page for one deposit. `setup_future_usage: off_session` saves the card on the
 * customer for auto-recharge; the deposit id travels in three places (session metadata, client
 * reference, PaymentIntent metadata) so the payment can be traced from any Stripe object or export.
 */
export const checkoutParams = (request: CheckoutRequest, customerId: string): Stripe.Checkout.SessionCreateParams => {
  const metadata = { deposit_id: request.depositId, tenant_id: request.tenantId };
  return {
    mode: 'payment',
    customer: customerId,
    client_reference_id: request.depositId,
    line_items: [
      {
        quantity: 1,
        price_data: { currency: 'usd', unit_amount: request.amountCents, product_data: { name: 'Account credit' } },
      },
    ],
    payment_intent_data: { setup_future_usage: 'off_session', metadata },
    metadata,
    success_url: request.successUrl,
    cancel_url: request.cancelUrl,
  };
};

const idOf = (value: string | { id: string } | null): string | null => (value === null ? null : typeof value === 'string' ? value : value.id);

/** The card read from `payment_intent.payment_method` when both were expanded; an id alone says nothing about the card. */
const savedCardOf = (intent: Stripe.Checkout.Session['payment_intent']): SavedCard | null => {
  if (intent === null || typeof intent === 'string') return null;
  const method = intent.payment_method;
  if (method === null || typeof method === 'string' || !method.card) return null;
  return { paymentMethodId: method.id, brand: method.card.brand, last4: method.card.last4 };
};

export const toCheckoutState = (session: Stripe.Checkout.Session): CheckoutState => {
  // no_payment_required only means "done" once the session is complete (a zero total)
  const paid = session.payment_status === 'paid' || (session.payment_status === 'no_payment_required' && session.status === 'complete');
  return {
    sessionId: session.id,
    status: paid ? 'paid' : session.status === 'expired' ? 'expired' : 'open',
    amountCents: session.amount_total ?? 0,
    depositId: session.metadata?.deposit_id ?? session.client_reference_id ?? null,
    customerId: idOf(session.customer),
    card: paid ? savedCardOf(session.payment_intent) : null,
  };
};

/** `card_declined: Your card was declined.`, with the issuer's decline code when it says more than the code. */
export const refusalReason = (code: string | undefined, declineCode: string | undefined, message: string): string => {
  const head = code ?? 'refused';
  return declineCode && declineCode !== code ? `${head} (${declineCode}): ${message}` : `${head}: ${message}`;
};

/** The `t=` of a `Stripe-Signature` header, in Unix seconds; null when absent or not a whole number. */
export const signedTimestamp = (header: string): number | null => {
  for (const part of header.split(',')) {
    const [key, value] = part.trim().split('=', 2);
    if (key === 't') return value !== undefined && /^\d{1,12}$/.test(value) ? Number(value) : null;
  }
  return null;
};

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const SESSION_EVENTS: Record<string, 'checkout_completed' | 'checkout_expired'> = {
  'checkout.session.completed': 'checkout_completed',
  // delayed methods complete unpaid and succeed later; cards never do, but the event means "paid" all the same
  'checkout.session.async_payment_succeeded': 'checkout_completed',
  'checkout.session.expired': 'checkout_expired',
};

/** A verified event body, reduced to what the control plane acts on. */
export const toPaymentEvent = (event: unknown): PaymentEvent => {
  if (!isRecord(event) || typeof event.type !== 'string') throw new InvalidWebhook('body is not a Stripe event (no type)');
  const kind = SESSION_EVENTS[event.type];
  if (!kind) return { kind: 'ignored', type: event.type };
  const object = isRecord(event.data) ? event.data.object : undefined;
  if (!isRecord(object) || typeof object.id !== 'string') throw new InvalidWebhook(`${event.type} event without data.object.id`);
  return { kind, sessionId: object.id };
};
