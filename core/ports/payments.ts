import type { Cents } from '../money.ts';

/** A saved card, as the processor describes it. */
export interface SavedCard {
  paymentMethodId: string;
  brand: string;
  last4: string;
}

export type CheckoutStatus = 'open' | 'paid' | 'expired';

export interface CheckoutRequest {
  /** Our deposit id: goes into the processor's metadata / client reference so events can be matched. */
  depositId: string;
  tenantId: string;
  amountCents: Cents;
  /** The processor's customer for this tenant, when one exists already (the card is saved on it). */
  customerId: string | null;
  /** Where the payer returns; `{CHECKOUT_SESSION_ID}` is replaced by the processor where it supports it. */
  successUrl: string;
  cancelUrl: string;
}

export interface CheckoutCreated {
  sessionId: string;
  /** Send the payer here. */
  url: string;
  customerId: string | null;
}

export interface CheckoutState {
  sessionId: string;
  status: CheckoutStatus;
  amountCents: Cents;
  /** Our deposit id, read back from the session. */
  depositId: string | null;
  customerId: string | null;
  /** The card the payment used, saved for off-session use; null when none. */
  card: SavedCard | null;
}

export type OffSessionOutcome =
  | { ok: true; paymentId: string }
  /** Declined, needs authentication, or any refusal: nothing was charged. */
  | { ok: false; reason: string };

export interface OffSessionCharge {
  customerId: string;
  paymentMethodId: string;
  amountCents: Cents;
  /** Derived from our own ids: the same key never charges twice at the processor. */
  idempotencyKey: string;
}

/** A verified webhook event, reduced to what the control plane acts on. */
export type PaymentEvent =
  | { kind: 'checkout_completed'; sessionId: string }
  | { kind: 'checkout_expired'; sessionId: string }
  | { kind: 'ignored'; type: string };

/** The signature or timestamp of a webhook did not check out: the body must not be trusted. */
export class InvalidWebhook extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidWebhook';
  }
}

/**
 * A card payment processor (Stripe, or the embedded manual one). Failures to reach it throw;
 * a refused off-session charge is an outcome, not an exception.
 */
export interface Payments {
  readonly name: string;
  createCheckout(request: CheckoutRequest): Promise<CheckoutCreated>;
  getCheckout(sessionId: string): Promise<CheckoutState | null>;
  chargeOffSession(charge: OffSessionCharge): Promise<OffSessionOutcome>;
  detachCard(paymentMethodId: string): Promise<void>;
  /** Verifies the signature over the raw body (300 s tolerance) and reads the event; throws InvalidWebhook. */
  parseWebhook(rawBody: Buffer, signatureHeader: string | undefined, now: Date): PaymentEvent;
}
