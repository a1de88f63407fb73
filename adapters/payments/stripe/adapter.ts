import Stripe from 'stripe';
import {
  InvalidWebhook,
  type CheckoutCreated,
  type CheckoutRequest,
  type CheckoutState,
  type OffSessionCharge,
  type OffSessionOutcome,
  type PaymentEvent,
  type Payments,
} from '../../../core/ports/payments.ts';
import { WEBHOOK_TOLERANCE_S, checkoutParams, refusalReason, signedTimestamp, toCheckoutState, toPaymentEvent } from './mapping.ts';

const { StripeError, StripeCardError, StripeInvalidRequestError, StripeSignatureVerificationError } = Stripe.errors;

const describe = (error: unknown): string => {
  if (error instanceof StripeError) {
    const status = error.statusCode ? `HTTP ${error.statusCode} ` : '';
    return `${status}${error.rawType ?? error.type}${error.code ? ` ${error.code}` : ''}: ${error.message}`;
  }
  return error instanceof Error ? error.message : String(error);
};

/** Stripe was not reached, or answered with something that is not a refusal: the caller may try again. */
const failure = (what: string, error: unknown): Error => new Error(`stripe: ${what}: ${describe(error)}`, { cause: error });

/** 404 resource_missing: the object in the path does not exist (in this account and mode). */
const isMissing = (error: unknown): boolean => error instanceof StripeInvalidRequestError && error.statusCode === 404;

/**
 * A definite "no" to a payment, after which nothing was charged: a card error (402: declined,
 * authentication required, expired ...) or a request Stripe refused to run (400/404: the card was
 * detached, belongs to another customer, amount too small). Idempotency errors (a key reused with other
 * parameters) are not refusals: the key's first request may well have charged, so they throw.
 */
const refusalOf = (error: unknown): string | null => {
  if (error instanceof StripeCardError) return refusalReason(error.code, error.decline_code, error.message);
  if (error instanceof StripeInvalidRequestError) return refusalReason(error.code ?? 'invalid_request', undefined, error.message);
  return null;
};

/**
 * Payments through Stripe: hosted Checkout for deposits (the card is saved on the tenant's customer),
 * off-session PaymentIntents for auto-recharge, signed webhooks. Every write carries an idempotency key
 * derived from our own ids, so a retry (the SDK's, or ours after a lost answer) never pays twice.
 */
export class StripePayments implements Payments {
  readonly name = 'stripe';
  private readonly stripe: Stripe;
  private readonly webhookSecret: string;
  private readonly signature: Stripe.Signature;

  constructor(stripe: Stripe, webhookSecret: string) {
    this.stripe = stripe;
    this.webhookSecret = webhookSecret;
    const signature = stripe.webhooks.signature;
    if (!signature) throw new Error('stripe: this SDK build has no webhook signature helper');
    this.signature = signature;
  }

  async createCheckout(request: CheckoutRequest): Promise<CheckoutCreated> {
    try {
      const customerId = request.customerId ?? (await this.createCustomer(request.tenantId));
      const session = await this.stripe.checkout.sessions.create(checkoutParams(request, customerId), {
        idempotencyKey: `checkout:${request.depositId}`,
      });
      if (!session.url) throw new Error(`session ${session.id} has no url`);
      return { sessionId: session.id, url: session.url, customerId };
    } catch (error) {
      throw failure('open a checkout', error);
    }
  }

  async getCheckout(sessionId: string): Promise<CheckoutState | null> {
    try {
      // the payment method, two levels down, is the saved card: one request instead of three
      const session = await this.stripe.checkout.sessions.retrieve(sessionId, { expand: ['payment_intent.payment_method'] });
      return toCheckoutState(session);
    } catch (error) {
      if (isMissing(error)) return null;
      throw failure(`read checkout ${sessionId}`, error);
    }
  }

  async chargeOffSession(charge: OffSessionCharge): Promise<OffSessionOutcome> {
    let intent: Stripe.PaymentIntent;
    try {
      intent = await this.stripe.paymentIntents.create(
        {
          amount: charge.amountCents,
          currency: 'usd',
          customer: charge.customerId,
          payment_method: charge.paymentMethodId,
          off_session: true,
          confirm: true,
          // Stripe forgets idempotency keys after 24 hours; the metadata lets a later reconciliation find the payment
          metadata: { idempotency_key: charge.idempotencyKey },
        },
        { idempotencyKey: charge.idempotencyKey },
      );
    } catch (error) {
      const refusal = refusalOf(error);
      if (refusal !== null) return { ok: false, reason: refusal };
      throw failure('charge the saved card', error);
    }
    if (intent.status === 'succeeded') return { ok: true, paymentId: intent.id };
    // not settled either way: asking again with the same key returns this intent as it is by then
    if (intent.status === 'processing') throw new Error(`stripe: payment ${intent.id} is still processing; ask again with the same key`);
    return { ok: false, reason: `${intent.status}: ${intent.last_payment_error?.message ?? 'the payment did not complete'}` };
  }

  async detachCard(paymentMethodId: string): Promise<void> {
    try {
      await this.stripe.paymentMethods.detach(paymentMethodId);
    } catch (error) {
      if (isMissing(error)) return;
      // a second detach is a 400 whose only marker is its English message: ask for the card instead
      if (error instanceof StripeInvalidRequestError && (await this.isDetached(paymentMethodId))) return;
      throw failure(`detach card ${paymentMethodId}`, error);
    }
  }

  parseWebhook(rawBody: Buffer, signatureHeader: string | undefined, now: Date): PaymentEvent {
    if (!signatureHeader) throw new InvalidWebhook('missing Stripe-Signature header');
    const timestamp = signedTimestamp(signatureHeader);
    if (timestamp === null) throw new InvalidWebhook('malformed Stripe-Signature header: no t=<unix seconds>');
    try {
      // tolerance 0 turns the SDK's age check off: it reads the wall clock, the window is checked below against `now`
      this.signature.verifyHeader(rawBody, signatureHeader, this.webhookSecret, 0);
    } catch (error) {
      if (error instanceof StripeSignatureVerificationError) {
        throw new InvalidWebhook(`bad signature: ${error.message.split('\n')[0]!.trim()}`);
      }
      throw error;
    }
    // both ways: the SDK only refuses old timestamps, a timestamp from the future is as suspect
    const skew = Math.floor(now.getTime() / 1000) - timestamp;
    if (Math.abs(skew) > WEBHOOK_TOLERANCE_S) {
      throw new InvalidWebhook(`timestamp out of tolerance: signed ${Math.abs(skew)} s ${skew > 0 ? 'ago' : 'ahead'}, at most ${WEBHOOK_TOLERANCE_S} s allowed`);
    }
    let event: unknown;
    try {
      event = JSON.parse(rawBody.toString('utf8'));
    } catch {
      throw new InvalidWebhook('body is not JSON');
    }
    return toPaymentEvent(event);
  }

  /** One customer per tenant: two first checkouts racing reuse the same key, so Stripe answers both with one customer. */
  private async createCustomer(tenantId: string): Promise<string> {
    const customer = await this.stripe.customers.create({ metadata: { tenant_id: tenantId } }, { idempotencyKey: `customer:${tenantId}` });
    return customer.id;
  }

  private async isDetached(paymentMethodId: string): Promise<boolean> {
    try {
      return (await this.stripe.paymentMethods.retrieve(paymentMethodId)).customer === null;
    } catch (error) {
      return isMissing(error);
    }
  }
}
